"""PPO as the loop's optimizer on tiny budgets: optimize/run --optimizer ppo, network policies beside trajectories,
fine-tuning a base, replay of trained policies, and the base install without torch."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rsl_rl", reason="the rl extra (torch, rsl-rl-lib) is not installed")

import torch

from rewardloop.cli import main
from rewardloop.control.config import OptimizerConfig, PPOSettings
from rewardloop.control.trajectory import NetworkPolicy, Trajectory
from rewardloop.errors import UserError
from rewardloop.loop.config import RunConfig
from rewardloop.loop.run import run_loop, start_run
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.rl.base import base_policy, shipped_policy
from rewardloop.rl.optimize import training_config
from rewardloop.rl.policy import WEIGHTS_FILE, TrainedPolicy, run_policy
from rewardloop.rl.train import Trainer
from rewardloop.sim.render import RenderConfig
from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.tasks import task_from_description

ROBOT = ["--body", "berkeley_humanoid"]
TINY_PPO = ["--optimizer", "ppo", "--steps", "300", "--envs", "8"]
"""Two PPO iterations of 8 copies x 24 steps (384 env steps, a few seconds)."""


def _one_line_error(capsys, argv: list[str], expected: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err


@pytest.fixture(scope="module")
def optimized(tmp_path_factory) -> tuple[Path, dict]:
    """`rewardloop optimize --optimizer ppo` on Berkeley Humanoid: its output folder and printed summary."""
    out = tmp_path_factory.mktemp("ppo")
    argv = ["optimize", *ROBOT, "--reward", "walk", "--duration", "1", *TINY_PPO, "--out", str(out)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    return out, json.loads(printed.getvalue())


def test_optimize_ppo_writes_the_motion_and_the_trained_policy_beside_it(optimized):
    out, summary = optimized
    trajectory = Trajectory.load(out)
    assert trajectory.rollouts.batch_shape == (1, 500)  # 1 s of 2-ms physics steps: 50 actions x 10
    assert isinstance(trajectory.policy, NetworkPolicy) and trajectory.policy.body == "berkeley_humanoid"
    assert {"policy.json", "policy.pt", "policy.onnx", "weights.pt", "curve.json"} <= set(trajectory.policy.files)
    curve = trajectory.policy.curve
    assert [r["env_steps"] for r in curve] == [192, 384]  # 8 copies x 24 steps per iteration, rounded up to 300
    assert summary["optimizer"] == "ppo" and summary["ppo"]["env_steps"] == 384
    assert summary["policy"] == str(out / "policy")
    # the reward is the canonical walk's over the executed motion, term by term
    scene = compile_scene(Scene("berkeley_humanoid"))
    with load_reward(canonical("walk"), trusted=True) as reward:
        expected = reward(trajectory.features(scene))
    np.testing.assert_allclose(trajectory.total_return, expected.returns()[0], rtol=1e-9)


def test_the_executed_motion_is_the_saved_policys_deterministic_run(optimized, tmp_path, capsys):
    out, _ = optimized
    again = run_policy(TrainedPolicy.load(out / "policy"), seconds=1.0, copies=1, restart=False)
    np.testing.assert_array_equal(again.rollouts.state, Trajectory.load(out).rollouts.state)
    # replay of the trajectory folder on the same ground repeats it exactly, and saves it
    assert main(["replay", str(out), "--duration", "1", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == str(out / "policy")
    np.testing.assert_array_equal(Trajectory.load(tmp_path).rollouts.state, again.rollouts.state)
    assert isinstance(Trajectory.load(tmp_path).policy, NetworkPolicy)


def test_replay_runs_a_trained_policy_on_other_ground_pushed_randomized_and_in_another_sim(optimized, capsys):
    out, _ = optimized
    argv = ["replay", str(out / "policy"), "--duration", "0.5", "--terrain", "rough", "--push", "0.2:0.5",
            "--timestep", "0.001", "--integrator", "rk4", "--randomize", "4"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["timestep"] == 0.001 and summary["integrator"] == "rk4" and summary["randomize"] == 4
    assert "rough ground" in summary["scene"]
    assert summary["metrics"]["duration"] == pytest.approx(0.5, abs=0.002)


def test_a_push_changes_the_motion_only_after_it_lands(optimized):
    policy = TrainedPolicy.load(optimized[0] / "policy")
    calm = run_policy(policy, seconds=0.4, copies=1, restart=False)
    pushed = run_policy(policy, seconds=0.4, copies=1, restart=False, pushes=[(0.2, 0.5)])
    # the push lands at 0.2 s, before control step 10 (0.2 s / 0.02 s): the states after physics steps 0-98 are
    # untouched, the one after step 99 (t = 0.2 s) differs by the kick alone, in the root's sideways velocity
    np.testing.assert_array_equal(calm.rollouts.state[:, :99], pushed.rollouts.state[:, :99])
    kick = pushed.rollouts.state[0, 99] - calm.rollouts.state[0, 99]
    np.testing.assert_allclose(kick[np.abs(kick) > 0], [0.5])
    assert not np.allclose(calm.rollouts.state[:, 100:], pushed.rollouts.state[:, 100:])


def test_bad_replay_input_is_one_line_and_exit_2(optimized, tmp_path, capsys):
    out, _ = optimized
    _one_line_error(capsys, ["replay", "shipped", *ROBOT, "--network"], "no base policy is shipped for berkeley")
    _one_line_error(capsys, ["replay", str(tmp_path), "--network"], "holds no trained network policy")
    _one_line_error(capsys, ["replay", str(out), "--timestep", "0.003"], "not a whole number of physics steps")
    _one_line_error(capsys, ["replay", str(out), "--integrator", "leapfrog"], "unknown integrator 'leapfrog'")
    _one_line_error(capsys, ["replay", str(out), "--latency", "2"], "use --randomize SEED")
    _one_line_error(capsys, ["replay", str(out), "--body", "unitree_g1"], "drives berkeley_humanoid")
    _one_line_error(capsys, ["replay", "shipped", "--timestep", "0.001"], "structured controller's")


def test_ppo_options_belong_to_ppo_and_bad_budgets_are_refused(tmp_path, capsys):
    base = ["optimize", *ROBOT, "--out", str(tmp_path)]
    _one_line_error(capsys, [*base, "--optimizer", "plan", "--steps", "10"], "set PPO's training")
    _one_line_error(capsys, [*base, "--optimizer", "ppo", "--steps", "0"], "steps must be at least 1")
    _one_line_error(capsys, [*base, "--optimizer", "ppo", "--body", "humanoid", "--steps", "10"],
                    "not driven by joint-position servos")
    with pytest.raises(UserError, match="unknown PPO start"):
        PPOSettings(start="warm")


def test_a_missing_rl_extra_is_one_line_naming_the_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "rewardloop.rl.optimize", None)  # what an import without torch meets
    _one_line_error(capsys, ["optimize", *ROBOT, *TINY_PPO, "--out", str(tmp_path)],
                    "--optimizer ppo needs the rl extra (torch, rsl-rl-lib, onnxruntime): pip install 'rewardloop[rl]'")


def test_the_base_install_imports_no_torch():
    code = ("import sys, rewardloop.cli, rewardloop.control.optimizer, rewardloop.loop.run, rewardloop.report.html, "
            "rewardloop.rl.base; assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_base_lookup_says_where_a_candidate_starts(optimized):
    folder = optimized[0] / "policy"
    assert shipped_policy("berkeley_humanoid") is None  # none shipped yet: the candidates start fresh and say so
    start, said = base_policy("berkeley_humanoid", PPOSettings())
    assert start is None and "no base policy is shipped for berkeley_humanoid" in said and "scratch" in said
    assert base_policy("berkeley_humanoid", PPOSettings(base=str(folder))) == (folder, f"fine-tuning {folder}")
    assert base_policy("berkeley_humanoid", PPOSettings(base=str(folder), start="scratch"))[0] is None
    with pytest.raises(UserError, match="not a trained policy folder"):
        base_policy("berkeley_humanoid", PPOSettings(base=str(folder.parent / "nothing")))


def test_fine_tuning_starts_from_the_base_policys_networks(optimized):
    folder = optimized[0] / "policy"
    scene = compile_scene(Scene("berkeley_humanoid"))
    config = OptimizerConfig(kind="ppo", ppo=PPOSettings(steps=10, envs=2, base=str(folder)), nthread=1)
    with load_reward(canonical("stand"), trusted=True) as reward:
        train = training_config(scene, reward, config, seed=5, base=folder)
        assert train.env.num_envs == 2 and train.seed == 5 and train.env.command_speed == 0.0  # stand: no speed
        assert train.ppo == TrainedPolicy.load(folder).config.ppo
        with Trainer(train, scene=scene, reward=reward) as trainer:
            trainer.start_from(torch.load(folder / WEIGHTS_FILE, weights_only=True))
            weights = trainer.weights()
    base = torch.load(folder / WEIGHTS_FILE, weights_only=True)
    for part in ("actor_state_dict", "critic_state_dict"):
        for name, tensor in base[part].items():
            torch.testing.assert_close(weights[part][name], tensor, rtol=0, atol=0)


def test_the_loop_runs_an_iteration_with_ppo_and_reports_the_learning_curve(tmp_path):
    task = task_from_description("walk forward with straight knees", "berkeley_humanoid")
    config = RunConfig(iterations=1, candidates=1, workers=1, duration_s=0.4,
                       optimizer=OptimizerConfig(kind="ppo", ppo=PPOSettings(steps=96, envs=4), nthread=1),
                       render=RenderConfig(width=64, height=48, fps=10))
    store = start_run(task, config, out=tmp_path)
    run_loop(store)
    candidate = store.candidate_dir(0, 0)
    rollout = json.loads((candidate / "rollout.json").read_text())
    assert rollout["check_passed"] and rollout["planner_steps"] == 96 * 10  # one iteration of 4 x 24, 10 physics
    assert isinstance(Trajectory.load(candidate / "trajectory").policy, NetworkPolicy)
    from rewardloop.report.html import write_report

    page = write_report(store.path).read_text()
    assert "PPO learning curve" in page and "1 PPO iterations, 96 env steps" in page


def test_run_optimizer_ppo_takes_the_presets_budget(capsys):
    from rewardloop.cli import build_parser
    from rewardloop.loop.commands import config_from_args

    def config(*extra: str) -> RunConfig:
        return config_from_args(build_parser().parse_args(["run", "walk forward", *extra]))

    quick = config("--preset", "quick", "--optimizer", "ppo")
    assert quick.optimizer is not None and quick.optimizer.kind == "ppo" and quick.optimizer.nthread == 1
    assert quick.optimizer.ppo.max_seconds == 150.0
    minutes = config("--optimizer", "ppo", "--ppo-minutes", "2").optimizer
    assert minutes is not None and minutes.ppo.max_seconds == 120.0
    assert RunConfig.from_dict(quick.to_dict()) == quick  # a resumed run reads the same settings
    with pytest.raises(UserError, match="add --optimizer ppo"):
        config("--ppo-steps", "10")


def test_a_ppo_run_that_could_not_train_stops_before_it_starts(tmp_path, capsys, monkeypatch):
    argv = ["run", "walk forward", "--optimizer", "ppo", "--out", str(tmp_path)]
    _one_line_error(capsys, [*argv, "--body", "humanoid"], "humanoid is not one")
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rsl_rl" else real(name, *a))
    _one_line_error(capsys, [*argv, *ROBOT], "pip install 'rewardloop[rl]' (could not import rsl_rl)")
    assert list(tmp_path.iterdir()) == []  # no run directory was made


def test_a_learning_curves_axis_has_a_few_round_ticks():
    from rewardloop.report.plots import x_ticks

    assert x_ticks(0, 5) == [0, 1, 2, 3, 4, 5]  # iterations: every one
    assert x_ticks(192, 300_288) == [50_000, 100_000, 150_000, 200_000, 250_000, 300_000]  # 300k / 8 -> 50k apart
    assert x_ticks(0.0, 17.0) == [0, 5, 10, 15]  # 17 / 8 = 2.1 -> 5 apart


def test_optimize_fine_tunes_a_base_policy_and_says_so(optimized, tmp_path, capsys):
    base = optimized[0] / "policy"
    argv = ["optimize", *ROBOT, "--reward", "stand", "--duration", "0.2", "--optimizer", "ppo", "--steps", "10",
            "--envs", "2", "--base", str(base), "--out", str(tmp_path)]
    assert main(argv) == 0
    assert f"fine-tuning {base}" in capsys.readouterr().err
    tuned = TrainedPolicy.load(tmp_path / "policy").config
    assert tuned.ppo == TrainedPolicy.load(base).config.ppo and tuned.env.num_envs == 2
    assert tuned.reward_source == canonical("stand").source and tuned.reward_trusted


def test_replay_shipped_on_a_robot_without_a_base_policy_runs_its_gait_and_says_so(capsys):
    assert main(["replay", "shipped", *ROBOT, "--duration", "0.1"]) == 0
    captured = capsys.readouterr()
    assert "no base policy is shipped for berkeley_humanoid yet" in captured.err
    assert "replaying its shipped gait instead" in captured.err
    assert "policy" not in json.loads(captured.out)  # the structured replay's summary
