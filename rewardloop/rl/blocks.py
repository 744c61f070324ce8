"""The reward of RL steps, computed in blocks: a reward program evaluated on the same Features as everywhere else.

Evaluating a program once per control step would cost more than the physics (the program and the feature
computation have a fixed cost per call), so the environment stores the physics samples of a block of steps (one
PPO rollout) and `RewardBlocks.evaluate` scores them all in one call: through the sandbox worker for a program a
model wrote, in process for a vetted one.

Each episode segment in a block becomes one row of a [R, L] batch: up to `context` physics samples of the same
episode before the block (so running windows, `np.diff` and the like see the past they would see in a whole
trajectory), then the segment's samples, then its last sample repeated to the common length L. A term is thus
exact when it reads at most `context` samples back; one reading further (the episode's first sample after the
context has moved past it) sees the context's first sample instead. The step's reward is the mean over its
physics samples of Σ weight × term, so an episode's summed step rewards times the physics steps per action equal
the whole trajectory's summed per-sample reward. Rows are scored in groups of ROW_GROUP, on threads for a vetted
program (NumPy releases the GIL in its loops); a sandboxed program's worker takes them one group after another.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from rewardloop.reward.base import RewardEval
from rewardloop.sim.features import Features, compute_features
from rewardloop.sim.scene import CompiledScene

ROW_GROUP = 8
"""Rows scored per reward call: measured on Berkeley Humanoid's walk, 64 rows of 490 samples took 0.135 s in one
call, 0.11 s in groups of 8 (they fit the caches) and 0.087 s with those groups on 2 threads (trusted programs)."""

RewardCall = Callable[[Features], RewardEval]
"""A loaded reward (`load_reward(program, trusted=...)`)."""


@dataclass(frozen=True)
class BlockResult:
    """The rewards of one block."""

    rewards: np.ndarray
    """[N, B] reward of each env step: mean over its physics samples of Σ weight × term."""
    terms: dict[str, np.ndarray]
    """Term name -> [N, B] mean unweighted value over each step's physics samples."""


@dataclass(frozen=True)
class _Segment:
    env: int
    first: int
    """First env step of the segment in the block."""
    end: int
    """One past its last env step."""
    context: int
    """Physics samples of the episode before the block that lead the row (0 when the episode starts here)."""


class RewardBlocks:
    """Stores a block's physics samples and the episode context before it; scores them on `evaluate`."""

    def __init__(self, scene: CompiledScene, reward: RewardCall | None, *, num_envs: int, block_steps: int,
                 decimation: int, context: int, threads: int = 1):
        self.scene, self.reward = scene, reward
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="reward") if threads > 1 else None
        self.decimation, self.context, self.block_steps = decimation, context, block_steps
        model = scene.model
        width = {"state": scene.nstate, "sensors": model.nsensordata, "control": model.nu}
        self.block = {k: np.zeros((num_envs, block_steps * decimation, w)) for k, w in width.items()}
        self.history = {k: np.zeros((num_envs, context, w)) for k, w in width.items()}
        self.history_len = np.zeros(num_envs, dtype=int)
        self.starts = np.zeros((block_steps, num_envs), dtype=bool)
        self.count = 0
        self._spare: dict[str, np.ndarray] = {}
        self._last_rows: tuple[dict[str, np.ndarray], list[_Segment]] = ({}, [])

    def recorded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """([B, S, nstate] states before each physics step, [B, S, nsensor] sensors, [B, S, nu] controls) of the
        S = steps recorded × D physics steps of this block so far."""
        end = self.count * self.decimation
        return self.block["state"][:, :end], self.block["sensors"][:, :end], self.block["control"][:, :end]

    def record(self, before: np.ndarray, sensors: np.ndarray, control: np.ndarray, new_episode: np.ndarray) -> None:
        """Store one env step of every copy.

        Args:
          before: [B, D, nstate] the state before each physics step of the action.
          sensors: [B, D, nsensor] sensors of each physics step (they describe the state before it).
          control: [B, D, nu] controls applied during each physics step.
          new_episode: [B] whether this step is the first of an episode.
        """
        if self.count == self.block_steps:
            raise ValueError(f"the block holds {self.block_steps} steps; evaluate it before recording more")
        window = slice(self.count * self.decimation, (self.count + 1) * self.decimation)
        for key, value in (("state", before), ("sensors", sensors), ("control", control)):
            self.block[key][:, window] = value
        self.starts[self.count] = new_episode
        self.count += 1

    def evaluate(self) -> BlockResult:
        """Score the recorded steps, move the episode context forward and start a new block."""
        if self.reward is None:
            raise ValueError("these blocks have no reward to score them with")
        reward = self.reward
        segments = self._segments()
        rows = self._rows(segments)

        def score(part: slice) -> RewardEval:
            return reward(self._features({key: value[part] for key, value in rows.items()}))

        parts = [slice(i, i + ROW_GROUP) for i in range(0, len(segments), ROW_GROUP)]
        scored = list(self._pool.map(score, parts) if self._pool is not None else map(score, parts))
        evaluation = RewardEval({name: np.concatenate([e.terms[name] for e in scored]) for name in scored[0].terms},
                                scored[0].weights)
        result = self._per_step(segments, evaluation)
        self._advance(segments)
        self.count = 0
        return result

    def _segments(self) -> list[_Segment]:
        """Each env's episode segments in the block, in time order."""
        out = []
        for env in range(self.starts.shape[1]):
            cuts = [int(s) for s in np.flatnonzero(self.starts[: self.count, env]) if s > 0]
            bounds = [0, *cuts, self.count]
            for first, end in itertools.pairwise(bounds):
                continued = first == 0 and not self.starts[0, env]
                out.append(_Segment(env, first, end, int(self.history_len[env]) if continued else 0))
        return out

    def _samples(self, segment: _Segment, key: str) -> np.ndarray:
        """[context + steps × D, width] the segment's row before padding."""
        d = self.decimation
        own = self.block[key][segment.env, segment.first * d : segment.end * d]
        if not segment.context:
            return own
        return np.concatenate([self.history[key][segment.env, self.context - segment.context :], own])

    def _rows(self, segments: list[_Segment]) -> dict[str, np.ndarray]:
        """Key -> [R, L, width] one row per segment, its last sample repeated to the length L. Segments that span
        the whole block after a full context (the common case) are copied in one vectorized assignment."""
        rows = self._buffers(len(segments), self.context + self.count * self.decimation)
        whole = [r for r, s in enumerate(segments) if s.context == self.context and s.end - s.first == self.count]
        envs = [segments[r].env for r in whole]
        for key, out in rows.items():
            out[whole, : self.context] = self.history[key][envs]
            out[whole, self.context :] = self.block[key][envs, : self.count * self.decimation]
        for r in sorted(set(range(len(segments))) - set(whole)):
            for key, out in rows.items():
                samples = self._samples(segments[r], key)
                out[r, : len(samples)] = samples
                out[r, len(samples) :] = samples[-1]
        self._last_rows = (rows, segments)
        return rows

    def _buffers(self, count: int, length: int) -> dict[str, np.ndarray]:
        """Key -> [count, length, width] row arrays, reused from block to block (fresh memory costs page faults
        comparable to the reward itself)."""
        have = self._spare.get("state")
        if have is None or have.shape[0] < count or have.shape[1] != length:
            capacity = max(count, 2 * self.starts.shape[1])
            self._spare = {k: np.empty((capacity, length, v.shape[-1])) for k, v in self.block.items()}
        return {k: v[:count] for k, v in self._spare.items()}

    def _features(self, rows: dict[str, np.ndarray]) -> Features:
        before = rows["state"]
        after = np.concatenate([before[:, 1:], before[:, -1:]], axis=1)  # features read only the states before
        return compute_features(self.scene, before[:, 0], after, rows["sensors"], rows["control"])

    def _per_step(self, segments: list[_Segment], evaluation: RewardEval) -> BlockResult:
        d = self.decimation
        shape = (self.count, self.starts.shape[1])
        rewards = np.zeros(shape)
        terms = {name: np.zeros(shape) for name in evaluation.terms}
        total = evaluation.total
        for r, s in enumerate(segments):
            own = slice(s.context, s.context + (s.end - s.first) * d)
            rewards[s.first : s.end, s.env] = total[r, own].reshape(-1, d).mean(axis=1)
            for name, values in evaluation.terms.items():
                terms[name][s.first : s.end, s.env] = values[r, own].reshape(-1, d).mean(axis=1)
        return BlockResult(rewards, terms)

    def _advance(self, segments: list[_Segment]) -> None:
        """The episode context for the next block: the last `context` samples of each env's current episode, taken
        from the rows just scored (a row holds the context and the segment in time order)."""
        if not self.context:
            return
        rows, _ = self._last_rows
        last = {s.env: (r, s) for r, s in enumerate(segments)}
        envs = np.array(list(last))
        index = np.array([r for r, _ in last.values()])
        ends = np.array([s.context + (s.end - s.first) * self.decimation for _, s in last.values()])
        kept = np.minimum(ends, self.context)
        # sample i of the new context is row sample end - context + i, clamped at the row's start (unused then)
        take = np.maximum(ends[:, None] - self.context + np.arange(self.context)[None, :], 0)
        for key, history in self.history.items():
            history[envs] = rows[key][index[:, None], take]
        self.history_len[envs] = kept
        self._last_rows = ({}, [])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()

    def snapshot(self) -> dict[str, np.ndarray]:
        """The episode context, for a checkpoint (taken between blocks)."""
        return {**{f"history_{k}": v.copy() for k, v in self.history.items()}, "history_len": self.history_len.copy()}

    def restore(self, snapshot: dict[str, np.ndarray]) -> None:
        """Put back what `snapshot` took."""
        for key in self.history:
            self.history[key][:] = snapshot[f"history_{key}"]
        self.history_len[:] = snapshot["history_len"]
        self.count = 0
