"""SandboxedReward: evaluate an untrusted reward program in a long-lived, resource-limited worker process.

The worker (`rewardloop.reward.worker`) is a fresh interpreter started with subprocess (not a fork of this
process and its memory), in a temporary directory, with an explicit minimal environment (no API keys), its
own session (so it and anything it might start are killed together), limited address space, CPU time and
file size, and no way to start processes. Features go to it through one shared memory block and the terms
come back through another, so a call costs a few hundred microseconds more than in-process evaluation.
A worker that dies, hangs past the wall-clock timeout or answers nonsense is killed and replaced on the
next call; the caller gets a RewardError, never a crash.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import weakref
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.reward.base import RewardEval
from rewardloop.reward.program import RewardProgram
from rewardloop.reward.runtime import RewardError, check_term_output
from rewardloop.sim.features import Features

__all__ = ["RewardError", "SandboxedReward"]

_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = (f"import sys; sys.path.insert(0, {_ROOT!r}); "
         "from rewardloop.reward.worker import main; main()")
_MAX_REPLY = 65_536
_CPU_HARD_S = 3600
"""Total CPU seconds a worker may use before it is replaced."""


def _minimal_env(home: str) -> dict[str, str]:
    """The worker's whole environment: no API keys, no proxies, single-threaded BLAS."""
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}


class _Process:
    """One worker process and its pipes; killed as a whole session."""

    def __init__(self, *, memory_mb: int, directory: str):
        self.popen = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, str(memory_mb), str(_CPU_HARD_S)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=directory,
            env=_minimal_env(directory), start_new_session=True, close_fds=True)
        self.selector = selectors.DefaultSelector()
        assert self.popen.stdout is not None
        self.selector.register(self.popen.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.cpu = 0.0

    def request(self, message: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply; RuntimeError on death, timeout or garbage."""
        assert self.popen.stdin is not None and self.popen.stdout is not None
        try:
            self.popen.stdin.write(json.dumps(message).encode() + b"\n")
            self.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            raise RuntimeError("the worker process died") from None
        while b"\n" not in self.buffer:
            if not self.selector.select(timeout_s):
                raise RuntimeError(f"the program took longer than {timeout_s:g} s (wall clock); make terms cheap "
                                   "vectorized NumPy with no long loops")
            chunk = os.read(self.popen.stdout.fileno(), _MAX_REPLY)
            if not chunk:
                raise RuntimeError(self._death())
            self.buffer += chunk
            if len(self.buffer) > _MAX_REPLY:
                raise RuntimeError("the worker sent an oversized reply")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            raise RuntimeError("the worker sent an unreadable reply") from None
        if not isinstance(reply, dict):
            raise RuntimeError("the worker sent an unreadable reply")
        return reply

    def _death(self) -> str:
        try:
            code = self.popen.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return "the worker closed its pipe"
        if code == -signal.SIGXCPU:
            return "the program used too much CPU time; make terms cheap vectorized NumPy with no long loops"
        if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT):
            return f"the worker process was killed (signal {-code}), likely out of memory; use less memory"
        return f"the worker process exited (code {code})"

    def kill(self) -> None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.popen.kill()
        self.popen.wait()
        self.selector.close()
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                stream.close()


class _Block:
    """A growable shared memory block owned by this process."""

    def __init__(self) -> None:
        self.memory: shared_memory.SharedMemory | None = None

    def ensure(self, nbytes: int) -> shared_memory.SharedMemory:
        if self.memory is None or self.memory.size < nbytes:
            self.release()
            self.memory = shared_memory.SharedMemory(create=True, size=max(nbytes, 1 << 16) * 2)
        return self.memory

    def release(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory.unlink()
            self.memory = None


def _cleanup(state: dict[str, Any]) -> None:
    """Kill the worker, free the shared memory, remove the directory (also run at garbage collection)."""
    process = state.pop("process", None)
    if process is not None:
        process.kill()
    for block in state.get("blocks", ()):
        block.release()
    shutil.rmtree(state.get("directory", ""), ignore_errors=True)


class SandboxedReward:
    """A RewardFunction backed by a worker process. Use as a context manager or call `close()`."""

    def __init__(self, program: RewardProgram, *, timeout_s: float = 10.0, memory_mb: int = 1024,
                 cpu_s: float = 10.0):
        """
        Args:
          program: a validated program (untrusted code is fine: it only ever runs in the worker).
          timeout_s: wall-clock seconds one call may take before the worker is killed.
          memory_mb: address space the program may add to the worker's (MiB).
          cpu_s: CPU seconds one call may use before the worker is stopped.
        """
        self.program = program
        self.timeout_s, self.memory_mb, self.cpu_s = timeout_s, memory_mb, cpu_s
        self._input, self._output = _Block(), _Block()
        self._state: dict[str, Any] = {"blocks": (self._input, self._output),
                                       "directory": tempfile.mkdtemp(prefix="rewardloop-sandbox-")}
        self._finalizer = weakref.finalize(self, _cleanup, self._state)
        self._process()

    def __enter__(self) -> SandboxedReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker and free its resources."""
        self._finalizer()

    @property
    def pid(self) -> int | None:
        """The current worker's process id (None when none is running)."""
        process = self._state.get("process")
        return process.popen.pid if process is not None else None

    def __call__(self, features: Features) -> RewardEval:
        batch = tuple(features.batch_shape)
        layout, nbytes = self._layout(features)
        source = self._input.ensure(nbytes)
        for name, offset, shape in layout:
            np.ndarray(shape, dtype=np.float64, buffer=source.buf, offset=offset)[...] = features[name]
        terms = self.program.term_names
        out = self._output.ensure(len(terms) * batch[0] * batch[1] * 8)
        self._request({"op": "eval", "input": source.name, "output": out.name, "batch": list(batch),
                       "scalars": features.scalars, "layout": layout, "cpu_s": self.cpu_s})
        values = np.ndarray((len(terms), *batch), dtype=np.float64, buffer=out.buf).copy()
        checked = {name: check_term_output(name, values[i], batch) for i, name in enumerate(terms)}  # type: ignore[arg-type]
        return RewardEval(terms=checked, weights=dict(self.program.weights))

    def _layout(self, features: Features) -> tuple[list[tuple[str, int, tuple[int, ...]]], int]:
        """[(name, byte offset, shape)] of the features the program reads, and the total size."""
        layout, offset = [], 0
        for name in self.program.reads:
            if name in features:
                shape = tuple(int(n) for n in np.shape(features[name]))
                layout.append((name, offset, shape))
                offset += 8 * int(np.prod(shape))
        return layout, offset

    def _process(self) -> _Process:
        process = self._state.get("process")
        if process is not None and process.popen.poll() is None and process.cpu < _CPU_HARD_S / 2:
            return process
        if process is not None:
            process.kill()
        process = _Process(memory_mb=self.memory_mb, directory=self._state["directory"])
        self._state["process"] = process
        load = {"op": "load", "source": self.program.source, "terms": list(self.program.term_names),
                "cpu_s": self.cpu_s}
        self._request(load, process=process)
        return process

    def _request(self, message: dict[str, Any], process: _Process | None = None) -> dict[str, Any]:
        """One round trip; on any worker failure the worker is killed (replaced next call) and RewardError."""
        process = process or self._process()
        try:
            reply = process.request(message, timeout_s=self.timeout_s)
        except RuntimeError as error:
            process.kill()
            self._state.pop("process", None)
            raise RewardError(f"reward program {self.program.hash}: {error}") from None
        if not reply.get("ok"):
            raise RewardError(f"reward program {self.program.hash}: {str(reply.get('error'))[:1000]}")
        process.cpu = float(reply.get("cpu", 0.0))
        return reply
