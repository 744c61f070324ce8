"""Executors run candidate jobs in parallel: local worker processes by default, Ray tasks on request.

A job function is a module-level (picklable) function `function(payload, directory, report) -> dict` that
writes its files into `directory` and returns a JSON-able summary; `report(dict)` sends progress. Both
executors answer every job with a `JobOutcome` — a worker that crashes, is killed or times out gives a failed
outcome, never an exception — and call `on_done` in the calling process as each job ends, so the caller can
record finished work while other jobs still run.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol, cast

from rewardloop.errors import UserError
from rewardloop.loop.store import write_atomic

JobFunction = Callable[[Any, Path, Callable[[dict[str, Any]], None]], dict[str, Any]]
"""(payload, output directory, report progress) -> JSON-able summary. Must be a module-level function."""
ProgressHandler = Callable[[Any, dict[str, Any]], None]
"""(job key, progress fields) -> None; called in the calling process."""


@dataclass(frozen=True)
class Job:
    """One unit of work."""

    key: Any
    """Identifies the job to the caller, e.g. (iteration, candidate)."""
    directory: Path
    """Where the job's files end up."""
    payload: Any
    """Picklable input of the job function."""


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended."""

    key: Any
    """The job's key."""
    ok: bool
    """True when the function returned."""
    value: dict[str, Any] | None
    """The function's summary when ok."""
    error: str | None
    """Why it failed (an exception, a signal, a timeout) when not ok; one line."""
    wall_s: float
    """Seconds from start to end."""


DoneHandler = Callable[[JobOutcome], None]


class Executor(Protocol):
    """Runs jobs and reports each outcome as it arrives."""

    def run(self, function: JobFunction, jobs: Sequence[Job], *, on_done: DoneHandler | None = None,
            on_progress: ProgressHandler | None = None) -> list[JobOutcome]:
        """Run every job; outcomes in the order of `jobs`."""
        ...

    def close(self) -> None: ...


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (a timeout, or the parent's death) unwinds the job so its cleanup runs (sandbox, temp files)."""
    raise SystemExit(128 + signum)


def _die_with_parent(parent: int) -> None:
    """Get SIGTERM when the parent process dies, so no orphan writes into a folder a resumed run uses.

    Linux: prctl(PR_SET_PDEATHSIG); everywhere: a thread that notices the parent change (re-parenting).
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # the watcher thread below still works
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _child(function: JobFunction, job: Job, connection: Connection, parent: int) -> None:
    """Body of a local worker process: run the job, send progress and the outcome through the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops us
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    _die_with_parent(parent)
    start = time.monotonic()
    try:
        value = function(job.payload, job.directory, lambda fields: connection.send(("progress", fields)))
        connection.send(("done", JobOutcome(job.key, True, value, None, time.monotonic() - start)))
    except Exception as error:  # any failure of the job becomes a failed outcome
        message = f"{type(error).__name__}: {error}".splitlines()[0]
        connection.send(("done", JobOutcome(job.key, False, None, message, time.monotonic() - start)))
    finally:
        connection.close()


@dataclass
class _Running:
    job: Job
    process: multiprocessing.process.BaseProcess
    start: float


class LocalExecutor:
    """Jobs in fresh local worker processes (spawned), at most `workers` at once."""

    def __init__(self, *, workers: int = 2, timeout_s: float | None = None):
        if workers < 1:
            raise UserError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.timeout_s = timeout_s
        """A job running longer than this is killed and fails (s); None waits forever."""
        self._context = multiprocessing.get_context("spawn")

    def run(self, function: JobFunction, jobs: Sequence[Job], *, on_done: DoneHandler | None = None,
            on_progress: ProgressHandler | None = None) -> list[JobOutcome]:
        """Run every job; outcomes in the order of `jobs`.

        If `on_done` raises, no further job starts, the running ones finish (each still handed to `on_done`),
        then the first such exception is raised. Anything else (Ctrl-C) stops the running workers at once.
        """
        pending, running = deque(jobs), dict[Connection, _Running]()
        outcomes: dict[Any, JobOutcome] = {}
        failures: list[Exception] = []

        def finish(outcome: JobOutcome) -> None:
            outcomes[outcome.key] = outcome
            try:
                if on_done:
                    on_done(outcome)
            except Exception as error:  # handed back once the running jobs are done
                failures.append(error)
                pending.clear()

        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    connection, entry = self._start(function, pending.popleft())
                    running[connection] = entry
                for ready in wait(list(running), timeout=1.0):
                    outcome = self._receive(cast(Connection, ready), running, on_progress)
                    if outcome is not None:
                        finish(outcome)
                for outcome in self._expire(running):
                    finish(outcome)
        finally:
            for entry in running.values():
                _stop(entry.process)
        if failures:
            raise failures[0]
        return [outcomes[job.key] for job in jobs]

    def _start(self, function: JobFunction, job: Job) -> tuple[Connection, _Running]:
        receiver, sender = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_child, args=(function, job, sender, os.getpid()),
                                        daemon=False)
        process.start()
        sender.close()  # the child holds the only sending end: EOF here means the child is gone
        return receiver, _Running(job, process, time.monotonic())

    def _receive(self, connection: Connection, running: dict[Connection, _Running],
                 on_progress: ProgressHandler | None) -> JobOutcome | None:
        """Handle one message or an EOF; the outcome when the job ended."""
        entry = running[connection]
        try:
            kind, data = connection.recv()
        except (EOFError, OSError):
            kind, data = "died", None
        if kind == "progress":
            if on_progress:
                on_progress(entry.job.key, data)
            return None
        del running[connection]
        connection.close()
        entry.process.join(timeout=10)
        if kind == "done":
            return data
        return JobOutcome(entry.job.key, False, None, _death(entry.process.exitcode), time.monotonic() - entry.start)

    def _expire(self, running: dict[Connection, _Running]) -> list[JobOutcome]:
        """Kill jobs past the time limit; their failed outcomes."""
        if self.timeout_s is None:
            return []
        now, expired = time.monotonic(), []
        for connection, entry in list(running.items()):
            if now - entry.start > self.timeout_s:
                _stop(entry.process)
                del running[connection]
                connection.close()
                expired.append(JobOutcome(entry.job.key, False, None, f"timed out after {self.timeout_s:g} s",
                                          now - entry.start))
        return expired

    def close(self) -> None:
        """Nothing to release: workers live only as long as their job."""


def _stop(process: multiprocessing.process.BaseProcess) -> None:
    if process.is_alive():
        process.terminate()
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()


def _death(exitcode: int | None) -> str:
    """Why a worker ended without an answer, from its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"worker process was killed by {name}"
    return f"worker process exited with code {exitcode} before answering"


def _ray_job(function: JobFunction, payload: Any) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Body of a Ray task: run the job in a scratch directory and return its summary and its files."""
    scratch = Path(tempfile.mkdtemp(prefix="rewardloop-"))
    try:
        value = function(payload, scratch, lambda fields: None)
        files = {str(p.relative_to(scratch)): p.read_bytes() for p in sorted(scratch.rglob("*")) if p.is_file()}
        return value, files
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class RayExecutor:
    """Jobs as Ray tasks, on an existing cluster (`address`) or a local Ray instance started here.

    Files a job writes come back with its result and are written into the job's directory on this machine,
    so a cluster without a shared file system gives the same run directory as the local executor.
    """

    def __init__(self, *, address: str | None = None, num_cpus: int = 2, timeout_s: float | None = None):
        import ray

        self.timeout_s = timeout_s
        """Jobs of one `run` still unfinished this long after it began are cancelled and fail (s)."""
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                if address:
                    ray.init(address=address, log_to_driver=False)
                else:
                    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as error:
                raise UserError(f"cannot start or reach Ray at {address or 'a local instance'}: "
                                f"{str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
        self._task = ray.remote(num_cpus=1, max_retries=0)(_ray_job)

    def run(self, function: JobFunction, jobs: Sequence[Job], *, on_done: DoneHandler | None = None,
            on_progress: ProgressHandler | None = None) -> list[JobOutcome]:
        import ray

        start = time.monotonic()
        waiting = {self._task.remote(function, job.payload): job for job in jobs}
        outcomes: dict[Any, JobOutcome] = {}
        while waiting:
            done, _ = ray.wait(list(waiting), num_returns=1, timeout=1.0)
            for reference in done:
                outcome = self._collect(reference, waiting.pop(reference), start)
                outcomes[outcome.key] = outcome
                if on_done:
                    on_done(outcome)
            if self.timeout_s is not None and time.monotonic() - start > self.timeout_s:
                for reference, job in list(waiting.items()):
                    ray.cancel(reference, force=True)
                    outcome = JobOutcome(job.key, False, None, f"timed out after {self.timeout_s:g} s",
                                         time.monotonic() - start)
                    outcomes[job.key] = outcome
                    del waiting[reference]
                    if on_done:
                        on_done(outcome)
        return [outcomes[job.key] for job in jobs]

    def _collect(self, reference: Any, job: Job, start: float) -> JobOutcome:
        import ray

        try:
            value, files = ray.get(reference)
        except ray.exceptions.RayError as error:
            message = str(error).strip().splitlines()
            return JobOutcome(job.key, False, None, f"{type(error).__name__}: {message[-1] if message else ''}",
                              time.monotonic() - start)
        for relative, data in files.items():
            write_atomic(job.directory / relative, data)
        return JobOutcome(job.key, True, value, None, time.monotonic() - start)

    def close(self) -> None:
        """Shut down the Ray instance if this executor started it."""
        import ray

        if self._owns and ray.is_initialized():
            ray.shutdown()


def make_executor(kind: str, *, workers: int = 2, address: str | None = None,
                  timeout_s: float | None = None) -> Executor:
    """An executor by name: 'local' or 'ray'."""
    if kind == "local":
        return LocalExecutor(workers=workers, timeout_s=timeout_s)
    if kind == "ray":
        return RayExecutor(address=address, num_cpus=workers, timeout_s=timeout_s)
    from rewardloop.errors import unknown_name

    raise unknown_name("executor", kind, EXECUTORS)


EXECUTORS = {"local": LocalExecutor, "ray": RayExecutor}
"""Executors by name."""
