"""Structured controllers and policy search: parameter spaces, the gait machine, latency, early-stopped
rollouts, scoring, CMA-ES search, policies on disk, scene physics options and the replay command.

Every rollout here is short (at most 0.5 s of simulated time, batches of at most 4) to keep the file fast.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.control.config import (
    OPTIMIZER_KINDS,
    TRAINING_PHYSICS_SEED,
    OptimizerConfig,
    Perturbations,
    SearchConfig,
)
from rewardloop.control.controllers.base import (
    CONTROLLERS,
    WALKERS,
    Carry,
    Parameter,
    ParameterSpace,
    controller_for,
    make_controller,
    run_controller,
)
from rewardloop.control.controllers.gait_machine import CLOCK, PARAMETERS, STANCE
from rewardloop.control.defaults import default_kind, gaits_start
from rewardloop.control.metrics import fall_mask
from rewardloop.control.optimizer import OPTIMIZERS, optimize
from rewardloop.control.search.cmaes import (
    START_DRAWS_STREAM,
    PolicySearch,
    Scores,
    StartOutcome,
    _better,
    _clearly_better,
    keeps_start,
    lived_returns,
    lived_scores,
    pick_start,
    pushed_motion,
    search_starts,
    segment_rollouts,
)
from rewardloop.control.search.policy import POLICY_FILE, Policy, shipped_gait, shipped_gaits
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import CANONICAL, canonical
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import (
    RANDOMIZATION,
    WALKING_START_SPEED,
    WALKING_STRIDE,
    CompiledScene,
    Physics,
    Scene,
    compile_scene,
    random_physics,
    walking_start_speed,
)
from rewardloop.sim.terrain import Terrain

GAITS = Path(__file__).parents[1] / "rewardloop" / "control" / "gaits"


@pytest.fixture(scope="module")
def humanoid_walking():
    """The humanoid on flat ground at the walking start (1 m/s forward)."""
    return compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))


@pytest.fixture(scope="module")
def walk():
    """The canonical walking reward, evaluated in-process."""
    with load_reward(canonical("walk"), trusted=True) as reward:
        yield reward


def spread_params(count: int, seed: int, space: ParameterSpace = PARAMETERS) -> np.ndarray:
    """[count, P] distinct parameter vectors between 30 % and 70 % of each parameter's range."""
    unit = np.random.default_rng(seed).uniform(0.3, 0.7, size=(count, space.size))
    return space.low + unit * (space.high - space.low)


# --- parameter spaces -----------------------------------------------------------------------------------------

TINY_SPACE = ParameterSpace((Parameter("a", 0.0, 1.0, 0.5, "-", "first"),
                             Parameter("b", -2.0, 2.0, 0.0, "m", "second")))


def test_parameter_space_vector_and_named_round_trip():
    # defaults [0.5, 0.0]; setting b=1.5 gives [0.5, 1.5]; over base [0.1, -1] setting a=0.9 gives [0.9, -1]
    assert np.array_equal(TINY_SPACE.vector({"b": 1.5}), [0.5, 1.5])
    assert np.array_equal(TINY_SPACE.vector({"a": 0.9}, base=np.array([0.1, -1.0])), [0.9, -1.0])
    assert TINY_SPACE.named(np.array([0.25, -2.0])) == {"a": 0.25, "b": -2.0}
    assert (TINY_SPACE.names, TINY_SPACE.size, TINY_SPACE.index("b")) == (("a", "b"), 2, 1)
    assert np.array_equal(TINY_SPACE.low, [0.0, -2.0]) and np.array_equal(TINY_SPACE.high, [1.0, 2.0])
    # the gait machine's whole space: vector(named(v)) is v again, and the base is not written to
    base = spread_params(1, seed=0)[0]
    kept = base.copy()
    assert np.array_equal(PARAMETERS.vector(PARAMETERS.named(base)), base)
    PARAMETERS.vector({"speed": 2.0}, base=base)
    assert np.array_equal(base, kept)


def test_parameter_space_errors():
    with pytest.raises(UserError, match="unknown controller parameter 'c'; choose one of: a, b"):
        TINY_SPACE.index("c")
    with pytest.raises(UserError, match="unknown controller parameter 'c'"):
        TINY_SPACE.vector({"c": 0.0})
    with pytest.raises(UserError, match=r"a=1.5 is outside its bounds \[0.0, 1.0\]"):
        TINY_SPACE.vector({"a": 1.5})
    with pytest.raises(UserError, match="outside its bounds"):  # NaN compares False with both bounds
        TINY_SPACE.vector({"b": float("nan")})
    with pytest.raises(ValueError, match=r"parameter x: default 3 outside \[0, 1\]"):
        ParameterSpace((Parameter("x", 0, 1, 3, "-", "bad default"),))



def test_parameter_space_narrowed():
    # a (default 0.5) narrowed to [0.6, 0.8] clips its default to 0.6; b keeps [-2, 2]
    narrow = TINY_SPACE.narrowed({"a": (0.6, 0.8)})
    assert np.array_equal(narrow.low, [0.6, -2.0]) and np.array_equal(narrow.high, [0.8, 2.0])
    assert np.array_equal(narrow.default, [0.6, 0.0]) and TINY_SPACE.low[0] == 0.0
    with pytest.raises(UserError, match=r"bounds \[0.5, 1.5\] for a must lie within \[0.0, 1.0\]"):
        TINY_SPACE.narrowed({"a": (0.5, 1.5)})
    with pytest.raises(UserError, match="unknown controller parameter 'c'"):
        TINY_SPACE.narrowed({"c": (0.0, 1.0)})

# --- the controller registry ----------------------------------------------------------------------------------

def test_make_controller_and_controller_for(humanoid_flat, myolegs_flat):
    assert controller_for(humanoid_flat) == "gait_tracker"
    assert controller_for(myolegs_flat) == "muscle_tracker"
    assert make_controller("gait_machine", humanoid_flat).space is PARAMETERS
    with pytest.raises(UserError, match="unknown controller 'walker'; choose one of: fullbody_tracker, gait_machine"):
        make_controller("walker", humanoid_flat)
    with pytest.raises(UserError, match="'gait_machine' drives torque bodies; myolegs has muscle actuators"):
        make_controller("gait_machine", myolegs_flat)


def test_run_controller_rejects_parameters_of_the_wrong_shape(humanoid_flat):
    controller = make_controller("gait_machine", humanoid_flat)
    with Simulator(humanoid_flat, nthread=1) as sim, pytest.raises(UserError, match=r"shape \[B, 29\], got \(29,\)"):
        run_controller(sim, controller, PARAMETERS.default, nstep=2)


def test_default_kind_and_registry(humanoid_flat, myolegs_flat):
    assert tuple(OPTIMIZERS) == OPTIMIZER_KINDS
    assert default_kind(humanoid_flat) == "plan"  # the humanoid has a gait tracker and a gait machine
    assert default_kind(humanoid_flat, locomotion=False) == "mppi"  # a posture task: no gait
    # the muscle tracker walks the muscle legs from the walking start; from rest (this scene) their gaits fall
    assert default_kind(myolegs_flat) == "mppi" and not gaits_start(myolegs_flat)
    assert default_kind(compile_scene(Scene("myolegs", Terrain("flat"), start_speed=WALKING_START_SPEED))) == "plan"
    assert gaits_start(humanoid_flat) and humanoid_flat.scene.start_speed == 0  # the humanoid's gaits start at rest


def test_search_on_a_body_without_a_gait_controller_is_a_user_error(myolegs_flat, walk, monkeypatch):
    monkeypatch.delitem(WALKERS, "myolegs")
    monkeypatch.setattr("rewardloop.control.search.cmaes.shipped_gaits", lambda body, terrain: ())
    config = OptimizerConfig(kind="search", duration_s=0.1)
    with pytest.raises(UserError, match="no structured controller walks myolegs"):
        optimize(myolegs_flat, walk, config, seed=0)


# --- the gait machine -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["gait_machine", "gait_tracker"])
@pytest.mark.parametrize("count", [3, 4])  # 3 < 2 × 2 threads: one pooled rollout; 4: one row group per thread
def test_controller_batch_equals_each_row_alone(humanoid_walking, count, kind):
    controller = make_controller(kind, humanoid_walking)
    params = spread_params(count, seed=1, space=controller.space)
    with Simulator(humanoid_walking, nthread=2) as sim:
        together = run_controller(sim, controller, params, nstep=60)
        alone = [run_controller(sim, controller, params[i : i + 1], nstep=60) for i in range(count)]
    for i in range(count):
        np.testing.assert_array_equal(together.control[i], alone[i].control[0])
        np.testing.assert_array_equal(together.state[i], alone[i].state[0])
    # the rows really differ, so a mix-up of rows would be seen
    assert not np.allclose(together.control[0], together.control[1])


def test_gait_machine_memory_counts_the_swing_clock(humanoid_walking):
    # Default swing_time 0.35 s and swing_min 0.7: no touchdown may end a swing before 0.7 × 0.35 = 0.245 s, and
    # none is forced before 2 × 0.35 s. So after 40 steps of 5 ms (0.2 s) the left leg (0) still stands and the
    # clock reads 40 × 0.005 = 0.2 s since the swing began.
    controller = make_controller("gait_machine", humanoid_walking)
    carry = Carry.fresh(controller, humanoid_walking, 2)
    with Simulator(humanoid_walking, nthread=1) as sim:
        run_controller(sim, controller, np.repeat(PARAMETERS.default[None], 2, axis=0), nstep=40, carry=carry)
    np.testing.assert_array_equal(carry.memory[:, STANCE], [0.0, 0.0])
    np.testing.assert_allclose(carry.memory[:, CLOCK], [0.2, 0.2])


# --- latency --------------------------------------------------------------------------------------------------

class Ramp:
    """A state-blind controller for testing delays: every motor gets slope × (the step the command is for).

    The commands ignore the state, so a delayed motion issues the same commands as an undelayed one and only
    their arrival differs.
    """

    kind = "ramp"
    space = ParameterSpace((Parameter("slope", 0.0, 0.1, 0.01, "1/step", "command per step"),))
    chunk = 3
    memory_size = 1

    def __init__(self, nu: int):
        self.nu = nu

    def act(self, state, sensed, memory, params):
        step = memory[:, :1] + np.arange(self.chunk)  # [b, chunk] the steps these commands are for
        memory[:, 0] += self.chunk
        return np.repeat((params[:, :1] * step)[:, :, None], self.nu, axis=2)


@pytest.mark.parametrize("latency", [2, 4])  # shorter and longer than the Ramp's chunk of 3 steps
def test_latency_delays_commands_by_whole_steps(latency):
    scene = compile_scene(Scene("humanoid", Terrain("flat"), physics=Physics(latency_steps=latency)))
    ramp, slopes = Ramp(scene.model.nu), np.array([[0.01], [0.02]])
    with Simulator(scene, nthread=1) as sim:
        delayed = run_controller(sim, ramp, slopes, nstep=12)
    # Undelayed, step t gets slope·t. Delayed by k, step t gets the command issued k steps earlier, slope·(t − k);
    # before the first command arrives (t < k) the motors hold it, slope·0. k = 2, slope 0.01:
    # 0, 0, 0, 0.01, 0.02, ..., 0.09.
    t = np.arange(12)
    expected = slopes * np.maximum(t - latency, 0)
    np.testing.assert_allclose(delayed.control[:, :, 0], expected)
    np.testing.assert_array_equal(delayed.control, np.repeat(delayed.control[:, :, :1], scene.model.nu, axis=2))


def test_latency_carries_over_segments():
    # In segments of 6 steps (two Ramp chunks) the commands in flight and the Ramp's step count go on from one
    # segment to the next: the same controls as one 12-step run.
    scene = compile_scene(Scene("humanoid", Terrain("flat"), physics=Physics(latency_steps=2)))
    ramp, slopes = Ramp(scene.model.nu), np.array([[0.01], [0.02]])
    with Simulator(scene, nthread=1) as sim:
        whole = run_controller(sim, ramp, slopes, nstep=12)
        parts, lived = segment_rollouts(sim, ramp, slopes, nstep=12, segment=6, initial_state=scene.initial_state,
                                        stop_on_fall=False)
    np.testing.assert_array_equal(lived, [12, 12])
    np.testing.assert_array_equal(parts.control, whole.control)


def test_gait_machine_latency_shifts_its_first_commands(humanoid_walking):
    # Latency k = 3. Undelayed, the gait machine issues u0 from the start state and u1 from the state after u0.
    # Delayed, it issues the same u0 (same state, same memory), the motors hold u0 for steps 0..k-1 and get
    # u0 again at step k; the state after step 0 is the same, so the command issued at step 1 is u1 and
    # arrives at step k + 1. Later commands come from states that saw other controls.
    latency = 3
    scene = compile_scene(dataclasses.replace(humanoid_walking.scene, physics=Physics(latency_steps=latency)))
    params = spread_params(2, seed=2)
    with Simulator(humanoid_walking, nthread=1) as sim:
        prompt = run_controller(sim, make_controller("gait_machine", humanoid_walking), params, nstep=8)
    with Simulator(scene, nthread=1) as sim:
        delayed = run_controller(sim, make_controller("gait_machine", scene), params, nstep=8)
    for t in range(latency + 1):
        np.testing.assert_array_equal(delayed.control[:, t], prompt.control[:, 0])
    np.testing.assert_array_equal(delayed.control[:, latency + 1], prompt.control[:, 1])
    assert not np.allclose(prompt.control[:, 1], prompt.control[:, 0])  # a real shift, not constant controls


def test_fresh_carry_holds_no_commands_yet():
    scene = compile_scene(Scene("humanoid", Terrain("flat"), physics=Physics(latency_steps=3)))
    carry = Carry.fresh(make_controller("gait_machine", scene), scene, 2)
    assert carry.memory.shape == (2, 4) and not carry.memory.any()
    assert carry.queue.shape == (2, 3, scene.model.nu) and np.isnan(carry.queue).all()


# --- early-stopped rollouts and their scores ------------------------------------------------------------------

@pytest.fixture(scope="module")
def pushed_pair(humanoid_flat):
    """Standing humanoid under the default gait machine, row 1 kicked sideways at 4 m/s at the start; 0.5 s in
    segments of 20 steps, with and without early stopping."""
    controller = make_controller("gait_machine", humanoid_flat)
    params = np.repeat(PARAMETERS.default[None], 2, axis=0)
    kick = np.array([[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    with Simulator(humanoid_flat, nthread=2) as sim:
        runs = {stop: segment_rollouts(sim, controller, params, nstep=100, segment=20,
                                       initial_state=humanoid_flat.initial_state, pushes=[(0, kick)],
                                       stop_on_fall=stop) for stop in (True, False)}
    return runs


def test_segment_rollouts_stops_after_the_segment_of_a_fall(humanoid_flat, pushed_pair):
    (stopped, lived), (full, lived_full) = pushed_pair[True], pushed_pair[False]
    np.testing.assert_array_equal(lived_full, [100, 100])
    falls = fall_mask(full.features(humanoid_flat))
    assert not falls[0].any() and falls[1].any()  # only the kicked row falls within 0.5 s
    # The kicked row is stopped at the end of the 20-step segment holding its first fall (it fell at step 72 when
    # this was written: segment [60, 80)); it lived the segments before that one (60 steps); the other lives all 100.
    first = int(np.argmax(falls[1]))
    assert lived.tolist() == [100, first // 20 * 20]
    assert lived[1] < 100
    for row, simulated in enumerate((100, (first // 20 + 1) * 20)):  # the segment of the fall was simulated too
        np.testing.assert_array_equal(stopped.state[row, :simulated], full.state[row, :simulated])
        np.testing.assert_array_equal(stopped.control[row, :simulated], full.control[row, :simulated])


def test_a_stall_counts_as_a_fall(humanoid_walking):
    """The shipped gait walks 1.2 m/s: it never stalls at 0.05 m/s; at 10 m/s every row stalls at the first check,
    the end of the first segment a whole second after the first mark (step 200 with 50-step segments of 5 ms), so
    it lived the three segments before (150 steps); without stopping on falls, stalls are not checked."""
    gait = shipped_gait("humanoid")
    controller = make_controller(gait.controller, humanoid_walking)
    params = np.repeat(gait.vector(controller)[None], 2, axis=0)
    with Simulator(humanoid_walking, nthread=2) as sim:
        def lived(speed: float, stop: bool = True) -> list[int]:
            return segment_rollouts(sim, controller, params, nstep=300, segment=50, stop_on_fall=stop,
                                    initial_state=humanoid_walking.initial_state, stall_speed=speed)[1].tolist()

        assert lived(0.05) == lived(0.0) == [300, 300]
        assert lived(10.0) == [150, 150]
        assert lived(10.0, stop=False) == [300, 300]


def test_straying_from_the_heading_counts_as_a_fall(humanoid_walking):
    """With a heading limit half the largest heading the shipped gait reaches in 1.5 s, a trial lives the segments
    before the first one in which its heading passes the limit; with 180° (or 0: off) it lives them all."""
    gait = shipped_gait("humanoid")
    controller = make_controller(gait.controller, humanoid_walking)
    params = gait.vector(controller)[None]
    with Simulator(humanoid_walking, nthread=1) as sim:
        def lived(limit: float) -> int:
            return int(segment_rollouts(sim, controller, params, nstep=300, segment=50, heading_limit=limit,
                                        initial_state=humanoid_walking.initial_state)[1][0])

        motion = pushed_motion(sim, controller, params[0], duration_s=1.5)
        heading = np.abs(motion.features(humanoid_walking).heading[0])
        limit = heading.max() / 2
        assert limit > 0.005  # the gait's heading does move (rad)
        assert lived(0.0) == lived(np.pi) == 300
        assert lived(limit) == int(np.argmax(heading > limit)) // 50 * 50


def test_lived_returns_equal_each_row_alone(humanoid_flat, walk):
    controller = make_controller("gait_machine", humanoid_flat)
    with Simulator(humanoid_flat, nthread=2) as sim:
        rollouts = run_controller(sim, controller, spread_params(4, seed=3), nstep=40)
    lived = np.array([40, 25, 40, 10])
    calls = []

    def counting(features):
        calls.append(features.batch_shape)
        return walk(features)

    returns = lived_returns(humanoid_flat, counting, rollouts, lived)
    assert sorted(calls) == [(1, 10), (1, 25), (2, 40)]  # one reward call per episode length
    for row, length in enumerate(lived):
        part = Rollouts(rollouts.initial_state[row : row + 1], rollouts.state[row : row + 1, :length],
                        rollouts.sensordata[row : row + 1, :length], rollouts.control[row : row + 1, :length])
        assert returns[row] == pytest.approx(walk(part.features(humanoid_flat)).returns()[0], rel=1e-12)


def test_scores_rank_alive_first_then_return():
    # Alive fractions are compared to 3 decimals: 0.9996 -> 1.0 ties with 1.0. Among the four alive to the end,
    # returns 0.7 (row 3) > 0.5 (row 2) > 0.2 (row 0) > NaN (row 4, ranked as -inf); row 1 lived half the motion
    # and comes last despite the highest return, 0.9.
    scores = Scores(alive=np.array([1.0, 0.5, 1.0, 0.9996, 1.0]), returns=np.array([0.2, 0.9, 0.5, 0.7, np.nan]))
    assert scores.ranking().tolist() == [3, 2, 0, 4, 1]


def test_scores_rank_constraint_cost_before_alive():
    # Rows 1 and 3 meet the constraints (cost compares to 3 decimals: 0.0004 -> 0) and beat rows that stay up longer
    # with a higher return; row 3 then wins on time alive. Among the others the smaller miss wins (row 2, then 0).
    scores = Scores(alive=np.array([1.0, 0.5, 0.8, 0.7]), returns=np.array([0.9, 0.1, 0.2, 0.3]),
                    cost=np.array([0.2, 0.0, 0.1, 0.0004]))
    assert scores.ranking().tolist() == [3, 1, 2, 0]
    assert [_better(scores, i, scores.rows(slice(1, 2))) for i in range(4)] == [False, False, False, True]
    assert not _better(scores, 1, scores.rows(slice(3, 4)))


def test_scores_without_constraints_cost_nothing_and_average():
    plain = Scores(alive=np.array([1.0, 0.5]), returns=np.array([0.2, 0.4]))
    np.testing.assert_array_equal(plain.cost, [0.0, 0.0])
    costly = Scores(alive=np.array([0.0, 0.5]), returns=np.array([0.4, 0.0]), cost=np.array([0.2, 0.6]))
    mean = plain.averaged(costly)
    np.testing.assert_allclose([mean.alive, mean.returns, mean.cost], [[0.5, 0.5], [0.3, 0.2], [0.1, 0.3]])


def test_lived_scores_cost_is_the_constraint_terms_negative_part_over_the_lived_steps(humanoid_flat, walk):
    controller = make_controller("gait_machine", humanoid_flat)
    with Simulator(humanoid_flat, nthread=2) as sim:
        rollouts = run_controller(sim, controller, spread_params(2, seed=3), nstep=40)
    lived = np.array([40, 25])
    names = ("upright", "balance", "effort")  # upright is positive: met, it costs nothing
    returns, cost = lived_scores(humanoid_flat, walk, rollouts, lived, names)
    np.testing.assert_array_equal(returns, lived_returns(humanoid_flat, walk, rollouts, lived))
    for row, length in enumerate(lived):
        part = Rollouts(rollouts.initial_state[row : row + 1], rollouts.state[row : row + 1, :length],
                        rollouts.sensordata[row : row + 1, :length], rollouts.control[row : row + 1, :length])
        terms = walk(part.features(humanoid_flat)).terms
        assert cost[row] == pytest.approx(sum(np.maximum(-terms[name][0], 0).mean() for name in names), rel=1e-12)
    with pytest.raises(UserError, match=r"^constraint 'elegance' is not a term of the reward; its terms: .*upright"):
        lived_scores(humanoid_flat, walk, rollouts, lived, ("elegance",))


# --- policy search --------------------------------------------------------------------------------------------

TINY_SEARCH = SearchConfig(population=4, generations=2, sigma=0.1, segment_s=0.25, max_seconds=None)


def test_policy_search_is_deterministic_and_keeps_the_best(humanoid_walking, walk):
    controller = make_controller("gait_machine", humanoid_walking)
    start = PARAMETERS.default

    def search():
        generations = []
        with Simulator(humanoid_walking, nthread=2) as sim:
            result = PolicySearch(humanoid_walking, controller, walk, TINY_SEARCH, duration_s=0.5, seed=7).run(
                sim, start, lambda generation, scores, best: generations.append(generation))
        return (*result, generations)

    best, scores, log, generations = search()
    again, _, log_again, _ = search()
    np.testing.assert_array_equal(best, again)
    assert log.history == log_again.history
    assert generations == [1, 2]
    assert (log.generations, log.evaluations) == (2, 1 + 2 * 4)  # the start, then 2 generations of 4
    assert 0 < log.steps <= 9 * 100  # at most 9 candidates × 100 steps (fewer after falls)
    # history[0] is the start; the best kept never gets worse: alive longer, or as long with a higher return
    keys = [(round(alive, 3), ret) for alive, ret in log.history]
    assert all(later >= earlier for earlier, later in itertools.pairwise(keys))
    assert (log.best_alive, log.best_return) == log.history[-1]
    assert (float(scores.alive[0]), float(scores.returns[0])) == log.history[-1]
    assert np.all((PARAMETERS.low <= best) & (best <= PARAMETERS.high))


LOW = '''def low(f):
    """-pelvis height (m): lower is better."""
    return -f.root_height

WEIGHTS = {"low": 1.0}
'''
"""A reward that prizes lying on the ground."""


def test_the_start_is_kept_where_the_found_gait_falls_sooner_after_the_trials(humanoid_walking, walk):
    # 0.5-s trials, a hold check 4 times as long: the shipped gait walks those 2 s, every parameter at its low bound
    # falls; the walk ranks the walking start higher, a reward for lying down the falling gait.
    gait = shipped_gait("humanoid")
    controller = make_controller(gait.controller, humanoid_walking)
    walks, falls = gait.vector(controller), controller.space.low
    with Simulator(humanoid_walking, nthread=2) as sim:
        assert fall_mask(pushed_motion(sim, controller, falls, duration_s=2.0).features(humanoid_walking)).any()
        search = PolicySearch(humanoid_walking, controller, walk, TINY_SEARCH, duration_s=0.5, seed=0)
        assert search.held(sim, falls, walks, 3.0) is walks
        assert search.held(sim, walks, falls, 3.0) is walks
        assert search.held(sim, falls, walks, 0.0) is falls  # off
        assert search.steps == 2 * 2 * (1 + TINY_SEARCH.hold_draws) * 400  # as found and under each noise draw
        with load_reward(RewardProgram.from_source(LOW), trusted=True) as low:
            lying = PolicySearch(humanoid_walking, controller, low, TINY_SEARCH, duration_s=0.5, seed=0)
            assert lying.held(sim, falls, walks, 3.0) is falls


def test_the_hold_ranks_by_the_mean_return_over_the_same_noise_draws_for_both(humanoid_walking, walk):
    # The shipped gait and a copy with 10 % longer steps, 0.3-s trials, a hold check twice as long, 3 draws of ±20 %
    # noise: the gait kept is the one the walk ranks higher on average over its 4 runs, each draw the same relative
    # noise for both (replayed here from a copy of the search's generator, by plain rollouts); either order of the
    # two keeps the same one.
    gait = shipped_gait("humanoid")
    controller = make_controller(gait.controller, humanoid_walking)
    walks = gait.vector(controller)
    other = walks.copy()
    other[controller.space.index("step_time")] *= 1.1
    config = dataclasses.replace(TINY_SEARCH, hold_draws=3, hold_noise=0.2)
    space, kept = controller.space, []
    with Simulator(humanoid_walking, nthread=2) as sim:
        for found, start in ((other, walks), (walks, other)):
            search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.3, seed=4)
            rng = copy.deepcopy(search.rng)
            kept.append(search.held(sim, found, start, 1.0))
            pair = np.stack([found, start])
            runs = [pair, *(np.clip(pair * (1 + rng.uniform(-0.2, 0.2, size=(1, space.size))), space.low, space.high)
                            for _ in range(3))]
            rollouts = run_controller(sim, controller, np.vstack(runs), nstep=round(0.6 / humanoid_walking.dt))
            found_return, start_return = walk(rollouts.features(humanoid_walking)).returns().reshape(4, 2).mean(axis=0)
            assert kept[-1] is (start if start_return > found_return else found)
    assert kept[0] is kept[1]


def _walked_by(kind: str) -> CompiledScene | None:
    """The first body a controller made for some bodies only drives (the full body's tracker: its spine and arms),
    from the walking start; None where any body of its actuator kind will do."""
    bodies = CONTROLLERS[kind].bodies
    return compile_scene(Scene(bodies[0], Terrain("flat"), start_speed=walking_start_speed(bodies[0]))) \
        if bodies else None


@pytest.mark.parametrize("kind", sorted(CONTROLLERS))
def test_steering_names_parameters_of_the_controller(kind, humanoid_walking, myolegs_flat):
    scenes = {"muscle": myolegs_flat, "torque": humanoid_walking,
              "servo": compile_scene(Scene("berkeley_humanoid", Terrain("flat")))}
    scene = _walked_by(kind) or scenes[CONTROLLERS[kind].actuator_kind]
    controller = make_controller(kind, scene)
    assert 2 <= len(set(controller.steering)) == len(controller.steering) < controller.space.size
    assert {controller.space.index(name) for name in controller.steering}  # each a parameter of its space


def test_a_steering_search_moves_only_the_steering_parameters(humanoid_walking, walk):
    controller = make_controller("gait_machine", humanoid_walking)
    config = dataclasses.replace(TINY_SEARCH, steer_only=True, sigma=0.3)
    search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.25, seed=3)
    asked = []
    evaluate = search.evaluate
    search.evaluate = lambda sim, params: asked.append(params.copy()) or evaluate(sim, params)
    with Simulator(humanoid_walking, nthread=2) as sim:
        search.run(sim, PARAMETERS.default)
    moved = np.any(np.vstack(asked) != PARAMETERS.default, axis=0)
    assert set(np.flatnonzero(moved)) == {PARAMETERS.index(name) for name in controller.steering}


def test_the_time_limit_counts_from_when_the_candidate_began(humanoid_walking, walk):
    # A 60-s limit that began 100 s ago (picking the start took it all) runs no generation; one that begins now
    # runs both of the two asked for.
    controller = make_controller("gait_machine", humanoid_walking)
    config = dataclasses.replace(TINY_SEARCH, max_seconds=60.0)
    with Simulator(humanoid_walking, nthread=2) as sim:
        logs = [PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.25, seed=3).run(
            sim, PARAMETERS.default, since=since)[2] for since in (time.perf_counter() - 100.0, None)]
    assert [log.generations for log in logs] == [0, 2]


def test_the_time_limit_keeps_room_for_what_runs_after_the_search(humanoid_walking, walk):
    # Within a 60-s limit: with nothing to run after it, both generations; with 10^12 steps still to come (weeks at
    # any speed), only the first, which measures the search's seconds per step to forecast them with.
    controller = make_controller("gait_machine", humanoid_walking)
    config = dataclasses.replace(TINY_SEARCH, max_seconds=60.0)
    with Simulator(humanoid_walking, nthread=2) as sim:
        logs = [PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.25, seed=3).run(
            sim, PARAMETERS.default, reserve_steps=reserve)[2] for reserve in (0, 10**12)]
    assert [log.generations for log in logs] == [2, 1]


def test_hold_steps_counts_what_the_hold_simulates(humanoid_walking, walk):
    # 0.25 s of 5-ms steps = 50 per trial; the hold runs 50 + 25 = 75 steps, found and start as set and under
    # 2 draws each: 6 runs, 450 steps.
    controller = make_controller("gait_machine", humanoid_walking)
    config = dataclasses.replace(TINY_SEARCH, hold_draws=2)
    search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.25, seed=3)
    found = PARAMETERS.default * 1.01
    with Simulator(humanoid_walking, nthread=2) as sim:
        search.held(sim, found, PARAMETERS.default, 0.5)
    assert search.steps == search.hold_steps(0.5) == 450
    assert search.hold_steps(0.0) == 0


@pytest.mark.parametrize("terrain", [Terrain("flat"), Terrain("stairs")])
def test_on_flat_ground_the_search_leaves_what_only_acts_on_uneven_ground(walk, terrain):
    # The gait tracker's look_* parameters act on rises of the ground, 0 on flat ground, and land_ahead on a foot
    # caught early by a bump: a flat
    # search leaves them at the start's values (a robust gait's reactions survive a search on flat ground, and the
    # search moves the same parameters as before they existed); on stairs it moves them with the rest.
    from rewardloop.control.controllers import gait_tracker
    scene = compile_scene(Scene("humanoid", terrain, start_speed=WALKING_START_SPEED))
    controller = make_controller("gait_tracker", scene)
    search = PolicySearch(scene, controller, walk, TINY_SEARCH, duration_s=0.25, seed=3)
    asked = []
    evaluate = search.evaluate
    search.evaluate = lambda sim, params: asked.append(params.copy()) or evaluate(sim, params)
    start = gait_tracker.PARAMETERS.vector({"look_lift": 2.0, "look_hip": 1.0, "land_ahead": 0.3})
    with Simulator(scene, nthread=2) as sim:
        search.run(sim, start)
    moved = set(np.flatnonzero(np.any(np.vstack(asked) != start, axis=0)))
    uneven = {gait_tracker.LOOK_LIFT, gait_tracker.LOOK_HIP, gait_tracker.LOOK_PUSH, gait_tracker.LOOK_LAND,
              gait_tracker.LAND_AHEAD, gait_tracker.STAIR_KNEE}
    assert moved == set(range(gait_tracker.PARAMETERS.size)) - (uneven if terrain.kind == "flat" else set())


def test_each_ground_of_a_search_is_walked_by_a_controller_that_sees_that_ground(walk):
    # Flat ground plus stairs: the stairs run's controller reads the stairs' map, the flat run's the flat one;
    # the search's own controller is not changed by it (a copy sees the other ground).
    from rewardloop.control.controllers.gait_tracker import PARAMETERS as TRACKER
    scene = compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))
    controller = make_controller("gait_tracker", scene)
    config = dataclasses.replace(TINY_SEARCH, perturbations=Perturbations(grounds=(Terrain("stairs"),)))
    search = PolicySearch(scene, controller, walk, config, duration_s=0.1, seed=0)
    seen = []
    scored = search._scored
    search._scored = lambda sim, seeing, *rest: seen.append(
        (sim.scene.scene.terrain.kind, seeing.ground.max())) or scored(sim, seeing, *rest)
    with Simulator(scene, nthread=2) as sim:
        search.evaluate(sim, TRACKER.default[None])
    assert seen == [("flat", 0.0), ("stairs", pytest.approx(30 * 0.08))]
    assert controller.ground.shape == (1, 1)


def test_policy_search_scores_average_over_pushes(humanoid_flat, walk):
    # With one push, each candidate runs twice (unpushed, then kicked 4 m/s left at the start): its scores are the
    # mean of the two runs, each scored as if alone. (A push at 0 s adds no segment seam, so the unpushed run is
    # the plain one; see test_segments_do_not_change_an_unbroken_motion for why that matters.) Standing start,
    # checks every 20 steps: unpushed the defaults live all 100 steps and row 1 80; kicked, 80 and 60 (when this
    # was written), so alive = [(1 + 0.8) / 2, (0.8 + 0.6) / 2] = [0.9, 0.7].
    controller = make_controller("gait_machine", humanoid_flat)
    config = dataclasses.replace(TINY_SEARCH, segment_s=0.1)
    pushing = dataclasses.replace(config, perturbations=Perturbations(pushes=((0.0, 4.0),)))
    params = np.stack([PARAMETERS.default, spread_params(1, seed=4)[0]])
    with Simulator(humanoid_flat, nthread=2) as sim:
        scores = PolicySearch(humanoid_flat, controller, walk, pushing, duration_s=0.5, seed=0).evaluate(sim, params)
        plain = PolicySearch(humanoid_flat, controller, walk, config, duration_s=0.5, seed=0).evaluate(sim, params)
        kick = np.array([[0.0, 4.0, 0.0]] * 2)
        rollouts, lived = segment_rollouts(sim, controller, params, nstep=100, segment=20,
                                           initial_state=humanoid_flat.initial_state, pushes=[(0, kick)])
    pushed_alive, pushed_return = lived / 100, lived_returns(humanoid_flat, walk, rollouts, lived)
    assert not np.array_equal(pushed_alive, plain.alive)  # the push matters
    np.testing.assert_allclose(scores.alive, (plain.alive + pushed_alive) / 2)
    np.testing.assert_allclose(scores.returns, (plain.returns + pushed_return) / 2)


def test_optimize_search_policy_saves_loads_and_replays(humanoid_walking, walk, tmp_path):
    config = OptimizerConfig(kind="search", duration_s=0.5, nthread=2,
                             search=SearchConfig(population=4, generations=1, max_seconds=None))
    fractions = []
    trajectory = optimize(humanoid_walking, walk, config, seed=0, progress=lambda p: fractions.append(p.fraction))
    assert fractions == [1.0]  # one generation, from the best of the shipped gaits
    policy = trajectory.policy
    assert policy is not None and policy.body == "humanoid"
    assert policy.controller in {gait.controller for gait in shipped_gaits("humanoid")}
    assert trajectory.rollouts.state.shape[:2] == (1, 100)  # 0.5 s at 5 ms
    trajectory.save(tmp_path)
    assert (tmp_path / POLICY_FILE).is_file()
    assert Policy.load(tmp_path) == policy == Trajectory.load(tmp_path).policy
    controller = make_controller(policy.controller, humanoid_walking)
    with Simulator(humanoid_walking, nthread=1) as sim:
        replay = run_controller(sim, controller, Policy.load(tmp_path / POLICY_FILE).vector(controller)[None],
                                nstep=100)
    np.testing.assert_array_equal(replay.state, trajectory.rollouts.state)
    np.testing.assert_array_equal(replay.control, trajectory.rollouts.control)


def test_segments_do_not_change_an_unbroken_motion(humanoid_walking):
    # Without a fall, rolling out in segments of 20 steps is only bookkeeping: the same motion as one run.
    controller = make_controller("gait_machine", humanoid_walking)
    params = PARAMETERS.default[None]
    with Simulator(humanoid_walking, nthread=1) as sim:
        whole = run_controller(sim, controller, params, nstep=40)
        parts, _ = segment_rollouts(sim, controller, params, nstep=40, segment=20,
                                    initial_state=humanoid_walking.initial_state, stop_on_fall=False)
    np.testing.assert_array_equal(parts.control, whole.control)


def test_pushed_motion_kicks_the_body_sideways(humanoid_walking):
    # A push of 0.5 m/s to the left at 0.1 s is added to the root's sideways velocity before step 20: the motion
    # is untouched before it, and right after it the pelvis moves about 0.5 m/s faster to the left than unpushed.
    controller = make_controller("gait_machine", humanoid_walking)
    with Simulator(humanoid_walking, nthread=1) as sim:
        calm = pushed_motion(sim, controller, PARAMETERS.default, duration_s=0.15)
        pushed = pushed_motion(sim, controller, PARAMETERS.default, duration_s=0.15, pushes=[(0.1, 0.5)])
    assert pushed.state.shape[:2] == (1, 30)
    np.testing.assert_array_equal(pushed.state[0, :20], calm.state[0, :20])
    sideways = 1 + humanoid_walking.model.nq + 1  # qvel of the free root: x, y, z linear velocity first
    gain = pushed.state[0, 20, sideways] - calm.state[0, 20, sideways]
    assert gain == pytest.approx(0.5, abs=0.1)


# --- policies on disk -----------------------------------------------------------------------------------------

def test_policy_save_and_load(tmp_path):
    policy = Policy("gait_machine", "humanoid", {"speed": 1.5, "turn_rate": 0.25})
    path = policy.save(tmp_path / "mine.json", found_by="a test")
    assert json.loads(path.read_text())["found_by"] == "a test"  # extra keys are kept for people...
    assert Policy.load(path) == policy  # ...and ignored on loading
    (tmp_path / "run").mkdir()
    policy.save(tmp_path / "run" / POLICY_FILE)
    assert Policy.load(tmp_path / "run") == policy  # a directory reads its policy.json


class _Named:
    kind = "other"


def test_policy_vector_fills_defaults_and_checks_the_controller(humanoid_flat):
    controller = make_controller("gait_machine", humanoid_flat)
    vector = Policy("gait_machine", "humanoid", {"speed": 1.5}).vector(controller)
    np.testing.assert_array_equal(vector, PARAMETERS.vector({"speed": 1.5}))
    with pytest.raises(UserError, match="this policy is for the 'gait_machine' controller, not 'other'"):
        Policy("gait_machine", "humanoid", {}).vector(_Named())
    with pytest.raises(UserError, match="unknown controller parameter 'spede'"):
        Policy("gait_machine", "humanoid", {"spede": 1.5}).vector(controller)
    with pytest.raises(UserError, match=r"speed=9\.0 is outside its bounds"):
        Policy("gait_machine", "humanoid", {"speed": 9.0}).vector(controller)


@pytest.mark.parametrize("text, message", [
    ("{not json", "cannot read policy file"),
    ('{"controller": "gait_machine", "body": "humanoid"}', "is not a rewardloop policy"),  # no params
    ('{"controller": "gait_machine", "body": "humanoid", "params": [1, 2]}', "is not a rewardloop policy"),
    ('{"controller": "gait_machine", "body": "humanoid", "params": {"speed": "fast"}}', "is not a rewardloop policy"),
    ("[1, 2, 3]", "is not a rewardloop policy"),
])
def test_malformed_policy_file_is_a_user_error(tmp_path, text, message):
    path = tmp_path / "policy.json"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        Policy.load(path)


def test_missing_or_binary_policy_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot read policy file"):
        Policy.load(tmp_path / "absent.json")
    with pytest.raises(UserError, match="cannot read policy file"):
        Policy.load(tmp_path)  # a directory without policy.json
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match="cannot read policy file"):
        Policy.load(tmp_path / "binary.json")


@pytest.mark.parametrize("index", [0, 1])
def test_shipped_gaits_walk_from_the_walking_start(humanoid_walking, index):
    gait = shipped_gaits("humanoid")[index]
    controller = make_controller(gait.controller, humanoid_walking)
    with Simulator(humanoid_walking, nthread=1) as sim:
        motion = pushed_motion(sim, controller, gait.vector(controller), duration_s=3.0)
    assert not fall_mask(motion.features(humanoid_walking)).any()


def test_the_stairs_gait_climbs_the_default_stairs(humanoid_walking):
    # 4 s from the walking start: past the first riser (x = 1.5 m) and up at least three 8-cm steps, no fall.
    stairs = compile_scene(dataclasses.replace(humanoid_walking.scene, terrain=Terrain("stairs")))
    gait = shipped_gaits("humanoid", "stairs")[-1]
    controller = make_controller(gait.controller, stairs)
    with Simulator(stairs, nthread=1) as sim:
        motion = pushed_motion(sim, controller, gait.vector(controller), duration_s=4.0)
    features = motion.features(stairs)
    assert not fall_mask(features).any()
    assert features.com_pos[0, -1, 2] - features.com_pos[0, 0, 2] > 0.24


def test_shipped_gaits_main_first_then_by_name():
    gaits = shipped_gaits("humanoid")
    assert [gait.controller for gait in gaits] == [WALKERS["humanoid"], "gait_machine"]
    assert shipped_gait("humanoid") == gaits[0] and all(gait.body == "humanoid" for gait in gaits)
    assert shipped_gaits("no-such-body") == () and shipped_gait("no-such-body") is None


def test_a_gait_found_for_one_ground_is_a_start_only_there(humanoid_walking):
    # humanoid-slope.json ("for_terrain": "slope") is among the humanoid's gaits on a slope, after the others,
    # and not on flat ground or stairs; humanoid-stairs.json the same on stairs; humanoid-slow.json on flat ground.
    general = shipped_gaits("humanoid")
    on_flat = shipped_gaits("humanoid", "flat")
    assert on_flat[: len(general)] == general and on_flat[len(general):] == (Policy.load(GAITS / "humanoid-slow.json"),)
    on_slope, on_stairs = shipped_gaits("humanoid", "slope"), shipped_gaits("humanoid", "stairs")
    assert on_slope[: len(general)] == general and len(on_slope) == len(general) + 1
    assert on_stairs[: len(general)] == general and len(on_stairs) == len(general) + 1
    assert on_stairs[-1] not in on_slope and on_stairs[-1].params["stair_knee"] > 0
    slope = compile_scene(dataclasses.replace(humanoid_walking.scene, terrain=Terrain("slope", slope_deg=5.0)))
    starts = search_starts(slope, SearchConfig(controller="gait_tracker"))
    np.testing.assert_array_equal(starts[-1][1], on_slope[-1].vector(starts[-1][0]))
    assert len(starts) == sum(gait.controller == "gait_tracker" for gait in on_slope)


def test_search_starts_from_each_shipped_gait_or_the_defaults(humanoid_walking):
    starts = search_starts(humanoid_walking, SearchConfig())
    for (controller, start), gait in zip(starts, shipped_gaits("humanoid", "flat"), strict=True):
        assert controller.kind == gait.controller
        np.testing.assert_array_equal(start, gait.vector(controller))
    (only, start), = search_starts(humanoid_walking, SearchConfig(controller="gait_machine"))
    assert only.kind == "gait_machine" and not np.array_equal(start, only.space.default)
    (cold, start), = search_starts(humanoid_walking, SearchConfig(warm_start=False))
    assert cold.kind == WALKERS["humanoid"]
    np.testing.assert_array_equal(start, cold.space.default)


def test_a_median_outcome_beats_another_clearly_only_by_the_margin():
    # (−cost, alive, return): alive longer or cheaper wins outright; as long alive, the return must pass the
    # incumbent's by 8 % of its size (of |−2.0| for a negative one).
    assert _clearly_better((0.0, 1.0, 1.09), (0.0, 1.0, 1.0), 0.08)
    assert not _clearly_better((0.0, 1.0, 1.07), (0.0, 1.0, 1.0), 0.08)
    assert _clearly_better((0.0, 1.0, -1.8), (0.0, 1.0, -2.0), 0.08)
    assert not _clearly_better((0.0, 1.0, -1.9), (0.0, 1.0, -2.0), 0.08)
    assert _clearly_better((0.0, 1.0, 0.1), (0.0, 0.9, 5.0), 0.08)
    assert _clearly_better((0.0, 0.2, 0.1), (-0.1, 1.0, 5.0), 0.08)
    assert not _clearly_better((0.0, 1.0, 1.0), (0.0, 1.0, 1.0), 0.0)


@pytest.mark.parametrize("medians, falls, picked", [
    ([(0, 1.0, 2.0), (0, 1.0, 2.1), (0, 1.0, 1.0)], (0, 0, 0), 0),  # 2.0 is within 8 % of 2.1: the best as set
    ([(0, 1.0, 2.0), (0, 1.0, 2.1), (0, 1.0, 1.0)], (3, 0, 0), 1),  # ... unless it fell and the other never did
    ([(0, 1.0, 2.0), (0, 1.0, 2.1), (0, 1.0, 1.0)], (4, 2, 0), 0),  # both fell: the best as set (and start 2 is
    ([(0, 1.0, 2.0), (0, 1.0, 2.1), (0, 1.0, 1.0)], (3, 3, 0), 0),  # clearly beaten, though it never fell)
    ([(0, 1.0, 2.0), (0, 1.0, 2.3), (0, 1.0, 2.5)], (0, 0, 0), 2),  # 2.5 beats both clearly
    ([(0, 1.0, 2.0), (0, 1.0, 2.4), (0, 1.0, 2.5)], (0, 0, 1), 1),  # 2.4 and 2.5 about equal: the one that never fell
    ([(0, 0.6, 2.0), (0, 1.0, 0.5), (0, 1.0, 2.2)], (5, 0, 0), 2),  # the best as set falls in most draws
])
def test_a_start_is_picked_by_its_median_then_by_never_falling_then_as_set(medians, falls, picked):
    # Start 0 ranks best as set (alive 1.0, return 3.0); starts 1 and 2 lower.
    as_set = [Scores(alive=np.array([1.0]), returns=np.array([r])) for r in (3.0, 2.0, 1.0)]
    outcomes = [StartOutcome(median, fell) for median, fell in zip(medians, falls, strict=True)]
    assert pick_start(as_set, outcomes, 0.08) == picked
    assert pick_start(as_set, None, 0.08) == 0  # no draws: as set only
    assert pick_start(as_set[::-1], None, 0.08) == 2


@pytest.mark.parametrize(("falls", "returns", "kept"), [
    ((False, False), (2.0, 1.0), False),  # neither falls as set: the higher mean return, the found policy's
    ((False, False), (1.0, 2.0), True),   # ... the start's
    ((False, True), (1.0, 2.0), False),  # the start falls in the executed motion: the found policy, whatever
    ((True, False), (2.0, 1.0), True),   # the found policy falls in it: the start
    ((True, True), (1.0, 2.0), True),    # both fall: the mean returns again
])
def test_the_hold_keeps_what_does_not_fall_as_it_is_then_the_higher_mean(falls, returns, kept):
    # The slope gait as set fell at 7.9 s on the 2-core machine of 2026-12-01 while 7 of its 9 draws walked: the
    # mean over the hold's runs kept it over gaits the search found that walked.
    assert keeps_start(np.array(falls), np.array(returns)) is kept


def test_a_starts_median_outcome_is_over_draws_of_its_own_the_same_for_every_start(humanoid_walking, walk):
    # 3 draws of ±20 % noise, 0.3-s runs: the median of the 4 runs' keys (the lower one), replayed here by plain
    # rollouts from the documented generator; the search's own generator is not touched.
    gait = shipped_gait("humanoid")
    controller = make_controller(gait.controller, humanoid_walking)
    config = dataclasses.replace(TINY_SEARCH, start_draws=3, hold_noise=0.2)
    space, start = controller.space, gait.vector(controller)
    with Simulator(humanoid_walking, nthread=2) as sim:
        search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.3, seed=5)
        before = copy.deepcopy(search.rng).uniform(size=3)
        outcome = search.start_outcome(sim, start)
        np.testing.assert_array_equal(search.rng.uniform(size=3), before)
        rng = np.random.default_rng((5, START_DRAWS_STREAM))
        runs = np.vstack([start[None], *(np.clip(start * (1 + rng.uniform(-0.2, 0.2, size=(1, space.size))),
                                                 space.low, space.high) for _ in range(3))])
        rollouts = run_controller(sim, controller, runs, nstep=round(0.3 / humanoid_walking.dt),
                                  initial_state=np.repeat(humanoid_walking.initial_state[None], 4, axis=0))
    returns = walk(rollouts.features(humanoid_walking)).returns()
    assert not fall_mask(rollouts.features(humanoid_walking)).any()  # so each run lived its whole 0.3 s
    assert outcome == StartOutcome((-0.0, 1.0, pytest.approx(np.sort(returns)[1], rel=1e-9)), 0)


@pytest.mark.parametrize("speed, kept", [("np.minimum(1.5 * f.standing_height, start + 0.6 * f.time)", "humanoid.json"),
                                         ("0.6", "humanoid-slow.json")])
def test_the_reward_picks_the_shipped_gait(humanoid_walking, speed, kept):
    """Each shipped gait is scored as it is, and the canonical walk starts from the main gait while a slow walk at
    0.6 m/s starts from the slow gait (before there was one, from the gait machine); the search then runs from that
    gait only. The speed term alone picks here (the cadence band dropped)."""
    gait = Policy.load(GAITS / kept)
    source = CANONICAL["walk"].replace("np.minimum(1.5 * f.standing_height, start + 0.6 * f.time)", speed)
    source = RewardProgram.from_source(source).without_term("cadence").source
    messages = []
    with load_reward(RewardProgram.from_source(source), trusted=True) as reward:
        for generations in (0, 1):
            config = OptimizerConfig(kind="search", duration_s=3.0, nthread=2,
                                     search=SearchConfig(generations=generations, population=4, max_seconds=None,
                                                         start_draws=0))
            trajectory = optimize(humanoid_walking, reward, config, seed=0,
                                  progress=lambda p: messages.append(p.message))
            assert trajectory.policy is not None and trajectory.policy.controller == gait.controller
            if generations == 0:
                tracker = make_controller(gait.controller, humanoid_walking)
                np.testing.assert_allclose(trajectory.policy.vector(tracker), gait.vector(tracker))
    assert len(messages) == 1 and messages[0].startswith(f"{gait.controller} generation 1/1")


@pytest.mark.parametrize(("body", "flat_only"), [("myolegs", 5), ("humanoid", 1)])
def test_a_slow_walk_starts_from_the_slow_gait(body, flat_only):
    """BODY-slow.json (0.6-0.7 m/s, "for_terrain": "flat") is a start on flat ground only (on the muscle legs, as are
    the turning gaits, the straight-knee gait and the fast gait), and the one a slow walk at 0.6 m/s picks; the
    canonical walk picks the main gait (no generations: the gaits as they are)."""
    on_flat = shipped_gaits(body, "flat")
    slow = Policy.load(GAITS / f"{body}-slow.json")
    assert len(on_flat) == len(shipped_gaits(body)) + flat_only and slow in on_flat
    assert slow not in shipped_gaits(body, "rough")
    scene = compile_scene(Scene(body, Terrain("flat"), start_speed=WALKING_START_SPEED))
    config = OptimizerConfig(kind="search", duration_s=3.0, nthread=2,
                             search=SearchConfig(generations=0, max_seconds=None))
    for speed, kept in (("0.6", slow), ("np.minimum(1.5 * f.standing_height, start + 0.6 * f.time)", on_flat[0])):
        source = CANONICAL["walk"].replace("np.minimum(1.5 * f.standing_height, start + 0.6 * f.time)", speed)
        with load_reward(RewardProgram.from_source(source), trusted=True) as reward:
            trajectory = optimize(scene, reward, config, seed=0)
        tracker = make_controller(kept.controller, scene)
        assert trajectory.policy is not None
        np.testing.assert_allclose(trajectory.policy.vector(tracker), kept.vector(tracker))


# --- scene options --------------------------------------------------------------------------------------------

def test_physics_is_applied_to_the_model(humanoid_flat):
    physics = Physics(friction=0.5, gain=1.5, joint_friction=2.0, latency_steps=3)
    changed = compile_scene(Scene("humanoid", Terrain("flat"), physics=physics))
    plain, model = humanoid_flat.model, changed.model
    np.testing.assert_array_equal(model.geom_friction[:, 0], 0.5)  # every geom's sliding friction
    np.testing.assert_array_equal(model.geom_friction[:, 1:], plain.geom_friction[:, 1:])  # others kept
    np.testing.assert_allclose(model.actuator_gear[:, 0], 1.5 * plain.actuator_gear[:, 0])
    # the free root has 6 dofs (3 linear, 3 angular): no friction there, +2 N·m on each joint below it
    np.testing.assert_array_equal(model.dof_frictionloss[:6], plain.dof_frictionloss[:6])
    np.testing.assert_allclose(model.dof_frictionloss[6:], plain.dof_frictionloss[6:] + 2.0)
    assert "physics friction=0.5, gain=1.5, joint_friction=2, latency_steps=3" in changed.scene.describe()
    # the defaults change nothing
    default = compile_scene(Scene("humanoid", Terrain("flat"), physics=Physics()))
    np.testing.assert_array_equal(default.model.actuator_gear, plain.actuator_gear)
    np.testing.assert_array_equal(default.model.dof_frictionloss, plain.dof_frictionloss)
    np.testing.assert_array_equal(default.model.geom_friction, plain.geom_friction)


def test_physics_gain_scales_a_muscles_peak_force_not_its_gear(myolegs_flat):
    # A muscle's gear scales its length too (off its force-length curve): strength changes through peak force,
    # composed with an injury's, as an injury does it.
    plain = myolegs_flat.model
    stronger = compile_scene(Scene("myolegs", physics=Physics(gain=1.2))).model
    np.testing.assert_array_equal(stronger.actuator_gear, plain.actuator_gear)
    peak = plain.actuator_gainprm[:, 2]
    peak = np.where(peak > 0, peak, plain.actuator_gainprm[:, 3] / plain.actuator_acc0)
    np.testing.assert_allclose(stronger.actuator_gainprm[:, 2], 1.2 * peak)
    np.testing.assert_allclose(stronger.actuator_biasprm[:, 2], 1.2 * peak)
    both = compile_scene(Scene("myolegs", injury=(("left_plantarflexors", 0.5),), physics=Physics(gain=1.2))).model
    gastroc = plain.actuator("gasmed_l").id
    np.testing.assert_allclose(both.actuator_gainprm[gastroc, 2], 0.6 * peak[gastroc])


def test_a_controller_does_not_know_the_physics_draw(myolegs_flat):
    # Built for the body as designed: under ±20 % strength the muscle controller still expects nominal forces.
    weaker = compile_scene(Scene("myolegs", physics=Physics(gain=0.8)))
    nominal = make_controller("muscle_tracker", myolegs_flat).muscles
    drawn = make_controller("muscle_tracker", weaker).muscles
    np.testing.assert_allclose(drawn.params.peak, nominal.params.peak)


def test_physics_draws_add_runs_under_randomized_physics(humanoid_walking, walk):
    config = SearchConfig(population=4, generations=1, perturbations=Perturbations(physics_draws=2))
    assert config.perturbations.runs == 3
    controller = make_controller("gait_tracker", humanoid_walking)
    search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.1, seed=0)
    drawn = [ground.scene.physics for ground in search.grounds]
    assert drawn == [random_physics(np.random.default_rng(TRAINING_PHYSICS_SEED + k)) for k in range(2)]
    with Simulator(humanoid_walking, nthread=1) as sim:
        scores = search.evaluate(sim, controller.space.default[None])
    assert scores.alive.shape == (1,)


def test_fresh_grounds_are_new_rough_grounds_every_generation(humanoid_walking, walk):
    # Each evaluation round (the start's, each generation's, each rematch's) draws its own bump patterns, never
    # the default ground or the benchmark's unseen ones (the incumbent's rescoring: the rematch test below).
    config = SearchConfig(population=4, generations=2,
                          perturbations=Perturbations(fresh_grounds=2, fresh_roughness=0.02))
    assert config.perturbations.runs == 3 and config.perturbations.noisy
    controller = make_controller("gait_tracker", humanoid_walking)
    search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.05, seed=0)
    drawn, draw = [], search.draw_grounds

    def recorded() -> None:
        draw()
        drawn.append([ground.scene.terrain for ground in search.fresh])

    search.draw_grounds = recorded
    with Simulator(humanoid_walking, nthread=1) as sim:
        search.run(sim, controller.space.default)
    assert len(drawn) >= 3  # the start's evaluation, each generation's (and each rematch's)
    seeds = [terrain.seed for grounds in drawn for terrain in grounds]
    assert len(set(seeds)) == 2 * len(drawn) and min(seeds) >= 1000
    assert all(t.kind == "rough" and t.roughness == 0.02 for grounds in drawn for t in grounds)


@pytest.mark.parametrize("rematch, kept", [(0.0, "incumbent"), (0.9, "challenger")])
def test_a_noisy_win_stands_only_if_it_holds_in_a_rematch(humanoid_walking, walk, rematch, kept):
    # The start scores 0.5 alive; in the generation a candidate scores 1.0 against the incumbent's 0.5 on the same
    # draws; both are scored again on new draws: the challenger's average decides.
    config = SearchConfig(population=4, generations=1, perturbations=Perturbations(fresh_grounds=1))
    controller = make_controller("gait_tracker", humanoid_walking)
    search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.05, seed=0)
    calls = []

    def scripted(_sim, params: np.ndarray) -> Scores:
        calls.append(len(params))
        alive = {1: [0.5], 2: [*[0.5] * 3, 1.0, 0.5]}.get(len(calls), [rematch, 0.5])
        return Scores(np.array(alive), np.zeros(len(alive)))

    search.evaluate = scripted
    start = controller.space.default
    with Simulator(humanoid_walking, nthread=1) as sim:
        best, scores, _ = search.run(sim, start)
    assert calls == [1, 5, 2]  # the start, the generation with the incumbent, the rematch
    if kept == "incumbent":
        np.testing.assert_array_equal(best, start)
        assert scores.alive[0] == 0.5
    else:
        assert not np.array_equal(best, start) and scores.alive[0] == pytest.approx(0.95)


def test_a_search_scores_its_constraints_and_names_an_unknown_one(humanoid_walking, walk):
    controller = make_controller("gait_tracker", humanoid_walking)
    start = controller.space.default
    with Simulator(humanoid_walking, nthread=1) as sim:
        for constraints, fails in ((("balance",), False), (("elegance",), True)):
            config = SearchConfig(population=4, generations=1, constraints=constraints)
            search = PolicySearch(humanoid_walking, controller, walk, config, duration_s=0.05, seed=0)
            if fails:
                with pytest.raises(UserError, match=r"^constraint 'elegance' is not a term of the reward"):
                    search.score_start(sim, start)
            else:
                assert search.score_start(sim, start).cost[0] > 0  # balance is never quite met


def test_bad_fresh_grounds_are_a_user_error():
    with pytest.raises(UserError, match="fresh_grounds must not be negative"):
        Perturbations(fresh_grounds=-1)
    with pytest.raises(UserError, match="roughness must be within"):
        Perturbations(fresh_grounds=1, fresh_roughness=0.5)


@pytest.mark.parametrize("change, message", [
    ({"friction": 0.0}, "friction must be within"), ({"gain": 6.0}, "gain must be within"),
    ({"joint_friction": -1.0}, "joint_friction must be within"), ({"latency_steps": 101}, "latency_steps must be"),
])
def test_bad_physics_is_a_user_error(change, message):
    with pytest.raises(UserError, match=f"bad physics: {message}"):
        Physics(**change)


def test_random_physics_stays_within_the_randomization_ranges():
    rng = np.random.default_rng(0)
    draws = [random_physics(rng) for _ in range(50)]
    for name, (low, high) in RANDOMIZATION.items():
        values = np.array([getattr(d, name) for d in draws])
        assert np.all((low <= values) & (values <= high)), name
        assert values.std() > 0, name  # really drawn
    assert all(isinstance(d.latency_steps, int) for d in draws)
    # the same seed draws the same physics
    assert random_physics(np.random.default_rng(5)) == random_physics(np.random.default_rng(5))


def test_start_speed_sets_the_roots_forward_velocity(humanoid_flat, humanoid_walking):
    # The free root's qvel starts with its linear velocity (x forward, y left, z up): state[1 + nq] is the root's
    # forward speed (state = [time, qpos, qvel, ...]). The walking start also puts the legs in WALKING_STRIDE and
    # rests the lowest heel or toe on the ground, as standing does.
    nq = humanoid_flat.model.nq
    assert humanoid_walking.initial_state[1 + nq] == WALKING_START_SPEED == 1.0
    assert humanoid_flat.initial_state[1 + nq] == 0.0
    with Simulator(humanoid_walking, nthread=1) as sim:
        first = sim.open_loop(np.zeros((1, 1, humanoid_walking.model.nu))).features(humanoid_walking)
    for joint, angle in WALKING_STRIDE.items():
        assert first[joint][0, 0] == pytest.approx(angle)
    assert min(first.left_foot_height[0, 0], first.right_foot_height[0, 0]) == pytest.approx(0.002, abs=1e-6)
    assert "starting at 1 m/s" in humanoid_walking.scene.describe()
    for bad in (-0.5, 3.5, float("nan")):
        with pytest.raises(UserError, match="start_speed must be within"):
            Scene("humanoid", Terrain("flat"), start_speed=bad)


# --- no import cycle ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["rewardloop.control.planners.mpc", "rewardloop.control.search.cmaes"])
def test_optimizers_do_not_import_the_registry(module):
    code = f"import sys, {module}; print('rewardloop.control.optimizer' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"


# --- command line ---------------------------------------------------------------------------------------------

@pytest.fixture
def policy_file(tmp_path):
    return Policy("gait_machine", "humanoid", PARAMETERS.named(PARAMETERS.default)).save(tmp_path / "gait.json")


def test_replay_command_reports_metrics(policy_file, tmp_path, capsys):
    out = tmp_path / "replayed"
    code = main(["replay", str(policy_file), "--duration", "0.5", "--terrain", "rough", "--terrain-seed", "3",
                 "--push", "0.2:0.3", "--out", str(out)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["metrics"]["duration"] == pytest.approx(0.5)
    assert "rough" in summary["scene"] and "starting at 1 m/s" in summary["scene"]  # the walking start by default
    assert set(summary["human_like"]) and isinstance(summary["gait"], dict)
    saved = Trajectory.load(out)
    assert saved.policy == Policy.load(policy_file)
    # the same motion as pushed_motion in that scene
    scene = compile_scene(Scene("humanoid", Terrain("rough", seed=3), start_speed=WALKING_START_SPEED))
    controller = make_controller("gait_machine", scene)
    with Simulator(scene, nthread=1) as sim:
        motion = pushed_motion(sim, controller, PARAMETERS.default, duration_s=0.5, pushes=[(0.2, 0.3)])
    np.testing.assert_array_equal(saved.rollouts.state, motion.state)


def test_replay_command_with_randomized_physics(policy_file, capsys):
    assert main(["replay", str(policy_file), "--duration", "0.05", "--randomize", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "physics friction=" in summary["scene"] and "latency_steps=" in summary["scene"]
    assert summary["metrics"]["duration"] == pytest.approx(0.05)


@pytest.mark.parametrize("argv, message", [
    (["--push", "soon"], "--push takes T:V (seconds:m/s), e.g. 4:0.5; got soon"),
    (["--push", "1:2:3"], "--push takes T:V"),
    (["--gain", "0"], "bad physics: gain must be within (0, 5]"),
    (["--duration", "-1"], "--duration must be a positive finite number, got -1.0"),
    (["--body", "myolegs"], "'gait_machine' drives torque bodies"),
])
def test_bad_replay_input_is_a_user_error(policy_file, capsys, argv, message):
    assert main(["replay", str(policy_file), "--duration", "0.05", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_replay_of_a_missing_policy_is_a_user_error(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "absent.json"), "--duration", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read policy file" in err
    assert main(["replay", "shipped", "--body", "myohand", "--duration", "0.05"]) == 2
    assert "no shipped gait for myohand" in capsys.readouterr().err


def test_optimize_command_with_policy_search(tmp_path, capsys):
    code = main(["optimize", "--optimizer", "search", "--generations", "1", "--population", "4", "--duration",
                 "0.25", "--threads", "2", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimizer"] == "search" and summary["policy"] == str(tmp_path / POLICY_FILE)
    assert Policy.load(tmp_path).controller in {gait.controller for gait in shipped_gaits("humanoid")}
    assert Trajectory.load(tmp_path).rollouts.state.shape[1] == 50  # 0.25 s at 5 ms


def test_optimize_command_with_one_controller(tmp_path, capsys):
    assert main(["optimize", "--optimizer", "search", "--controller", "gait_machine", "--generations", "0",
                 "--duration", "0.25", "--out", str(tmp_path)]) == 0
    policy, machine = Policy.load(tmp_path), shipped_gaits("humanoid")[1]
    assert policy.controller == machine.controller == "gait_machine"
    assert policy.params == pytest.approx(machine.params)  # no generations: the shipped gait as it is


def test_optimize_command_tries_candidates_under_the_perturbations_asked(tmp_path, capsys):
    argv = ["optimize", "--optimizer", "search", "--controller", "gait_machine", "--generations", "0",
            "--duration", "0.25"]  # its one start scored, no hold check: the steps count the runs of one candidate
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    assert main([*argv, "--push", "0.1:0.2", "--fresh-grounds", "1", "--out", str(tmp_path / "perturbed")]) == 0
    plain, perturbed = (Trajectory.load(tmp_path / name).planner_steps for name in ("plain", "perturbed"))
    assert perturbed == 3 * plain  # three runs per candidate, not one
    capsys.readouterr()
    assert main([*argv, "--optimizer", "mppi", "--noise", "0.03", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apply to policy search (--optimizer search), not mppi" in err


@pytest.mark.parametrize("argv, message", [
    (["--population", "2"], "population must be at least 4"),
    (["--fresh-grounds", "-1"], "must not be negative"),
    (["--push", "3"], "--push takes T:V"),
    (["--body", "myohand"], "no structured controller walks myohand"),
    (["--controller", "waddle"], "unknown controller 'waddle'"),
    (["--controller", "reflex"], "controller 'reflex' drives muscle bodies"),
])
def test_bad_policy_search_input_is_a_user_error(tmp_path, capsys, argv, message):
    assert main(["optimize", "--optimizer", "search", "--duration", "0.05", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_gait_machine_double_stance_shares_the_pelvis_between_the_hips(humanoid_walking):
    # With double_time 0.25 s, the first step after the (initial) touchdown has both feet standing: each hip gives
    # half the pelvis's pitch torque, so both hip flexion motors get the same command; without double stance the
    # swing hip tracks its aim and the stance hip gives the rest, which differ.
    controller = make_controller("gait_machine", humanoid_walking)
    left, right = (humanoid_walking.model.actuator(f"{side}_hip_y").id for side in ("left", "right"))
    with Simulator(humanoid_walking, nthread=1) as sim:
        double = run_controller(sim, controller, PARAMETERS.vector({"double_time": 0.25})[None], nstep=1)
        single = run_controller(sim, controller, PARAMETERS.default[None], nstep=1)
    assert double.control[0, 0, left] == double.control[0, 0, right]
    assert single.control[0, 0, left] != single.control[0, 0, right]


def test_parameter_noise_is_the_same_for_every_candidate(humanoid_walking, walk):
    # Common random numbers: a draw perturbs every candidate by the same relative noise, so two equal candidates
    # stay equal in every run (and one candidate's luck is every candidate's luck).
    config = SearchConfig(population=4, generations=1, perturbations=Perturbations(param_noise=0.05, noise_draws=2))
    search = PolicySearch(humanoid_walking, make_controller("gait_machine", humanoid_walking), walk, config,
                          duration_s=0.1, seed=0)
    runs = search._perturbed(np.repeat(PARAMETERS.default[None], 3, axis=0))
    assert len(runs) == 3  # the unperturbed run and two draws
    for run in runs:
        np.testing.assert_array_equal(run[0], run[1])
        np.testing.assert_array_equal(run[0], run[2])
    assert not np.array_equal(runs[1], runs[2])  # the draws differ from each other


@pytest.mark.parametrize("kind", sorted(CONTROLLERS))
def test_every_registered_controller_runs_within_the_control_range(kind, humanoid_walking):
    # Battery over the registry: the entry loads, names itself by its key, documents every parameter and gives
    # controls within the motors' range for its defaults and for its bounds' extremes.
    entry = CONTROLLERS[kind]
    bodies = {"torque": humanoid_walking,
              "muscle": compile_scene(Scene("myolegs", Terrain("flat"), start_speed=WALKING_START_SPEED)),
              "servo": compile_scene(Scene("berkeley_humanoid", Terrain("flat")))}
    scene = _walked_by(kind) or bodies.get(entry.actuator_kind)
    assert scene is not None, f"add a {entry.actuator_kind} body to this battery"
    controller = make_controller(kind, scene)
    assert controller.kind == kind and all(p.meaning and p.unit for p in controller.space.parameters)
    low, high = scene.ctrl_bounds()
    params = np.stack([controller.space.default, controller.space.low, controller.space.high])
    with Simulator(scene, nthread=1) as sim:
        rollouts = run_controller(sim, controller, params, nstep=20)
    assert np.all(rollouts.control >= low) and np.all(rollouts.control <= high)


def test_a_search_over_only_some_parameters_moves_those_and_refuses_a_flat_search_over_sighted_ones(walk):
    # --only look_lift look_push on stairs: the search moves those two, the rest stay as the start has them; on flat
    # ground those two do nothing, so a search over only them has nothing to move and says so; a misspelt name
    # is a UserError that lists the known ones.
    from rewardloop.control.controllers import gait_tracker
    config = dataclasses.replace(TINY_SEARCH, only=("look_lift", "look_push"))
    stairs = compile_scene(Scene("humanoid", Terrain("stairs"), start_speed=WALKING_START_SPEED))
    search = PolicySearch(stairs, make_controller("gait_tracker", stairs), walk, config, duration_s=0.25, seed=3)
    asked = []
    evaluate = search.evaluate
    search.evaluate = lambda sim, params: asked.append(params.copy()) or evaluate(sim, params)
    start = gait_tracker.PARAMETERS.default
    with Simulator(stairs, nthread=2) as sim:
        search.run(sim, start)
    assert set(np.flatnonzero(np.any(np.vstack(asked) != start, axis=0))) == {gait_tracker.LOOK_LIFT,
                                                                             gait_tracker.LOOK_PUSH}
    flat = compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))
    with pytest.raises(UserError, match="moves no parameter"):
        PolicySearch(flat, make_controller("gait_tracker", flat), walk, config, duration_s=0.25, seed=3)
    with pytest.raises(UserError, match="look_lift"):
        PolicySearch(flat, make_controller("gait_tracker", flat), walk,
                     dataclasses.replace(config, only=("look_lfit",)), duration_s=0.25, seed=3)


def test_the_muscle_trackers_sighted_reactions_do_nothing_on_flat_ground(myolegs_flat):
    # The reactions to the ground seen ahead read the ground map, and the shape on uneven ground its unevenness,
    # flat here: the flat walk with them set otherwise is the same walk, to the last bit (so a search over them on
    # rough grounds keeps the flat walk).
    from rewardloop.control.controllers.muscle_tracker import PARAMETERS as TRACKER
    controller = make_controller("muscle_tracker", myolegs_flat)
    plain = shipped_gait("myolegs").vector(controller)
    seen = [column for column, p in enumerate(TRACKER.parameters) if p.sighted]
    assert len(seen) == 17  # look_lift, look_hip, look_push, look_land, stair_knee and the 12 uneven_* (UNEVEN)
    sighted = plain.copy()
    sighted[seen] = 0.5 * TRACKER.high[seen] + 0.25 * TRACKER.low[seen]
    with Simulator(myolegs_flat, nthread=2) as sim:
        rollouts = run_controller(sim, controller, np.stack([plain, sighted]), nstep=round(1.0 / myolegs_flat.dt))
    assert np.array_equal(rollouts.state[0], rollouts.state[1])
