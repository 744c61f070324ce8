"""The RL plumbing on tiny budgets: block rewards against whole trajectories, spaces, falls, learning, resume, ONNX."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rsl_rl", reason="the rl extra (torch, rsl-rl-lib) is not installed")

import torch

from rewardloop.cli import main
from rewardloop.reward import load_reward
from rewardloop.reward.program import RewardProgram
from rewardloop.rl.env import EnvConfig, RobotEnv
from rewardloop.rl.policy import TrainedPolicy, export_onnx, run_policy, save_policy
from rewardloop.rl.randomize import Randomization
from rewardloop.rl.train import TrainConfig, Trainer
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import Scene, compile_scene

PER_STEP = RewardProgram.from_source('''
def speed(f):
    return f.forward_vel

def tall(f):
    return f.root_height - f.standing_height

def effort(f):
    return -np.sum(np.square(f.ctrl), axis=-1)

def steady(f):
    """Reads the sample before: exact when the block's context holds it."""
    return -np.abs(np.diff(f.root_height, axis=1, prepend=f.root_height[:, :1]))

WEIGHTS = {"speed": 1.0, "tall": 2.0, "effort": 0.01, "steady": 50.0}
''')

KNEE_TARGET = 0.6
HOLD_KNEE = RewardProgram.from_source(f'''
def knee(f):
    """-(left knee angle - {KNEE_TARGET} rad)²: one joint to hold at a target."""
    return -np.square(f.left_knee_flexion - {KNEE_TARGET})

WEIGHTS = {{"knee": 1.0}}
''')


@pytest.fixture(scope="module")
def berkeley():
    return compile_scene(Scene("berkeley_humanoid"))


def _actions(env: RobotEnv, steps: int, seed: int = 0) -> np.ndarray:
    """[steps, B, nu] smooth-ish random actions."""
    return np.random.default_rng(seed).normal(0.0, 0.4, (steps, env.num_envs, env.num_actions))


def test_block_rewards_of_an_episode_sum_to_its_whole_trajectory_reward(berkeley):
    # Episodes of 10 steps, blocks of 4: the first episode crosses two block boundaries and ends inside the third
    # block, where the second begins. Each step's reward is the mean over its D = 10 physics samples, so the first
    # episode's summed step rewards × 10 must equal the per-sample reward summed over the same physics replayed whole
    # (replayed in the env's chunks: MuJoCo's solver warm start does not survive a chunk boundary).
    config = EnvConfig(num_envs=2, block_steps=4, episode_s=0.2, reward_context_s=0.01, reset_noise=0.0, nthread=1)
    with load_reward(PER_STEP, trusted=True) as reward, RobotEnv(berkeley, reward, config) as env:
        actions = _actions(env, 12)
        rewards, dones = [], []
        for block in range(3):
            for k in range(4):
                dones.append(env.step(actions[4 * block + k]).dones)
            rewards.append(env.block_rewards().rewards)
        rewards = np.concatenate(rewards)  # [12, B]
        assert np.flatnonzero(np.array(dones)[:, 0]).tolist() == [9]  # the time-out at step 10
        targets = np.clip(env.standing + config.action_scale * actions[:10], *berkeley.ctrl_bounds())
    with Simulator(berkeley, nthread=1) as sim:  # the same physics, in the env's chunks of one action
        def hold(now: np.ndarray, sensed: np.ndarray, t: int, rows: slice) -> np.ndarray:
            return np.repeat(targets[t // env.decimation, rows][:, None], env.decimation, axis=1)

        replay = sim.closed_loop(hold,
                                 batch=2, nstep=10 * env.decimation, chunk=env.decimation)
    whole = PER_STEP.evaluate_trusted(replay.features(berkeley)).total  # [B, 100]
    np.testing.assert_allclose(rewards[:10].sum(axis=0) * env.decimation, whole.sum(axis=1), rtol=1e-9)


def test_the_sandboxed_program_scores_a_block_as_the_trusted_one_does(berkeley):
    config = EnvConfig(num_envs=2, block_steps=3, nthread=1)
    scores = []
    for trusted in (True, False):
        with load_reward(PER_STEP, trusted=trusted) as reward, RobotEnv(berkeley, reward, config) as env:
            for action in _actions(env, 3):
                env.step(action)
            scores.append(env.block_rewards().rewards)
    np.testing.assert_array_equal(scores[0], scores[1])


@pytest.mark.parametrize("body", ["berkeley_humanoid", "unitree_g1"])
def test_observations_and_actions_have_a_robots_spaces_and_bounds(body):
    scene = compile_scene(Scene(body))
    config = EnvConfig(num_envs=2, command_speed=0.7, reset_noise=0.0, nthread=1)
    with load_reward(PER_STEP, trusted=True) as reward, RobotEnv(scene, reward, config) as env:
        nu = scene.model.nu
        obs = env.reset()
        assert env.num_actions == nu and obs.shape == (2, env.num_obs) == (2, 3 * nu + 9)
        names, sizes = zip(*env.obs_layout(), strict=True)
        parts = dict(zip(names, np.split(obs, np.cumsum(sizes)[:-1], axis=1), strict=True))
        np.testing.assert_allclose(parts["joint_pos"], 0.0, atol=1e-6)  # the standing pose itself
        np.testing.assert_allclose(parts["gravity"], [[0, 0, -1]] * 2, atol=0.05)  # standing upright
        np.testing.assert_allclose(parts["phase"], [[0.0, 1.0]] * 2, atol=1e-6)  # sin, cos of phase 0
        np.testing.assert_allclose(parts["command"], 0.7)
        low, high = scene.ctrl_bounds()
        for extreme in (-1e6, 1e6):
            step = env.step(np.full((2, nu), extreme))
            assert np.all(env.last_target >= low) and np.all(env.last_target <= high)
            assert np.isfinite(step.obs).all()
        np.testing.assert_allclose(env.last_action, config.action_clip)  # what the policy sees of its clipped action


def test_a_tipped_robot_falls_and_restarts_standing(berkeley):
    with load_reward(PER_STEP, trusted=True) as reward, \
            RobotEnv(berkeley, reward, EnvConfig(num_envs=2, reset_noise=0.0, nthread=1)) as env:
        quat = env.root_quat
        env.state[0, quat : quat + 4] = [np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0]  # pitched 90°: lying down
        step = env.step(np.zeros((2, env.num_actions)))
        assert step.dones.tolist() == [True, False] and not step.time_outs.any()
        np.testing.assert_array_equal(env.state[0], berkeley.initial_state)
        assert env.episode.steps.tolist() == [0, 1]


def test_randomization_draws_within_motionvls_ranges_and_pushes(berkeley):
    ranges = Randomization(push_interval_s=0.04, push_speed=0.5)
    config = EnvConfig(num_envs=8, randomization=ranges, nthread=1)
    with load_reward(PER_STEP, trusted=True) as reward, RobotEnv(berkeley, reward, config) as env:
        draw = env.episode.draw
        assert draw is not None
        assert np.all((draw.friction >= 0.2) & (draw.friction <= 1.3))
        assert np.all((draw.latency_steps >= 1) & (draw.latency_steps <= 10))
        model = env.models[3]
        assert model.geom_friction[0, 0] == pytest.approx(draw.friction[3])
        knee = berkeley.model.actuator("LL_KFE").id  # torque limit 30 N·m: friction = draw % of it
        dof = berkeley.model.jnt_dofadr[berkeley.model.actuator_trnid[knee, 0]]
        assert model.dof_frictionloss[dof] == pytest.approx(draw.joint_friction[3] / 100 * 30.0)
        assert model.actuator_gainprm[knee, 0] == pytest.approx(35.0 * draw.pd_gain[3])
        assert berkeley.model.geom_friction[0, 0] != model.geom_friction[0, 0]  # the scene's model is untouched
        first = env.episode.next_push.copy()
        for _ in range(3):
            env.step(np.zeros((8, env.num_actions)))
        assert np.all(env.episode.next_push > first)  # pushed at 0.04 s, the next one due


def _tiny(tmp: Path | None, *, steps: int, program: RewardProgram = PER_STEP, envs: int = 4, block: int = 8,
          randomization: Randomization | None = None) -> TrainConfig:
    return TrainConfig(reward_source=program.source, reward_trusted=True, steps=steps, checkpoint_every=1,
                       env=EnvConfig(num_envs=envs, block_steps=block, episode_s=1.0, nthread=1,
                                     randomization=randomization))


def test_ppo_learns_to_hold_a_knee_at_a_target_within_a_few_thousand_steps():
    # The knee's joint target is standing + 0.5 rad × action, so one constant action holds it at 0.6 rad; falls
    # are off so that every step scores the knee alone.
    config = _tiny(None, steps=16 * 16 * 20, program=HOLD_KNEE, envs=16, block=16)
    config = TrainConfig(**{**vars(config), "env": EnvConfig(**{**vars(config.env), "fall_height": 0.0,
                                                                   "fall_tilt_deg": 180.0})})
    with Trainer(config) as trainer:
        curve = trainer.run().curve
    first, last = curve[0].terms["knee"], np.mean([r.terms["knee"] for r in curve[-3:]])
    assert last > 0.3 * first  # squared error (rad²) cut by more than 3x: measured -0.26 -> -0.03


def test_a_resumed_run_continues_as_the_uninterrupted_one(tmp_path):
    ranges = Randomization(push_interval_s=0.1)
    whole = _tiny(tmp_path / "whole", steps=4 * 8 * 3, randomization=ranges)
    with Trainer(whole, out=tmp_path / "whole") as trainer:
        expected = trainer.run().curve
        expected_weights = trainer.alg.get_policy().state_dict()
    with Trainer(_tiny(None, steps=4 * 8 * 2, randomization=ranges), out=tmp_path / "split") as trainer:
        trainer.run()
    with Trainer(whole, out=tmp_path / "split") as trainer:  # a new process would do the same: all from disk
        assert len(trainer.curve) == 2
        resumed = trainer.run().curve
        weights = trainer.alg.get_policy().state_dict()
    assert [r.reward for r in resumed] == [r.reward for r in expected]
    for name, tensor in expected_weights.items():
        torch.testing.assert_close(weights[name], tensor, rtol=0, atol=0)
    assert len(json.loads((tmp_path / "split" / "curve.json").read_text())) == 3


def test_a_time_budget_stops_between_iterations_and_the_run_goes_on_later(tmp_path):
    config = _tiny(None, steps=4 * 8 * 2)
    with Trainer(config, out=tmp_path) as trainer:
        assert trainer.run(max_seconds=0.0).curve == []  # the budget is spent before the first iteration
    assert (tmp_path / "checkpoint.pt").exists()
    with Trainer(config, out=tmp_path) as trainer:
        assert len(trainer.run().curve) == 2


def test_a_run_folder_refuses_another_configuration(tmp_path):
    with Trainer(_tiny(None, steps=32), out=tmp_path):
        pass
    with pytest.raises(Exception, match="another configuration"):
        Trainer(_tiny(None, steps=32, envs=2), out=tmp_path)


def test_a_saved_policy_acts_as_the_actor_and_its_onnx_export_matches(tmp_path):
    config = _tiny(None, steps=32)
    with Trainer(config) as trainer:
        trainer.run()
        actor = trainer.alg.get_policy()
        folder = save_policy(actor, config, trainer.env.obs_layout(), tmp_path / "policy")
        obs = np.concatenate([trainer.env.observe(), np.random.default_rng(1).normal(0, 2, (16, trainer.env.num_obs))])
        with torch.no_grad():
            reference = actor(trainer._tensors(obs.astype(np.float32))).numpy()
    policy = TrainedPolicy.load(folder)
    np.testing.assert_allclose(policy.act(obs), reference, atol=1e-6)
    assert export_onnx(policy, folder, check_obs=obs) < 1e-4
    assert (folder / "policy.onnx").stat().st_size > 10_000
    assert policy.config == config
    run = run_policy(policy, seconds=0.3, copies=2, randomization=Randomization(), seed=3)
    assert run.rollouts.batch_shape == (2, 15 * 10)  # 15 actions of 10 physics steps
    features = run.rollouts.features(compile_scene(Scene("berkeley_humanoid")))
    np.testing.assert_allclose(features.time[:, 0], 0.0)
    up = np.isnan(run.fall_s)  # a copy that stayed up travelled what its pelvis says
    np.testing.assert_allclose(run.distance[up], (features.root_pos[up, -1, 0] - features.root_pos[up, 0, 0]),
                               atol=0.02)


def test_the_train_command_trains_resumes_and_writes_the_policy(tmp_path, capsys):
    argv = ["train", "--body", "berkeley_humanoid", "--reward", "walk", "--envs", "4", "--out", str(tmp_path)]
    assert main([*argv, "--steps", "96"]) == 0
    assert main([*argv, "--steps", "192"]) == 0  # resumes: one more iteration of 4 x 24
    out = capsys.readouterr().out
    assert "it     1/1" in out and "it     2/2" in out and "it     1/2" not in out
    assert "steps/s" in out and "falls" in out and "left" in out
    assert {p.name for p in (tmp_path / "policy").iterdir()} == {"policy.json", "policy.pt", "policy.onnx",
                                                                 "weights.pt"}


def test_the_train_command_says_what_a_bad_reward_is(tmp_path, capsys):
    assert main(["train", "--reward", "nonsense", "--steps", "10", "--out", str(tmp_path)]) == 2
    assert "neither a canonical reward" in capsys.readouterr().err
