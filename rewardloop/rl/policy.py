"""Trained policies as products: saved with their configuration, loadable without rsl_rl, exported to ONNX.

A policy folder holds policy.json (the body, the training configuration, the observation layout), policy.pt (the
deterministic actor with its observation normalizer, TorchScript: torch alone runs it) and policy.onnx (the same
network for deployment; `export_onnx` checks onnxruntime's actions against torch's before it keeps the file).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.models import MLPModel

from rewardloop.errors import UserError
from rewardloop.rl.train import TrainConfig

META, TORCH_FILE, ONNX_FILE = "policy.json", "policy.pt", "policy.onnx"
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


def save_policy(actor: MLPModel, config: TrainConfig, obs_layout: list[tuple[str, int]], folder: Path) -> Path:
    """Write policy.json and policy.pt for `actor` (its deterministic output, normalizer included)."""
    folder.mkdir(parents=True, exist_ok=True)
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
