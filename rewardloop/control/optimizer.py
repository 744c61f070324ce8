"""The Optimizer interface: (scene, reward, config, seed) -> Trajectory, and the literal registry of optimizers.

    trajectory = optimize(scene, reward, OptimizerConfig(kind="search", duration_s=10), seed=0)

Three families sit behind the one interface:
- posture-space sampling MPC (`mppi`, `cem`) and predictive sampling over raw controls (`predictive`), in
  `rewardloop.control.planners.mpc`: for any motion, planned online from the scene's start;
- the gait planner (`plan`), in `rewardloop.control.planners.gait_planning`: the shipped gait of the body that the
  reward ranks best, its steering parameters re-chosen online against the reward (receding-horizon sampling over a
  structured controller's parameters): for locomotion, where a change in the reward must change the motion;
- PPO (`ppo`), in `rewardloop.rl.optimize`: a network policy trained (or fine-tuned from the body's shipped base
  policy) against the reward through rsl_rl, its deterministic run the motion; robots with joint-position servos
  only, and only with the rl extra (torch is imported when it runs, never by this registry);
- policy search (`search`), in `rewardloop.control.search.cmaes`: CMA-ES over a structured controller's parameters
  (the humanoid's gait tracker and gait machine, the muscle legs' tracker and reflex circuit), warm-started from the
  shipped gait of the body that the reward ranks best. Its trajectory carries the policy it found.
`defaults.default_kind` picks between them for a scene and a kind of task.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from rewardloop.control.config import OPTIMIZER_KINDS, OptimizerConfig, PlannerConfig, Progress, SearchConfig
from rewardloop.control.planners.gait_planning import plan_gait_motion
from rewardloop.control.planners.mpc import best_update, cem_update, make_plant, mppi_update, plan_motion
from rewardloop.control.search.cmaes import search_motion
from rewardloop.control.trajectory import Trajectory
from rewardloop.reward.base import RewardFunction
from rewardloop.sim.scene import CompiledScene

__all__ = ["OPTIMIZERS", "OptimizerConfig", "PlannerConfig", "Progress", "SearchConfig", "make_plant",
           "optimize"]

Run = Callable[..., Trajectory]
"""(scene, reward, config, *, seed, progress) -> Trajectory."""


@dataclass(frozen=True)
class OptimizerKind:
    """A registered optimizer."""

    run: Run
    summary: str
    locomotion_only: bool = False
    """Needs a structured controller that walks the body."""


def train_ppo(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
              progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """PPO (`rewardloop.rl.optimize.train_motion`), imported here so that the base install needs no torch."""
    from rewardloop.rl import missing_extra

    try:
        from rewardloop.rl.optimize import train_motion
    except ImportError as error:
        raise missing_extra("--optimizer ppo", error) from None
    return train_motion(scene, reward, config, seed=seed, progress=progress)


OPTIMIZERS: dict[str, OptimizerKind] = {
    "mppi": OptimizerKind(functools.partial(plan_motion, update=mppi_update, space="posture"),
                          "posture-space MPPI over spline knots (MPC²-style)"),
    "cem": OptimizerKind(functools.partial(plan_motion, update=cem_update, space="posture"),
                         "posture-space cross-entropy method over spline knots"),
    "predictive": OptimizerKind(functools.partial(plan_motion, update=best_update, space="raw"),
                                "predictive sampling over raw controls (baseline)"),
    "search": OptimizerKind(search_motion, "CMA-ES policy search over a structured gait controller, warm-started "
                            "from the body's shipped gaits (locomotion)", locomotion_only=True),
    "plan": OptimizerKind(plan_gait_motion, "receding-horizon planning of a gait controller's steering parameters "
                          "against the reward, from the shipped gait it ranks best (locomotion)", locomotion_only=True),
    "ppo": OptimizerKind(train_ppo, "PPO (rsl_rl) training a network policy against the reward, fine-tuning the "
                         "body's shipped base policy where there is one (robots; the rl extra)"),
}
"""Every optimizer by kind name."""
assert tuple(OPTIMIZERS) == OPTIMIZER_KINDS, "config.OPTIMIZER_KINDS must list OPTIMIZERS"


def optimize(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
             progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """Produce a motion of config.duration_s seconds that maximizes `reward` on `scene`'s body."""
    return OPTIMIZERS[config.kind].run(scene, reward, config, seed=seed, progress=progress)
