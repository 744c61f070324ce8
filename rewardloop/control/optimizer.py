"""The Optimizer interface: (scene, reward, config, seed) -> Trajectory, and the registry of optimizers.

    trajectory = optimize(scene, reward, OptimizerConfig(kind="mppi", duration_s=10), seed=0)

Every optimizer runs a receding-horizon sampling planner (`rewardloop.control.mpc`) and executes its plan on
the body's own physics; only the planner's internal rollouts may use a coarser `planning_dt`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rewardloop.control.lowlevel import PDGains
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.mpc import RecedingHorizon, Update, best_update, cem_update, mppi_update
from rewardloop.control.muscles import MuscleGains
from rewardloop.control.plants import Plant, PostureMuscle, PosturePD, RawControls
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError, unknown_name
from rewardloop.reward.base import RewardFunction, term_statistics
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import CompiledScene


@dataclass(frozen=True)
class PlannerConfig:
    """The sampling planner's settings."""

    samples: int = 64
    """Sampled plans per planning iteration (sample 0 is the current plan)."""
    horizon_s: float = 0.3
    """Planning horizon (s)."""
    replan_every: int = 4
    """Physics steps of the body executed between replans."""
    planning_dt: float | None = 0.01
    """Timestep of the planner's rollouts (s); None uses the body's own. Never affects the executed motion."""
    knots: int = 4
    """Spline knots over the horizon."""
    elite_fraction: float = 0.1
    """Fraction of samples in the elite set."""
    iterations: int = 1
    """Planning iterations per replan."""
    noise: float = 0.08
    """Sampling noise standard deviation as a fraction of each target's range (the maximum for CEM)."""
    min_noise: float = 0.01
    """Lower bound of the noise, as a fraction of each target's range."""
    temperature: float = 0.2
    """MPPI temperature, relative to the spread of elite returns."""
    pd: PDGains = field(default_factory=PDGains)
    """Low-level PD gains of torque bodies."""
    muscle: MuscleGains = field(default_factory=MuscleGains)
    """Low-level muscle controller gains of muscle bodies."""

    def __post_init__(self) -> None:
        checks = {
            "samples must be at least 2": self.samples >= 2,
            "horizon_s must be positive": self.horizon_s > 0,
            "replan_every must be at least 1": self.replan_every >= 1,
            "planning_dt must be positive": self.planning_dt is None or self.planning_dt > 0,
            "knots must be at least 1": self.knots >= 1,
            "elite_fraction must be in (0, 1]": 0 < self.elite_fraction <= 1,
            "iterations must be at least 1": self.iterations >= 1,
            "noise must be positive and min_noise within [0, noise]": 0 <= self.min_noise <= self.noise > 0,
            "temperature must be positive": self.temperature > 0,
        }
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad planner config: " + "; ".join(problems))


@dataclass(frozen=True)
class OptimizerConfig:
    """Which optimizer, its planner, and how long a motion to produce."""

    kind: Literal["mppi", "cem", "predictive"] = "mppi"
    """Registry name in OPTIMIZERS."""
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    """Planner settings."""
    duration_s: float = 10.0
    """Length of the executed motion (s)."""
    nthread: int | None = None
    """Threads for batched rollouts; None uses one per core."""

    def __post_init__(self) -> None:
        if self.kind not in OPTIMIZERS:
            raise unknown_name("optimizer", self.kind, OPTIMIZERS)
        if not (math.isfinite(self.duration_s) and self.duration_s > 0):
            raise UserError(f"duration_s must be a positive finite number, got {self.duration_s}")
        if self.nthread is not None and self.nthread < 1:
            raise UserError(f"nthread must be at least 1, got {self.nthread}")


@dataclass(frozen=True)
class Progress:
    """How far an optimization has got."""

    fraction: float
    """Fraction of the motion executed (0..1)."""
    sim_time: float
    """Simulated time executed so far (s)."""
    best_return: float
    """Best sampled return (mean reward per step) of the latest planning iteration."""
    message: str
    """One line for a progress display."""


@dataclass(frozen=True)
class OptimizerKind:
    """A registered optimizer: what its plans set and how it updates them."""

    space: Literal["posture", "raw"]
    """'posture': target joint postures through the body's low-level controller; 'raw': actuator controls."""
    update: Update
    """Plan update from a scored sample set."""
    summary: str


OPTIMIZERS: dict[str, OptimizerKind] = {
    "mppi": OptimizerKind("posture", mppi_update, "posture-space MPPI over spline knots (MPC²-style)"),
    "cem": OptimizerKind("posture", cem_update, "posture-space cross-entropy method over spline knots"),
    "predictive": OptimizerKind("raw", best_update, "predictive sampling over raw controls (baseline)"),
}
"""Every optimizer by kind name."""


def make_plant(scene: CompiledScene, space: str, planner: PlannerConfig) -> Plant:
    """The plant a kind of plan drives on this scene's body."""
    if space == "raw":
        return RawControls(scene, planning_dt=planner.planning_dt)
    if scene.body.actuator_kind == "muscle":
        return PostureMuscle(scene, planner.muscle, planning_dt=planner.planning_dt)
    return PosturePD(scene, planner.pd, planning_dt=planner.planning_dt)


def optimize(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
             progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """Produce a motion of config.duration_s seconds that maximizes `reward` on `scene`'s body."""
    begin = time.perf_counter()
    kind = OPTIMIZERS[config.kind]
    plant = make_plant(scene, kind.space, config.planner)
    planner = RecedingHorizon(plant, reward, kind.update, config.planner, seed=seed)
    nstep = max(1, round(config.duration_s / scene.dt))
    with Simulator(plant.planner_scene, nthread=config.nthread) as inner, \
            Simulator(scene, nthread=1) as outer:
        rollouts = planner.run(inner, outer, nstep, progress)
    features = rollouts.features(scene)
    evaluation = reward(features)
    return Trajectory(rollouts=rollouts, reward=evaluation, term_stats=term_statistics(evaluation),
                      metrics=batch_metrics(features)[0],
                      wall_time_s=time.perf_counter() - begin, planner_steps=planner.log.steps,
                      planner_time_s=planner.log.seconds)
