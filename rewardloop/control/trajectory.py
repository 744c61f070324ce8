"""Trajectory: the executed motion an optimizer returns, with its reward, per-term statistics and task metrics."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from rewardloop.control.metrics import TaskMetrics
from rewardloop.control.search.policy import POLICY_FILE, Policy
from rewardloop.errors import UserError
from rewardloop.reward.base import RewardEval, TermStats
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Rollouts
from rewardloop.sim.scene import CompiledScene

ROLLOUTS_FILE = "trajectory.npz"
"""Name of the states/controls file inside a saved trajectory directory."""
SUMMARY_FILE = "trajectory.json"
"""Name of the reward/metrics summary file inside a saved trajectory directory."""
NETWORK_DIR = "policy"
"""Folder of a trained network policy inside a saved trajectory directory (a structured one is policy.json)."""
NETWORK_MARK = "policy.pt"
"""The file that makes a folder a network policy's (`rewardloop.rl.policy`: TorchScript)."""
CURVE_FILE = "curve.json"
"""A network policy's learning curve: one record per PPO iteration (`rewardloop.rl.train.IterationRecord`)."""


@dataclass(frozen=True)
class NetworkPolicy:
    """A trained network policy (`rewardloop.rl`), held as the bytes of its folder's files: policy.json (body,
    training configuration, observation layout), policy.pt (TorchScript), policy.onnx, weights.pt (actor and critic
    weights to fine-tune from) and curve.json. Bytes, not a path: the training folder is temporary and this module
    must not need torch; `rewardloop replay DIR` runs the saved folder."""

    body: str
    """Registry name of the body it drives."""
    files: Mapping[str, bytes]
    """File name -> contents."""

    @property
    def curve(self) -> list[dict[str, Any]]:
        """The learning curve: per PPO iteration env_steps, reward (mean step reward), speed (m/s), falls, ..."""
        return list(json.loads(self.files[CURVE_FILE])) if CURVE_FILE in self.files else []

    def save(self, folder: Path) -> Path:
        """Write every file into `folder` (each replaced whole)."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            with _replacing(folder / name) as handle:
                handle.write(data)
        return folder

    @classmethod
    def load(cls, folder: Path) -> NetworkPolicy:
        """Read a folder holding policy.json and policy.pt; a UserError if it is not one."""
        try:
            files = {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}
            body = str(json.loads(files["policy.json"])["body"])
        except (OSError, KeyError, ValueError, TypeError) as error:
            raise UserError(f"{folder} does not hold a trained policy (policy.json, policy.pt): {error}") from None
        if NETWORK_MARK not in files:
            raise UserError(f"{folder} does not hold a trained policy: no {NETWORK_MARK}")
        return cls(body, files)


@dataclass(frozen=True)
class Trajectory:
    """The motion an optimizer executed on the body's own physics, and how it scored."""

    rollouts: Rollouts
    """The executed motion, batch of one: state [1, T, nstate], control [1, T, nu]."""
    reward: RewardEval
    """The reward of the executed motion; terms [1, T]."""
    term_stats: dict[str, TermStats]
    """Term name -> statistics over the executed motion."""
    metrics: TaskMetrics
    """Distance, speed, fall, drift, heading change and steps of the executed motion."""
    wall_time_s: float
    """Wall-clock time the optimizer took (s)."""
    planner_steps: int
    """Physics steps simulated inside the planner (its sampled rollouts), not counting the executed ones."""
    planner_time_s: float = 0.0
    """Wall-clock time spent inside the planner: sampled rollouts, their features and reward (s)."""
    policy: Policy | NetworkPolicy | None = None
    """What produced the motion: a structured controller and its parameters (policy search, the gait planner),
    saved as policy.json, or a trained network (PPO), saved as the folder policy/."""

    @property
    def total_return(self) -> float:
        """Mean reward per step of the executed motion (NaN for a replayed motion with no reward)."""
        return float(self.reward.returns()[0]) if self.reward.terms else float("nan")

    def features(self, scene: CompiledScene) -> Features:
        """Features of the executed motion, [1, T]."""
        return self.rollouts.features(scene)

    def save(self, directory: str | Path) -> Path:
        """Write trajectory.npz (states, controls, reward terms) and trajectory.json (summary) into `directory`.

        Each file is written under a temporary name in `directory` and renamed into place, so a reader (or a
        resumed run) sees either no file or the whole file.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = {f"term_{name}": values for name, values in self.reward.terms.items()}
        arrays.update(initial_state=self.rollouts.initial_state, state=self.rollouts.state,
                      sensordata=self.rollouts.sensordata, control=self.rollouts.control)
        with _replacing(directory / ROLLOUTS_FILE) as handle:
            np.savez_compressed(handle, **arrays)
        summary = {
            "weights": self.reward.weights, "return": self.total_return,
            "term_stats": {name: asdict(stats) for name, stats in self.term_stats.items()},
            "metrics": self.metrics.to_dict(), "wall_time_s": self.wall_time_s,
            "planner_steps": self.planner_steps, "planner_time_s": self.planner_time_s,
        }
        with _replacing(directory / SUMMARY_FILE) as handle:
            handle.write(json.dumps(summary, indent=2).encode())
        if isinstance(self.policy, NetworkPolicy):
            self.policy.save(directory / NETWORK_DIR)
        elif self.policy is not None:
            with _replacing(directory / POLICY_FILE) as handle:
                handle.write(json.dumps(self.policy.to_dict(), indent=1).encode())
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> Trajectory:
        """Read a directory written by `save`; a UserError if it is not one."""
        directory = Path(directory)
        try:
            summary = json.loads((directory / SUMMARY_FILE).read_text())
            with np.load(directory / ROLLOUTS_FILE) as data:
                rollouts = Rollouts(*(np.asarray(data[k]) for k in ("initial_state", "state", "sensordata",
                                                                    "control")))
                terms = {name: np.asarray(data[f"term_{name}"]) for name in summary["weights"]}
            return cls(rollouts=rollouts, reward=RewardEval(terms, dict(summary["weights"])),
                       term_stats={n: TermStats(**s) for n, s in summary["term_stats"].items()},
                       metrics=TaskMetrics(**summary["metrics"]), wall_time_s=float(summary["wall_time_s"]),
                       planner_steps=int(summary["planner_steps"]),
                       planner_time_s=float(summary.get("planner_time_s", 0.0)),
                       policy=_saved_policy(directory))
        except (OSError, KeyError, ValueError, TypeError) as error:
            raise UserError(f"{directory} is not a saved trajectory directory: {error}") from None


def _saved_policy(directory: Path) -> Policy | NetworkPolicy | None:
    """The policy saved in a trajectory directory, of either kind, or None."""
    if (directory / NETWORK_DIR / NETWORK_MARK).is_file():
        return NetworkPolicy.load(directory / NETWORK_DIR)
    return Policy.load(directory) if (directory / POLICY_FILE).is_file() else None


@contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file beside `path`, renamed over `path` once written (removed on error)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def replayed(scene: CompiledScene, rollouts: Rollouts, policy: Policy | NetworkPolicy | None = None) -> Trajectory:
    """A Trajectory of a motion that no optimizer produced (a replayed policy): metrics, no reward terms."""
    from rewardloop.control.metrics import batch_metrics

    features = rollouts.features(scene)
    return Trajectory(rollouts=rollouts, reward=RewardEval({}, {}), term_stats={},
                      metrics=batch_metrics(features)[0], wall_time_s=0.0, planner_steps=0, policy=policy)
