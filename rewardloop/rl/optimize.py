"""The PPO optimizer: (scene, reward, config, seed) -> Trajectory, like every optimizer in
`rewardloop.control.optimizer`, with the trained network as the trajectory's policy.

    trajectory = optimize(scene, reward, OptimizerConfig(kind="ppo", ppo=PPOSettings(steps=200_000)), seed=0)

Each call trains a policy against `reward` (the loaded program it is given: in process for a vetted program, the
sandbox worker for a model's) on `scene`, starting from the body's base policy where one is shipped
(`rewardloop.rl.base`), then runs it once, deterministically, from the scene's start for config.duration_s: that
run is the executed motion, scored by the same reward as the other optimizers' motions are. A body that falls lies
where it fell, as under every other optimizer.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from rewardloop.control.config import OptimizerConfig, Progress
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.trajectory import CURVE_FILE, NetworkPolicy, Trajectory
from rewardloop.reward import TrustedReward
from rewardloop.reward.base import RewardFunction, term_statistics
from rewardloop.rl.base import base_policy
from rewardloop.rl.commands import command_speed
from rewardloop.rl.env import EnvConfig
from rewardloop.rl.policy import WEIGHTS_FILE, TrainedPolicy, export_onnx, run_policy, save_policy
from rewardloop.rl.randomize import Randomization
from rewardloop.rl.train import IterationRecord, TrainConfig, Trainer, TrainResult
from rewardloop.sim.scene import CompiledScene


def train_motion(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
                 progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """Train a policy for `reward` on `scene` within config.ppo's budget; its executed motion and the network."""
    begin = time.perf_counter()
    base, start = base_policy(scene.scene.body, config.ppo)
    train_config = training_config(scene, reward, config, seed=seed, base=base)
    with tempfile.TemporaryDirectory(prefix="rewardloop-ppo-") as name:
        folder = Path(name)
        result = _train(train_config, scene, reward, folder, base=base, max_seconds=config.ppo.max_seconds,
                        report=_reporter(progress, train_config, config, start))
        trained_s = time.perf_counter() - begin
        network = NetworkPolicy.load(folder)
        policy = TrainedPolicy.load(folder)
        run = run_policy(policy, seconds=config.duration_s, copies=1, seed=seed, scene=scene, restart=False)
    features = run.rollouts.features(scene)
    evaluation = reward(features)
    decimation = round(train_config.env.control_dt / scene.dt)
    return Trajectory(rollouts=run.rollouts, reward=evaluation, term_stats=term_statistics(evaluation),
                      metrics=batch_metrics(features)[0], wall_time_s=time.perf_counter() - begin,
                      planner_steps=result.curve[-1].env_steps * decimation, planner_time_s=trained_s,
                      policy=network)


def training_config(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
                    base: Path | None) -> TrainConfig:
    """The TrainConfig of a PPO candidate: config.ppo's budget, the command the program asks for; a fine-tuned
    base keeps its networks' sizes and its observation and action settings."""
    settings = config.ppo
    program = getattr(reward, "program", None)  # TrustedReward and SandboxedReward both keep theirs
    source = program.source if program is not None else ""
    fields: dict[str, Any] = {"num_envs": settings.envs, "seed": seed, "nthread": config.nthread or 0,
                              "command_speed": command_speed(source, scene.standing_height),
                              "randomization": Randomization() if settings.randomize else None}
    trained: dict[str, Any] = {"reward_source": source, "reward_trusted": isinstance(reward, TrustedReward),
                               "body": scene.scene.body, "steps": settings.steps, "seed": seed}
    if base is None:
        return TrainConfig(**trained, env=EnvConfig(**fields))
    before = TrainedPolicy.load(base).config
    return dataclasses.replace(before, **trained, env=dataclasses.replace(before.env, **fields))


def _train(config: TrainConfig, scene: CompiledScene, reward: RewardFunction, folder: Path, *, base: Path | None,
           max_seconds: float | None, report: Callable[[IterationRecord], None]) -> TrainResult:
    """Train (from `base`'s weights when given) and write the policy folder with its ONNX export and curve."""
    with Trainer(config, scene=scene, reward=reward) as trainer:
        if base is not None:
            trainer.start_from(torch.load(base / WEIGHTS_FILE, weights_only=True))
        result = trainer.run(progress=report, max_seconds=max_seconds)
        save_policy(trainer.alg.get_policy(), config, trainer.env.obs_layout(), folder, weights=trainer.weights())
        check_obs = trainer.env.observe()
    export_onnx(TrainedPolicy.load(folder), folder, check_obs=check_obs)
    (folder / CURVE_FILE).write_text(json.dumps([dataclasses.asdict(r) for r in result.curve], indent=1))
    return result


def _reporter(progress: Callable[[Progress], None] | None, train: TrainConfig, config: OptimizerConfig,
              start: str) -> Callable[[IterationRecord], None]:
    """IterationRecord -> Progress: the fraction done by iterations or by the time limit, whichever is further."""
    begin, limit = time.perf_counter(), config.ppo.max_seconds

    def report(record: IterationRecord) -> None:
        if progress is None:
            return
        by_time = (time.perf_counter() - begin) / limit if limit else 0.0
        fraction = min(1.0, max((record.iteration + 1) / train.iterations, by_time))
        progress(Progress(fraction=fraction, sim_time=0.0, best_return=record.reward,
                          message=f"PPO {record.env_steps} steps, speed {record.speed:.2f} m/s, "
                                  f"falls {record.falls} ({start})"))
    return report
