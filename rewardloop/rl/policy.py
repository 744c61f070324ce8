"""Trained policies as products: saved with their configuration, loadable without rsl_rl, exported to ONNX.

A policy folder holds policy.json (the body, the training configuration, the observation layout), policy.pt (the
deterministic actor with its observation normalizer, TorchScript: torch alone runs it), policy.onnx (the same
network for deployment; `export_onnx` checks onnxruntime's actions against torch's before it keeps the file) and
weights.pt (rsl_rl's actor and critic state dicts: what fine-tuning starts from).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.models import MLPModel

from rewardloop.errors import UserError
from rewardloop.rl.env import RobotEnv
from rewardloop.rl.randomize import Randomization
from rewardloop.rl.train import TrainConfig
from rewardloop.sim.rollout import Rollouts
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene

META, TORCH_FILE, ONNX_FILE, WEIGHTS_FILE = "policy.json", "policy.pt", "policy.onnx", "weights.pt"
ONNX_TOLERANCE = 1e-4
"""Largest |action difference| between onnxruntime and torch that an export may have."""


@dataclass(frozen=True)
class TrainedPolicy:
    """A deterministic policy: observations [B, num_obs] -> actions [B, nu] (see `rewardloop.rl.env`)."""

    config: TrainConfig
    module: torch.jit.ScriptModule
    obs_layout: list[tuple[str, int]]

    def act(self, obs: np.ndarray) -> np.ndarray:
        """[B, num_obs] float observations -> [B, nu] actions (float32)."""
        with torch.no_grad():
            return self.module(torch.as_tensor(obs, dtype=torch.float32)).numpy()

    @classmethod
    def load(cls, folder: Path) -> TrainedPolicy:
        """Read a folder written by `save_policy`; a UserError if it is not one."""
        try:
            meta = json.loads((folder / META).read_text())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                module = torch.jit.load(str(folder / TORCH_FILE))
        except (OSError, ValueError, RuntimeError) as error:
            raise UserError(f"{folder} does not hold a saved policy ({META}, {TORCH_FILE}): {error}") from None
        layout = [(name, int(size)) for name, size in meta["obs_layout"]]
        return cls(TrainConfig.from_dict(meta["config"]), module, layout)


def save_policy(actor: MLPModel, config: TrainConfig, obs_layout: list[tuple[str, int]], folder: Path, *,
                weights: dict[str, Any] | None = None) -> Path:
    """Write policy.json and policy.pt for `actor` (its deterministic output, normalizer included), and weights.pt
    when given `weights` (`Trainer.weights()`)."""
    folder.mkdir(parents=True, exist_ok=True)
    if weights is not None:
        torch.save(weights, folder / WEIGHTS_FILE)
    with warnings.catch_warnings():  # torch 2.13 marks TorchScript deprecated; rsl_rl's export still uses it
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(actor.as_jit().to("cpu").eval())
    scripted.save(str(folder / TORCH_FILE))
    meta: dict[str, Any] = {"body": config.body, "config": config.to_dict(), "obs_layout": obs_layout}
    (folder / META).write_text(json.dumps(meta, indent=1))
    return folder


def export_onnx(policy: TrainedPolicy, folder: Path, *, check_obs: np.ndarray) -> float:
    """Write policy.onnx beside the policy and return the largest |action difference| from torch on `check_obs`
    [B, num_obs]; a UserError (and no file) when it exceeds ONNX_TOLERANCE."""
    import onnxruntime

    path = folder / ONNX_FILE
    expected = policy.act(check_obs)  # before the export, which traces the module
    example = torch.as_tensor(check_obs[:1], dtype=torch.float32)
    with warnings.catch_warnings():  # the TorchScript exporter notes that a scripted module has no signature
        warnings.simplefilter("ignore")
        torch.onnx.export(policy.module, (example,), str(path), input_names=["obs"], output_names=["actions"],
                          dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}}, dynamo=False)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (ours,) = session.run(["actions"], {"obs": check_obs.astype(np.float32)})
    error = float(np.abs(ours - expected).max())
    if error > ONNX_TOLERANCE:
        path.unlink()
        raise UserError(f"the ONNX export's actions differ from torch's by {error:.2e} (> {ONNX_TOLERANCE}); not kept")
    return error


@dataclass(frozen=True)
class PolicyRun:
    """A deterministic policy run from the standing start, each copy until its first fall or the end. Arrays are
    over the B copies."""

    seconds: float
    """The run's length (s)."""
    fall_s: np.ndarray
    """[B] time of the first fall (s); NaN for a copy that stayed up."""
    distance: np.ndarray
    """[B] pelvis travel along +x until the fall or the end (m)."""
    rollouts: Rollouts
    """The physics of the whole run, [B, T, ·] (copies that fell restarted standing and went on)."""

    @property
    def speed(self) -> np.ndarray:
        """[B] mean speed along +x until the fall or the end (m/s)."""
        return self.distance / np.where(np.isnan(self.fall_s), self.seconds, self.fall_s)


def run_policy(policy: TrainedPolicy, *, seconds: float, copies: int = 4, randomization: Randomization | None = None,
               seed: int = 0, scene: CompiledScene | None = None, restart: bool = True,
               pushes: Sequence[tuple[float, float]] = ()) -> PolicyRun:
    """Run `policy` for `seconds` in `copies` copies of `scene` (default: its body on flat ground), under MotionVL's
    randomization when given, with `pushes`: (time s, sideways velocity kick m/s, + left) to every copy's root. A
    copy that falls restarts standing, or with `restart` False lies where it fell and the run goes on (an
    optimizer's executed motion; falls are then read from the motion, fall_s stays NaN)."""
    steps = max(1, round(seconds / policy.config.env.control_dt))
    env_config = dataclasses.replace(policy.config.env, num_envs=copies, randomization=randomization, seed=seed,
                                     episode_s=seconds + 1.0, block_steps=steps)  # the block keeps the whole run
    if not restart:  # nothing counts as a fall: no height below 0 × standing, no tilt past 180°
        env_config = dataclasses.replace(env_config, fall_height=0.0, fall_tilt_deg=181.0)
    scene = scene or compile_scene(Scene(policy.config.body))
    fall_s, distance = np.full(copies, np.nan), np.zeros(copies)
    root_x = 1 + scene.model.jnt_qposadr[scene.model.body(scene.body.root).jntadr[0]]  # state: time, qpos, ...
    with RobotEnv(scene, None, env_config) as env:
        obs, start_x = env.observe(), env.state[:, root_x].copy()
        for step in range(steps):
            up = np.isnan(fall_s)
            distance[up] = (env.state[:, root_x] - start_x)[up]
            for _, kick in _due(pushes, step, env_config.control_dt):
                env.state[:, env.root_linvel + 1] += kick
            result = env.step(policy.act(obs))
            fell = result.dones & ~result.time_outs & up
            fall_s[fell] = (step + 1) * env_config.control_dt
            obs = result.obs
        before, sensors, control = env.blocks.recorded()
    after = np.concatenate([before[:, 1:], env.state[:, None]], axis=1)
    return PolicyRun(seconds, fall_s, distance, Rollouts(before[:, 0].copy(), after, sensors.copy(), control.copy()))


def _due(pushes: Sequence[tuple[float, float]], step: int, dt: float) -> list[tuple[float, float]]:
    """The pushes whose time falls within control step `step` ([step dt, (step + 1) dt))."""
    return [(t, v) for t, v in pushes if step * dt <= t < (step + 1) * dt]

