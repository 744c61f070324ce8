"""The sandbox worker contains hostile programs; the checker, CLI and exports work on real rollouts."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.reward.check import check_program
from rewardloop.reward.program import RewardError, RewardProgram
from rewardloop.reward.runtime import program_globals
from rewardloop.reward.sandbox import SandboxedReward
from rewardloop.sim.rollout import Simulator, random_controls


@pytest.fixture(scope="module")
def features(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        return sim.open_loop(random_controls(humanoid_flat, 3, 40, seed=2)).features(humanoid_flat)


def _alive(pid):
    """Is process `pid` running (not gone, not a zombie)?"""
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text().lower()


def program(body, *, top=""):
    return RewardProgram.from_source(f"{top}\ndef a(f):\n" + "".join(f"    {line}\n" for line in body.splitlines())
                                     + "\nWEIGHTS = {'a': 1.0}\n")


def test_sandbox_matches_in_process_and_leaves_nothing_behind(features, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    walk = canonical("walk")
    with SandboxedReward(walk) as reward:
        pid = reward.pid
        environment = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"sk-secret-value" not in environment and b"OPENAI" not in environment
        isolated = reward(features)
    expected = walk.evaluate_trusted(features)
    for name in walk.term_names:
        np.testing.assert_array_equal(isolated.terms[name], expected.terms[name])
    assert not _alive(pid)



def test_array_methods_work_in_programs_but_imports_do_not(features):
    """NumPy's C code imports lazily through the caller's builtins (x.sum(), x.mean()); programs still cannot."""
    body = ("both = np.stack([f.left_foot_height, f.right_foot_height], axis=-1)\n"
            "return both.sum(axis=-1) + both.mean(axis=-1).clip(0, 1) - f.forward_vel.std()")
    methods = program(body)
    both = np.stack([features["left_foot_height"], features["right_foot_height"]], axis=-1)
    expected = both.sum(axis=-1) + both.mean(axis=-1).clip(0, 1) - features["forward_vel"].std()
    with load_reward(methods, trusted=False) as reward:
        np.testing.assert_allclose(reward(features).total, expected)
    np.testing.assert_allclose(methods.evaluate_trusted(features).total, expected)
    with pytest.raises(ImportError, match="cannot import 'os'"):
        program_globals()["__builtins__"]["__import__"]("os")

HOSTILE = {
    "infinite loop": ("x = 0\nfor i in range(1000000):\n    for j in range(1000000):\n        x += 1\n"
                      "return f.forward_vel", "took longer than"),
    "memory bomb": ("x = np.ones((200000, 200000))\nreturn f.forward_vel", "out of memory"),
    "string bomb": ("s = 'a' * 1000000\nfor i in range(20):\n    s = s + s\nreturn f.forward_vel", "memory"),
    "huge output": ("return np.zeros((1000, 1000, 10))", "must return [B, T]"),
    "wrong shape": ("return f.root_pos", "returned shape [3, 40, 3]"),
    "nan": ("return f.forward_vel / 0.0", "non-finite"),
    "inf": ("return np.exp(f.forward_vel * 0.0 + 1000.0)", "non-finite"),
    "recursion": ("return a(f)", "recursed too deeply"),
    "not an array": ("return 'x'", "returned str"),
    "missing key": ("return f['no_such_feature']", "no feature"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_programs_are_contained(case, features, tmp_path):
    body, expected = HOSTILE[case]
    with SandboxedReward(program(body), timeout_s=3.0, memory_mb=512) as reward:
        with pytest.raises(RewardError, match=expected.replace("[", r"\[")):
            reward(features)
        pid = reward.pid
    assert pid is None or not _alive(pid)


def test_a_hung_worker_is_replaced_and_the_next_call_works(features):
    hang = program("if f.forward_vel.shape[0] == 1:\n    for i in range(100000):\n"
                   "        for j in range(100000):\n            pass\nreturn f.forward_vel")
    with SandboxedReward(hang, timeout_s=1.0) as reward:
        first = reward.pid
        with pytest.raises(RewardError, match="longer than 1 s"):
            reward(features.slice(slice(0, 1)))
        assert reward(features).terms["a"].shape == (3, 40)
        assert reward.pid != first


def test_load_time_code_is_contained_too(features):
    bomb = program("return f.forward_vel", top="X = [0] * 100000 * 100000")
    with pytest.raises(RewardError, match="memory"), SandboxedReward(bomb, memory_mb=256):
        pass


def test_the_machine_is_unharmed(tmp_path, features):
    sentinel = tmp_path / "sentinel"
    # The file-writing routes are rejected before running; what parses runs without reaching the filesystem.
    with pytest.raises(ValueError):
        program(f"f.forward_vel.tofile({str(sentinel)!r})\nreturn f.forward_vel")
    with pytest.raises(ValueError):
        program(f"open({str(sentinel)!r}, 'w')\nreturn f.forward_vel")
    with load_reward(program("return f.forward_vel"), trusted=False) as reward:
        reward(features)
    assert not sentinel.exists()


def test_check_reports_scales_and_problems(humanoid_flat):
    report = check_program(canonical("walk"), humanoid_flat)
    assert report.passed and set(report.terms) == set(canonical("walk").term_names)
    assert abs(sum(s.share for s in report.terms.values()) - 1.0) < 1e-9
    assert "PASSED" in report.to_text() and report.to_dict()["passed"] is True
    constant = "def a(f):\n    return f.forward_vel\ndef c(f):\n    return f.forward_vel * 0 + 1\n" \
               "WEIGHTS = {'a': 1000.0, 'c': 1.0}"
    report = check_program(constant, humanoid_flat)
    assert report.passed and any("'c' is constant" in w for w in report.warnings)
    assert any("'a' makes up" in w for w in report.warnings)
    failed = check_program("def a(f):\n    return f.root_pos\nWEIGHTS = {'a': 1}", humanoid_flat)
    assert not failed.passed and "must return [B, T]" in failed.to_text()


@pytest.mark.parametrize(("content", "code", "needle"), [
    (b"def a(f):\n    return f.forward_vel\nWEIGHTS = {'a': 1}\n", 0, "PASSED"),
    (b"import os\nWEIGHTS = {'a': 1}\n", 1, "imports are not allowed"),
    (b"", 1, "WEIGHTS"),
    (bytes(range(256)) * 4, 1, "not UTF-8"),
    (b"x = 1\n" * 300_000, 1, "too large"),
    (None, 1, "no such file"),
])
def test_check_cli_never_raises(tmp_path, capsys, content, code, needle):
    path = tmp_path / "program.py"
    if content is not None:
        path.write_bytes(content)
    assert main(["check", str(path), "--body", "humanoid"]) == code
    out = capsys.readouterr()
    assert needle in out.out + out.err and "Traceback" not in out.out + out.err


def test_exported_module_needs_no_rewardloop_and_matches(tmp_path, features, capsys):
    walk = canonical("walk_rough")
    path = tmp_path / "reward_walk.py"
    (tmp_path / "walk.py").write_text(walk.source)
    assert main(["export", str(tmp_path / "walk.py"), "--out", str(path)]) == 0
    assert "rewardloop" not in path.read_text().replace("exported by rewardloop", "")
    spec = importlib.util.spec_from_file_location("reward_walk", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    total, _ = module.reward({**{k: features[k] for k in features}, **features.scalars})
    np.testing.assert_allclose(total, walk.evaluate_trusted(features).total)


def test_gym_environment_steps_with_the_program_reward(tmp_path, main_args=None):
    import gymnasium as gym

    from rewardloop.reward.export import RewardEnv
    from rewardloop.sim.scene import Scene

    env = RewardEnv(canonical("walk"), Scene("humanoid"), duration_s=0.05)
    assert isinstance(env, gym.Env)
    env.reset(seed=0)
    rewards, start = [], time.monotonic()
    truncated = False
    while not truncated:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        rewards.append(reward)
        assert set(info["terms"]) == set(canonical("walk").term_names) and not terminated
    assert len(rewards) == 10 and np.isfinite(rewards).all() and time.monotonic() - start < 5
    script = tmp_path / "env.py"
    assert main(["export", "--format", "gym", "--out", str(script), str(tmp_path / "none.py")]) == 2


def test_check_on_an_unknown_body_fails_the_check_with_exit_1(tmp_path, capsys):
    path = tmp_path / "walk.py"
    path.write_text(canonical("walk").source)
    assert main(["check", str(path), "--body", "nope"]) == 1  # a failed check, not a usage error
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Reward check FAILED: unknown body 'nope'" in err


@pytest.mark.parametrize("timeout", ["nan", "inf", "0"])
def test_check_timeout_must_be_positive_and_finite(tmp_path, capsys, timeout):
    assert main(["check", str(tmp_path / "any.py"), "--timeout", timeout]) == 2
    expected = f"rewardloop: error: --timeout must be a positive finite number, got {float(timeout)}\n"
    assert capsys.readouterr().err == expected
