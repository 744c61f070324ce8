"""Low-level controllers: target joint postures -> actuator commands.

Torque bodies use a PD law. The planner evaluates it inside MuJoCo: a copy of the model whose motors become
general actuators with an affine bias (force = kp·ctrl − kp·q − kd·q̇, clipped to the motor's own limits), so
batched rollouts need no Python per step. The executed motion applies the same law from Python on the body's
own, unmodified model (`PDController`).

Muscle bodies use the MPC² morphology-aware controller (`MuscleController`): target muscle lengths come from
posing a copy of the body at the target posture, each muscle's desired force grows with its length error
weighted by |moment arm| × joint error, and MuJoCo's force-length-velocity curve and activation dynamics are
inverted to give excitations in [0, 1]. Everything is vectorized over a batch of samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from rewardloop.errors import UserError
from rewardloop.sim.scene import CompiledScene


@dataclass(frozen=True)
class PostureSpace:
    """The joints a posture plan sets targets for."""

    names: tuple[str, ...]
    """[J] MJCF joint names."""
    qpos_adr: np.ndarray
    """[J] qpos addresses."""
    dof_adr: np.ndarray
    """[J] qvel addresses."""
    low: np.ndarray
    """[J] lower joint limits (rad)."""
    high: np.ndarray
    """[J] upper joint limits (rad)."""

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def span(self) -> np.ndarray:
        """[J] high − low (rad)."""
        return self.high - self.low

    def read(self, state: np.ndarray, model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
        """[..., nstate] full-physics states -> ([..., J] angles (rad), [..., J] rates (rad/s))."""
        return state[..., 1 + self.qpos_adr], state[..., 1 + model.nq + self.dof_adr]


def _joint_space(model: mujoco.MjModel, joints: list[int]) -> PostureSpace:
    rng = model.jnt_range[joints]
    return PostureSpace(tuple(model.joint(j).name for j in joints), model.jnt_qposadr[joints].copy(),
                        model.jnt_dofadr[joints].copy(), rng[:, 0].copy(), rng[:, 1].copy())


def posture_space(scene: CompiledScene) -> PostureSpace:
    """Joints of the posture plan: each motor's or servo's joint (torque bodies and robots, actuator order), or
    every limited hinge that muscles move and no equality constraint drives (muscle bodies)."""
    model = scene.model
    if scene.body.actuator_kind in ("torque", "servo"):
        if np.any(model.actuator_trntype != mujoco.mjtTrn.mjTRN_JOINT):
            raise UserError(f"{scene.scene.body}: posture plans need every actuator to act on one joint")
        return _joint_space(model, [int(j) for j in model.actuator_trnid[:, 0]])
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    mujoco.mj_forward(model, data)
    moment = np.zeros((model.nu, model.nv))
    mujoco.mju_sparse2dense(moment, data.actuator_moment, data.moment_rownnz, data.moment_rowadr, data.moment_colind)
    driven = {int(model.eq_obj1id[i]) for i in range(model.neq) if model.eq_type[i] == mujoco.mjtEq.mjEQ_JOINT}
    joints = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
              and model.jnt_limited[j] and j not in driven and np.abs(moment[:, model.jnt_dofadr[j]]).max() > 1e-6]
    return _joint_space(model, joints)


@dataclass(frozen=True)
class PDGains:
    """PD gains relative to each motor's strength: command = kp·(q* − q) − kd·q̇, clipped to the control range."""

    kp: float = 6.0
    """Command per rad of posture error (1/rad); full torque at 1/kp rad."""
    kd: float = 0.3
    """Command per rad/s of joint rate (s/rad)."""

    def __post_init__(self) -> None:
        if self.kp <= 0 or self.kd < 0:
            raise UserError(f"PD gains need kp > 0 and kd >= 0, got kp={self.kp}, kd={self.kd}")


def pd_model(scene: CompiledScene, gains: PDGains, *, timestep: float | None = None) -> mujoco.MjModel:
    """A copy of a torque body's model whose controls are target postures (rad).

    Each motor becomes a general actuator: force = kp·ctrl − (kp/gear)·length − (kd/gear)·velocity, where the
    joint transmission's length is gear·q, clipped to the motor's control range, so the joint torque is
    gear × clip(kp·(q* − q) − kd·q̇) — the motor limits are the body's own (gear × ctrlrange).
    """
    space = posture_space(scene)
    model = scene.model.__copy__()
    low, high = scene.ctrl_bounds()
    gear = model.actuator_gear[:, 0].copy()
    model.actuator_gaintype[:] = mujoco.mjtGain.mjGAIN_FIXED
    model.actuator_biastype[:] = mujoco.mjtBias.mjBIAS_AFFINE
    model.actuator_gainprm[:] = 0.0
    model.actuator_biasprm[:] = 0.0
    model.actuator_gainprm[:, 0] = gains.kp
    model.actuator_biasprm[:, 1] = -gains.kp / gear
    model.actuator_biasprm[:, 2] = -gains.kd / gear
    model.actuator_ctrllimited[:] = 1
    model.actuator_ctrlrange[:] = np.stack([space.low, space.high], axis=1)
    model.actuator_forcelimited[:] = 1
    model.actuator_forcerange[:] = np.stack([low, high], axis=1)
    if timestep is not None:
        model.opt.timestep = timestep
    return model


class PDController:
    """The PD law in NumPy on the body's own motors, for the executed motion."""

    def __init__(self, scene: CompiledScene, gains: PDGains):
        self.scene, self.gains = scene, gains
        self.space = posture_space(scene)
        self.low, self.high = scene.ctrl_bounds()

    def __call__(self, state: np.ndarray, target: np.ndarray) -> np.ndarray:
        """[B, nstate] states, [B, J] target postures (rad; J = nu) -> [B, nu] motor commands in range."""
        q, qdot = self.space.read(state, self.scene.model)
        target = np.clip(target, self.space.low, self.space.high)
        return np.clip(self.gains.kp * (target - q) - self.gains.kd * qdot, self.low, self.high)
