"""Receding-horizon sampling MPC over spline plans: MPPI, cross-entropy and predictive sampling.

A plan is K knots of targets [K, J] spread evenly over the horizon and linearly interpolated per step. Each
planning iteration perturbs the current plan with Gaussian noise normalised by each target's range (sample 0
keeps the plan unperturbed), rolls every sample out in one batched call, scores all of them with one
vectorized reward call, and updates the plan from the elite set. The plan then moves `leak` of the way back to the
start, its first `replan_every` steps are executed on the body's own physics, and it is shifted forward in time
(warm start).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rewardloop.control.config import OptimizerConfig, PlannerConfig, Progress
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.planners.plants import Plant, PostureMuscle, PosturePD, PostureServo, RawControls
from rewardloop.control.trajectory import Trajectory
from rewardloop.reward.base import RewardFunction, term_statistics
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene


def interpolate(knots: np.ndarray, horizon_s: float, times: np.ndarray) -> np.ndarray:
    """Linear spline through knots spread evenly over [0, horizon_s].

    Args:
      knots: [S, K, J] knot values.
      times: [T] query times (s); clamped to the horizon.
    Returns:
      [S, T, J] values at the query times.
    """
    count = knots.shape[1]
    if count == 1:
        return np.repeat(knots, len(times), axis=1)
    position = np.clip(times / horizon_s, 0.0, 1.0) * (count - 1)
    left = np.minimum(position.astype(int), count - 2)
    frac = (position - left)[None, :, None]
    return (1 - frac) * knots[:, left] + frac * knots[:, left + 1]


def shift(knots: np.ndarray, horizon_s: float, by_s: float) -> np.ndarray:
    """[K, J] plan -> the same plan started `by_s` seconds later (the last knot is held)."""
    times = np.linspace(0.0, horizon_s, knots.shape[0]) + by_s
    return interpolate(knots[None], horizon_s, times)[0]


@dataclass(frozen=True)
class SampleSet:
    """One planning iteration's samples and their scores."""

    knots: np.ndarray
    """[S, K, J] sampled plans; sample 0 is the unperturbed plan."""
    returns: np.ndarray
    """[S] mean reward per step of each sample."""


Update = Callable[[SampleSet, np.ndarray, "PlannerConfig"], tuple[np.ndarray, np.ndarray]]
"""(samples, noise scale [K, J], config) -> (new plan [K, J], new noise scale [K, J])."""


def elites(samples: SampleSet, fraction: float) -> np.ndarray:
    """Indices of the best ceil(fraction × S) samples, best first."""
    count = max(1, int(np.ceil(fraction * len(samples.returns))))
    return np.argsort(-samples.returns, kind="stable")[:count]


def mppi_update(samples: SampleSet, scale: np.ndarray, config: PlannerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Softmax-weighted mean of the elite set; returns standardised by their spread, divided by temperature."""
    top = elites(samples, config.elite_fraction)
    best = samples.returns[top]
    spread = max(float(best.max() - best.min()), 1e-9)
    weights = np.exp((best - best.max()) / (config.temperature * spread))
    weights /= weights.sum()
    return np.einsum("e,ekj->kj", weights, samples.knots[top]), scale


def cem_update(samples: SampleSet, scale: np.ndarray, config: PlannerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the elite set; the noise follows the elites' spread, between min_noise and noise."""
    top = samples.knots[elites(samples, config.elite_fraction)]
    spread = top.std(axis=0) if len(top) > 1 else scale
    return top.mean(axis=0), spread


def best_update(samples: SampleSet, scale: np.ndarray, config: PlannerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Predictive sampling: keep the best sample."""
    return samples.knots[int(np.argmax(samples.returns))], scale


@dataclass
class PlannerLog:
    """Counters the planner accumulates while it runs."""

    steps: int = 0
    """Physics steps simulated by sampled rollouts."""
    seconds: float = 0.0
    """Wall time spent planning (rollouts, features and reward) (s)."""
    best_return: float = float("-inf")
    """Best sampled return of the latest planning iteration."""


class RecedingHorizon:
    """Plans with one plant and update rule, executes, shifts, repeats."""

    def __init__(self, plant: Plant, reward: RewardFunction, update: Update, config: PlannerConfig, *, seed: int):
        self.plant, self.reward, self.update, self.config = plant, reward, update, config
        self.rng = np.random.default_rng(seed)
        self.planning_dt = plant.planner_scene.dt
        self.steps = max(1, round(config.horizon_s / self.planning_dt))
        self.times = np.arange(self.steps) * self.planning_dt
        self.base_scale = np.broadcast_to(config.noise * (plant.high - plant.low), (config.knots, len(plant.low)))
        self.min_scale = config.min_noise * (plant.high - plant.low)
        self.scale = self.base_scale.copy()
        self.log = PlannerLog()

    def sample(self, plan: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """[K, J] plan -> [S, K, J] perturbed plans within bounds; sample 0 is the plan itself."""
        noise = self.rng.standard_normal((self.config.samples, *plan.shape)) * np.maximum(scale, self.min_scale)
        noise[0] = 0.0
        return np.clip(plan[None] + noise, self.plant.low, self.plant.high)

    def improve(self, sim: Simulator, state: np.ndarray, plan: np.ndarray) -> tuple[np.ndarray, SampleSet]:
        """One planning iteration from [nstate] `state`: -> (new plan [K, J], the scored samples)."""
        begin = time.perf_counter()
        knots = self.sample(plan, self.scale)
        rollouts = self.plant.simulate(sim, state, interpolate(knots, self.config.horizon_s, self.times))
        returns = self.reward(rollouts.features(self.plant.planner_scene)).returns()
        samples = SampleSet(knots, np.nan_to_num(returns, nan=-np.inf))
        plan, scale = self.update(samples, self.scale, self.config)
        self.scale = np.clip(scale, self.min_scale, self.base_scale)
        self.log.steps += knots.shape[0] * self.steps
        self.log.seconds += time.perf_counter() - begin
        self.log.best_return = float(samples.returns.max())
        return plan, samples

    def run(self, planner: Simulator, executor: Simulator, nstep: int,
            progress: Callable[[Progress], None] | None = None) -> Rollouts:
        """Execute `nstep` steps of the body's own physics from its initial state, replanning as it goes."""
        state = executor.scene.initial_state
        start = self.plant.start(state)
        plan = np.repeat(start[None], self.config.knots, axis=0)
        self.scale = self.base_scale.copy()
        dt, parts, done = executor.scene.dt, [], 0
        while done < nstep:
            for _ in range(self.config.iterations):
                plan, _ = self.improve(planner, state, plan)
            plan = plan + self.config.leak * (start - plan)
            count = min(self.config.replan_every, nstep - done)
            targets = interpolate(plan[None], self.config.horizon_s, np.arange(count) * dt)
            part = self.plant.execute(executor, state, targets)
            parts.append(part)
            state, done = part.state[0, -1], done + count
            plan = shift(plan, self.config.horizon_s, count * dt)
            if progress is not None:
                progress(Progress(fraction=done / nstep, sim_time=done * dt, best_return=self.log.best_return,
                                  message=f"{done * dt:.2f} s simulated"))
        return Rollouts.in_sequence(parts)


def make_plant(scene: CompiledScene, space: str, planner: PlannerConfig) -> Plant:
    """The plant a kind of plan drives on this scene's body: 'posture' targets (gripping the object in a hand
    scene) or 'raw' controls."""
    if space == "raw":
        return RawControls(scene, planning_dt=planner.planning_dt)
    if scene.scene.manipulation is not None:  # a hand holding an object: the first plan grips it
        from rewardloop.control.planners.grip import GripMuscle

        return GripMuscle(scene, planner.muscle, planning_dt=planner.planning_dt)
    if scene.body.actuator_kind == "muscle":
        return PostureMuscle(scene, planner.muscle, planning_dt=planner.planning_dt)
    if scene.body.actuator_kind == "servo":
        return PostureServo(scene, planning_dt=planner.planning_dt)
    return PosturePD(scene, planner.pd, planning_dt=planner.planning_dt)


def plan_motion(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, update: Update,
                space: Literal["posture", "raw"], seed: int,
                progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """A motion of config.duration_s seconds planned by receding-horizon sampling and executed on the body's
    own physics; only the planner's internal rollouts may use a coarser `planning_dt`."""
    begin = time.perf_counter()
    plant = make_plant(scene, space, config.planner)
    planner = RecedingHorizon(plant, reward, update, config.planner, seed=seed)
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
