"""The bench directory and its runs: create, resume, run every (pair, arm, seed) once.

Layout of one bench run:

    BENCH/
      plan.json                     {"format", "suite" (as read), "options", "command", "created", "machine"}
      runs/<task>--<body>--<arm>--s<seed>/
        <run>/                      the normal run store (resumes after a kill, replays its response cache)
        judged.json                 the judge's verdict on the run's best motion (written last: the unit is done)
      judge_cache/  judge_calls.jsonl   a model judge's cached answers and paid calls (none for the builtin one)
      bench.json  bench.md  bench.html

A unit whose judged.json exists is never run again; an unfinished run is resumed by the loop itself, which
redoes nothing it finished. Transfer units run after every loop unit, since each takes the loop arm's best
program from the other body.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardloop.bench.arms import ARMS, arm_config
from rewardloop.bench.judge import JUDGED_FILE, judge_run, make_judge
from rewardloop.bench.suite import Pair, Suite, parse_suite
from rewardloop.errors import UserError, unknown_name
from rewardloop.loop.config import RunConfig
from rewardloop.loop.store import RunStore, read_json, write_json

BENCH_FORMAT = 1
"""Version of the bench directory layout; a bench of another version cannot be resumed or reported."""
PLAN_FILE = "plan.json"

Say = Callable[[str], None]
"""Where progress lines go (one line each)."""


@dataclass(frozen=True)
class BenchOptions:
    """What a bench run was asked for besides its suite (stored in plan.json)."""

    designer: str = "builtin"
    """Designer model string of the designer and loop arms."""
    critic: str = "builtin"
    """Critic model string of the loop arm (and of the canonical and transfer runs' own records)."""
    judge: str = "builtin"
    """Who scores every arm's final motion: builtin rules, or a model other than `critic`."""
    executor: str | None = None
    """'local' or 'ray' for every run; None keeps the suite's."""
    address: str | None = None
    """Ray cluster address."""
    workers: int | None = None
    """Candidates evaluated at once; None keeps the suite's."""
    seeds: int | None = None
    """Seeds per (pair, arm); None keeps the suite's."""
    arms: tuple[str, ...] | None = None
    """Arms to run (a subset of ARMS); None keeps the suite's."""

    def __post_init__(self) -> None:
        if self.seeds is not None and self.seeds < 1:
            raise UserError(f"--seeds must be at least 1, got {self.seeds}")
        for arm in self.arms or ():
            if arm not in ARMS:
                raise unknown_name("arm", arm, ARMS)
        if self.arms is not None and "transfer" in self.arms and "loop" not in self.arms:
            raise UserError("the transfer arm takes the loop arm's programs; add loop to --arms")
        if self.judge != "builtin" and self.judge == self.critic:
            raise UserError(f"the judge must not be the loop's critic ({self.critic}); pass another --judge, "
                            "or builtin")

    def shape(self, loop: RunConfig) -> RunConfig:
        """A suite's run shape with these models, executor and workers."""
        changes: dict[str, Any] = {"designer": self.designer, "critic": self.critic, "executor": self.executor,
                                   "address": self.address, "workers": self.workers}
        return dataclasses.replace(loop, **{k: v for k, v in changes.items() if v is not None})


@dataclass(frozen=True)
class Unit:
    """One run of the bench: a pair, an arm, a seed."""

    pair: Pair
    arm: str
    seed: int

    @property
    def key(self) -> str:
        """Folder name under runs/, e.g. 'walk-flat--humanoid--loop--s0'."""
        return f"{_slug(self.pair.task_name)}--{self.pair.body}--{self.arm}--s{self.seed}"

    @property
    def label(self) -> str:
        return f"{self.pair.key} {self.arm} seed {self.seed}"


class BenchStore:
    """One bench directory. Create with `BenchStore.create`, reopen with `BenchStore.open`."""

    def __init__(self, path: Path, plan: dict[str, Any]):
        self.path, self.plan = path, plan
        self.options = BenchOptions(**{**plan["options"], "arms": _tuple(plan["options"].get("arms"))})
        self.suite: Suite = parse_suite(plan["suite"], where=f"the suite stored in {path / PLAN_FILE}")
        self.seeds = self.options.seeds or self.suite.seeds
        self.arms = tuple(a for a in ARMS if a in (self.options.arms or self.suite.arms))

    @classmethod
    def create(cls, root: Path | str, suite: Suite, options: BenchOptions) -> BenchStore:
        """A new bench directory under `root`, named after the time and the suite."""
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{_slug(suite.name)}"
        path, n = Path(root) / stem, 1
        while path.exists():
            n += 1
            path = Path(root) / f"{stem}-{n}"
        plan = {"format": BENCH_FORMAT, "suite": suite.data, "options": dataclasses.asdict(options),
                "command": command_line(suite.name, options), "created": time.strftime("%Y-%m-%d %H:%M"),
                "machine": machine()}
        path.mkdir(parents=True)
        write_json(path / PLAN_FILE, plan)
        return cls(path, plan)

    @classmethod
    def open(cls, path: Path | str) -> BenchStore:
        """An existing bench; a one-line UserError if it is not one or has another format version."""
        path = Path(path)
        if not (path / PLAN_FILE).is_file():
            raise UserError(f"{path} is not a bench directory (no {PLAN_FILE})")
        plan = read_json(path / PLAN_FILE)
        version = plan.get("format") if isinstance(plan, dict) else None
        if version != BENCH_FORMAT:
            raise UserError(f"{path} was written by another version of rewardloop (bench format {version}, this "
                            f"version reads format {BENCH_FORMAT}); start a new bench")
        return cls(path, plan)

    def units(self) -> list[Unit]:
        """Every unit in the order it runs: by seed and pair, the arms in order; transfer units last."""
        ordered = [Unit(p, arm, s) for s in range(self.seeds) for p in self.suite.pairs for arm in self.arms
                   if arm != "transfer"]
        return ordered + [Unit(p, "transfer", s) for s in range(self.seeds) for p in self.suite.pairs
                          if "transfer" in self.arms]

    def unit_dir(self, unit: Unit) -> Path:
        return self.path / "runs" / unit.key

    def judged(self, unit: Unit) -> dict[str, Any] | None:
        """A finished unit's verdict, None if it is not done."""
        path = self.unit_dir(unit) / JUDGED_FILE
        return read_json(path) if path.is_file() else None

    def shape(self) -> RunConfig:
        """The suite's run shape with the bench's models, executor and workers."""
        return self.options.shape(self.suite.loop)


def run_bench(bench: BenchStore, *, say: Say = lambda line: None) -> None:
    """Run every unit not done yet, judging each as it finishes; finished units are never redone."""
    judge = make_judge(bench.options.judge, critic=bench.options.critic, cache=bench.path / "judge_cache")
    units = bench.units()
    for number, unit in enumerate(units, start=1):
        if bench.judged(unit) is not None:
            continue
        clock = time.monotonic()
        say(f"[{number}/{len(units)}] {unit.label}: running")
        verdict = run_unit(bench, unit, judge)
        say(f"[{number}/{len(units)}] {unit.label}: {_verdict_line(verdict)} ({time.monotonic() - clock:.0f} s)")


def run_unit(bench: BenchStore, unit: Unit, judge: Any) -> dict[str, Any]:
    """Run (or resume) one unit's run, judge its best motion, write judged.json; a unit that cannot run (a task
    without a canonical reward, a transfer without a program) is recorded as skipped."""
    from rewardloop.loop.run import run_loop, start_run

    folder = bench.unit_dir(unit)
    facts = {"task": unit.pair.task_name, "body": unit.pair.body, "arm": unit.arm, "seed": unit.seed}
    config, reason = _unit_config(bench, unit)
    if config is None:
        verdict = {**facts, "status": "skipped", "reason": reason}
    else:
        store = _existing_run(folder) or start_run(unit.pair.task, config, out=folder)
        if store.result() is None:
            run_loop(store)
        verdict = {**facts, **judge_run(store, judge, root=bench.path)}
    write_json(folder / JUDGED_FILE, verdict)
    return verdict


def _unit_config(bench: BenchStore, unit: Unit) -> tuple[RunConfig | None, str]:
    """The unit's run configuration, or None and why it cannot run."""
    if unit.arm == "canonical" and unit.pair.task.canonical is None:
        return None, "the task has no canonical reward"
    program = None
    if unit.arm == "transfer":
        program, reason = _transferred_program(bench, unit)
        if program is None:
            return None, reason
    return arm_config(unit.arm, bench.shape(), seed=unit.seed, start_program=program), ""


def _transferred_program(bench: BenchStore, unit: Unit) -> tuple[str | None, str]:
    """The loop arm's best program on the other body of the unit's task (same seed), or None and why not."""
    other = bench.suite.other_body(unit.pair)
    if other is None:
        return None, f"the suite has {unit.pair.task_name} on no other body"
    source = Unit(other, "loop", unit.seed)
    verdict = bench.judged(source)
    if verdict is None or verdict.get("status") != "judged":
        return None, f"the loop arm on {other.body} (seed {unit.seed}) has no best program"
    return (bench.path / verdict["run"] / "best_program.py").read_text(), ""


def _existing_run(folder: Path) -> RunStore | None:
    """The unit's run, if one was created before (the folder holds one run directory with a config.json)."""
    runs = sorted(p for p in folder.iterdir() if (p / "config.json").is_file()) if folder.is_dir() else []
    return RunStore.open(runs[0]) if runs else None


def _verdict_line(verdict: dict[str, Any]) -> str:
    if verdict["status"] != "judged":
        return f"{verdict['status']}" + (f" ({verdict['reason']})" if verdict.get("reason") else "")
    return (f"judged {verdict['judged_score']:.2f}, {verdict['metric']} {verdict['value']:.3g}"
            f"{', success' if verdict['achieved'] else ''}{_unchecked_words(verdict)}"
            f"{', fell' if verdict['fell'] else ''}, "
            f"gait {verdict['gait_met']}/{verdict['gait_targets']}")


def _unchecked_words(verdict: dict[str, Any]) -> str:
    """', unchecked (not understood: 'waving your arms')' for a verdict whose rule was met on a description with
    unread words; '' otherwise."""
    from rewardloop.spec import quoted

    words = verdict.get("not_understood") or ()
    return f", unchecked (not understood: {quoted(tuple(words))})" if verdict.get("unchecked") else ""


def command_line(suite: str, options: BenchOptions) -> str:
    """The command that starts this bench, e.g. 'rewardloop bench --suite small'."""
    parts = ["rewardloop bench", f"--suite {suite}"]
    defaults = BenchOptions()
    for name, value in dataclasses.asdict(options).items():
        if value != getattr(defaults, name) and name != "address":
            shown = ",".join(value) if isinstance(value, (tuple, list)) else value
            parts.append(f"--{name} {shown}")
    return " ".join(parts)


def machine() -> str:
    """The machine in words: system, architecture, cores and CPU model."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        model = f", {found.group(1).strip()}" if found else ""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores{model}"


def _tuple(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "task"
