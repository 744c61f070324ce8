"""Policy search: CMA-ES over a structured controller's parameters against a reward program.

Each generation rolls the whole population out as one batch, in segments: after each segment a trajectory
that fell stops (early stop), the others go on. A trajectory is scored on the episode it lived: first by what
the reward terms held as constraints cost it there (none by default), then by how long it stayed up (a fall
loses), then by its mean reward per step over that episode, the reward evaluated once per group of equally long
episodes (in the sandbox for a model's program). With perturbations, every candidate is run under each of them
(terrain seeds, other grounds, pushes, parameter noise, randomized physics, rough grounds drawn afresh every
generation) and scored on the average.

The search works in parameters normalised to [0, 1] between each parameter's bounds; it starts from a
warm-start vector (a shipped gait) and keeps the best candidate it has seen. A body with several shipped gaits
has each scored as it is under the reward (one run of each, with the search's perturbations), and the search runs
from the best of them with the whole time limit: the reward picks the gait (and the controller) to start from.
One run near a cliff is decided by the last bits of the CPU's arithmetic, so each start also runs under a few draws
of small parameter noise, and of the starts whose median outcomes over those runs are about equal to the best, the
best as set of those that never fell is picked, else the best as set (SearchConfig.start_draws, start_margin;
`pick_start`).
The gait it found then runs half as long again as the trials beside its start, as they are and under small
parameter noise, and gives way to the start where the reward ranks the start higher on average over those longer
motions (SearchConfig.hold): a gait that won its trials by the luck of the exact numbers does not replace the start;
but of the two, one that falls as it is within the motion (the motion executed) gives way to one that does not.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rewardloop.control.config import (
    FRESH_GROUND_SEEDS,
    TRAINING_PHYSICS_SEED,
    OptimizerConfig,
    Progress,
    RecedingConfig,
    SearchConfig,
)
from rewardloop.control.controllers.base import (
    Carry,
    Controller,
    controller_for,
    make_controller,
    on_ground,
    run_controller,
)
from rewardloop.control.metrics import batch_metrics, fall_mask
from rewardloop.control.planners.receding import lookahead, planned_steps, planning_simulator, receding_motion
from rewardloop.control.search.policy import Policy, shipped_gaits
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError
from rewardloop.reward.base import RewardEval, RewardFunction, term_statistics
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene, compile_scene, random_physics
from rewardloop.sim.terrain import Terrain

STALL_WINDOW_S = 1.0
"""Window over which a stall (SearchConfig.stall_speed) is measured (s)."""
START_DRAWS_STREAM = 7
"""Second word of the seed of the start draws' generator (`PolicySearch.start_outcome`): a stream apart from the
search's own."""


@dataclass(frozen=True)
class Scores:
    """How a batch of candidates did."""

    alive: np.ndarray
    """[N] fraction of the motion each lived (1 without a fall; a fall loses its segment), averaged over
    perturbation runs."""
    returns: np.ndarray
    """[N] mean reward per step over the lived episode, averaged over perturbation runs."""
    cost: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """[N] what the constraint terms (SearchConfig.constraints) cost each candidate, >= 0 and 0 where they are
    met, averaged over perturbation runs; left out: no constraints (0 for all)."""

    def __post_init__(self) -> None:
        if not len(self.cost):
            object.__setattr__(self, "cost", np.zeros(len(self.alive)))

    def averaged(self, other: Scores) -> Scores:
        """The mean of these scores and `other`'s (the same candidates on other runs)."""
        return Scores((self.alive + other.alive) / 2, (self.returns + other.returns) / 2, (self.cost + other.cost) / 2)

    def rows(self, index: slice) -> Scores:
        """The scores of the candidates `index` picks."""
        return Scores(self.alive[index], self.returns[index], self.cost[index])

    def ranking(self) -> np.ndarray:
        """[N] indices best first, by `key` (ties keep their order)."""
        return np.array(sorted(range(len(self.alive)), key=self.key, reverse=True), dtype=np.int64)

    def key(self, index: int) -> tuple[float, float, float]:
        """Sort key of candidate `index`, larger is better: the lowest constraint cost, then longest alive (both to 3
        decimals), then the highest return (NaN, nothing lived, lowest)."""
        returns = float(np.nan_to_num(self.returns[index], nan=-np.inf))
        return -round(float(self.cost[index]), 3), round(float(self.alive[index]), 3), returns


@dataclass(frozen=True)
class StartOutcome:
    """How a shipped gait does as a search's start over its run as set and the start draws
    (`PolicySearch.start_outcome`)."""

    median: tuple[float, float, float]
    """The median of the runs' `Scores.key` (the lower median of an even count)."""
    falls: int
    """How many of the runs fell (lived less than the whole motion)."""


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
                     initial_state: np.ndarray, pushes: Sequence[tuple[int, np.ndarray]] = (),
                     stop_on_fall: bool = True, stall_speed: float = 0.0,
                     heading_limit: float = 0.0) -> tuple[Rollouts, np.ndarray]:
    """Roll a batch out in segments, stopping each trajectory after the segment in which it fell (unless not
    `stop_on_fall`); the segments before that one are its lived steps.

    Args:
      params: [B, P] parameter vectors.
      initial_state: [nstate] start state.
      pushes: (step, [B, 3] velocity change of the root (m/s)) applied before that step (a segment starts there;
        the step is rounded to a whole number of controller updates, as is `segment`).
      stall_speed: with `stop_on_fall`, a trajectory whose centre of mass advanced (along +x) less than this
        many m/s × STALL_WINDOW_S over the last STALL_WINDOW_S at a segment's end stalled, which counts as a fall
        (0: off).
      heading_limit: with `stop_on_fall`, a trajectory whose heading strayed more than this (rad) from +x within
        a segment counts as fallen there (0: off).
    Returns:
      (rollouts [B, T, ·], with garbage after each trajectory's lived steps and the segment it fell in; [B] lived
      steps).
    """
    batch, scene = len(params), sim.scene
    state = np.empty((batch, nstep, scene.nstate))
    sensordata = np.empty((batch, nstep, scene.model.nsensordata))
    control = np.empty((batch, nstep, scene.model.nu))
    now = np.repeat(np.asarray(initial_state, float)[None], batch, axis=0)
    initial, carry = now.copy(), Carry.fresh(controller, scene, batch)
    lived, alive = np.zeros(batch, dtype=int), np.arange(batch)
    marks: dict[int, np.ndarray] = {}  # step -> [B] CoM x there, at segment ends (for stalls)
    qvel, chunk = 1 + scene.model.nq, controller.chunk
    pushes = [(chunk * round(at / chunk), kick) for at, kick in pushes]  # segments hold whole controller updates
    every = chunk * max(1, round(segment / chunk))
    bounds = sorted(set(range(0, nstep, every)) | {at for at, _ in pushes if 0 <= at < nstep} | {nstep})
    for start, stop in itertools.pairwise(bounds):
        for at, kick in pushes:
            if at == start:
                now[alive, qvel : qvel + 3] += kick[alive]
        part_carry = carry.rows(alive)
        part = run_controller(sim, controller, params[alive], nstep=stop - start, initial_state=now[alive],
                              carry=part_carry)
        carry.put(alive, part_carry)
        window = slice(start, stop)
        state[alive, window], sensordata[alive, window], control[alive, window] = part.state, part.sensordata, \
            part.control
        now[alive] = part.state[:, -1]
        features = part.features(scene)
        fell = fall_mask(features).any(axis=1) if stop_on_fall else np.zeros(len(alive), dtype=bool)
        if stop_on_fall and stall_speed > 0:
            fell |= _stalled(features, marks, alive, batch, stop, stall_speed, scene.dt)
        if stop_on_fall and heading_limit > 0:
            fell |= _strayed(features, heading_limit)
        lived[alive[~fell]] += stop - start  # a segment with a fall is not lived
        if stop_on_fall:
            alive = alive[~fell]
        if len(alive) == 0:
            break
    return Rollouts(initial, state, sensordata, control), lived


def _stalled(features: Features, marks: dict[int, np.ndarray], rows: np.ndarray, batch: int, stop: int,
             stall_speed: float, dt: float) -> np.ndarray:
    """[R] whether the batch's `rows`, whose segment up to step `stop` `features` hold, stalled by its end: their
    CoM advanced (+x) less than `stall_speed` m/s since the latest mark at least STALL_WINDOW_S earlier (none:
    not stalled). Marks their CoM x at the segment's start (the first time) and end in `marks` (step -> [batch])."""
    if not marks:
        marks[0] = np.full(batch, np.nan)
        marks[0][rows] = features.com_pos[:, 0, 0]
    marks.setdefault(stop, np.full(batch, np.nan))[rows] = features.com_pos[:, -1, 0]
    earlier = [step for step in marks if step <= stop - round(STALL_WINDOW_S / dt)]
    if not earlier:
        return np.zeros(len(rows), dtype=bool)
    since = max(earlier)
    return marks[stop][rows] - marks[since][rows] < stall_speed * (stop - since) * dt


def _strayed(features: Features, limit: float) -> np.ndarray:
    """[B] whether each trajectory's heading strayed more than `limit` rad from +x at some step."""
    heading = np.arctan2(np.sin(features.heading), np.cos(features.heading))  # wrapped to (-π, π]
    return (np.abs(heading) > limit).any(axis=1)


def pushed_motion(sim: Simulator, controller: Controller, vector: np.ndarray, *, duration_s: float,
                  pushes: Sequence[tuple[float, float]] = ()) -> Rollouts:
    """The whole motion of one [P] parameter vector from the scene's start, pushed sideways by (time s, m/s, +
    to the left) kicks of the whole body's velocity; [1, T, ·]."""
    scene = sim.scene
    nstep = max(1, round(duration_s / scene.dt))
    kicks = [(round(t / scene.dt), np.array([[0.0, v, 0.0]])) for t, v in pushes]
    rollouts, _ = segment_rollouts(sim, controller, vector[None], nstep=nstep, segment=nstep,
                                   initial_state=scene.initial_state, pushes=kicks, stop_on_fall=False)
    return rollouts


def lived_returns(scene: CompiledScene, reward: RewardFunction, rollouts: Rollouts, lived: np.ndarray) -> np.ndarray:
    """[B] mean reward per step of each trajectory over its lived steps; one reward call per episode length."""
    return lived_scores(scene, reward, rollouts, lived)[0]


def lived_scores(scene: CompiledScene, reward: RewardFunction, rollouts: Rollouts, lived: np.ndarray,
                 constraints: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """([B] mean reward per step of each trajectory over its lived steps, [B] what the `constraints` terms cost it
    there: the mean of each one's unweighted negative part, summed (0 where they are met, >= 0)); one reward call
    per episode length."""
    returns = np.full(len(lived), np.nan)  # nothing lived: no return
    cost = np.zeros(len(lived))
    for length in np.unique(lived[lived > 0]):
        rows = np.flatnonzero(lived == length)
        part = Rollouts(rollouts.initial_state[rows], rollouts.state[rows, :length],
                        rollouts.sensordata[rows, :length], rollouts.control[rows, :length])
        evaluation = reward(part.features(scene))
        returns[rows] = evaluation.returns()
        cost[rows] = sum((np.maximum(-_term(evaluation, name), 0.0).mean(axis=1) for name in constraints),
                         np.zeros(len(rows)))
    return returns, cost


def _term(evaluation: RewardEval, name: str) -> np.ndarray:
    """[B, T] the unweighted values of term `name`; a UserError naming the reward's terms if it has none such."""
    if name not in evaluation.terms:
        raise UserError(f"constraint {name!r} is not a term of the reward; its terms: {', '.join(evaluation.terms)}")
    return evaluation.terms[name]


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
        terrains = [dataclasses.replace(scene.scene.terrain, seed=seed)
                    for seed in _rough(scene, config.perturbations.terrain_seeds)]
        draws = [random_physics(np.random.default_rng(TRAINING_PHYSICS_SEED + k))
                 for k in range(config.perturbations.physics_draws)]
        self.grounds = [compile_scene(dataclasses.replace(scene.scene, terrain=terrain))
                        for terrain in [*terrains, *config.perturbations.grounds]]
        self.grounds += [compile_scene(dataclasses.replace(scene.scene, physics=physics)) for physics in draws]
        self.fresh: list[CompiledScene] = []
        self.steps = 0
        self.free = self._free()
        """[F] indices of the parameters the search moves."""

    def _free(self) -> np.ndarray:
        """[F] indices of the parameters the search moves: those of `only`, else the controller's steering ones with
        `steer_only`, else all; on flat ground only (every ground of the search), none that acts only on uneven
        ground (through the ground seen ahead, or a stumble)."""
        space, config = self.controller.space, self.config
        for name in config.only:
            space.index(name)  # an unknown name is a UserError listing the known ones
        names = config.only or (self.controller.steering if config.steer_only else space.names)
        flat = not config.perturbations.fresh_grounds and all(
            ground.scene.terrain.kind == "flat" for ground in (self.scene, *self.grounds))
        free = np.array([space.index(p.name) for p in space.parameters
                         if p.name in names and not (flat and (p.sighted or p.uneven))], dtype=np.int64)
        if not len(free):
            raise UserError(f"the search moves no parameter: {', '.join(config.only)} act only on uneven ground, "
                            "and every ground of this search is flat")
        return free

    def draw_grounds(self) -> None:
        """Draw the fresh rough grounds of the next generation (config.perturbations.fresh_grounds of them)."""
        config = self.config.perturbations
        seeds = self.rng.integers(*FRESH_GROUND_SEEDS, size=config.fresh_grounds)
        self.fresh = [compile_scene(dataclasses.replace(
            self.scene.scene, terrain=Terrain("rough", roughness=config.fresh_roughness, seed=int(seed))))
            for seed in seeds]

    def evaluate(self, sim: Simulator, params: np.ndarray) -> Scores:
        """Scores of [N, P] candidates, averaged over the perturbation runs (on this generation's fresh grounds)."""
        runs = self._perturbed(params)
        batch, count = np.concatenate(runs), len(params)
        kicks = []
        for run, (step, velocity) in enumerate(self.pushes, start=1):  # run r is rows [r·N, (r + 1)·N)
            kick = np.zeros((len(batch), 3))
            kick[run * count : (run + 1) * count, 1] = velocity
            kicks.append((step, kick))
        parts = [self._scored(sim, self.controller, batch, kicks)]
        grounds = [*self.grounds, *self.fresh]
        for ground in grounds:  # the same candidates on other ground or physics, one more run each
            with Simulator(ground, nthread=sim.nthread) as other:
                parts.append(self._scored(other, on_ground(self.controller, ground), params))
        shape = (len(runs) + len(grounds), count)
        alive, returns, cost = (np.concatenate(part).reshape(shape).mean(axis=0) for part in zip(*parts, strict=True))
        return Scores(alive=alive, returns=returns, cost=cost)

    def _scored(self, sim: Simulator, controller: Controller, batch: np.ndarray,
                kicks: list[tuple[int, np.ndarray]] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """([B] fraction of the motion lived, [B] mean reward over it, [B] constraint cost over it) of a batch on
        `sim`'s scene, under `controller` (seeing that scene's ground)."""
        rollouts, lived = segment_rollouts(sim, controller, batch, nstep=self.nstep, segment=self.segment,
                                           initial_state=self.initial_state, pushes=kicks or [],
                                           stall_speed=self.config.stall_speed,
                                           heading_limit=np.radians(self.config.heading_limit_deg))
        self.steps += int(lived.sum())
        return lived / self.nstep, *lived_scores(sim.scene, self.reward, rollouts, lived, self.config.constraints)

    def _perturbed(self, params: np.ndarray) -> list[np.ndarray]:
        """[N, P] -> one [N, P] batch per run: unperturbed, one per push, one per parameter-noise draw. Each draw
        is the same relative noise for every candidate (common random numbers), so candidates compete fairly."""
        config = self.config.perturbations
        return [params] * (1 + len(self.pushes)) + self._noised(params, config.noise_draws, config.param_noise)

    def _noised(self, params: np.ndarray, draws: int, noise: float,
                rng: np.random.Generator | None = None) -> list[np.ndarray]:
        """[N, P] -> `draws` [N, P] batches, each under one draw of relative noise within ±`noise` on every
        parameter, the same for every candidate (common random numbers), clipped to the bounds; drawn from `rng`
        (default: the search's)."""
        space, rng = self.controller.space, self.rng if rng is None else rng
        return [np.clip(params * (1 + rng.uniform(-noise, noise, size=(1, params.shape[1]))), space.low,
                        space.high) for _ in range(draws)]

    def score_start(self, sim: Simulator, start: np.ndarray) -> Scores:
        """The scores of [P] `start` as it is, on freshly drawn grounds (the search's first evaluation)."""
        self.draw_grounds()
        return self.evaluate(sim, start[None])

    def start_outcome(self, sim: Simulator, start: np.ndarray) -> StartOutcome:
        """How [P] `start` does over its run as set and `config.start_draws` runs under ±`config.hold_noise`
        parameter noise on `sim`'s scene: the median of their `Scores.key` (the lower median of an even count) and
        how many fell. The draws come from a generator of their own seeded by the search's seed: the same for every
        start of one seed, and the search's own draws left as they were."""
        rng = np.random.default_rng((self.seed, START_DRAWS_STREAM))
        batch = np.vstack([start[None], *self._noised(start[None], self.config.start_draws, self.config.hold_noise,
                                                       rng)])
        scores = Scores(*self._scored(sim, self.controller, batch))
        keys = sorted(scores.key(index) for index in range(len(batch)))
        return StartOutcome(keys[(len(keys) - 1) // 2], int((scores.alive < 1).sum()))

    def run(self, sim: Simulator, start: np.ndarray,
            progress: Callable[[int, Scores, np.ndarray], None] | None = None, *,
            start_scores: Scores | None = None, since: float | None = None,
            reserve_steps: int = 0) -> tuple[np.ndarray, Scores, SearchLog]:
        """Search from [P] `start`; -> (best [P] parameters, their scores, the log). `progress` gets, after each
        generation, its number and the best candidate's scores and [P] parameters. `start_scores`: what
        `score_start` gave for `start` (else it is scored here). `since`: when the time limit (`config.max_seconds`)
        began, a `time.perf_counter()` reading (default: now), so that picking the start counts against it.
        `reserve_steps`: physics steps still to run within the limit after the search (the hold, the executed
        motion and its planner); after the first generation, no generation starts once their forecast, at the
        seconds per step of this search's generations so far, would end past the limit."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cma warns that it cannot plot without matplotlib
            import cma

        begin, config = time.perf_counter(), self.config
        budget = begin if since is None else since
        best, best_scores = start, start_scores if start_scores is not None else self.score_start(sim, start)
        history = [(float(best_scores.alive[0]), float(best_scores.returns[0]))]
        options = {"bounds": [0.0, 1.0], "popsize": config.population, "seed": self.seed + 1, "verbose": -9}
        free, low, span = self.free, self.low[self.free], self.span[self.free]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strategy = cma.CMAEvolutionStrategy(list((start[free] - low) / span), config.sigma, options)
        generation, evaluations = 0, 1
        pace = _Pace(self.steps)
        while generation < config.generations and not self._out_of_time(
                budget, reserve_steps * pace.seconds_per_step(self.steps)):
            unit = np.asarray(strategy.ask())
            params = np.repeat(start[None], len(unit), axis=0)
            params[:, free] = low + np.clip(unit, 0.0, 1.0) * span
            if config.perturbations.noisy:  # the incumbent is scored again on the same draws and grounds
                self.draw_grounds()
                together = self.evaluate(sim, np.vstack([params, best[None]]))
                scores, best_scores = _split(together, len(params))
            else:
                scores = self.evaluate(sim, params)
            order = scores.ranking()
            fitness = np.empty(len(order))
            fitness[order] = np.arange(len(order))  # CMA-ES minimises; only ranks matter
            strategy.tell(list(unit), list(fitness))
            top = order[0]
            challenger = scores.rows(slice(top, top + 1))
            if config.perturbations.noisy and _better(challenger, 0, best_scores):
                challenger, best_scores = self._rematch(sim, params[top], best, challenger, best_scores)
                evaluations += 2
            if _better(challenger, 0, best_scores):
                best, best_scores = params[top], challenger
            generation, evaluations = generation + 1, evaluations + len(params)
            history.append((float(best_scores.alive[0]), float(best_scores.returns[0])))
            if progress is not None:
                progress(generation, best_scores, best)
        log = SearchLog(generation, evaluations * config.perturbations.runs, self.steps,
                        time.perf_counter() - begin, *history[-1], tuple(history))
        return best, best_scores, log

    def _rematch(self, sim: Simulator, challenger: np.ndarray, incumbent: np.ndarray, challenger_scores: Scores,
                 incumbent_scores: Scores) -> tuple[Scores, Scores]:
        """A win on noisy draws, checked: the [P] challenger and the [P] incumbent scored again on new draws (noise
        and fresh grounds); -> their scores averaged over both. The best of a generation often wins by luck: without
        the rematch, the search returns the last lucky candidate, not the best gait it saw."""
        self.draw_grounds()
        again = self.evaluate(sim, np.vstack([challenger, incumbent]))
        first, second = _split(again, 1)
        return challenger_scores.averaged(first), incumbent_scores.averaged(second)

    def held(self, sim: Simulator, found: np.ndarray, start: np.ndarray, hold: float) -> np.ndarray:
        """[P] `found`, or [P] `start` where the reward ranks `start` higher on average over motions (1 + `hold`)
        times as long as the search's trials, on `sim`'s scene: both as they are and under the same
        `config.hold_draws` draws of ±`config.hold_noise` relative parameter noise, falls included (a start that
        stays up only by turning on the spot does not replace a gait that walks the motion and falls after it; a
        gait that won its trials by the luck of the exact numbers does not replace the start). But where exactly one
        of the two falls as it is within the motion's length, the other is kept: without a planner on top, that run
        is the motion executed."""
        if hold <= 0 or np.array_equal(found, start):
            return found
        nstep = self._hold_length(hold)
        pair = np.stack([found, start])
        runs = np.vstack([pair, *self._noised(pair, self.config.hold_draws, self.config.hold_noise)])
        alive, returns = lookahead(sim, self.controller, runs, self.reward, self.initial_state,
                                   Carry.fresh(self.controller, self.scene, 1), nstep)
        self.steps += len(runs) * nstep
        return start if keeps_start(alive[:2] < self.nstep, returns.reshape(-1, 2).mean(axis=0)) else found

    def _out_of_time(self, begin: float, ahead: float = 0.0) -> bool:
        """Whether the time since `begin` plus `ahead` seconds still to come passes the limit."""
        return self.config.max_seconds is not None and time.perf_counter() - begin + ahead > self.config.max_seconds

    def _hold_length(self, hold: float) -> int:
        """Steps of each of `held`'s runs: (1 + `hold`) times the trials'."""
        return self.nstep + max(1, round(hold * self.nstep))

    def hold_steps(self, hold: float) -> int:
        """Physics steps that `held` simulates with `hold` (its runs of the found policy and of the start; at most:
        none when the search kept its start)."""
        return (2 + 2 * self.config.hold_draws) * self._hold_length(hold) if hold > 0 else 0


class _Pace:
    """Seconds per physics step of a search's generations, measured from when it was made."""

    def __init__(self, steps: int):
        self.begin, self.steps = time.perf_counter(), steps

    def seconds_per_step(self, steps: int) -> float:
        """Wall time per step since the start, `steps` being the search's count now (0 before any step)."""
        done = steps - self.steps
        return (time.perf_counter() - self.begin) / done if done > 0 else 0.0


def _split(scores: Scores, count: int) -> tuple[Scores, Scores]:
    """Scores of the first `count` candidates and of the rest."""
    return scores.rows(slice(None, count)), scores.rows(slice(count, None))


def _rough(scene: CompiledScene, seeds: tuple[int, ...]) -> tuple[int, ...]:
    """The terrain seeds, checked to make sense for the scene's ground."""
    if seeds and scene.scene.terrain.kind != "rough":
        raise UserError(f"terrain seeds vary rough ground; this scene is {scene.scene.terrain.describe()}")
    return seeds


def keeps_start(falls: np.ndarray, returns: np.ndarray) -> bool:
    """The hold's verdict (`PolicySearch.held`) from [2] whether the found policy and the start fall as they are
    within the motion, and [2] their mean returns over the hold's runs: the one that does not fall where only one
    does, else the start where its mean return is higher."""
    if falls[0] != falls[1]:
        return bool(falls[0])
    return bool(returns[1] > returns[0])


def pick_start(as_set: Sequence[Scores], outcomes: Sequence[StartOutcome] | None, margin: float) -> int:
    """Which start a search runs from, of the single-candidate scores each got as set and (None: not drawn) each
    one's outcome under parameter noise (`PolicySearch.start_outcome`). Without outcomes, the best as set. With
    them, of the starts whose medians the best median does not clearly beat (`_clearly_better`: the reward ranks
    them about equal), the best as set of those that fell in none of their runs, else the best as set: as set, one
    run decides, and near a cliff the last bits of a CPU's arithmetic decide that run."""
    order = sorted(range(len(as_set)), key=lambda index: as_set[index].key(0), reverse=True)
    if outcomes is None:
        return order[0]
    best = max(outcomes, key=lambda outcome: outcome.median).median
    near = [index for index in order if not _clearly_better(best, outcomes[index].median, margin)]
    return min(near, key=lambda index: outcomes[index].falls > 0)


def _clearly_better(median: tuple[float, float, float], incumbent: tuple[float, float, float],
                    margin: float) -> bool:
    """Whether a median outcome (`Scores.key`) beats `incumbent` by more than chance: a lower constraint cost or
    longer alive, or as cheap and as long alive with a return higher by `margin` of the incumbent's size."""
    if median[:2] != incumbent[:2]:
        return median[:2] > incumbent[:2]
    return median[2] > incumbent[2] + margin * abs(incumbent[2])


def _better(scores: Scores, index: int, best: Scores) -> bool:
    """Whether candidate `index` of `scores` beats the single-candidate `best`: a lower constraint cost, then alive
    longer, then a higher return."""
    return scores.key(index) > best.key(0)


def search_starts(scene: CompiledScene, settings: SearchConfig) -> list[tuple[Controller, np.ndarray]]:
    """Where the searches start: (controller, [P] parameters) for each gait shipped for the scene's body and
    ground (only those of `settings.controller` when it names one), else that controller's defaults (with no
    shipped gait of its kind, or with warm starts off)."""
    gaits = [gait for gait in shipped_gaits(scene.scene.body, scene.scene.terrain.kind)
             if settings.controller in (None, gait.controller)]
    if settings.warm_start and gaits:
        controllers = [make_controller(gait.controller, scene) for gait in gaits]
        return [(controller, gait.vector(controller)) for controller, gait in zip(controllers, gaits, strict=True)]
    kind = settings.controller or controller_for(scene)
    if kind is None:
        raise UserError(f"no structured controller walks {scene.scene.body}; pick a posture optimizer "
                        "(--optimizer mppi)")
    controller = make_controller(kind, scene)
    return [(controller, controller.space.default)]


def search_motion(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
                  progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """A motion of config.duration_s seconds from the policy that a search against `reward` found; the
    trajectory carries that policy. With several shipped gaits for the body (say, one per controller, or one
    for a slow walk), each is scored as it is under the reward and the search runs from the best of them (alive
    longest, then the highest return; or one whose median outcome under parameter noise clearly beats that one's:
    `pick_start`) with the whole time limit: the reward picks the gait and controller."""
    begin, settings = time.perf_counter(), config.search
    with Simulator(scene, nthread=config.nthread) as sim:
        searches = [(PolicySearch(scene, controller, reward, settings, duration_s=config.duration_s, seed=seed), start)
                    for controller, start in search_starts(scene, settings)]
        scored = [(search, start, search.score_start(sim, start)) for search, start in searches]
        outcomes = ([search.start_outcome(sim, start) for search, start, _ in scored]
                    if len(scored) > 1 and settings.start_draws else None)
        search, start, scores = scored[pick_start([scores for *_, scores in scored], outcomes, settings.start_margin)]
        after = search.hold_steps(settings.hold) + executed_steps(search.controller, settings.receding,
                                                                  duration_s=config.duration_s, dt=scene.dt)
        best, _, _ = search.run(sim, start, _reporter(progress, search), start_scores=scores, since=begin,
                                reserve_steps=after)
        best = search.held(sim, best, start, settings.hold)
        seconds = time.perf_counter() - begin
        rollouts = executed(sim, search.controller, best, reward, settings.receding, duration_s=config.duration_s,
                            seed=seed)
    features = rollouts.features(scene)
    evaluation = reward(features)
    steps = sum(other.steps for other, _, _ in scored)
    return Trajectory(rollouts=rollouts, reward=evaluation, term_stats=term_statistics(evaluation),
                      metrics=batch_metrics(features)[0], wall_time_s=time.perf_counter() - begin,
                      planner_steps=steps, planner_time_s=seconds,
                      policy=Policy.of(search.controller, scene.scene.body, best))


def executed(sim: Simulator, controller: Controller, params: np.ndarray, reward: RewardFunction,
             receding: RecedingConfig | None, *, duration_s: float, seed: int) -> Rollouts:
    """The motion [1, T, ·] of the [P] `params` from the scene's start: as found, or with `receding` modulating
    them online against `reward`."""
    if receding is None:
        return run_controller(sim, controller, params[None], nstep=max(1, round(duration_s / sim.scene.dt)))
    with planning_simulator(sim) as planner:
        motion, _ = receding_motion(sim, planner, controller, params, reward, receding, duration_s=duration_s,
                                    seed=seed)
    return motion


def executed_steps(controller: Controller, receding: RecedingConfig | None, *, duration_s: float, dt: float) -> int:
    """Physics steps that `executed` simulates: the motion, and with `receding` its planner's look-aheads."""
    nstep = max(1, round(duration_s / dt))
    return nstep if receding is None else planned_steps(receding, nstep=nstep, chunk=controller.chunk, dt=dt)


def _reporter(progress: Callable[[Progress], None] | None,
              search: PolicySearch) -> Callable[[int, Scores, np.ndarray], None]:
    """A search's per-generation callback: its progress as a Progress."""
    generations, name = search.config.generations, search.controller.kind

    def report(generation: int, best: Scores, _params: np.ndarray) -> None:
        if progress is not None:
            progress(Progress(fraction=generation / max(1, generations),
                              sim_time=search.steps * search.scene.dt, best_return=float(best.returns[0]),
                              message=f"{name} generation {generation}/{generations}: alive "
                                      f"{best.alive[0]:.2f}, return {best.returns[0]:.3f}"))

    return report
