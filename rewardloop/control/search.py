"""Policy search: CMA-ES over a structured controller's parameters against a reward program.

Each generation rolls the whole population out as one batch, in segments: after each segment a trajectory
that fell stops (early stop), the others go on. A trajectory is scored on the episode it lived: first by how
long it stayed up (a fall loses), then by its mean reward per step over that episode, the reward evaluated
once per group of equally long episodes (in the sandbox for a model's program). With perturbations, every
candidate is run under each of them (terrain seeds, pushes, parameter noise) and scored on the average.

The search works in parameters normalised to [0, 1] between each parameter's bounds; it starts from a
warm-start vector (a shipped gait) and keeps the best candidate it has seen.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rewardloop.control.controllers import Controller, run_controller
from rewardloop.control.metrics import fall_mask
from rewardloop.errors import UserError
from rewardloop.reward.base import RewardFunction
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene


@dataclass(frozen=True)
class Perturbations:
    """What every candidate is also tried under, for robustness. The score is the average over all."""

    pushes: tuple[tuple[float, float], ...] = ()
    """(time s, sideways velocity kick m/s; + pushes left) applied to the whole body; each entry one more run."""
    param_noise: float = 0.0
    """Relative noise on every parameter (e.g. 0.03 for ±3 %), one more run per `noise_draws`."""
    noise_draws: int = 0
    """Runs with independently drawn parameter noise."""

    def __post_init__(self) -> None:
        if self.param_noise < 0 or self.noise_draws < 0:
            raise UserError("param_noise and noise_draws must not be negative")

    @property
    def runs(self) -> int:
        """Runs per candidate: the unperturbed one, one per push, one per noise draw."""
        return 1 + len(self.pushes) + self.noise_draws


@dataclass(frozen=True)
class SearchConfig:
    """Settings of a policy search."""

    population: int = 12
    """Candidates per generation (CMA-ES λ)."""
    generations: int = 8
    """Generations to run (fewer if `max_seconds` runs out)."""
    sigma: float = 0.05
    """Initial step size, as a fraction of each parameter's range."""
    segment_s: float = 0.5
    """Simulated time between checks for a fall (s)."""
    max_seconds: float | None = None
    """Stop starting new generations after this much wall time (s); None: no limit."""
    perturbations: Perturbations = field(default_factory=Perturbations)
    """Robustness: what each candidate is also tried under."""

    def __post_init__(self) -> None:
        checks = {
            "population must be at least 4": self.population >= 4,
            "generations must be at least 0": self.generations >= 0,
            "sigma must be in (0, 1]": 0 < self.sigma <= 1,
            "segment_s must be positive": self.segment_s > 0,
            "max_seconds must be positive": self.max_seconds is None or self.max_seconds > 0,
        }
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad policy search config: " + "; ".join(problems))


@dataclass(frozen=True)
class Scores:
    """How a batch of candidates did."""

    alive: np.ndarray
    """[N] fraction of the motion each stayed up (1 without a fall), averaged over perturbation runs."""
    returns: np.ndarray
    """[N] mean reward per step over the lived episode, averaged over perturbation runs."""

    def ranking(self) -> np.ndarray:
        """[N] indices best first: longest alive, then highest return."""
        return np.lexsort((-np.nan_to_num(self.returns, nan=-np.inf), -np.round(self.alive, 3)))


@dataclass(frozen=True)
class SearchLog:
    """What the search did."""

    generations: int
    evaluations: int
    """Candidate runs simulated (perturbation runs counted separately)."""
    steps: int
    """Physics steps simulated."""
    seconds: float
    best_alive: float
    best_return: float
    history: tuple[tuple[float, float], ...]
    """(best alive fraction, best return) after each generation."""


def segment_rollouts(sim: Simulator, controller: Controller, params: np.ndarray, *, nstep: int, segment: int,
                     initial_state: np.ndarray, pushes: Sequence[tuple[int, np.ndarray]] = ()) -> tuple[Rollouts, np.ndarray]:
    """Roll a batch out in segments, stopping each trajectory after the segment in which it fell.

    Args:
      params: [B, P] parameter vectors.
      initial_state: [nstate] start state.
      pushes: (step, [B, 3] velocity change of the root (m/s)) applied at the start of the segment holding `step`.
    Returns:
      (rollouts [B, T, ·], with garbage after each trajectory's lived steps; [B] lived steps).
    """
    batch, scene = len(params), sim.scene
    state = np.empty((batch, nstep, scene.nstate))
    sensordata = np.empty((batch, nstep, scene.model.nsensordata))
    control = np.empty((batch, nstep, scene.model.nu))
    now = np.repeat(np.asarray(initial_state, float)[None], batch, axis=0)
    initial, memory = now.copy(), np.zeros((batch, controller.memory_size))
    lived, alive = np.zeros(batch, dtype=int), np.arange(batch)
    qvel = 1 + scene.model.nq
    for start in range(0, nstep, segment):
        count = min(segment, nstep - start)
        for at, kick in pushes:
            if start <= at < start + count:
                now[alive, qvel : qvel + 3] += kick[alive]
        part_memory = memory[alive]
        part = run_controller(sim, controller, params[alive], nstep=count, initial_state=now[alive],
                              memory=part_memory)
        memory[alive] = part_memory
        window = slice(start, start + count)
        state[alive, window], sensordata[alive, window], control[alive, window] = part.state, part.sensordata, \
            part.control
        lived[alive] += count
        now[alive] = part.state[:, -1]
        fell = fall_mask(part.features(scene)).any(axis=1)
        alive = alive[~fell]
        if len(alive) == 0:
            break
    return Rollouts(initial, state, sensordata, control), lived


def lived_returns(scene: CompiledScene, reward: RewardFunction, rollouts: Rollouts, lived: np.ndarray) -> np.ndarray:
    """[B] mean reward per step of each trajectory over its lived steps; one reward call per episode length."""
    returns = np.empty(len(lived))
    for length in np.unique(lived):
        rows = np.flatnonzero(lived == length)
        part = Rollouts(rollouts.initial_state[rows], rollouts.state[rows, :length],
                        rollouts.sensordata[rows, :length], rollouts.control[rows, :length])
        returns[rows] = reward(part.features(scene)).returns()
    return returns


class PolicySearch:
    """CMA-ES over one controller's parameters on one scene, against one reward."""

    def __init__(self, scene: CompiledScene, controller: Controller, reward: RewardFunction, config: SearchConfig, *,
                 duration_s: float, seed: int, initial_state: np.ndarray | None = None):
        self.scene, self.controller, self.reward, self.config = scene, controller, reward, config
        self.initial_state = scene.initial_state if initial_state is None else initial_state
        self.nstep = max(1, round(duration_s / scene.dt))
        self.segment = max(1, round(config.segment_s / scene.dt))
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        space = controller.space
        self.low, self.span = space.low, space.high - space.low
        self.pushes = [(round(t / scene.dt), kick) for t, kick in config.perturbations.pushes]
        self.steps = 0

    def evaluate(self, sim: Simulator, params: np.ndarray) -> Scores:
        """Scores of [N, P] candidates, averaged over the perturbation runs."""
        runs = self._perturbed(params)
        batch, count = np.concatenate(runs), len(params)
        kicks = []
        for run, (step, velocity) in enumerate(self.pushes, start=1):  # run r is rows [r·N, (r + 1)·N)
            kick = np.zeros((len(batch), 3))
            kick[run * count : (run + 1) * count, 1] = velocity
            kicks.append((step, kick))
        rollouts, lived = segment_rollouts(sim, self.controller, batch, nstep=self.nstep, segment=self.segment,
                                           initial_state=self.initial_state, pushes=kicks)
        self.steps += int(lived.sum())
        returns = lived_returns(self.scene, self.reward, rollouts, lived)
        shape = (len(runs), count)
        return Scores(alive=(lived / self.nstep).reshape(shape).mean(axis=0),
                      returns=returns.reshape(shape).mean(axis=0))

    def _perturbed(self, params: np.ndarray) -> list[np.ndarray]:
        """[N, P] -> one [N, P] batch per run: unperturbed, one per push, one per parameter-noise draw."""
        config = self.config.perturbations
        runs = [params] * (1 + len(self.pushes))
        for _ in range(config.noise_draws):
            noise = self.rng.uniform(-config.param_noise, config.param_noise, size=params.shape)
            runs.append(np.clip(params * (1 + noise), self.controller.space.low, self.controller.space.high))
        return runs

    def run(self, sim: Simulator, start: np.ndarray,
            progress: Callable[[int, Scores], None] | None = None) -> tuple[np.ndarray, Scores, SearchLog]:
        """Search from [P] `start`; -> (best [P] parameters, their scores, the log)."""
        import cma

        begin, config = time.perf_counter(), self.config
        best, best_scores = start, self.evaluate(sim, start[None])
        history = [(float(best_scores.alive[0]), float(best_scores.returns[0]))]
        options = {"bounds": [0.0, 1.0], "popsize": config.population, "seed": self.seed + 1, "verbose": -9}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strategy = cma.CMAEvolutionStrategy(list((start - self.low) / self.span), config.sigma, options)
        generation, evaluations = 0, 1
        while generation < config.generations and not self._out_of_time(begin):
            unit = np.asarray(strategy.ask())
            params = self.low + np.clip(unit, 0.0, 1.0) * self.span
            scores = self.evaluate(sim, params)
            order = scores.ranking()
            fitness = np.empty(len(order))
            fitness[order] = np.arange(len(order))  # CMA-ES minimises; only ranks matter
            strategy.tell(list(unit), list(fitness))
            top = order[0]
            if _better(scores, top, best_scores):
                best, best_scores = params[top], Scores(scores.alive[top : top + 1], scores.returns[top : top + 1])
            generation, evaluations = generation + 1, evaluations + len(params)
            history.append((float(best_scores.alive[0]), float(best_scores.returns[0])))
            if progress is not None:
                progress(generation, best_scores)
        log = SearchLog(generation, evaluations * config.perturbations.runs, self.steps,
                        time.perf_counter() - begin, *history[-1], tuple(history))
        return best, best_scores, log

    def _out_of_time(self, begin: float) -> bool:
        return self.config.max_seconds is not None and time.perf_counter() - begin > self.config.max_seconds


def _better(scores: Scores, index: int, best: Scores) -> bool:
    """Whether candidate `index` of `scores` beats the single-candidate `best`: alive longer, then a higher return."""
    alive, best_alive = round(float(scores.alive[index]), 3), round(float(best.alive[0]), 3)
    return alive > best_alive or (alive == best_alive and scores.returns[index] > best.returns[0])
