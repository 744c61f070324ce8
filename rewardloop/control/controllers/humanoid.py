"""What every structured controller of the dm_control humanoid shares: where its joints, motors and sensors are,
and compiled pieces of feedback (the heading frame, the centre of mass against a foot, PD commands, the arms
and chest).

Angles are semantic (hip flexion + forward, knee flexion + bent, ankle dorsiflexion + toes up); commands are
fractions of each motor's strength in [-1, 1].
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from rewardloop.sim.bodies import SIDES
from rewardloop.sim.scene import CompiledScene

LEG_JOINTS = ("hip_flexion", "hip_adduction", "hip_rotation", "knee_flexion", "ankle_dorsiflexion")
"""Semantic leg joints, in the kernels' column order (then the ankle's inversion, humanoid-specific)."""
HF, HA, HR, KN, AN, AI = range(6)
ARM_REST = {"left": (-0.785, 0.436, -1.571), "right": (0.785, -0.436, -1.571)}
"""Shoulder1, shoulder2, elbow (MJCF, rad) that hang the arms beside the hips."""
ARM_FORWARD = {"left": (0.707, -0.707, 0.0), "right": (-0.707, 0.707, 0.0)}
"""Unit direction in (shoulder1, shoulder2, elbow) that swings the hand forward."""
SENSORS = ("pelvis_xaxis", "pelvis_zaxis", "pelvis_angvel", "com_pos", "com_vel", "left_heel_pos",
           "left_toe_pos", "right_heel_pos", "right_toe_pos", "left_foot_contact", "right_foot_contact")
"""Sensors the kernels read, in the order of the address table."""
CONTACT = 9
"""Index in SENSORS of the left foot's contact; the right foot's follows."""
COM = 3
"""Index in SENSORS of the centre of mass's position; its velocity's follows."""


class HumanoidLayout(NamedTuple):
    """Addresses the kernels read and write, as arrays numba takes."""

    legs: np.ndarray
    """[2 sides, 6 joints, 4]: qpos address, dof address, actuator, sign (MJCF -> semantic)."""
    arms: np.ndarray
    """[2 sides, 3 joints, 5]: qpos address, dof address, actuator, rest angle, forward swing direction."""
    trunk: np.ndarray
    """[3, 4] abdomen y (chest flexion), z, x: qpos address, dof address, actuator, sign."""
    sensors: np.ndarray
    """[len(SENSORS)] sensordata addresses."""


def humanoid_layout(scene: CompiledScene) -> HumanoidLayout:
    """The layout of the humanoid in this compiled scene."""
    model, layout = scene.model, scene.layout
    actuator = {model.actuator(a).name: a for a in range(model.nu)}

    def joint(name: str) -> tuple[int, int, int]:
        jid = model.joint(name).id
        return int(model.jnt_qposadr[jid]), int(model.jnt_dofadr[jid]), actuator[name]

    legs = np.zeros((2, 6, 4))
    for s, side in enumerate(SIDES):
        for j, semantic in enumerate(LEG_JOINTS):
            legs[s, j] = (*joint(scene.body.joints[f"{side}_{semantic}"].mjcf), layout.joint_sign[f"{side}_{semantic}"])
        legs[s, AI] = (*joint(f"{side}_ankle_x"), 1.0)
    arms = np.array([[[*joint(f"{side}_{n}"), rest, forward] for n, rest, forward in
                      zip(("shoulder1", "shoulder2", "elbow"), ARM_REST[side], ARM_FORWARD[side], strict=True)]
                     for side in SIDES])
    trunk = np.array([[*joint("abdomen_y"), -1.0], [*joint("abdomen_z"), 1.0], [*joint("abdomen_x"), 1.0]])
    sensors = np.array([layout.sensors[name][0] for name in SENSORS], dtype=np.int64)
    return HumanoidLayout(legs, arms, trunk, sensors)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def clip(command: float) -> float:
    """A command clipped to the motor's range [-1, 1]."""
    return min(1.0, max(-1.0, command))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def pd(kp: float, kd: float, target: float, angle: float, rate: float) -> float:
    """A PD command as a fraction of the motor's strength, clipped to [-1, 1]."""
    return clip(kp * (target - angle) - kd * rate)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def within(command: float, trunk: float) -> float:
    """A swing hip command limited so that the stance hip, which must give `trunk` minus it, stays in range."""
    return min(trunk + 1.0, max(trunk - 1.0, command))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def wrap(angle: float) -> float:
    """Angle (rad) -> the same angle within [-π, π)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def follow_heading(memory: np.ndarray, slot: int, turn_rate: float, time: float, yaw: float) -> float:
    """The wanted heading less the pelvis `yaw` (rad, within [-π, π)) at `time` s. The wanted heading is
    `turn_rate` × time plus an offset kept in `memory[slot + 1]`, with the rate last used in `memory[slot]` (both
    0 at the start): when a planner changes the rate mid-motion, the offset takes up the difference, so that the
    wanted heading turns on from where it is at the new rate instead of jumping by Δrate × time (at 5 s a 0.1
    rad/s change was a 0.5-rad yank). A constant rate gives rate × time to the last bit."""
    if turn_rate != memory[slot]:
        memory[slot + 1] += (memory[slot] - turn_rate) * time
        memory[slot] = turn_rate
    return wrap(turn_rate * time + memory[slot + 1] - yaw)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def pelvis_frame(s: np.ndarray, sensors: np.ndarray) -> tuple[float, float, float, float, float, float, float, float]:
    """Sensors -> yaw, heading (cos, sin), pitch (+ forward), roll (+ left side up) and their rates (rad, rad/s)."""
    px, pz, w = sensors[0], sensors[1], sensors[2]
    yaw = math.atan2(s[px + 1], s[px])
    fx, fy = math.cos(yaw), math.sin(yaw)  # the heading; its left is (-fy, fx)
    pitch = math.atan2(s[pz] * fx + s[pz + 1] * fy, s[pz + 2])
    roll = math.atan2(s[pz] * fy - s[pz + 1] * fx, s[pz + 2])
    return yaw, fx, fy, pitch, roll, -s[w] * fy + s[w + 1] * fx, s[w] * fx + s[w + 1] * fy, s[w + 2]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def com_from_foot(s: np.ndarray, sensors: np.ndarray, foot: int, fx: float,
                  fy: float) -> tuple[float, float, float, float]:
    """Centre of mass ahead of and left of `foot`'s midpoint (m), and its velocity forward and left (m/s)."""
    heel, toe, com, vel = sensors[5 + 2 * foot], sensors[6 + 2 * foot], sensors[COM], sensors[COM + 1]
    dx = s[com] - 0.5 * (s[heel] + s[toe])
    dy = s[com + 1] - 0.5 * (s[heel + 1] + s[toe + 1])
    return dx * fx + dy * fy, -dx * fy + dy * fx, s[vel] * fx + s[vel + 1] * fy, -s[vel] * fy + s[vel + 1] * fx


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def read_legs(q: np.ndarray, qd: np.ndarray, legs: np.ndarray, angle: np.ndarray, rate: np.ndarray) -> None:
    """Semantic leg angles and rates [2, 6] (written) from qpos and qvel."""
    for side in range(2):
        for j in range(6):
            angle[side, j] = legs[side, j, 3] * q[int(legs[side, j, 0])]
            rate[side, j] = legs[side, j, 3] * qd[int(legs[side, j, 1])]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def write_body(out: np.ndarray, cmd: np.ndarray, angle: np.ndarray, q: np.ndarray, qd: np.ndarray,
               layout_legs: np.ndarray, arms: np.ndarray, trunk: np.ndarray, arm_swing: float, kp: float, kd: float,
               chest_lean: float) -> None:
    """Motor commands `out` [nu] from the legs' semantic commands [2, 6], arms swinging against the legs
    (`arm_swing` rad per rad of hip flexion difference) and the chest held at `chest_lean` on the pelvis."""
    for side in range(2):
        for j in range(6):
            out[int(layout_legs[side, j, 2])] = layout_legs[side, j, 3] * cmd[side, j]
        swing = arm_swing * 0.5 * (angle[1 - side, HF] - angle[side, HF])
        for k in range(3):
            target = arms[side, k, 3] + swing * arms[side, k, 4]
            out[int(arms[side, k, 2])] = pd(kp, kd, target, q[int(arms[side, k, 0])], qd[int(arms[side, k, 1])])
    for k in range(3):
        sign, target = trunk[k, 3], chest_lean if k == 0 else 0.0
        out[int(trunk[k, 2])] = sign * pd(kp, kd, target, sign * q[int(trunk[k, 0])], sign * qd[int(trunk[k, 1])])


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def balance_hips(cmd: np.ndarray, angle: np.ndarray, rate: np.ndarray, swing: int, kp: float, kd: float,
                 hip_aim: float, abduction_aim: float, rotation_aim: float, pitch_torque: float, roll_torque: float,
                 yaw_torque: float) -> None:
    """Hip commands [2, 6] (written) in single stance, after SIMBICON: the swing hip PD (`kp`, `kd`) towards its
    aims (rad), within what leaves the stance hip able to hold the pelvis (the trunk has priority); the stance
    hip gives the pelvis's balance torques (pitch, roll, yaw) minus the swing hip's reaction."""
    stance, outward = 1 - swing, 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
    cmd[swing, HF] = within(pd(kp, kd, hip_aim, angle[swing, HF], rate[swing, HF]), pitch_torque)
    cmd[swing, HA] = within(pd(kp, kd, abduction_aim, angle[swing, HA], rate[swing, HA]), outward * roll_torque)
    cmd[swing, HR] = within(pd(kp, kd, rotation_aim, angle[swing, HR], rate[swing, HR]), outward * yaw_torque)
    cmd[stance, HF] = clip(pitch_torque - cmd[swing, HF])
    cmd[stance, HA] = clip(-outward * (roll_torque - outward * cmd[swing, HA]))
    cmd[stance, HR] = clip(-outward * (yaw_torque - outward * cmd[swing, HR]))
