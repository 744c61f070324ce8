"""A SIMBICON-style gait machine for the torque humanoid: a two-state swing cycle per leg, PD targets, swing-foot
placement from the centre of mass, and trunk balance through the stance hip.

After Yin, Loken and van de Panne (SIMBICON, 2007) and Coros, Beaudoin and van de Panne (2010); our own code.
Each leg alternates stance and swing. A swing lasts at least `swing_min` × `swing_time` and ends when the
swing foot touches down (or at twice `swing_time`). During a swing:
- the swing thigh is aimed, in the world frame, at `hip_swing` + `place_pos` × d + `place_vel` × (v − `speed`),
  where d and v are the centre of mass's position and velocity relative to the stance foot along the heading
  (sideways the same with `width`, `place_pos_lat`, `place_vel_lat`): foot placement that restores balance;
- the swing knee bends to `knee_swing` for the first `early` fraction of the swing, then reaches to
  `knee_reach`; the swing ankle holds `ankle_swing`;
- the stance hip pitches, rolls and turns the pelvis (a virtual torque on the pelvis towards `trunk_pitch`,
  upright and the target heading, minus the swing hip's reaction), the stance knee holds `knee_stance` and the
  stance ankle pushes off to `ankle_push` after `push_start` of the swing;
- the arms swing against the legs (`arm_swing`), the chest leans `chest_lean` on the pelvis.
Heading follows `turn_rate` (rad/s, + left). All angles are semantic (see the feature reference): hip flexion +
forward, knee flexion + bent, ankle dorsiflexion + toes up. Commands are fractions of each motor's strength.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rewardloop.control.controllers import Parameter, ParameterSpace, register
from rewardloop.sim.bodies import SIDES
from rewardloop.sim.scene import CompiledScene

P = Parameter
PARAMETERS = ParameterSpace((
    P("swing_time", 0.2, 0.7, 0.38, "s", "nominal duration of a swing (the phase clock)"),
    P("swing_min", 0.2, 1.0, 0.6, "-", "fraction of swing_time before a touchdown may end the swing"),
    P("early", 0.1, 0.9, 0.45, "-", "fraction of swing_time spent lifting the foot (knee_swing) before reaching"),
    P("hip_swing", -0.3, 0.8, 0.35, "rad", "swing thigh angle from vertical, + forward, before feedback"),
    P("place_pos", -1.0, 3.0, 0.5, "rad/m", "extra swing thigh angle per metre of CoM ahead of the stance foot"),
    P("place_vel", -1.0, 2.0, 0.2, "rad/(m/s)", "extra swing thigh angle per m/s of CoM speed above `speed`"),
    P("speed", 0.0, 2.5, 1.2, "m/s", "walking speed the foot placement aims for"),
    P("width", -0.2, 0.3, 0.05, "rad", "swing thigh angle outwards from vertical, before feedback"),
    P("place_pos_lat", -1.0, 3.0, 0.5, "rad/m", "extra outward swing thigh angle per m of CoM beside the stance foot"),
    P("place_vel_lat", -1.0, 2.0, 0.2, "rad/(m/s)", "extra outward swing thigh angle per m/s of sideways CoM speed"),
    P("knee_swing", 0.0, 1.8, 1.0, "rad", "swing knee flexion while lifting the foot"),
    P("knee_reach", 0.0, 1.0, 0.1, "rad", "swing knee flexion while reaching for the ground"),
    P("knee_stance", -0.05, 1.0, 0.1, "rad", "stance knee flexion"),
    P("ankle_swing", -0.6, 0.6, 0.1, "rad", "swing ankle dorsiflexion"),
    P("ankle_stance", -0.6, 0.6, 0.0, "rad", "stance ankle dorsiflexion"),
    P("ankle_push", -0.9, 0.4, -0.2, "rad", "stance ankle dorsiflexion during push-off (− pushes the toes down)"),
    P("push_start", 0.2, 1.5, 0.7, "-", "fraction of swing_time after which the stance ankle pushes off"),
    P("trunk_pitch", -0.3, 0.5, 0.05, "rad", "pelvis pitch the stance hip holds, + leaning forward"),
    P("chest_lean", -0.4, 0.6, 0.0, "rad", "chest flexion on the pelvis, + bending forward"),
    P("trunk_kp", 1.0, 20.0, 6.0, "1/rad", "pelvis balance stiffness (hip strength per rad of lean error)"),
    P("trunk_kd", 0.0, 2.0, 0.4, "s/rad", "pelvis balance damping (hip strength per rad/s)"),
    P("hip_kp", 1.0, 20.0, 6.0, "1/rad", "swing hip stiffness (strength per rad)"),
    P("hip_kd", 0.0, 2.0, 0.3, "s/rad", "swing hip damping (strength per rad/s)"),
    P("joint_kp", 1.0, 20.0, 6.0, "1/rad", "knee, ankle and trunk stiffness (strength per rad)"),
    P("joint_kd", 0.0, 1.0, 0.2, "s/rad", "knee, ankle and trunk damping (strength per rad/s)"),
    P("arm_swing", 0.0, 2.0, 0.8, "-", "shoulder swing per rad of hip flexion difference, against the legs"),
    P("turn_rate", -1.0, 1.0, 0.0, "rad/s", "rate of the target heading, + turning left"),
    P("yaw_kp", 0.0, 10.0, 3.0, "1/rad", "heading stiffness through the stance hip (strength per rad)"),
))
"""The gait machine's parameters, in vector order."""

_I = {name: i for i, name in enumerate(PARAMETERS.names)}
(SWING_TIME, SWING_MIN, EARLY, HIP_SWING, PLACE_POS, PLACE_VEL, SPEED, WIDTH, PLACE_POS_LAT, PLACE_VEL_LAT,
 KNEE_SWING, KNEE_REACH, KNEE_STANCE, ANKLE_SWING, ANKLE_STANCE, ANKLE_PUSH, PUSH_START, TRUNK_PITCH,
 CHEST_LEAN, TRUNK_KP, TRUNK_KD, HIP_KP, HIP_KD, JOINT_KP, JOINT_KD, ARM_SWING, TURN_RATE, YAW_KP) = range(
    PARAMETERS.size)

LEG_JOINTS = ("hip_flexion", "hip_adduction", "hip_rotation", "knee_flexion", "ankle_dorsiflexion")
"""Semantic leg joints, in the kernel's column order (then the ankle's inversion, humanoid-specific)."""
HF, HA, HR, KN, AN, AI = range(6)
ARM_REST = {"left": (-0.785, 0.436, -1.571), "right": (0.785, -0.436, -1.571)}
"""Shoulder1, shoulder2, elbow (MJCF, rad) that hang the arms beside the hips."""
ARM_FORWARD = {"left": (0.707, -0.707, 0.0), "right": (-0.707, 0.707, 0.0)}
"""Unit direction in (shoulder1, shoulder2, elbow) that swings the hand forward."""
SENSORS = ("pelvis_xaxis", "pelvis_zaxis", "pelvis_angvel", "com_pos", "com_vel", "left_heel_pos",
           "left_toe_pos", "right_heel_pos", "right_toe_pos", "left_foot_contact", "right_foot_contact")
"""Sensors the kernel reads, in the order of its address table."""
STANCE, CLOCK = 0, 1
"""Memory columns: the stance leg (0 left, 1 right) and the time since the swing began (s)."""


@register("gait_machine", "torque")
class GaitMachine:
    """The SIMBICON-style gait machine on the dm_control humanoid (see the module docstring)."""

    kind = "gait_machine"
    bodies = ("humanoid",)
    space = PARAMETERS
    chunk = 1
    memory_size = 2

    def __init__(self, scene: CompiledScene):
        model = scene.model
        self.dt = scene.dt
        self.nu = model.nu
        layout = scene.layout
        mjcf_name = {model.actuator(a).name: a for a in range(model.nu)}

        def joint(name: str) -> tuple[int, int, int]:
            jid = model.joint(name).id
            return int(model.jnt_qposadr[jid]), int(model.jnt_dofadr[jid]), mjcf_name[name]

        legs = np.zeros((2, 6, 4))  # side, joint, (qpos address, dof address, actuator, sign)
        for s, side in enumerate(SIDES):
            for j, semantic in enumerate(LEG_JOINTS):
                ref = scene.body.joints[f"{side}_{semantic}"]
                legs[s, j] = (*joint(ref.mjcf), layout.joint_sign[f"{side}_{semantic}"])
            legs[s, AI] = (*joint(f"{side}_ankle_x"), 1.0)
        arms = np.array([[[*joint(f"{side}_{n}"), rest, forward] for n, rest, forward in
                          zip(("shoulder1", "shoulder2", "elbow"), ARM_REST[side], ARM_FORWARD[side], strict=True)]
                         for side in SIDES])
        trunk = np.array([[*joint("abdomen_y"), -1.0], [*joint("abdomen_z"), 1.0], [*joint("abdomen_x"), 1.0]])
        self.legs, self.arms, self.trunk = legs, arms, trunk
        self.sensors = np.array([layout.sensors[name][0] for name in SENSORS], dtype=np.int64)
        self.nq = model.nq

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.empty((len(state), self.chunk, self.nu))
        _gait_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, self.legs,
                     self.arms, self.trunk, self.sensors, self.nq, self.dt * self.chunk, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _pd(kp: float, kd: float, target: float, angle: float, rate: float) -> float:
    """A PD command as a fraction of the motor's strength, clipped to [-1, 1]."""
    return _clip(kp * (target - angle) - kd * rate)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _clip(command: float) -> float:
    """A command clipped to the motor's range [-1, 1]."""
    return min(1.0, max(-1.0, command))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _within(command: float, trunk: float) -> float:
    """A swing hip command limited so that the stance hip, which must give `trunk` minus it, stays in range."""
    return min(trunk + 1.0, max(trunk - 1.0, command))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _wrap(angle: float) -> float:
    """Angle (rad) -> the same angle within [-π, π)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gait_kernel(state, sensed, memory, params, legs, arms, trunk, sensors, nq, interval, controls):
    """One update of the gait machine for every row: [b, nstate], [b, nsensor], [b, 2] memory (in place),
    [b, P] params -> controls [b, chunk, nu] (written)."""
    for b in range(state.shape[0]):
        p, s = params[b], sensed[b]
        q, qd = state[b, 1 : 1 + nq], state[b, 1 + nq :]
        stance, clock = int(memory[b, STANCE]), memory[b, CLOCK]
        swing = 1 - stance
        phase = clock / p[SWING_TIME]
        if (phase >= p[SWING_MIN] and s[sensors[9 + swing]] > 0) or phase >= 2.0:
            stance, swing, clock, phase = swing, stance, 0.0, 0.0
        memory[b, STANCE], memory[b, CLOCK] = stance, clock + interval

        px, pz, w = sensors[0], sensors[1], sensors[2]
        yaw = math.atan2(s[px + 1], s[px])
        fx, fy = math.cos(yaw), math.sin(yaw)  # heading, and its left (-fy, fx)
        pitch = math.atan2(s[pz] * fx + s[pz + 1] * fy, s[pz + 2])
        roll = math.atan2(-(-s[pz] * fy + s[pz + 1] * fx), s[pz + 2])
        pitch_rate = -s[w] * fy + s[w + 1] * fx
        roll_rate = s[w] * fx + s[w + 1] * fy
        heel, toe = sensors[5 + 2 * stance], sensors[6 + 2 * stance]
        dx = s[sensors[3]] - 0.5 * (s[heel] + s[toe])
        dy = s[sensors[3] + 1] - 0.5 * (s[heel + 1] + s[toe + 1])
        vx, vy = s[sensors[4]], s[sensors[4] + 1]
        d_fwd, d_lat = dx * fx + dy * fy, -dx * fy + dy * fx
        v_fwd, v_lat = vx * fx + vy * fy, -vx * fy + vy * fx
        heading_error = _wrap(p[TURN_RATE] * state[b, 0] - yaw)

        out = controls[b, 0]
        angle = np.empty((2, 6))
        rate = np.empty((2, 6))
        for side in range(2):
            for j in range(6):
                angle[side, j] = legs[side, j, 3] * q[int(legs[side, j, 0])]
                rate[side, j] = legs[side, j, 3] * qd[int(legs[side, j, 1])]
        outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
        inward_st = -outward

        pitch_torque = _clip(p[TRUNK_KP] * (p[TRUNK_PITCH] - pitch) - p[TRUNK_KD] * pitch_rate)
        roll_torque = _clip(p[TRUNK_KP] * (0.0 - roll) - p[TRUNK_KD] * roll_rate)
        yaw_torque = _clip(p[YAW_KP] * heading_error - p[TRUNK_KD] * s[w + 2])
        thigh = p[HIP_SWING] + p[PLACE_POS] * d_fwd + p[PLACE_VEL] * (v_fwd - p[SPEED])
        lateral = outward * p[WIDTH] + p[PLACE_POS_LAT] * d_lat + p[PLACE_VEL_LAT] * v_lat
        cmd = np.zeros((2, 6))
        # The trunk has priority: the swing hip gets only what leaves the stance hip able to hold the pelvis.
        cmd[swing, HF] = _within(_pd(p[HIP_KP], p[HIP_KD], thigh + pitch, angle[swing, HF], rate[swing, HF]),
                                 pitch_torque)
        cmd[swing, HA] = _within(_pd(p[HIP_KP], p[HIP_KD], outward * (roll - lateral), angle[swing, HA],
                                     rate[swing, HA]), outward * roll_torque)
        cmd[swing, HR] = _within(_pd(p[HIP_KP], p[HIP_KD], -outward * heading_error, angle[swing, HR],
                                     rate[swing, HR]), outward * yaw_torque)
        knee = p[KNEE_SWING] if phase < p[EARLY] else p[KNEE_REACH]
        cmd[swing, KN] = _pd(p[JOINT_KP], p[JOINT_KD], knee, angle[swing, KN], rate[swing, KN])
        cmd[swing, AN] = _pd(p[JOINT_KP], p[JOINT_KD], p[ANKLE_SWING], angle[swing, AN], rate[swing, AN])
        cmd[stance, HF] = _clip(pitch_torque - cmd[swing, HF])
        cmd[stance, HA] = _clip(inward_st * (roll_torque - outward * cmd[swing, HA]))
        cmd[stance, HR] = _clip(inward_st * (yaw_torque - outward * cmd[swing, HR]))
        cmd[stance, KN] = _pd(p[JOINT_KP], p[JOINT_KD], p[KNEE_STANCE], angle[stance, KN], rate[stance, KN])
        ankle = p[ANKLE_PUSH] if phase >= p[PUSH_START] else p[ANKLE_STANCE]
        cmd[stance, AN] = _pd(p[JOINT_KP], p[JOINT_KD], ankle, angle[stance, AN], rate[stance, AN])
        for side in range(2):
            cmd[side, AI] = _pd(0.5 * p[JOINT_KP], p[JOINT_KD], 0.0, angle[side, AI], rate[side, AI])
            for j in range(6):
                out[int(legs[side, j, 2])] = legs[side, j, 3] * cmd[side, j]
            swing_angle = p[ARM_SWING] * 0.5 * (angle[1 - side, HF] - angle[side, HF])
            for k in range(3):
                target = arms[side, k, 3] + swing_angle * arms[side, k, 4]
                out[int(arms[side, k, 2])] = _pd(p[JOINT_KP], p[JOINT_KD], target, q[int(arms[side, k, 0])],
                                                 qd[int(arms[side, k, 1])])
        lean = (p[CHEST_LEAN], 0.0, 0.0)
        for k in range(3):
            sign = trunk[k, 3]
            out[int(trunk[k, 2])] = sign * _pd(p[JOINT_KP], p[JOINT_KD], lean[k], sign * q[int(trunk[k, 0])],
                                               sign * qd[int(trunk[k, 1])])
        for t in range(1, controls.shape[1]):
            controls[b, t] = out
