"""PPO training of a robot policy against a reward program, through rsl_rl's PPO (rsl-rl-lib 5.5).

    trainer = Trainer(TrainConfig(body="berkeley_humanoid", reward_source=source, steps=200_000), out=Path("run"))
    result = trainer.run(progress=print)

rsl_rl supplies the algorithm (actor and critic MLPs, Gaussian policy, rollout storage, GAE, clipped surrogate,
adaptive learning rate); this module is the runner around it, written like rsl_rl's OnPolicyRunner with one
difference: the environment's rewards come per block (one rollout) from the reward program (`rewardloop.rl.blocks`)
and are added to the rollout storage before the returns are computed. rsl_rl already added the time-out
bootstrap there, so the sum is what a per-step reward would have given.

A run directory holds config.json, checkpoint.pt (all that decides the continuation: networks, optimizer,
environment states and random generators, the learning curve) and curve.json; a run started again with the same
directory and configuration resumes from its checkpoint and continues exactly as an uninterrupted run would.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.algorithms import PPO
from rsl_rl.models import MLPModel
from rsl_rl.storage import RolloutStorage
from tensordict import TensorDict

from rewardloop.errors import UserError
from rewardloop.reward import LoadedReward, load_reward
from rewardloop.reward.program import RewardProgram
from rewardloop.rl.blocks import RewardCall
from rewardloop.rl.env import EnvConfig, RobotEnv
from rewardloop.rl.randomize import Randomization
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene

CHECKPOINT, CONFIG, CURVE = "checkpoint.pt", "config.json", "curve.json"


@dataclass(frozen=True)
class PPOConfig:
    """rsl_rl PPO settings (its defaults, with smaller networks for CPUs)."""

    hidden: tuple[int, ...] = (128, 128, 128)
    """Hidden layer sizes of the actor and of the critic."""
    activation: str = "elu"
    init_noise_std: float = 1.0
    """Initial standard deviation of the Gaussian policy (in action units)."""
    learning_rate: float = 1e-3
    """Initial Adam learning rate; adapted to keep the policy's KL step near desired_kl."""
    desired_kl: float = 0.01
    epochs: int = 5
    """Passes over each rollout."""
    minibatches: int = 4
    """Minibatches per pass."""
    gamma: float = 0.99
    """Discount per control step (0.99 at 50 Hz: a horizon of about 2 s)."""
    lam: float = 0.95
    """GAE λ."""
    clip: float = 0.2
    entropy_coef: float = 0.01
    max_grad_norm: float = 1.0
    obs_normalization: bool = True
    """Normalize observations by running statistics (saved with the policy)."""


@dataclass(frozen=True)
class TrainConfig:
    """One training run."""

    reward_source: str
    """The reward program's source."""
    reward_trusted: bool = False
    """Run the program in process (vetted programs only); else in the sandbox worker."""
    body: str = "berkeley_humanoid"
    """Registry name of a servo-driven body."""
    steps: int = 100_000
    """Env steps to train for, all copies together (rounded up to whole iterations)."""
    seed: int = 0
    env: EnvConfig = field(default_factory=EnvConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    checkpoint_every: int = 10
    """Iterations between checkpoints (0: only at the end)."""
    torch_threads: int = 1
    """Torch CPU threads: measured on 2 shared cores, 2 OpenMP threads made a PPO update 25-50x slower."""

    @property
    def iterations(self) -> int:
        per = self.env.num_envs * self.env.block_steps
        return max(1, -(-self.steps // per))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        env: dict[str, Any] = dict(data["env"])
        if env.get("randomization") is not None:
            env["randomization"] = Randomization(**_tuples(env["randomization"]))
        rest = {k: v for k, v in data.items() if k not in ("env", "ppo")}
        return cls(**rest, env=EnvConfig(**env), ppo=PPOConfig(**_tuples(data["ppo"])))


def _tuples(fields: dict[str, Any]) -> dict[str, Any]:
    """JSON's lists back into the tuples the frozen configs hold."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}


@dataclass(frozen=True)
class IterationRecord:
    """One PPO iteration: a rollout of block_steps per copy, its rewards, one update."""

    iteration: int
    env_steps: int
    """Env steps so far, all copies."""
    reward: float
    """Mean step reward of the rollout."""
    episode_return: float | None
    """Mean summed step reward of the episodes that ended in this rollout (None: none ended)."""
    episode_s: float | None
    """Their mean length (s)."""
    speed: float
    """Mean pelvis velocity along +x over the rollout (m/s)."""
    falls: int
    """Episodes that ended in a fall."""
    collect_s: float
    """Seconds stepping the copies and choosing actions."""
    reward_s: float
    """Seconds scoring the block with the reward program."""
    update_s: float
    """Seconds in the PPO update."""
    terms: dict[str, float]
    """Term name -> mean unweighted value over the rollout."""

    @property
    def steps_per_s(self) -> float:
        return self.env_steps_per_iteration / max(self.collect_s + self.reward_s + self.update_s, 1e-9)

    @property
    def env_steps_per_iteration(self) -> int:
        return self.env_steps // (self.iteration + 1)


@dataclass(frozen=True)
class TrainResult:
    out: Path | None
    curve: list[IterationRecord]


class _Episodes:
    """Running returns of each copy's episode; [B] arrays."""

    def __init__(self, num_envs: int):
        self.returns, self.steps = np.zeros(num_envs), np.zeros(num_envs, dtype=int)

    def close(self, rewards: np.ndarray, dones: np.ndarray, dt: float) -> tuple[list[float], list[float]]:
        """[N, B] step rewards and done flags of a block -> (returns, lengths in s) of the episodes that ended."""
        returns, lengths = [], []
        for step in range(rewards.shape[0]):
            self.returns += rewards[step]
            self.steps += 1
            ended = np.flatnonzero(dones[step])
            returns += self.returns[ended].tolist()
            lengths += (self.steps[ended] * dt).tolist()
            self.returns[ended], self.steps[ended] = 0.0, 0
        return returns, lengths


class Trainer:
    """PPO on a RobotEnv through rsl_rl. Use as a context manager (it owns physics threads and a reward worker).

    By default it loads config.reward_source itself (sandboxed unless trusted) on the body's flat scene; an
    optimizer passes the `scene` and the `reward` it was given instead (the caller keeps and closes that reward).
    """

    def __init__(self, config: TrainConfig, *, out: Path | None = None, scene: CompiledScene | None = None,
                 reward: RewardCall | None = None):
        self.config, self.out = config, out
        torch.manual_seed(config.seed)
        torch.set_num_threads(config.torch_threads)
        self._owned: LoadedReward | None = None
        if reward is None:
            program = RewardProgram.from_source(config.reward_source)
            reward = self._owned = load_reward(program, trusted=config.reward_trusted)
        self.env = RobotEnv(scene or compile_scene(Scene(config.body)), reward, config.env)
        self.obs = self._tensors(self.env.observe())
        self.alg = _ppo(self.obs, self.env, config)
        self.episodes = _Episodes(self.env.num_envs)
        self.curve: list[IterationRecord] = []
        if out is not None:
            self._open_run(out)

    def __enter__(self) -> Trainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.env.close()
        if self._owned is not None:
            self._owned.close()

    def start_from(self, weights: dict[str, Any]) -> None:
        """Fine-tune: take a trained policy's actor and critic weights (`policy.WEIGHTS_FILE`: rsl_rl's state
        dicts, networks of this config's sizes); the optimizer starts fresh."""
        try:
            self.alg.load(weights, {"actor": True, "critic": True}, strict=True)
        except (KeyError, RuntimeError) as error:
            raise UserError(f"the base policy's networks do not fit this training's: {str(error)[:200]}") from None

    def weights(self) -> dict[str, Any]:
        """The actor's and critic's state dicts (what `start_from` takes)."""
        saved = self.alg.save()
        return {k: saved[k] for k in ("actor_state_dict", "critic_state_dict")}

    def _tensors(self, obs: np.ndarray) -> TensorDict:
        return TensorDict({"policy": torch.as_tensor(obs)}, batch_size=[obs.shape[0]])

    def run(self, progress: Callable[[IterationRecord], None] | None = None, *,
            max_seconds: float | None = None) -> TrainResult:
        """Iterate until config.steps env steps, checkpointing as configured; resumes where the curve ends. With
        `max_seconds`, stop after the iteration that passes it (the checkpoint lets a later call go on)."""
        every, start = self.config.checkpoint_every, time.perf_counter()
        while len(self.curve) < self.config.iterations:
            if max_seconds is not None and time.perf_counter() - start > max_seconds:
                break
            record = self.iterate()
            if progress is not None:
                progress(record)
            if self.out is not None and every and len(self.curve) % every == 0:
                self.save_checkpoint()
        if self.out is not None:
            self.save_checkpoint()
        return TrainResult(self.out, list(self.curve))

    def iterate(self) -> IterationRecord:
        """One rollout, its block rewards, one PPO update."""
        start = time.perf_counter()
        with torch.inference_mode():
            dones, speeds = self._collect()
            scored = time.perf_counter()
            block = self.env.block_rewards()
            self.alg.storage.rewards += torch.as_tensor(block.rewards, dtype=torch.float32)[..., None]
            self.alg.compute_returns(self.obs)
        updated = time.perf_counter()
        self.alg.update()
        returns, lengths = self.episodes.close(block.rewards, dones[0], self.config.env.control_dt)
        record = IterationRecord(
            iteration=len(self.curve), env_steps=(len(self.curve) + 1) * block.rewards.size,
            reward=float(block.rewards.mean()), episode_return=float(np.mean(returns)) if returns else None,
            episode_s=float(np.mean(lengths)) if lengths else None, speed=float(speeds.mean()),
            falls=int((dones[0] & ~dones[1]).sum()), collect_s=scored - start, reward_s=updated - scored,
            update_s=time.perf_counter() - updated, terms={k: float(v.mean()) for k, v in block.terms.items()})
        self.curve.append(record)
        return record

    def _collect(self) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """Step block_steps times -> (([N, B] dones, [N, B] time-outs), [N, B] forward speeds)."""
        n, b = self.config.env.block_steps, self.env.num_envs
        dones, time_outs, speeds = np.zeros((n, b), bool), np.zeros((n, b), bool), np.zeros((n, b))
        zeros = torch.zeros(b)
        for k in range(n):
            actions = self.alg.act(self.obs)
            step = self.env.step(actions.numpy())
            self.obs = self._tensors(step.obs)
            self.alg.process_env_step(self.obs, zeros, torch.as_tensor(step.dones),
                                      {"time_outs": torch.as_tensor(step.time_outs, dtype=torch.float32)})
            dones[k], time_outs[k], speeds[k] = step.dones, step.time_outs, step.forward_speed
        return (dones, time_outs), speeds

    def _open_run(self, out: Path) -> None:
        """Write the config, or resume from the checkpoint of a run with the same one (`steps` may differ)."""
        out.mkdir(parents=True, exist_ok=True)
        mine = self.config.to_dict()
        saved_path = out / CONFIG
        if saved_path.exists():
            saved = json.loads(saved_path.read_text())
            if {**saved, "steps": 0} != json.loads(json.dumps({**mine, "steps": 0})):
                raise UserError(f"{out} holds a run with another configuration; choose a new --out to start afresh")
        saved_path.write_text(json.dumps(mine, indent=1))
        if (out / CHECKPOINT).exists():
            self.load_checkpoint(out / CHECKPOINT)

    def save_checkpoint(self, path: Path | None = None) -> Path:
        """Write everything the continuation depends on (atomically: a crash leaves the previous one)."""
        assert self.out is not None or path is not None
        path = path or self.out / CHECKPOINT  # type: ignore[operator]
        state = {"alg": self.alg.save(), "env": self.env.snapshot(), "torch_rng": torch.get_rng_state(),
                 "obs": self.obs["policy"].clone(), "episodes": (self.episodes.returns, self.episodes.steps),
                 "curve": [dataclasses.asdict(r) for r in self.curve]}
        partial = path.with_suffix(".partial")
        torch.save(state, partial)
        partial.replace(path)
        (path.parent / CURVE).write_text(json.dumps(state["curve"], indent=1))
        return path

    def load_checkpoint(self, path: Path) -> None:
        state = torch.load(path, weights_only=False)
        self.alg.load(state["alg"], None, strict=True)
        self.env.restore(state["env"])
        torch.set_rng_state(state["torch_rng"])
        self.obs = TensorDict({"policy": state["obs"]}, batch_size=[self.env.num_envs])
        self.episodes.returns, self.episodes.steps = (np.array(a) for a in state["episodes"])
        self.curve = [IterationRecord(**r) for r in state["curve"]]


def _ppo(obs: TensorDict, env: RobotEnv, config: TrainConfig) -> PPO:
    """rsl_rl's actor, critic, storage and PPO, built directly (its runner's factory prints the networks)."""
    p = config.ppo
    groups = {"actor": ["policy"], "critic": ["policy"]}
    gaussian = {"class_name": "rsl_rl.modules.distribution.GaussianDistribution", "init_std": p.init_noise_std}
    actor = MLPModel(obs, groups, "actor", env.num_actions, p.hidden, p.activation, p.obs_normalization, gaussian)
    critic = MLPModel(obs, groups, "critic", 1, p.hidden, p.activation, p.obs_normalization)
    storage = RolloutStorage("rl", env.num_envs, config.env.block_steps, obs, [env.num_actions], "cpu")
    return PPO(actor, critic, storage, num_learning_epochs=p.epochs, num_mini_batches=p.minibatches,
               clip_param=p.clip, gamma=p.gamma, lam=p.lam, entropy_coef=p.entropy_coef,
               learning_rate=p.learning_rate, max_grad_norm=p.max_grad_norm, desired_kl=p.desired_kl)
