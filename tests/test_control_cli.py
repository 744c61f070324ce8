"""The `rewardloop optimize` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.control.trajectory import Trajectory
from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.sim.terrain import Terrain


def test_optimize_command_writes_trajectory(tmp_path, capsys):
    code = main(["optimize", "--optimizer", "mppi", "--body", "humanoid", "--reward", "walk", "--duration", "0.05",
                 "--samples", "4", "--horizon", "0.05", "--threads", "1", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    trajectory = Trajectory.load(tmp_path)
    assert trajectory.rollouts.state.shape[1] == 10  # 0.05 s at 5 ms
    assert summary["metrics"]["duration"] == pytest.approx(0.05)



def test_optimize_standing_uses_the_standing_settings(tmp_path, capsys):
    # what `rewardloop run` gives a standing task: posture MPPI looking 1.2 s ahead (a horizon given on the command
    # line still wins), from rest (a walk's start speed made the muscle legs stumble and fall)
    code = main(["optimize", "--standing", "--body", "humanoid", "--reward", "stand", "--duration", "0.03",
                 "--samples", "4", "--threads", "1", "--out", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["optimizer"] == "mppi"
    assert summary["planner"]["horizon_s"] == 1.2 and summary["planner"]["samples"] == 4
    rest = compile_scene(Scene("humanoid", Terrain("flat"))).initial_state
    np.testing.assert_array_equal(Trajectory.load(tmp_path).rollouts.initial_state[0], rest)


def test_optimize_steps_in_place_from_rest_as_the_loop_does(tmp_path, capsys):
    # the canonical step_in_place (and stand and walk_backward) start from rest, as the loop's tasks for them do: from
    # the walking start the muscle legs' gait planner stepped about and fell at 4 s (seed 0, 2026-12-06)
    code = main(["optimize", "--body", "myolegs", "--reward", "step_in_place", "--duration", "0.02", "--samples", "2",
                 "--threads", "1", "--out", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["optimizer"] == "mppi" and summary["planner"]["leak"] == 0.01  # the stepping settings
    rest = compile_scene(Scene("myolegs", Terrain("flat"))).initial_state
    np.testing.assert_array_equal(Trajectory.load(tmp_path).rollouts.initial_state[0], rest)


@pytest.mark.parametrize("argv, message", [
    (["--reward", "nonexistent_reward"], "is neither a canonical reward"),
    (["--optimizer", "ilqg"], "unknown optimizer 'ilqg'; choose one of: cem, mppi, plan, ppo, predictive, search"),
    (["--optimizer", "mppi", "--samples", "1"], "samples must be at least 2"),
    (["--duration", "nan"], "--duration must be a positive finite number, got nan"),  # nan <= 0 is False
    (["--duration", "inf"], "--duration must be a positive finite number, got inf"),
])
def test_bad_optimize_input_is_a_user_error(tmp_path, capsys, argv, message):
    assert main(["optimize", "--duration", "0.05", "--out", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err


def test_unwritable_out_fails_before_optimizing(capsys):
    # /proc cannot hold new directories: refused at once, one line, exit 2, nothing optimized.
    assert main(["optimize", "--duration", "5", "--out", "/proc/rewardloop-no/run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out /proc/rewardloop-no/run: cannot create the directory" in err


def test_a_reward_file_that_is_not_text_is_a_user_error(tmp_path, capsys):
    program = tmp_path / "binary.py"
    program.write_bytes(b"\xff\xfe\x00")
    assert main(["optimize", "--duration", "0.05", "--reward", str(program), "--out", str(tmp_path / "o")]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
