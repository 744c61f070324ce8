"""The sandbox worker: a separate process that evaluates one untrusted reward program, many times.

Started by `rewardloop.reward.sandbox` with an explicit minimal environment in a temporary directory. Before
it reads any program it limits itself (address space, CPU time, file size 0, no child processes, no new
network namespace access where the kernel allows unsharing), removes process-spawning functions from `os`,
and keeps a private copy of its reply pipe. Protocol: one JSON object per line on stdin; one JSON reply per
line on the private pipe. Arrays travel through shared memory files under /dev/shm:

  {"op": "load", "source": str, "terms": [names]}                                  -> {"ok": true}
  {"op": "eval", "input": shm, "output": shm, "batch": [B, T], "scalars": {...},
   "layout": [[name, byte_offset, shape], ...]}                                     -> {"ok": true, "cpu": s}
  any failure                                                                       -> {"ok": false, "error": str}
"""

from __future__ import annotations

import json
import mmap
import os
import resource
import sys
from typing import Any

import numpy as np

from rewardloop.reward.runtime import FeatureView, RewardError, compile_program, evaluate_terms

CLONE_NEWNET = 0x40000000


def _limit(memory_mb: int, cpu_hard_s: int) -> None:
    """Resource limits applied to this process before any program is read."""
    size = _virtual_size()
    resource.setrlimit(resource.RLIMIT_AS, (size + memory_mb * 2**20, size + memory_mb * 2**20))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_hard_s, cpu_hard_s))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))  # root ignores this; _disarm covers that case


def _virtual_size() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _disarm() -> None:
    """Drop the network (where allowed) and remove every way to start a process from reachable modules."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)
    except (OSError, AttributeError):
        pass
    for name in ("fork", "forkpty", "system", "popen", "execv", "execve", "execl", "execle", "execlp", "execvp",
                 "execvpe", "spawnv", "spawnve", "spawnl", "spawnle", "posix_spawn", "posix_spawnp", "kill",
                 "killpg", "remove", "unlink", "rmdir", "rename", "replace", "chmod", "chown"):
        if hasattr(os, name):
            setattr(os, name, None)
    sys.modules.pop("subprocess", None)


class _Mapped:
    """Shared memory files mapped by name, reused across calls."""

    def __init__(self) -> None:
        self.maps: dict[tuple[str, bool], mmap.mmap] = {}

    def get(self, name: str, *, writable: bool) -> mmap.mmap:
        key = (name, writable)
        if key not in self.maps:
            for old in [k for k in self.maps if k[1] == writable]:
                self.maps.pop(old).close()
            fd = os.open(f"/dev/shm/{os.path.basename(name)}", os.O_RDWR if writable else os.O_RDONLY)
            try:
                access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
                self.maps[key] = mmap.mmap(fd, 0, access=access)
            finally:
                os.close(fd)
        return self.maps[key]


class Worker:
    """The command loop."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] | None = None
        self.terms: tuple[str, ...] = ()
        self.mapped = _Mapped()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "load":
            _arm_cpu(float(request.get("cpu_s", 10.0)))
            self.namespace = compile_program(request["source"])
            self.terms = tuple(request["terms"])
            return {"ok": True}
        if request.get("op") == "eval" and self.namespace is not None:
            self._evaluate(request)
            return {"ok": True, "cpu": _cpu_seconds()}
        return {"ok": False, "error": "protocol error: unknown or out-of-order request"}

    def _evaluate(self, request: dict[str, Any]) -> None:
        assert self.namespace is not None
        batch = (int(request["batch"][0]), int(request["batch"][1]))
        source = self.mapped.get(request["input"], writable=False)
        arrays = {name: np.ndarray(tuple(shape), dtype=np.float64, buffer=source, offset=offset)
                  for name, offset, shape in request["layout"]}
        view = FeatureView(arrays, request["scalars"])
        _arm_cpu(float(request.get("cpu_s", 10.0)))
        terms = evaluate_terms(self.namespace, self.terms, view, batch)
        out = np.ndarray((len(self.terms), *batch), dtype=np.float64,
                         buffer=self.mapped.get(request["output"], writable=True))
        for i, name in enumerate(self.terms):
            out[i] = terms[name]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _arm_cpu(seconds: float) -> None:
    """Let this call use at most `seconds` more CPU time (SIGXCPU ends the process past it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = min(hard, int(_cpu_seconds() + seconds) + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def main() -> None:
    memory_mb, cpu_hard_s = int(sys.argv[1]), int(sys.argv[2])
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.setrecursionlimit(300)
    _limit(memory_mb, cpu_hard_s)
    _disarm()
    worker = Worker()
    for line in sys.stdin:
        try:
            answer = worker.handle(json.loads(line))
        except RewardError as error:
            answer = {"ok": False, "error": str(error)}
        except MemoryError:
            answer = {"ok": False, "error": "the program ran out of memory; work on the [B, T] feature arrays only"}
        except Exception as error:  # report anything else as a failed call; the caller decides
            answer = {"ok": False, "error": f"{type(error).__name__}: {str(error)[:300]}"}
        reply.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
