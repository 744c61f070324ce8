"""The run directory: every file a run writes, written atomically, with an append-only event log.

Layout of one run (all JSON is UTF-8, indented):

    RUN/
      config.json            {"format": FORMAT_VERSION, "config": RunConfig}
      task.json              the Task
      events.jsonl           append-only log, one JSON object a line: {"time", "event", ...}
      calls.jsonl            append-only journal of paid model calls (tokens, cost), read back on resume
      result.json            written when the run stops: stop reason, best candidate, what was not understood
      lock                   held (an OS advisory lock) by the one process running the loop; it records that
                             process's pid, host and start time for the refusal another run or resume prints
      report.html            written by `rewardloop report`
      iterations/003/
        proposals.json       the designer's answers for this iteration (written before anything runs)
        iteration.json       IterationRecord: the selection and why (written last: the iteration is done)
        candidates/01/
          program.py         the candidate's reward program
          check.json         the checker's report
          trajectory/        trajectory.npz + trajectory.json (the executed motion)
          video.mp4  sheet.png
          rollout.json       what the worker measured (metrics, return, term statistics, timings); the
                             worker's last write, so a simulated candidate is never simulated again
          critique.json      the critic's verdict
          candidate.json     CandidateRecord (written last: the candidate is done)

A file's presence means its step finished: every write goes to a temporary file that is renamed into place
(`os.replace` is atomic on POSIX), so a crash, kill or Ctrl-C never leaves a half-written record, and resume
redoes only steps whose record is missing. One process at a time runs a run's loop (`RunStore.lock`): a second
`rewardloop run` or `resume` on it is refused, so no candidate is evaluated, nor paid for, twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardloop.errors import UserError
from rewardloop.loop.records import CandidateRecord, IterationRecord

FORMAT_VERSION = 1
"""Version of the run directory layout; a run of another version cannot be resumed or reported."""
LOCK_FILE = "lock"
"""The run's lock file: locked (flock) by the process running the loop, holding its LockHolder record as JSON."""


def write_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return path


def write_json(path: Path, data: Any) -> Path:
    """Write JSON atomically."""
    return write_atomic(path, (json.dumps(data, indent=1, sort_keys=False) + "\n").encode())


def read_json(path: Path) -> Any:
    """Read a JSON file; a UserError naming the file if it is missing or malformed."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise UserError(f"cannot read {path}: {error}") from None


@dataclass(frozen=True)
class RunSummary:
    """One line of `rewardloop runs`."""

    path: Path
    """The run directory."""
    task: str
    """Task name and description."""
    body: str
    iterations_done: int
    """Iterations with a finished record."""
    iterations: int
    """Iterations configured."""
    stop_reason: str | None
    """Why it stopped; None while running or interrupted."""
    best_score: float | None
    """The best candidate's task metric."""
    cost_usd: float
    """Model cost so far (USD)."""


@dataclass(frozen=True)
class LockHolder:
    """The process that holds a run's lock, as recorded in its lock file."""

    pid: int
    """Its process id."""
    host: str
    """The machine it runs on (socket.gethostname())."""
    started: str
    """When it took the lock (local time, 'YYYY-mm-dd HH:MM:SS')."""

    def describe(self) -> str:
        return f"process {self.pid} on {self.host} (started {self.started})"


class RunStore:
    """One run's directory. Create with `RunStore.create`, reopen with `RunStore.open`."""

    def __init__(self, path: Path, config: dict[str, Any], task: dict[str, Any]):
        self.path = path
        self.config = config
        """The run configuration as stored (RunConfig.to_dict())."""
        self.task = task
        """The task as stored (Task.to_dict())."""
        self._lock_fd: int | None = None
        """The open lock file while this store holds the run's lock."""
        self._lock_depth = 0
        """Nested `lock()` blocks of this store (the lock is taken by the first, released by the last)."""

    @classmethod
    def create(cls, root: Path | str, *, config: dict[str, Any], task: dict[str, Any], name: str) -> RunStore:
        """A new run directory under `root`, named after the time and `name`."""
        root = Path(root)
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{_slug(name)}"
        path, n = root / stem, 1
        while path.exists():
            n += 1
            path = root / f"{stem}-{n}"
        path.mkdir(parents=True)
        write_json(path / "task.json", task)
        write_json(path / "config.json", {"format": FORMAT_VERSION, "config": config})  # last: the run exists
        return cls(path, config, task)

    @classmethod
    def open(cls, path: Path | str) -> RunStore:
        """An existing run; a one-line UserError if it is not a run or has another format version."""
        path = Path(path)
        if not (path / "config.json").is_file():
            raise UserError(f"{path} is not a run directory (no config.json)")
        stored = read_json(path / "config.json")
        version = stored.get("format") if isinstance(stored, dict) else None
        if version != FORMAT_VERSION:
            raise UserError(f"{path} was written by another version of rewardloop (run format {version}, "
                            f"this version reads format {FORMAT_VERSION}); start a new run")
        return cls(path, stored["config"], read_json(path / "task.json"))

    # ---- the lock ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the run for this process; a one-line UserError naming the process that holds it otherwise.

        An OS advisory lock (flock) on RUN/lock, so the OS releases it when its holder exits or is killed: a lock
        left by a dead process never blocks. Nested blocks of one store share the lock.
        """
        if self._lock_depth == 0:
            self._lock_fd = _take_lock(self.path)
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0 and self._lock_fd is not None:
                _release_lock(self._lock_fd)
                self._lock_fd = None

    def lock_holder(self) -> LockHolder | None:
        """The holder recorded in the lock file (its last holder's when nobody holds it now); None if none."""
        return _read_holder(self.path / LOCK_FILE)

    # ---- files -------------------------------------------------------------------------------------------

    def iteration_dir(self, iteration: int) -> Path:
        return self.path / "iterations" / f"{iteration:03d}"

    def candidate_dir(self, iteration: int, index: int) -> Path:
        return self.iteration_dir(iteration) / "candidates" / f"{index:02d}"

    def write_json(self, relative: Path | str, data: Any) -> Path:
        """Write a JSON file inside the run, atomically."""
        return write_json(self.path / relative, data)

    # ---- records -----------------------------------------------------------------------------------------

    def save_candidate(self, record: CandidateRecord) -> Path:
        """Mark a candidate done."""
        path = write_json(self.candidate_dir(record.iteration, record.index) / "candidate.json", record.to_dict())
        self.log("candidate_done", iteration=record.iteration, candidate=record.index, status=record.status.value)
        return path

    def candidate(self, iteration: int, index: int) -> CandidateRecord | None:
        """A finished candidate's record, None if it is not done."""
        path = self.candidate_dir(iteration, index) / "candidate.json"
        return CandidateRecord.from_dict(read_json(path)) if path.is_file() else None

    def save_iteration(self, record: IterationRecord) -> Path:
        """Mark an iteration done."""
        path = write_json(self.iteration_dir(record.index) / "iteration.json", record.to_dict())
        self.log("iteration_done", iteration=record.index, status=record.status.value,
                 best=list(record.best) if record.best else None)
        return path

    def iteration(self, index: int) -> IterationRecord | None:
        """A finished iteration's record, None if it is not done."""
        path = self.iteration_dir(index) / "iteration.json"
        return IterationRecord.from_dict(read_json(path)) if path.is_file() else None

    def iterations(self) -> list[IterationRecord]:
        """Finished iterations in order (stops at the first unfinished one)."""
        done = []
        for index in range(10_000):
            record = self.iteration(index)
            if record is None:
                break
            done.append(record)
        return done

    def candidates(self, iteration: int) -> list[CandidateRecord]:
        """The finished candidates of an iteration, by index."""
        folder = self.iteration_dir(iteration) / "candidates"
        paths = sorted(folder.glob("*/candidate.json")) if folder.is_dir() else []
        return [CandidateRecord.from_dict(read_json(p)) for p in paths]

    def result(self) -> dict[str, Any] | None:
        """The stop record (result.json), None while the run is unfinished."""
        path = self.path / "result.json"
        return read_json(path) if path.is_file() else None

    # ---- events ------------------------------------------------------------------------------------------

    def log(self, event: str, **fields: Any) -> None:
        """Append one event to events.jsonl (flushed and synced before returning)."""
        line = json.dumps({"time": round(time.time(), 3), "event": event, **fields})
        with open(self.path / "events.jsonl", "a") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def events(self) -> list[dict[str, Any]]:
        """Every event so far; a line cut short by a kill is skipped."""
        path = self.path / "events.jsonl"
        return list(_parse_lines(path.read_text().splitlines())) if path.is_file() else []

    def summary(self) -> RunSummary:
        """One line for `rewardloop runs`."""
        done = self.iterations()
        best = done[-1].best if done else None
        record = self.candidate(*best) if best else None
        cost = sum(r.cost_usd for r in done)
        result = self.result()
        return RunSummary(path=self.path, task=f"{self.task['name']}: {self.task['description']}",
                          body=self.task["scene"]["body"], iterations_done=len(done),
                          iterations=int(self.config.get("iterations", 0)),
                          stop_reason=result["stop_reason"] if result else None,
                          best_score=record.task_score if record else None, cost_usd=cost)


def _take_lock(run: Path) -> int:
    """The open, locked lock file of `run` with this process recorded in it; a UserError naming the holder when
    another process holds it."""
    fd = os.open(run / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise UserError(f"cannot lock {run / LOCK_FILE}: {error.strerror or error}") from None
        holder = _read_holder(run / LOCK_FILE)
        who = holder.describe() if holder else "another process (it has not recorded itself yet)"
        raise UserError(f"{run} is in use by {who}; let it finish, or stop it and resume the run") from None
    me = LockHolder(pid=os.getpid(), host=socket.gethostname(), started=time.strftime("%Y-%m-%d %H:%M:%S"))
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(dataclasses.asdict(me)) + "\n").encode(), 0)
    os.fsync(fd)
    return fd


def _release_lock(fd: int) -> None:
    """Clear the record (while still holding the lock, so a new holder's is never erased), then unlock."""
    try:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _read_holder(path: Path) -> LockHolder | None:
    try:
        data = json.loads(path.read_text())
        return LockHolder(pid=int(data["pid"]), host=str(data["host"]), started=str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _parse_lines(lines: list[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "run"


def list_runs(root: Path | str) -> list[RunSummary]:
    """Summaries of the runs under `root`, oldest first; directories of another format are skipped."""
    root = Path(root)
    if not root.is_dir():
        return []
    summaries = []
    for path in sorted(p for p in root.iterdir() if (p / "config.json").is_file()):
        try:
            summaries.append(RunStore.open(path).summary())
        except UserError:
            continue
    return summaries
