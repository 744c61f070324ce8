"""What the controllers of the MyoSuite muscle legs share: the functional muscle groups of each leg, and where
the joints, muscles and sensors a compiled kernel reads are.

The 40 muscles of each leg are merged into the eleven functional groups of Song and Geyer's (2015) reflex model,
by muscle name, as MyoSuite's MyoLegReflex merges them; the five muscles it leaves idle (the long toe
extensors and flexors, tensor fasciae latae) join the group they act with, so every muscle is driven.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import mujoco
import numpy as np

from rewardloop.sim.bodies import SIDES
from rewardloop.sim.scene import STATE_SPEC, CompiledScene

MUSCLE_GROUPS: dict[str, tuple[str, ...]] = {
    "HAB": ("piri", "sart", "glmed1", "glmed2", "glmin1", "glmin2", "glmin3"),
    "HAD": ("addbrev", "addlong", "addmagDist", "addmagIsch", "addmagMid", "addmagProx", "grac"),
    "HFL": ("iliacus", "psoas", "tfl"),
    "GLU": ("glmax1", "glmax2", "glmax3", "glmed3"),
    "HAM": ("semimem", "semiten", "bflh"),
    "RF": ("recfem",),
    "VAS": ("vasint", "vaslat", "vasmed"),
    "BFSH": ("bfsh",),
    "GAS": ("gaslat", "gasmed"),
    "SOL": ("soleus", "tibpost", "perbrev", "perlong", "fdl", "fhl"),
    "TA": ("tibant", "edl", "ehl"),
}
"""Functional group -> muscle names without the side suffix (_l, _r): hip abductors, hip adductors, hip flexors,
gluteals (hip extensors), hamstrings (biarticular hip extensors and knee flexors), rectus femoris, vasti, biceps
femoris short head, gastrocnemii, soleus and the other uniarticular plantarflexors, tibialis anterior and the
other dorsiflexors. Kernel column order."""
GROUPS = tuple(MUSCLE_GROUPS)
HAB, HAD, HFL, GLU, HAM, RF, VAS, BFSH, GAS, SOL, TA = range(len(GROUPS))
LEG_JOINTS = ("hip_flexion", "hip_adduction", "knee_flexion", "ankle_dorsiflexion")
"""Semantic leg joints the kernels read, in column order."""
HIP, ADDUCTION, KNEE, ANKLE = range(len(LEG_JOINTS))
SENSORS = ("pelvis_xaxis", "pelvis_zaxis", "pelvis_angvel", "com_vel", "left_foot_contact", "right_foot_contact")
"""Sensors the kernels read, in the order of the address table."""
PELVIS_X, PELVIS_Z, PELVIS_W, COM_VEL, CONTACT = range(5)
"""Indices in SENSORS; the right foot's contact follows the left's."""


class MuscleLayout(NamedTuple):
    """Addresses and constants the kernels read, as arrays numba takes."""

    joints: np.ndarray
    """[2 sides, 4 joints, 3]: qpos address, dof address, sign (MJCF -> semantic)."""
    members: np.ndarray
    """[2 sides, 11 groups, most members] actuator indices of each group's muscles, -1 padded."""
    force_sensor: np.ndarray
    """[nu] sensordata address of each actuator's force."""
    peak_force: np.ndarray
    """[nu] each muscle's peak isometric force (N)."""
    sensors: np.ndarray
    """[len(SENSORS)] sensordata addresses."""
    weight: float
    """Body weight (N)."""
    rotation: np.ndarray
    """[2 sides, 3]: qpos address, dof address of the hip rotation, and the sign of a pelvis yaw it follows
    (+1 when the pelvis turning left about a planted thigh lowers the joint's angle)."""
    rotators: np.ndarray
    """[2 sides, nu] each muscle's push on its leg's hip rotation at the start posture, + raising the joint's
    angle: its moment arm times the share of rotation in its action at the hip, as a fraction of the largest
    that way (the internal rotators are much weaker than the external ones); 0 for the other leg's muscles."""


def group_members(scene: CompiledScene) -> dict[str, tuple[int, ...]]:
    """'left_GLU' etc. -> actuator indices of that leg's group, for a body with the MyoSuite leg muscles."""
    model = scene.model
    names = [model.actuator(a).name for a in range(model.nu)]
    return {f"{side}_{group}": tuple(names.index(f"{muscle}_{side[0]}") for muscle in muscles)
            for side in SIDES for group, muscles in MUSCLE_GROUPS.items()}


def muscle_layout(scene: CompiledScene) -> MuscleLayout:
    """The layout of a MyoSuite leg body in this compiled scene."""
    model, layout = scene.model, scene.layout
    joints = np.array([[[layout.joint_qpos[f"{side}_{j}"], layout.joint_qvel[f"{side}_{j}"],
                         layout.joint_sign[f"{side}_{j}"]] for j in LEG_JOINTS] for side in SIDES])
    members_of = group_members(scene)
    widest = max(len(m) for m in MUSCLE_GROUPS.values())
    members = np.full((2, len(GROUPS), widest), -1, dtype=np.int64)
    for s, side in enumerate(SIDES):
        for g, group in enumerate(GROUPS):
            indices = members_of[f"{side}_{group}"]
            members[s, g, : len(indices)] = indices
    force_sensor = np.array([layout.sensors[f"force_{model.actuator(a).name}"][0] for a in range(model.nu)],
                            dtype=np.int64)
    sensors = np.array([layout.sensors[name][0] for name in SENSORS], dtype=np.int64)
    weight = float(model.body_subtreemass[0] * -model.opt.gravity[2])
    return MuscleLayout(joints, members, force_sensor, model.actuator_gainprm[:, 2].copy(), sensors, weight,
                        *hip_rotators(scene))


def hip_rotators(scene: CompiledScene) -> tuple[np.ndarray, np.ndarray]:
    """([2, 3] each hip rotation's qpos and dof address and yaw sign, [2, nu] each muscle's normalised push on
    it) at the scene's start posture (see `MuscleLayout`)."""
    model, layout = scene.model, scene.layout
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    mujoco.mj_forward(model, data)
    moment = np.zeros((model.nu, model.nv))
    mujoco.mju_sparse2dense(moment, data.actuator_moment, data.moment_rownnz, data.moment_rowadr, data.moment_colind)
    joints, rotators = np.zeros((2, 3)), np.zeros((2, model.nu))
    for s, side in enumerate(SIDES):
        qpos, dof = layout.joint_qpos[f"{side}_hip_rotation"], layout.joint_qvel[f"{side}_hip_rotation"]
        # The thigh turns about the joint axis; with the thigh planted, the pelvis turns the other way.
        joints[s] = qpos, dof, math.copysign(1.0, data.xaxis[model.dof_jntid[dof], 2])
        mine = np.array([model.actuator(a).name.endswith(f"_{side[0]}") for a in range(model.nu)])
        hip = moment[:, [layout.joint_qvel[f"{side}_{j}"] for j in ("hip_flexion", "hip_adduction", "hip_rotation")]]
        # A muscle pulls (negative force): it moves the joint against its moment arm. Weighted by how much of its
        # action at the hip is rotation, so a yaw correction recruits rotators more than the big hip extensors.
        push = -moment[:, dof] * mine * np.abs(moment[:, dof]) / np.maximum(np.linalg.norm(hip, axis=1), 1e-12)
        rotators[s] = np.where(push > 0, push / push.max(), -push / push.min())  # each way at most 1
    return joints, rotators
