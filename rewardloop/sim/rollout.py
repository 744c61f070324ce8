"""Batched rollouts on `mujoco.rollout`: open-loop control sequences and chunked closed-loop stepping.

`Simulator` owns the thread pool and one MjData per thread, like `mujoco.rollout.Rollout`, and is used as a
context manager. Rollouts are deterministic: the same initial states and controls give the same result.

A closed loop over a large batch is pipelined: the batch is split into one group per thread, each group
steps on its own thread and asks the policy for its own rows, so one group's Python feedback runs while the
others' physics does (MuJoCo releases the GIL while it steps, and so does the compiled muscle controller).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import mujoco
import mujoco.rollout
import numpy as np

from rewardloop.errors import UserError
from rewardloop.sim.features import Features, compute_features
from rewardloop.sim.scene import CompiledScene

Feedback = Callable[[np.ndarray, np.ndarray, int, slice], np.ndarray]
"""Closed-loop feedback: (state [b, nstate] now, sensors [b, nsensor] of the latest step, step index, the rows of
the batch those b states are) -> controls [b, chunk, nu] for the next chunk (the last chunk may be given only the
steps left). The sensors describe the state one physics step before `state` (MuJoCo computes them before it
integrates); before the first step they describe the initial state itself."""

Step = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
"""One rollout call into given arrays: ([b, nstate] states, [b, T, nu] controls, [b, T, nstate] state out,
[b, T, nsensor] sensordata out), all C-contiguous float64."""


@dataclass(frozen=True)
class Rollouts:
    """A batch of simulated trajectories."""

    initial_state: np.ndarray
    """[B, nstate] full-physics state each trajectory started from."""
    state: np.ndarray
    """[B, T, nstate] state after each step."""
    sensordata: np.ndarray
    """[B, T, nsensor] sensors computed during each step (they describe the state before it)."""
    control: np.ndarray
    """[B, T, nu] controls applied at each step."""

    @property
    def batch_shape(self) -> tuple[int, int]:
        """(B, T)."""
        return self.state.shape[0], self.state.shape[1]

    def features(self, scene: CompiledScene) -> Features:
        """The feature vocabulary of these trajectories (sensors recomputed first when they were saved before the
        scene's sensors changed)."""
        own = self if self.sensordata.shape[-1] == scene.model.nsensordata else self.resensed(scene)
        return compute_features(scene, own.initial_state, own.state, own.sensordata, own.control)

    def states_with_initial(self, index: int = 0) -> np.ndarray:
        """[T + 1, nstate] states of trajectory `index`, initial state first (for rendering)."""
        return np.concatenate([self.initial_state[index][None], self.state[index]], axis=0)

    def resensed(self, scene: CompiledScene) -> Rollouts:
        """These states and controls with the scene's sensors recomputed (one forward pass per sample), e.g. for
        a file saved before the scene gained sensors; the step's own up to rounding for float64 states."""
        model, data = scene.model, mujoco.MjData(scene.model)
        before = np.concatenate([self.initial_state[:, None], self.state[:, :-1]], axis=1).astype(float)
        sensordata = np.empty((*before.shape[:2], model.nsensordata))
        for b, t in np.ndindex(*before.shape[:2]):  # loading a file, not a hot path
            mujoco.mj_setState(model, data, before[b, t], mujoco.mjtState.mjSTATE_FULLPHYSICS)
            data.ctrl[:] = self.control[b, t]
            mujoco.mj_forward(model, data)
            sensordata[b, t] = data.sensordata
        return Rollouts(self.initial_state, self.state, sensordata, self.control)

    def save(self, path: str | Path) -> None:
        """Write to a compressed .npz file."""
        np.savez_compressed(path, initial_state=self.initial_state, state=self.state,
                            sensordata=self.sensordata, control=self.control)

    @classmethod
    def in_sequence(cls, parts: Sequence[Rollouts]) -> Rollouts:
        """Consecutive segments [B, T_i, ·] of the same motions -> [B, ΣT_i, ·] from the first one's initial state."""
        return cls(parts[0].initial_state, *(np.concatenate([getattr(part, name) for part in parts], axis=1)
                                             for name in ("state", "sensordata", "control")))

    @classmethod
    def stacked(cls, parts: Sequence[Rollouts]) -> Rollouts:
        """Batches [B_i, T, ·] of motions of one length -> one batch [ΣB_i, T, ·]."""
        return cls(*(np.concatenate([getattr(part, name) for part in parts])
                     for name in ("initial_state", "state", "sensordata", "control")))

    @classmethod
    def load(cls, path: str | Path) -> Rollouts:
        """Read a file written by `save`, or the trajectory.npz in a saved trajectory folder; a UserError if it is
        not one."""
        path = Path(path)
        if (path / "trajectory.npz").is_file():
            path = path / "trajectory.npz"
        try:
            with np.load(path) as data:
                return cls(*(np.asarray(data[k]) for k in ("initial_state", "state", "sensordata", "control")))
        except (OSError, KeyError, ValueError) as error:
            raise UserError(f"{path} is not a saved trajectory file (.npz from rewardloop): {error}") from None


class Simulator:
    """Batched, multi-threaded stepping of one compiled scene. Use as a context manager."""

    def __init__(self, scene: CompiledScene, *, nthread: int | None = None):
        self.scene = scene
        self.model = scene.model
        self.nthread = nthread or (os.cpu_count() or 1)
        self._data = [mujoco.MjData(self.model) for _ in range(self.nthread)]
        self._pool = mujoco.rollout.Rollout(nthread=self.nthread if self.nthread > 1 else 0)
        self._solo = [mujoco.rollout.Rollout(nthread=0) for _ in range(self.nthread)] if self.nthread > 1 else []
        self._groups = ThreadPoolExecutor(self.nthread, thread_name_prefix="rollout") if self.nthread > 1 else None

    def __enter__(self) -> Simulator:
        self._pool.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Shut the thread pools down."""
        self._pool.close()
        for solo in self._solo:
            solo.close()
        if self._groups is not None:
            self._groups.shutdown()

    def _initial(self, initial_state: np.ndarray | None, batch: int) -> np.ndarray:
        """[B, nstate] initial states: the scene's standing state, one shared state, or one per trajectory."""
        state = self.scene.initial_state if initial_state is None else np.asarray(initial_state, float)
        state = np.broadcast_to(state, (batch, state.shape[-1]))
        if state.shape[1] != self.scene.nstate:
            raise UserError(f"initial state has {state.shape[1]} entries, the scene needs {self.scene.nstate}")
        return np.array(state, order="C")  # a writable copy, also of a broadcast single state

    def open_loop(self, control: np.ndarray, initial_state: np.ndarray | None = None) -> Rollouts:
        """Roll out control sequences.

        Args:
          control: [B, T, nu] controls per step.
          initial_state: [nstate] or [B, nstate]; the scene's standing state by default.
        """
        control = np.asarray(control, dtype=float)
        if control.ndim != 3 or control.shape[2] != self.model.nu:
            raise UserError(f"controls must have shape [B, T, {self.model.nu}], got {control.shape}")
        initial = self._initial(initial_state, control.shape[0])
        state, sensordata = self._pool.rollout(self.model, self._data, initial, np.ascontiguousarray(control),
                                               control_spec=mujoco.mjtState.mjSTATE_CTRL)
        return Rollouts(initial, state, sensordata, control)

    def closed_loop(self, policy: Feedback, *, batch: int, nstep: int, chunk: int,
                    initial_state: np.ndarray | None = None, sensed: np.ndarray | None = None) -> Rollouts:
        """Step a batch in chunks, asking `policy` for the next chunk's controls from the current state.

        A muscle controller needing feedback every few milliseconds uses a chunk of a few steps. A batch of at
        least two rows per thread is pipelined, one group of rows per thread. `sensed` [B, nsensor] is what the
        policy sees first (the last sensors of a motion this one continues); by default the initial state's own.
        """
        if chunk < 1 or nstep < 1:
            raise UserError("nstep and chunk must be positive")
        initial = self._initial(initial_state, batch)
        sensed = self.sense(initial) if sensed is None else np.asarray(sensed, dtype=float)
        if self._groups is None or batch < 2 * self.nthread:
            step = self._step_into(self._pool, self._data)
            parts = [self._chunks(policy, initial, sensed, slice(0, batch), nstep, chunk, step)]
        else:
            bounds = np.linspace(0, batch, self.nthread + 1).round().astype(int)
            jobs = [self._groups.submit(self._chunks, policy, initial[lo:hi], sensed[lo:hi], slice(lo, hi), nstep,
                                        chunk, self._step_into(self._solo[group], [self._data[group]]))
                    for group, (lo, hi) in enumerate(pairwise(bounds))]
            parts = [job.result() for job in jobs]
        state, sensordata, control = (np.concatenate(p, axis=0) for p in zip(*parts, strict=True))
        return Rollouts(initial, state, sensordata, control)

    def sense(self, states: np.ndarray) -> np.ndarray:
        """[b, nstate] states -> [b, nsensor] their sensor readings (one forward pass per distinct state)."""
        data = mujoco.MjData(self.model)
        unique, inverse = np.unique(states, axis=0, return_inverse=True)
        readings = np.empty((len(unique), self.model.nsensordata))
        for row, state in enumerate(unique):
            mujoco.mj_setState(self.model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            mujoco.mj_forward(self.model, data)
            readings[row] = data.sensordata
        return readings[inverse.ravel()]

    def _step_into(self, rollout: mujoco.rollout.Rollout, data: list[mujoco.MjData]) -> Step:
        """A `Step` on `rollout`'s threads and `data`, without the wrapper's checks and copies (the chunk loop
        hands it arrays of the right shapes)."""

        def step(initial: np.ndarray, control: np.ndarray, state: np.ndarray, sensordata: np.ndarray) -> None:
            rollout.rollout([self.model] * len(initial), data, initial, control, nstep=control.shape[1],
                            control_spec=mujoco.mjtState.mjSTATE_CTRL, skip_checks=True, state=state,
                            sensordata=sensordata)
        return step

    def _chunks(self, policy: Feedback, now: np.ndarray, sensed: np.ndarray, rows: slice, nstep: int, chunk: int,
                step: Step) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The chunk loop for `rows` from [b, nstate] `now`: -> [b, T, nstate], [b, T, nsensor], [b, T, nu].

        Each chunk writes into its own contiguous block of [blocks, b, chunk, ·] arrays, put in time order once
        at the end; the last block may run past `nstep` and is cut.
        """
        blocks, rowcount = -(-nstep // chunk), now.shape[0]
        state = np.empty((blocks, rowcount, chunk, self.scene.nstate))
        sensordata = np.empty((blocks, rowcount, chunk, self.model.nsensordata))
        control = np.empty((blocks, rowcount, chunk, self.model.nu))
        for block in range(blocks):
            given = np.asarray(policy(now, sensed, block * chunk, rows), dtype=float)
            if given.ndim != 3 or given.shape[1] < min(chunk, nstep - block * chunk):
                raise UserError(f"a closed-loop policy returned controls of shape {given.shape} for a chunk of "
                                f"{min(chunk, nstep - block * chunk)} steps")
            if given.shape[1] < chunk:  # a short last chunk: its last control holds over the steps cut at the end
                given = given[:, np.minimum(np.arange(chunk), given.shape[1] - 1)]
            control[block] = given[:, :chunk]
            step(now, control[block], state[block], sensordata[block])
            now, sensed = np.ascontiguousarray(state[block, :, -1]), sensordata[block, :, -1]

        def in_time_order(blocked: np.ndarray) -> np.ndarray:
            return blocked.transpose(1, 0, 2, 3).reshape(rowcount, blocks * chunk, -1)[:, :nstep]
        return in_time_order(state), in_time_order(sensordata), in_time_order(control)


def zero_controls(scene: CompiledScene, batch: int, nstep: int) -> np.ndarray:
    """[B, T, nu] zeros clipped into the control range (no excitation for muscles)."""
    low, high = scene.ctrl_bounds()
    return np.broadcast_to(np.clip(0.0, low, high), (batch, nstep, scene.model.nu)).copy()


def random_controls(scene: CompiledScene, batch: int, nstep: int, *, seed: int,
                    smoothing_s: float = 0.05) -> np.ndarray:
    """[B, T, nu] smooth random controls within the control range, reproducible from `seed`."""
    low, high = scene.ctrl_bounds()
    rng = np.random.default_rng(seed)
    noise = rng.uniform(-1.0, 1.0, size=(batch, nstep, scene.model.nu))
    alpha = min(1.0, scene.dt / max(smoothing_s, 1e-9))
    smooth = np.empty_like(noise)
    smooth[:, 0] = noise[:, 0]
    for t in range(1, nstep):  # exponential filter over time, vectorized over batch and actuators
        smooth[:, t] = (1 - alpha) * smooth[:, t - 1] + alpha * noise[:, t]
    smooth /= max(np.abs(smooth).max(), 1e-9)
    return low + (smooth + 1.0) * 0.5 * (high - low)
