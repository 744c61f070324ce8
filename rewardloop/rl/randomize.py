"""Domain randomization per environment copy: MotionVL's ranges, drawn at every episode start.

Each copy owns its MjModel; a draw writes its fields from the scene's base model, so draws never compound and a
saved draw restores exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from rewardloop.sim.scene import actuator_strength, is_servo


@dataclass(frozen=True)
class Randomization:
    """Ranges drawn uniformly per copy and episode (MotionVL's, Sec. III-D); a range (x, x) fixes a value."""

    friction: tuple[float, float] = (0.2, 1.3)
    """Sliding friction coefficient μ of every contact."""
    pd_gain: tuple[float, float] = (0.8, 1.2)
    """Factor on every servo's stiffness kp and damping kv."""
    joint_friction: tuple[float, float] = (0.1, 3.0)
    """Dry friction of each actuated joint, in percent of its actuator's torque limit (MotionVL's 0.1-3.0 N·m are
    for a joint of about 100 N·m; as a share of the limit it carries over to a 20 N·m or a 139 N·m joint)."""
    latency_steps: tuple[int, int] = (1, 10)
    """Physics steps between a new joint target and the servos (at most one control period)."""
    push_interval_s: float = 8.0
    """Seconds between pushes of the pelvis (0: none)."""
    push_speed: float = 0.5
    """Largest horizontal speed (m/s) a push adds to the pelvis, in a random direction."""
    obs_noise: float = 1.0
    """Scale of the observation noise (0: none); see `env.OBS_NOISE` for each group's amplitude."""


@dataclass(frozen=True)
class Draw:
    """One copy's draw. Arrays are [B] over copies."""

    friction: np.ndarray
    pd_gain: np.ndarray
    joint_friction: np.ndarray
    latency_steps: np.ndarray


def draw(ranges: Randomization, rng: np.random.Generator, count: int) -> Draw:
    """`count` independent draws from `ranges`."""
    def uniform(bounds: tuple[float, float]) -> np.ndarray:
        return rng.uniform(bounds[0], bounds[1], count)

    low, high = ranges.latency_steps
    return Draw(uniform(ranges.friction), uniform(ranges.pd_gain), uniform(ranges.joint_friction),
                rng.integers(low, high + 1, count))


def apply(model: mujoco.MjModel, base: mujoco.MjModel, friction: float, pd_gain: float,
          joint_friction: float) -> None:
    """Write one draw into `model` (a copy of `base`): contact friction, servo gains, actuated joints' friction."""
    model.geom_friction[:, 0] = friction
    servos = [i for i in range(base.nu) if is_servo(base, i)]
    model.actuator_gainprm[servos, 0] = base.actuator_gainprm[servos, 0] * pd_gain
    model.actuator_biasprm[servos, 1:3] = base.actuator_biasprm[servos, 1:3] * pd_gain
    dofs = base.jnt_dofadr[base.actuator_trnid[servos, 0]]
    model.dof_frictionloss[dofs] = joint_friction / 100.0 * actuator_strength(base)[servos]
