"""Receding-horizon modulation of a structured controller's parameters: model-predictive control over a policy.

A gait found by policy search on flat ground walks there, and a bump met early in a swing tips it over within a
second or two on ground it never saw. Here the policy is run online with a planner on top: every `replan_s`
seconds the body's state and the controller's memory are copied to a batch of candidate parameter vectors (the
nominal policy's, the one chosen last, and Gaussian neighbours of that one) and each candidate is simulated
`horizon_s` ahead on the ground the controller sees, with the body's nominal physics (the planner's model). The
candidate that stays up longest, then scores the highest reward over the horizon less a cost for straying from
the nominal parameters, drives the body until the next choice. The reward is the task's reward program (in the
sandbox for a model's program), so the planner pursues what the search did; the nominal gait is always among the
candidates, and on ground where nothing goes wrong it is kept. With `RecedingConfig.screen` the nominal and the
last chosen are looked ahead with first, and the neighbours only where neither stays up over the horizon. After
sampling-based MPC on top of a nominal policy (mujoco_mpc's planners) with the policy's own parameters as the
decision variables.

    motion, chosen = receding_motion(sim, planner, controller, nominal, reward, RecedingConfig(), duration_s=10,
                                     seed=0)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from rewardloop.control.config import RecedingConfig
from rewardloop.control.controllers.base import Carry, Controller, run_controller
from rewardloop.control.metrics import fall_mask
from rewardloop.reward.base import RewardFunction
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene, Physics, compile_scene


def candidates(nominal: np.ndarray, current: np.ndarray, low: np.ndarray, high: np.ndarray, *, samples: int,
               sigma: float, rng: np.random.Generator, moved: np.ndarray | None = None, moves: int = 0) -> np.ndarray:
    """[samples, P] parameter vectors to look ahead with: row 0 the [P] nominal, row 1 the [P] current (last
    chosen), the rest the current plus Gaussian noise of `sigma` × each parameter's range on the [P] bool `moved`
    ones (None: all), on `moves` of them drawn afresh for each row (0: on all), clipped to the [P] bounds `low`,
    `high`."""
    movable = np.ones(len(nominal), dtype=bool) if moved is None else moved
    mask = np.broadcast_to(movable, (samples - 2, len(nominal)))
    if 0 < moves < movable.sum():
        keys = np.where(mask, rng.random(mask.shape), np.inf)  # the `moves` smallest keys of each row move
        mask = keys <= np.sort(keys, axis=1)[:, moves - 1 : moves]
    noise = sigma * (high - low) * rng.standard_normal((samples - 2, len(nominal))) * mask
    return np.vstack([nominal, current, np.clip(current + noise, low, high)])


def ranking(alive: np.ndarray, returns: np.ndarray, stray: np.ndarray, stay_weight: float) -> np.ndarray:
    """[S] candidate indices, best first: the longest alive ([S] steps before a fall sign), then the highest [S]
    return less `stay_weight` × [S] stray (squared distance from the nominal in units of the ranges)."""
    value = np.nan_to_num(returns, nan=-np.inf) - stay_weight * stray
    return np.lexsort((-value, -alive))


def choose(alive: np.ndarray, returns: np.ndarray, stray: np.ndarray, stay_weight: float) -> int:
    """Index of the candidate to drive with: the first of `ranking`."""
    return int(ranking(alive, returns, stray, stay_weight)[0])


def lookahead(planner: Simulator, controller: Controller, params: np.ndarray, reward: RewardFunction,
              state: np.ndarray, carry: Carry, nstep: int) -> tuple[np.ndarray, np.ndarray]:
    """Simulate [S, P] candidates `nstep` steps ahead on the planner's model from one [nstate] state and the
    single-row `carry` (left untouched); -> ([S] steps before a fall sign, [S] mean reward per step over the
    horizon)."""
    samples = len(params)
    rows = np.zeros(samples, dtype=int)
    queue = np.full((samples, planner.scene.scene.physics.latency_steps, planner.model.nu), np.nan)
    ahead = Carry(carry.memory[rows], queue, carry.sensed[rows])  # the planner's model has its own latency
    rollouts = run_controller(planner, controller, params, nstep=nstep,
                              initial_state=np.repeat(state[None], samples, axis=0), carry=ahead)
    features = rollouts.features(planner.scene)
    falls = fall_mask(features)
    alive = np.where(falls.any(axis=1), falls.argmax(axis=1), nstep)
    return alive, reward(features).returns()


def screened_lookahead(planner: Simulator, controller: Controller, params: np.ndarray, reward: RewardFunction,
                       state: np.ndarray, carry: Carry, nstep: int, *,
                       screen: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`lookahead` of the [S, P] `candidates` (rows 0 and 1 the nominal and the last chosen); with `screen`, of
    those two first, and of the rest only where neither of them stays up all `nstep` steps. -> ([S', P] the
    candidates looked ahead with, [S'] steps before a fall sign, [S'] mean reward per step): S' = 2 where the
    screen passed, else S."""
    if not screen:
        return params, *lookahead(planner, controller, params, reward, state, carry, nstep)
    alive, returns = lookahead(planner, controller, params[:2], reward, state, carry, nstep)
    if alive.max() >= nstep or len(params) == 2:
        return params[:2], alive, returns
    more_alive, more_returns = lookahead(planner, controller, params[2:], reward, state, carry, nstep)
    return params, np.concatenate([alive, more_alive]), np.concatenate([returns, more_returns])


def preplan(planner: Simulator, controller: Controller, nominal: np.ndarray, reward: RewardFunction,
            config: RecedingConfig, *, rng: np.random.Generator) -> np.ndarray:
    """[P] the `nominal` re-centred on what `reward` asks, before the motion starts: `config.preplan_generations`
    rounds of the cross-entropy method over the parameters the planner may move, each round `config.samples`
    candidates simulated `config.preplan_s` seconds from the scene's start and ranked as a receding choice ranks
    them (`choose`: alive longest, then return less the stay cost from the nominal). The nominal is a candidate of
    every round, so it is kept unless another does better. A look-ahead of 1.5 s moves a few parameters a few per
    cent per choice, and an ask that needs several moved together (a faster walk: a shorter step, a longer stride)
    or more than a few per cent is lost in the choices' noise; the pre-plan moves them all at once over a longer
    look, and the receding planner then corrects around the result."""
    low, high = controller.space.low, controller.space.high
    movable = np.isin(controller.space.names, controller.steering) if config.steering_only else np.ones(len(low), bool)
    nstep = _preplan_steps(config, controller.chunk, planner.scene.dt)
    carry = Carry.fresh(controller, planner.scene, 1)
    state = np.asarray(planner.scene.initial_state, dtype=float)
    mean, spread = nominal.copy(), config.preplan_sigma * (high - low) * movable
    tried, scores = [], []
    for _ in range(config.preplan_generations):
        params = np.where(movable, np.clip(mean + spread * rng.standard_normal((config.samples, len(low))), low, high),
                          nominal)
        params[0], params[1] = nominal, np.where(movable, mean, nominal)
        alive, returns = lookahead(planner, controller, params, reward, state, carry, nstep)
        elite = params[ranking(alive, returns, _stray(params, nominal, low, high), config.stay_weight)]
        elite = elite[: max(2, config.samples // 4)]
        mean, spread = elite.mean(axis=0), elite.std(axis=0) * movable
        tried.append(params)
        scores.append((alive, returns))
    params = np.concatenate(tried)
    alive, returns = (np.concatenate(column) for column in zip(*scores, strict=True))
    return params[choose(alive, returns, _stray(params, nominal, low, high), config.stay_weight)]


def _stray(params: np.ndarray, nominal: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """[S] squared distance of [S, P] `params` from the [P] nominal, in units of the [P] ranges."""
    return (((params - nominal) / (high - low)) ** 2).sum(axis=1)


@contextmanager
def planning_simulator(sim: Simulator) -> Iterator[Simulator]:
    """The planner's simulator for `sim`'s scene: `sim` itself under the body's nominal physics, else one of the
    same scene with nominal physics (the planner does not know a robustness test's draw)."""
    if sim.scene.scene.physics == Physics():
        yield sim
        return
    nominal = compile_scene(dataclasses.replace(sim.scene.scene, physics=Physics()))
    with Simulator(nominal, nthread=sim.nthread) as planner:
        yield planner


def receding_motion(sim: Simulator, planner: Simulator, controller: Controller, nominal: np.ndarray,
                    reward: RewardFunction, config: RecedingConfig, *, duration_s: float, seed: int,
                    pushes: Sequence[tuple[int, np.ndarray]] = (),
                    progress: Callable[[float, float], None] | None = None) -> tuple[Rollouts, np.ndarray]:
    """One motion of the [P] `nominal` policy from the scene's start, its parameters chosen online (module
    docstring).

    Args:
      sim: the executed scene (its physics may differ from the planner's: a robustness test).
      planner: the planner's model of it: the same ground, the body's nominal physics.
      controller: the controller, seeing the ground (`controllers.on_ground`).
      pushes: (step, [3] velocity change of the root, m/s) applied to the executed body before that step (the
        planner does not foresee them).
      progress: called after each choice's part of the motion with (fraction of the motion done, seconds done).
    Returns:
      (the executed motion [1, T, ·], [D, P] the parameters chosen at each of the D replans).
    """
    scene, chunk = sim.scene, controller.chunk
    nstep = max(1, round(duration_s / scene.dt))
    every, horizon = _replan_steps(config, chunk, scene.dt)
    low, high = controller.space.low, controller.space.high
    moved = np.isin(controller.space.names, controller.steering) if config.steering_only else None
    rng = np.random.default_rng(seed)
    now = np.array(scene.initial_state, dtype=float)
    carry, current, chosen, parts = Carry.fresh(controller, scene, 1), nominal, [], []
    kicks = {chunk * round(at / chunk): kick for at, kick in pushes}
    bounds = sorted(set(range(0, nstep, every)) | {at for at in kicks if 0 <= at < nstep} | {nstep})
    qvel = 1 + scene.model.nq
    for start, stop in itertools.pairwise(bounds):
        now[qvel : qvel + 3] += kicks.get(start, 0.0)
        params = candidates(nominal, current, low, high, samples=config.samples, sigma=config.sigma, rng=rng,
                            moved=moved, moves=config.moves)
        params, alive, returns = screened_lookahead(planner, controller, params, reward, now, carry, horizon,
                                                    screen=config.screen)
        current = params[choose(alive, returns, _stray(params, nominal, low, high), config.stay_weight)]
        part = run_controller(sim, controller, current[None], nstep=stop - start, initial_state=now[None],
                              carry=carry)
        chosen.append(current)
        parts.append(part)
        now = part.state[0, -1].copy()
        if progress is not None:
            progress(stop / nstep, stop * scene.dt)
    return Rollouts.in_sequence(parts), np.array(chosen)


def _replan_steps(config: RecedingConfig, chunk: int, dt: float) -> tuple[int, int]:
    """(physics steps between two choices, steps each candidate is simulated ahead), whole controller updates of
    `chunk` steps of `dt` seconds."""
    return (chunk * max(1, round(config.replan_s / dt / chunk)), chunk * max(1, round(config.horizon_s / dt / chunk)))


def _preplan_steps(config: RecedingConfig, chunk: int, dt: float) -> int:
    """Steps each pre-plan candidate is simulated: `config.preplan_s` in whole controller updates."""
    return _replan_steps(dataclasses.replace(config, horizon_s=config.preplan_s), chunk, dt)[1]


def planned_steps(config: RecedingConfig, *, nstep: int, chunk: int, dt: float) -> int:
    """Physics steps that one unpushed `receding_motion` of `nstep` steps simulates: its look-aheads, the motion
    itself and the `preplan` before it (the muscle legs' 10-s climb with the stairs' settings: 50 × 16 × 1000 + 5000
    = 805,000, no pre-plan); with `config.screen`, at most."""
    every, horizon = _replan_steps(config, chunk, dt)
    return (len(range(0, nstep, every)) * config.samples * horizon + nstep
            + config.preplan_generations * config.samples * _preplan_steps(config, chunk, dt))


def run_receding(scene: CompiledScene, controller: Controller, nominal: np.ndarray, reward: RewardFunction,
                 config: RecedingConfig, *, duration_s: float, seed: int,
                 pushes: Sequence[tuple[float, float]] = ()) -> Rollouts:
    """`receding_motion` of the [P] `nominal` policy from `scene`'s start, pushed sideways by (time s, m/s, + to
    the left) kicks of the whole body's velocity; -> the motion [1, T, ·]."""
    kicks = [(round(t / scene.dt), np.array([0.0, v, 0.0])) for t, v in pushes]
    with Simulator(scene) as sim, planning_simulator(sim) as planner:
        motion, _ = receding_motion(sim, planner, controller, nominal, reward, config, duration_s=duration_s,
                                    seed=seed, pushes=kicks)
    return motion
