"""The receding-horizon mode: a found policy's parameters chosen online by looking candidates ahead.

Motions here are at most 4 s of the humanoid (5-ms steps); the planner's defaults (16 candidates, 1.5-s horizon,
a choice every 0.2 s) cost about 0.5 s of wall time per simulated second on 2 cores.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.control.config import RecedingConfig, SearchConfig
from rewardloop.control.controllers.base import Carry, make_controller, run_controller
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.planners import receding
from rewardloop.control.planners.receding import (
    candidates,
    choose,
    lookahead,
    planned_steps,
    planning_simulator,
    receding_motion,
    run_receding,
    screened_lookahead,
)
from rewardloop.control.search.policy import shipped_gait
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Physics, Scene, compile_scene
from rewardloop.sim.terrain import Terrain

FALLS_THERE = Terrain("rough", seed=104)
"""An unseen ±4-cm ground on which the humanoid's main gait, replayed as found, falls at 2.4 s."""


@pytest.fixture(scope="module")
def walk():
    with load_reward(canonical("walk"), trusted=True) as reward:
        yield reward


@pytest.fixture(scope="module")
def rough():
    return compile_scene(Scene("humanoid", FALLS_THERE, start_speed=WALKING_START_SPEED))


def main_gait(scene):
    """(the gait tracker for `scene`, the humanoid's shipped main gait [P])."""
    policy = shipped_gait("humanoid")
    controller = make_controller(policy.controller, scene)
    return controller, policy.vector(controller)


def test_candidates_are_the_nominal_the_current_and_its_neighbours_within_bounds():
    low, high = np.array([0.0, -2.0]), np.array([1.0, 2.0])
    nominal, current = np.array([0.5, 0.0]), np.array([0.9, 1.9])
    params = candidates(nominal, current, low, high, samples=200, sigma=0.05, rng=np.random.default_rng(0))
    assert params.shape == (200, 2)
    np.testing.assert_array_equal(params[0], nominal)
    np.testing.assert_array_equal(params[1], current)
    assert (params >= low).all() and (params <= high).all()
    # neighbours spread 0.05 of each range: 0.05 and 0.2; clipping at the top bound only shrinks the spread
    spread = params[2:].std(axis=0)
    assert 0.02 < spread[0] < 0.06 and 0.08 < spread[1] < 0.22
    assert np.abs(params[2:] - current).max(axis=0)[1] > 0.2  # not all clipped to the current value


def test_choose_ranks_alive_first_then_return_less_the_stray():
    alive = np.array([100, 200, 200, 200])
    returns = np.array([9.0, 1.0, 1.5, np.nan])
    stray = np.array([0.0, 0.0, 1.0, 0.0])
    # alive longest: rows 1-3; values 1.0 - 0, 1.5 - 1.0 = 0.5, NaN -> -inf: row 1
    assert choose(alive, returns, stray, stay_weight=1.0) == 1
    # without the stray cost row 2's 1.5 wins
    assert choose(alive, returns, stray, stay_weight=0.0) == 2
    # a fall sooner loses whatever its return
    assert choose(np.array([199, 200]), np.array([99.0, -99.0]), np.zeros(2), stay_weight=1.0) == 1


def test_with_the_nominal_as_the_only_choice_the_motion_is_the_policy_as_found(humanoid_walking_scene, walk):
    controller, nominal = main_gait(humanoid_walking_scene)
    only_nominal = RecedingConfig(samples=2, sigma=0.0)
    with Simulator(humanoid_walking_scene, nthread=2) as sim:
        motion, chosen = receding_motion(sim, sim, controller, nominal, walk, only_nominal, duration_s=1.0, seed=0)
        plain = run_controller(sim, controller, nominal[None], nstep=200)
    assert chosen.shape == (5, len(nominal))  # a choice every 0.2 s
    np.testing.assert_array_equal(chosen, np.repeat(nominal[None], 5, axis=0))
    np.testing.assert_array_equal(motion.state, plain.state)  # segments and carried memory change nothing


def test_planned_steps_counts_what_a_receding_motion_simulates(humanoid_walking_scene, walk, monkeypatch):
    # 1 s of 5-ms steps = 200; a choice every 0.2 s (40 steps): 5 look-aheads of 3 candidates × 0.3 s (60 steps)
    # = 900, plus the 200 executed: 1100.
    controller, nominal = main_gait(humanoid_walking_scene)
    config = RecedingConfig(samples=3, horizon_s=0.3)
    simulated = []
    real = receding.run_controller
    monkeypatch.setattr(receding, "run_controller", lambda sim, controller, params, *, nstep, **rest: (
        simulated.append(len(params) * nstep) or real(sim, controller, params, nstep=nstep, **rest)))
    with Simulator(humanoid_walking_scene, nthread=2) as sim:
        receding_motion(sim, sim, controller, nominal, walk, config, duration_s=1.0, seed=0)
    assert sum(simulated) == planned_steps(config, nstep=200, chunk=controller.chunk,
                                           dt=humanoid_walking_scene.dt) == 1100


def test_the_screen_looks_ahead_with_two_where_they_stay_up(humanoid_walking_scene, walk, monkeypatch):
    # On flat ground the main gait stays up over every 0.3-s horizon: 5 choices in 1 s, each of the nominal and the
    # last chosen only (2 rows, not 6), and the last chosen is always one of the two: the nominal throughout.
    controller, nominal = main_gait(humanoid_walking_scene)
    rows = []
    real = receding.lookahead
    monkeypatch.setattr(receding, "lookahead", lambda planner, controller, params, *rest: (
        rows.append(len(params)) or real(planner, controller, params, *rest)))
    config = RecedingConfig(samples=6, horizon_s=0.3, screen=True)
    with Simulator(humanoid_walking_scene, nthread=2) as sim:
        _, chosen = receding_motion(sim, sim, controller, nominal, walk, config, duration_s=1.0, seed=0)
    assert rows == [2] * 5
    np.testing.assert_array_equal(chosen, np.repeat(nominal[None], 5, axis=0))


def test_where_the_screen_falls_every_candidate_is_screened_lookahead_with(humanoid_walking_scene, walk):
    # From a state with the pelvis 0.5 m lower the body shows a fall sign at once: the two screened candidates fail,
    # and what comes back is the plain look-ahead of all six.
    controller, nominal = main_gait(humanoid_walking_scene)
    state = np.array(humanoid_walking_scene.initial_state, dtype=float)
    state[1 + 2] -= 0.5  # qpos z, after the time entry
    params = candidates(nominal, nominal, controller.space.low, controller.space.high, samples=6, sigma=0.03,
                        rng=np.random.default_rng(0))
    carry = Carry.fresh(controller, humanoid_walking_scene, 1)
    with Simulator(humanoid_walking_scene, nthread=2) as sim:
        screened = screened_lookahead(sim, controller, params, walk, state, carry, 60, screen=True)
        plain = lookahead(sim, controller, params, walk, state, carry, 60)
    assert len(screened[0]) == 6 and screened[1].max() < 60
    np.testing.assert_array_equal(screened[1], plain[0])
    np.testing.assert_array_equal(screened[2], plain[1])


def test_the_planner_keeps_a_flat_trained_gait_up_where_it_falls_as_found(rough, walk):
    controller, nominal = main_gait(rough)
    with Simulator(rough, nthread=2) as sim:
        plain = batch_metrics(run_controller(sim, controller, nominal[None], nstep=800).features(rough))[0]
    assert plain.fell and plain.fall_time < 3.0
    motion = run_receding(rough, controller, nominal, walk, RecedingConfig(), duration_s=4.0, seed=0)
    modulated = batch_metrics(motion.features(rough))[0]
    assert not modulated.fell and modulated.distance > 3.5


def test_the_planner_models_the_nominal_physics_not_the_draw(rough):
    with Simulator(rough, nthread=1) as sim, planning_simulator(sim) as planner:
        assert planner is sim
    draw = compile_scene(Scene("humanoid", FALLS_THERE, physics=Physics(gain=0.8, latency_steps=3)))
    with Simulator(draw, nthread=1) as sim, planning_simulator(sim) as planner:
        assert planner.scene.scene.physics == Physics()
        assert planner.scene.scene.terrain == FALLS_THERE  # it sees the ground


def test_a_pushed_receding_motion_under_latency_runs(walk):
    scene = compile_scene(Scene("humanoid", start_speed=WALKING_START_SPEED, physics=Physics(latency_steps=3)))
    controller, nominal = main_gait(scene)
    config = RecedingConfig(samples=4, horizon_s=0.2)
    plain = run_receding(scene, controller, nominal, walk, config, duration_s=0.6, seed=0)
    pushed = run_receding(scene, controller, nominal, walk, config, duration_s=0.6, seed=0, pushes=[(0.3, 0.5)])
    assert plain.state.shape == pushed.state.shape == (1, 120, scene.nstate)
    lateral = pushed.features(scene).com_vel[0, :, 1] - plain.features(scene).com_vel[0, :, 1]
    assert np.abs(lateral[:59]).max() < 1e-9 and lateral[61] > 0.3  # the kick lands at 0.3 s


@pytest.mark.parametrize("change, message", [
    ({"samples": 1}, "samples must be at least 2"),
    ({"horizon_s": 0.0}, "horizon_s must be positive"),
    ({"sigma": -0.1}, "sigma must be in [0, 1]"),
])
def test_bad_receding_config_is_a_user_error(change, message):
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]")):
        RecedingConfig(**change)


def test_search_executes_the_found_policy_with_the_planner_when_asked(rough, walk, tmp_path, capsys):
    argv = ["optimize", "--optimizer", "search", "--controller", "gait_tracker", "--generations", "0",
            "--duration", "1", "--terrain", "rough", "--terrain-seed", "104", "--seed", "0"]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    assert "receding" not in json.loads(capsys.readouterr().out)
    assert main([*argv, "--receding", "--out", str(tmp_path / "receding")]) == 0
    assert json.loads(capsys.readouterr().out)["receding"] == dataclasses.asdict(RecedingConfig())
    plain, receding = (Trajectory.load(tmp_path / name) for name in ("plain", "receding"))
    assert plain.policy == receding.policy is not None  # the same policy found; only its execution differs
    controller = make_controller(receding.policy.controller, rough)
    vector = receding.policy.vector(controller)
    expected = run_receding(rough, controller, vector, walk, RecedingConfig(), duration_s=1.0, seed=0)
    np.testing.assert_array_equal(receding.rollouts.state, expected.state)
    with Simulator(rough, nthread=1) as sim:
        np.testing.assert_array_equal(plain.rollouts.state, run_controller(sim, controller, vector[None],
                                                                           nstep=200).state)
    capsys.readouterr()
    assert main([*argv, "--optimizer", "mppi", "--receding", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--receding modulates a policy search's gait" in err
    assert SearchConfig().receding is None  # off unless asked


def test_replay_command_with_the_planner(tmp_path, capsys):
    argv = ["replay", "shipped", "--terrain", "rough", "--terrain-seed", "104", "--duration", "3"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["fell"]
    assert main([*argv, "--receding", "--reward", "walk_rough", "--out", str(tmp_path)]) == 0
    assert not json.loads(capsys.readouterr().out)["metrics"]["fell"]
    assert Trajectory.load(tmp_path).policy == shipped_gait("humanoid")
    assert main([*argv, "--reward", "walk"]) == 0  # the default, so nothing asks for the planner
    capsys.readouterr()
    assert main([*argv, "--seed", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "add --receding" in err
    assert main([*argv, "--receding", "--reward", "nonsense"]) == 2
    assert "neither a canonical reward" in capsys.readouterr().err


@pytest.fixture(scope="module")
def humanoid_walking_scene():
    return compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))


def test_run_command_asks_for_the_planner_and_a_resumed_run_keeps_it():
    from rewardloop.cli import build_parser
    from rewardloop.loop.commands import config_from_args
    from rewardloop.loop.config import RunConfig

    plain = config_from_args(build_parser().parse_args(["run", "walk forward", "--preset", "quick"]))
    config = config_from_args(build_parser().parse_args(["run", "walk forward", "--preset", "quick", "--locomotion",
                                                         "search", "--receding"]))
    assert plain.search.receding is None and config.search.receding == RecedingConfig()
    assert config.search.generations == plain.search.generations == 10  # the preset's search, planner added
    assert RunConfig.from_dict(config.to_dict()) == config
    assert plain.locomotion == "plan" and config.locomotion == "search"
    with pytest.raises(UserError, match="add --locomotion search"):  # the gait planner plans already
        config_from_args(build_parser().parse_args(["run", "walk forward", "--receding"]))


def test_the_muscle_legs_on_stairs_run_with_the_grounds_planner(tmp_path, capsys):
    # optimize turns the planner on there by itself (a 2-s horizon: defaults.TERRAIN_SEARCHES), --receding keeps
    # those settings, and replay --receding runs the same planner. 0.3-s motions.
    stairs = RecedingConfig(horizon_s=2.0)
    argv = ["optimize", "--optimizer", "search", "--body", "myolegs", "--terrain", "stairs", "--controller",
            "muscle_tracker", "--generations", "0", "--duration", "0.3", "--threads", "1", "--reward", "walk_stairs"]
    for extra in ([], ["--receding"]):
        assert main([*argv, *extra, "--out", str(tmp_path / "found")]) == 0
        assert json.loads(capsys.readouterr().out)["receding"] == dataclasses.asdict(stairs)
    found = Trajectory.load(tmp_path / "found")
    assert main(["replay", str(tmp_path / "found"), "--terrain", "stairs", "--duration", "0.3", "--receding",
                 "--reward", "walk_stairs", "--out", str(tmp_path / "replayed")]) == 0
    capsys.readouterr()
    scene = compile_scene(Scene("myolegs", Terrain("stairs"), start_speed=WALKING_START_SPEED))
    controller = make_controller("muscle_tracker", scene)
    with load_reward(canonical("walk_stairs"), trusted=True) as reward:
        expected = run_receding(scene, controller, found.policy.vector(controller), reward, stairs, duration_s=0.3,
                                seed=0)
    np.testing.assert_array_equal(Trajectory.load(tmp_path / "replayed").rollouts.state, expected.state)
    np.testing.assert_array_equal(found.rollouts.state, expected.state)  # optimize ran the same planner
