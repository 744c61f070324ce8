"""A phase-driven gait for the torque humanoid: the legs follow people's hip, knee and ankle curves over a gait
cycle, with SIMBICON-style balance on top.

A gait clock runs through the cycle in `period` seconds; the left leg is at its phase and the right leg half a
cycle later, so each leg is in stance for the first 60 % of its own cycle (as people are; both legs stand for a
tenth of the cycle around each heel strike) and swings for the rest. The clock waits at the end of a swing until
that foot touches down, and jumps to heel strike when it touches down early, so the legs keep step with the
ground. Each joint aims at the normative human curve at its leg's phase (rewardloop/critic/human_gait.json),
scaled and offset by parameters. On top of that:
- foot placement: over the swing, the swing hip's aim shifts by `place_pos` × d + `place_vel` × (v − `speed`),
  where d and v are the centre of mass's position and velocity relative to the stance foot along the heading
  (sideways the same with `width`, `place_pos_lat`, `place_vel_lat`); the swing thigh is aimed in the world
  frame (its aim follows the pelvis's lean error);
- trunk balance: the stance hips pitch, roll and turn the pelvis towards `trunk_pitch`, upright and the target
  heading (a virtual torque on the pelvis, minus the swing hip's reaction; shared in double stance);
- propulsion: the stance hips extend by `propel` per m/s the centre of mass is slower than `speed`;
- the arms swing against the legs (`arm_swing`), the chest leans `chest_lean` on the pelvis.
Heading follows `turn_rate` (rad/s, + left). Angles are semantic; commands are fractions of motor strength.
"""

from __future__ import annotations

import numba
import numpy as np

from rewardloop.control.controllers import Parameter, ParameterSpace, register
from rewardloop.control.humanoid import (
    AI,
    AN,
    CONTACT,
    HA,
    HF,
    HR,
    KN,
    clip,
    com_from_foot,
    humanoid_layout,
    pd,
    pelvis_frame,
    read_legs,
    within,
    wrap,
    write_body,
)
from rewardloop.critic.gait import JOINTS, human_gait_reference
from rewardloop.sim.scene import CompiledScene

P = Parameter
PARAMETERS = ParameterSpace((
    P("period", 0.9, 1.4, 1.1, "s", "duration of a gait cycle (two steps): cadence = 120 / period steps/min"),
    P("hip_scale", 0.3, 1.5, 1.0, "-", "factor on the human hip flexion curve (longer or shorter steps)"),
    P("hip_offset", -0.4, 0.4, 0.0, "rad", "added to the hip flexion aim"),
    P("knee_scale", 0.2, 1.5, 1.0, "-", "factor on the human knee flexion curve"),
    P("knee_offset", -0.2, 0.4, 0.0, "rad", "added to the knee flexion aim"),
    P("ankle_scale", 0.0, 2.0, 1.0, "-", "factor on the human ankle dorsiflexion curve"),
    P("ankle_offset", -0.4, 0.4, 0.0, "rad", "added to the ankle dorsiflexion aim"),
    P("place_pos", -1.0, 3.0, 0.5, "rad/m", "swing thigh aim per metre of CoM ahead of the stance foot"),
    P("place_vel", -1.0, 2.0, 0.3, "rad/(m/s)", "swing thigh aim per m/s of CoM speed above `speed`"),
    P("speed", 0.0, 2.5, 1.3, "m/s", "walking speed the foot placement aims for"),
    P("width", -0.2, 0.3, 0.05, "rad", "swing thigh angle outwards from vertical, before feedback"),
    P("place_pos_lat", -1.0, 3.0, 0.5, "rad/m", "outward swing thigh aim per m of CoM beside the stance foot"),
    P("place_vel_lat", -1.0, 2.0, 0.2, "rad/(m/s)", "outward swing thigh aim per m/s of sideways CoM speed"),
    P("propel", 0.0, 3.0, 0.5, "1/(m/s)", "stance hip extension per m/s of CoM speed below `speed` (hip strength)"),
    P("trunk_pitch", -0.3, 0.5, 0.1, "rad", "pelvis pitch the stance hips hold, + leaning forward"),
    P("chest_lean", -0.4, 0.6, 0.0, "rad", "chest flexion on the pelvis, + bending forward"),
    P("trunk_kp", 1.0, 20.0, 6.0, "1/rad", "pelvis balance stiffness (hip strength per rad of lean error)"),
    P("trunk_kd", 0.0, 2.0, 0.4, "s/rad", "pelvis balance damping (hip strength per rad/s)"),
    P("hip_kp", 1.0, 20.0, 4.0, "1/rad", "swing hip stiffness (strength per rad)"),
    P("hip_kd", 0.0, 2.0, 0.2, "s/rad", "swing hip damping (strength per rad/s)"),
    P("joint_kp", 1.0, 20.0, 6.0, "1/rad", "knee, ankle and trunk stiffness (strength per rad)"),
    P("joint_kd", 0.0, 1.0, 0.2, "s/rad", "knee, ankle and trunk damping (strength per rad/s)"),
    P("arm_swing", 0.0, 2.0, 0.8, "-", "shoulder swing per rad of hip flexion difference, against the legs"),
    P("turn_rate", -1.0, 1.0, 0.0, "rad/s", "rate of the target heading, + turning left"),
    P("yaw_kp", 0.0, 10.0, 3.0, "1/rad", "heading stiffness through the stance hip (strength per rad)"),
))
"""The phase gait's parameters, in vector order."""

(PERIOD, HIP_SCALE, HIP_OFFSET, KNEE_SCALE, KNEE_OFFSET, ANKLE_SCALE, ANKLE_OFFSET, PLACE_POS, PLACE_VEL, SPEED,
 WIDTH, PLACE_POS_LAT, PLACE_VEL_LAT, PROPEL, TRUNK_PITCH, CHEST_LEAN, TRUNK_KP, TRUNK_KD, HIP_KP, HIP_KD, JOINT_KP,
 JOINT_KD, ARM_SWING, TURN_RATE, YAW_KP) = range(PARAMETERS.size)
PHASE, LEFT_DOWN, RIGHT_DOWN = 0, 1, 2
"""Memory columns: the left leg's phase (0..1; the right leg's is half a cycle on) and each foot's last contact."""
TOE_OFF = 0.6
"""Phase at which a leg leaves the ground (people: 59-62 % of the cycle)."""
EARLIEST_TOUCHDOWN = 0.8
"""Phase after which a touchdown ends the swing (earlier contacts are scuffs)."""
LATEST_SWING = 0.98
"""Phase at which the clock waits for a swinging foot that has not touched down."""


def reference_curves() -> np.ndarray:
    """[3, 51] the human hip, knee and ankle curves over the cycle (rad), in the kernel's order."""
    reference = human_gait_reference()
    order = [JOINTS.index(name) for name in ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")]
    return np.ascontiguousarray(np.radians(reference.mean[order]))


@register("phase_gait", "torque")
class PhaseGait:
    """The phase-driven human-curve gait on the dm_control humanoid (see the module docstring)."""

    kind = "phase_gait"
    space = PARAMETERS
    chunk = 1
    memory_size = 3

    def __init__(self, scene: CompiledScene):
        self.dt, self.nu, self.nq = scene.dt, scene.model.nu, scene.model.nq
        self.layout = humanoid_layout(scene)
        self.curves = reference_curves()

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.empty((len(state), self.chunk, self.nu))
        _phase_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, *self.layout,
                      self.curves, self.nq, self.dt * self.chunk, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _curve(curves: np.ndarray, joint: int, phase: float) -> float:
    """The reference curve of `joint` at `phase` (0..1), interpolated linearly."""
    position = phase * (curves.shape[1] - 1)
    left = min(int(position), curves.shape[1] - 2)
    frac = position - left
    return (1.0 - frac) * curves[joint, left] + frac * curves[joint, left + 1]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _advance(memory: np.ndarray, contact: np.ndarray, step: float) -> float:
    """Move the gait clock on by `step` of a cycle, in step with the feet; -> the left leg's new phase."""
    phase = memory[PHASE]
    for side in range(2):
        own = (phase + 0.5 * side) % 1.0
        touched = contact[side] and not memory[LEFT_DOWN + side]
        if touched and (own >= EARLIEST_TOUCHDOWN or own < 0.05):
            phase = (1.0 - 0.5 * side) % 1.0  # this leg's heel strike
        memory[LEFT_DOWN + side] = contact[side]
    for side in range(2):
        own = (phase + 0.5 * side) % 1.0
        if own < LATEST_SWING <= own + step and not contact[side]:
            return (LATEST_SWING - 0.5 * side) % 1.0  # wait for this foot
    return (phase + step) % 1.0


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _phase_kernel(state, sensed, memory, params, legs, arms, trunk, sensors, curves, nq, interval, controls):
    """One update for every row: [b, nstate], [b, nsensor], [b, 3] memory (in place), [b, P] params -> controls
    [b, chunk, nu] (written)."""
    angle, rate, cmd = np.empty((2, 6)), np.empty((2, 6)), np.zeros((2, 6))
    contact, phases = np.zeros(2), np.zeros(2)
    for b in range(state.shape[0]):
        p, s = params[b], sensed[b]
        q, qd = state[b, 1 : 1 + nq], state[b, 1 + nq :]
        for side in range(2):
            contact[side] = 1.0 if s[sensors[CONTACT + side]] > 0 else 0.0
        memory[b, PHASE] = _advance(memory[b], contact, interval / p[PERIOD])
        for side in range(2):
            phases[side] = (memory[b, PHASE] + 0.5 * side) % 1.0
        swing = 0 if phases[0] >= TOE_OFF else 1 if phases[1] >= TOE_OFF else -1
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        read_legs(q, qd, legs, angle, rate)
        heading_error = wrap(p[TURN_RATE] * state[b, 0] - yaw)
        pitch_torque = clip(p[TRUNK_KP] * (p[TRUNK_PITCH] - pitch) - p[TRUNK_KD] * pitch_rate)
        roll_torque = clip(p[TRUNK_KP] * (0.0 - roll) - p[TRUNK_KD] * roll_rate)
        yaw_torque = clip(p[YAW_KP] * heading_error - p[TRUNK_KD] * yaw_rate)
        d_fwd, d_lat, v_fwd, v_lat = com_from_foot(s, sensors, 1 if swing == 0 else 0, fx, fy)
        push = -p[PROPEL] * (p[SPEED] - v_fwd)  # stance hip extension drives the body on over its foot
        for side in range(2):
            knee = p[KNEE_OFFSET] + p[KNEE_SCALE] * _curve(curves, 1, phases[side])
            ankle = p[ANKLE_OFFSET] + p[ANKLE_SCALE] * _curve(curves, 2, phases[side])
            cmd[side, KN] = pd(p[JOINT_KP], p[JOINT_KD], knee, angle[side, KN], rate[side, KN])
            cmd[side, AN] = pd(p[JOINT_KP], p[JOINT_KD], ankle, angle[side, AN], rate[side, AN])
            cmd[side, AI] = pd(0.5 * p[JOINT_KP], p[JOINT_KD], 0.0, angle[side, AI], rate[side, AI])
        if swing >= 0:
            stance = 1 - swing
            outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
            reach = (phases[swing] - TOE_OFF) / (1.0 - TOE_OFF)  # 0 at toe-off, 1 at heel strike
            hip = p[HIP_OFFSET] + p[HIP_SCALE] * _curve(curves, 0, phases[swing])
            thigh = hip + reach * (p[PLACE_POS] * d_fwd + p[PLACE_VEL] * (v_fwd - p[SPEED]))
            lateral = outward * p[WIDTH] + reach * (p[PLACE_POS_LAT] * d_lat + p[PLACE_VEL_LAT] * v_lat)
            # The trunk has priority: the swing hip gets only what leaves the stance hip able to hold the pelvis.
            cmd[swing, HF] = within(pd(p[HIP_KP], p[HIP_KD], thigh + pitch - p[TRUNK_PITCH], angle[swing, HF],
                                       rate[swing, HF]), pitch_torque)
            cmd[swing, HA] = within(pd(p[HIP_KP], p[HIP_KD], outward * (roll - lateral), angle[swing, HA],
                                       rate[swing, HA]), outward * roll_torque)
            cmd[swing, HR] = within(pd(p[HIP_KP], p[HIP_KD], -outward * heading_error, angle[swing, HR],
                                       rate[swing, HR]), outward * yaw_torque)
            cmd[stance, HF] = clip(pitch_torque - cmd[swing, HF] + push)
            cmd[stance, HA] = clip(-outward * (roll_torque - outward * cmd[swing, HA]))
            cmd[stance, HR] = clip(-outward * (yaw_torque - outward * cmd[swing, HR]))
        else:  # double stance: both hips share the pelvis's balance
            for side in range(2):
                sign = 1.0 if side == 0 else -1.0  # how each hip's abduction and rotation turn the pelvis
                cmd[side, HF] = clip(0.5 * (pitch_torque + push))
                cmd[side, HA] = clip(0.5 * sign * roll_torque)
                cmd[side, HR] = clip(0.5 * sign * yaw_torque)
        write_body(controls[b, 0], cmd, angle, q, qd, legs, arms, trunk, p[ARM_SWING], p[JOINT_KP], p[JOINT_KD],
                   p[CHEST_LEAN])
        for t in range(1, controls.shape[1]):
            controls[b, t] = controls[b, 0]
