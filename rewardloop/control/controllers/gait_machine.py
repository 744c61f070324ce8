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

import numba
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.humanoid import (
    AI,
    AN,
    CONTACT,
    HA,
    HF,
    HR,
    KN,
    balance_hips,
    clip,
    com_from_foot,
    follow_heading,
    humanoid_layout,
    pd,
    pelvis_frame,
    read_legs,
    write_body,
)
from rewardloop.sim.scene import CompiledScene

P = Parameter
PARAMETERS = ParameterSpace((
    P("swing_time", 0.2, 0.7, 0.35, "s", "nominal duration of a swing (the phase clock)"),
    P("swing_min", 0.2, 1.0, 0.7, "-", "fraction of swing_time before a touchdown may end the swing"),
    P("double_time", 0.0, 0.25, 0.0, "s", "time both feet stand after a touchdown, the trailing foot pushing off"),
    P("early", 0.1, 0.9, 0.5, "-", "fraction of swing_time spent lifting the foot (knee_swing) before reaching"),
    P("hip_swing", -0.3, 0.8, 0.45, "rad", "swing thigh angle from vertical, + forward, before feedback"),
    P("place_pos", -1.0, 3.0, 0.0, "rad/m", "extra swing thigh angle per metre of CoM ahead of the stance foot"),
    P("place_vel", -1.0, 2.0, 0.2, "rad/(m/s)", "extra swing thigh angle per m/s of CoM speed above `speed`"),
    P("speed", 0.0, 2.5, 1.0, "m/s", "walking speed the foot placement aims for"),
    P("width", -0.2, 0.3, 0.05, "rad", "swing thigh angle outwards from vertical, before feedback"),
    P("place_pos_lat", -1.0, 3.0, 0.5, "rad/m", "extra outward swing thigh angle per m of CoM beside the stance foot"),
    P("place_vel_lat", -1.0, 2.0, 0.2, "rad/(m/s)", "extra outward swing thigh angle per m/s of sideways CoM speed"),
    P("knee_swing", 0.0, 1.8, 1.1, "rad", "swing knee flexion while lifting the foot"),
    P("knee_reach", 0.0, 1.0, 0.05, "rad", "swing knee flexion while reaching for the ground"),
    P("knee_stance", -0.05, 1.0, 0.05, "rad", "stance knee flexion"),
    P("ankle_swing", -0.6, 0.6, 0.3, "rad", "swing ankle dorsiflexion"),
    P("ankle_stance", -0.6, 0.6, 0.0, "rad", "stance ankle dorsiflexion"),
    P("ankle_push", -0.9, 0.4, -0.2, "rad", "stance ankle dorsiflexion during push-off (− pushes the toes down)"),
    P("push_start", 0.2, 1.5, 0.7, "-", "fraction of swing_time after which the stance ankle pushes off"),
    P("trunk_pitch", -0.3, 0.5, -0.05, "rad", "pelvis pitch the stance hip holds, + leaning forward"),
    P("chest_lean", -0.4, 0.6, 0.0, "rad", "chest flexion on the pelvis, + bending forward"),
    P("trunk_kp", 1.0, 20.0, 6.0, "1/rad", "pelvis balance stiffness (hip strength per rad of lean error)"),
    P("trunk_kd", 0.0, 2.0, 0.4, "s/rad", "pelvis balance damping (hip strength per rad/s)"),
    P("hip_kp", 1.0, 20.0, 3.0, "1/rad", "swing hip stiffness (strength per rad)"),
    P("hip_kd", 0.0, 2.0, 0.1, "s/rad", "swing hip damping (strength per rad/s)"),
    P("joint_kp", 1.0, 20.0, 6.0, "1/rad", "knee, ankle and trunk stiffness (strength per rad)"),
    P("joint_kd", 0.0, 1.0, 0.2, "s/rad", "knee, ankle and trunk damping (strength per rad/s)"),
    P("arm_swing", 0.0, 2.0, 0.8, "-", "shoulder swing per rad of hip flexion difference, against the legs"),
    P("turn_rate", -1.0, 1.0, 0.0, "rad/s", "rate of the target heading, + turning left"),
    P("yaw_kp", 0.0, 10.0, 3.0, "1/rad", "heading stiffness through the stance hip (strength per rad)"),
))
"""The gait machine's parameters, in vector order. The defaults are set by hand after SIMBICON's walk (Yin et al.
2007, table 1) for this body; they take a few steps from the walking start and are where gait searches begin."""

(SWING_TIME, SWING_MIN, DOUBLE_TIME, EARLY, HIP_SWING, PLACE_POS, PLACE_VEL, SPEED, WIDTH, PLACE_POS_LAT, PLACE_VEL_LAT,
 KNEE_SWING, KNEE_REACH, KNEE_STANCE, ANKLE_SWING, ANKLE_STANCE, ANKLE_PUSH, PUSH_START, TRUNK_PITCH,
 CHEST_LEAN, TRUNK_KP, TRUNK_KD, HIP_KP, HIP_KD, JOINT_KP, JOINT_KD, ARM_SWING, TURN_RATE, YAW_KP) = range(
    PARAMETERS.size)
STANCE, CLOCK, HEADING = 0, 1, 2
"""Memory columns: the stance leg (0 left, 1 right), the time since the swing began (s), and the turn rate last
used and the wanted heading's offset (rad/s, rad: `humanoid.follow_heading`)."""


class GaitMachine:
    """The SIMBICON-style gait machine on the dm_control humanoid (see the module docstring)."""

    kind = "gait_machine"
    space = PARAMETERS
    steering = ("swing_time", "hip_swing", "speed", "knee_swing", "knee_stance", "trunk_pitch", "turn_rate", "width",
                "arm_swing")
    chunk = 1
    memory_size = 4

    def __init__(self, scene: CompiledScene):
        self.dt, self.nu, self.nq = scene.dt, scene.model.nu, scene.model.nq
        self.layout = humanoid_layout(scene)

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.empty((len(state), self.chunk, self.nu))
        _gait_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, *self.layout,
                     self.nq, self.dt * self.chunk, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gait_kernel(state, sensed, memory, params, legs, arms, trunk, sensors, nq, interval, controls):
    """One update of the gait machine for every row: [b, nstate], [b, nsensor], [b, 2] memory (in place),
    [b, P] params -> controls [b, chunk, nu] (written)."""
    angle, rate, cmd = np.empty((2, 6)), np.empty((2, 6)), np.zeros((2, 6))
    for b in range(state.shape[0]):
        p, s = params[b], sensed[b]
        q, qd = state[b, 1 : 1 + nq], state[b, 1 + nq :]
        stance, clock = int(memory[b, STANCE]), memory[b, CLOCK]
        swing = 1 - stance
        phase = clock / p[SWING_TIME]
        if (phase >= p[SWING_MIN] and s[sensors[CONTACT + swing]] > 0) or phase >= 2.0:
            stance, swing, clock, phase = swing, stance, 0.0, 0.0
        memory[b, STANCE], memory[b, CLOCK] = stance, clock + interval
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        d_fwd, d_lat, v_fwd, v_lat = com_from_foot(s, sensors, stance, fx, fy)
        heading_error = follow_heading(memory[b], HEADING, p[TURN_RATE], state[b, 0], yaw)
        read_legs(q, qd, legs, angle, rate)
        outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
        pitch_torque = clip(p[TRUNK_KP] * (p[TRUNK_PITCH] - pitch) - p[TRUNK_KD] * pitch_rate)
        roll_torque = clip(p[TRUNK_KP] * (0.0 - roll) - p[TRUNK_KD] * roll_rate)
        yaw_torque = clip(p[YAW_KP] * heading_error - p[TRUNK_KD] * yaw_rate)
        thigh = p[HIP_SWING] + p[PLACE_POS] * d_fwd + p[PLACE_VEL] * (v_fwd - p[SPEED])  # in the world frame
        lateral = outward * p[WIDTH] + p[PLACE_POS_LAT] * d_lat + p[PLACE_VEL_LAT] * v_lat
        if clock < p[DOUBLE_TIME]:
            _double_stance(p, cmd, angle, rate, swing, pitch_torque, roll_torque, yaw_torque)
        else:
            _single_stance(p, cmd, angle, rate, swing, phase, thigh + pitch, outward * (roll - lateral),
                           -outward * heading_error, pitch_torque, roll_torque, yaw_torque)
        for side in range(2):
            cmd[side, AI] = pd(0.5 * p[JOINT_KP], p[JOINT_KD], 0.0, angle[side, AI], rate[side, AI])
        write_body(controls[b, 0], cmd, angle, q, qd, legs, arms, trunk, p[ARM_SWING], p[JOINT_KP], p[JOINT_KD],
                   p[CHEST_LEAN])
        for t in range(1, controls.shape[1]):
            controls[b, t] = controls[b, 0]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _single_stance(p, cmd, angle, rate, swing, phase, hip_aim, abduction_aim, rotation_aim, pitch_torque,
                   roll_torque, yaw_torque):
    """Leg commands [2, 6] (written) while `swing` swings towards the joint aims (rad) and the other leg stands."""
    stance = 1 - swing
    balance_hips(cmd, angle, rate, swing, p[HIP_KP], p[HIP_KD], hip_aim, abduction_aim, rotation_aim, pitch_torque,
                 roll_torque, yaw_torque)
    knee = p[KNEE_SWING] if phase < p[EARLY] else p[KNEE_REACH]
    cmd[swing, KN] = pd(p[JOINT_KP], p[JOINT_KD], knee, angle[swing, KN], rate[swing, KN])
    cmd[swing, AN] = pd(p[JOINT_KP], p[JOINT_KD], p[ANKLE_SWING], angle[swing, AN], rate[swing, AN])
    cmd[stance, KN] = pd(p[JOINT_KP], p[JOINT_KD], p[KNEE_STANCE], angle[stance, KN], rate[stance, KN])
    ankle = p[ANKLE_PUSH] if phase >= p[PUSH_START] else p[ANKLE_STANCE]
    cmd[stance, AN] = pd(p[JOINT_KP], p[JOINT_KD], ankle, angle[stance, AN], rate[stance, AN])


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _double_stance(p, cmd, angle, rate, trailing, pitch_torque, roll_torque, yaw_torque):
    """Leg commands [2, 6] (written) while both feet stand: the hips share the pelvis's balance, the leading leg
    takes the weight, the `trailing` one pushes off."""
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0  # how each hip's abduction and rotation turn the pelvis
        cmd[side, HF] = clip(0.5 * pitch_torque)
        cmd[side, HA] = clip(0.5 * sign * roll_torque)
        cmd[side, HR] = clip(0.5 * sign * yaw_torque)
        cmd[side, KN] = pd(p[JOINT_KP], p[JOINT_KD], p[KNEE_STANCE], angle[side, KN], rate[side, KN])
        ankle = p[ANKLE_PUSH] if side == trailing else p[ANKLE_STANCE]
        cmd[side, AN] = pd(p[JOINT_KP], p[JOINT_KD], ankle, angle[side, AN], rate[side, AN])
