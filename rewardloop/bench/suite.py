"""Bench suites as data: which (task, body) pairs, how many seeds, which arms, and the shape of every run.

A suite is a JSON file, one of SUITES (shipped in rewardloop/bench/suites/) or any path:

    {"name": "small", "about": "what it is for and how long it takes",
     "seeds": 2, "arms": ["canonical", "designer", "loop", "transfer"], "bodies": ["humanoid", "myolegs"],
     "tasks": [{"task": "walk-flat"},
               {"name": "slow-walk", "description": "walk forward slowly at 0.5 m/s", "terrain": "flat"}],
     "loop": {"iterations": 3, "candidates": 2, "duration_s": 4.0, ...}}

Each task is a built-in one (`task`) or a free-text one (`name`, `description`, optional `terrain` and
`duration_s`) whose metric and success rule come from its description; a task may list its own `bodies`.
`loop` holds RunConfig fields (`rewardloop.loop.config`): the shape every arm's runs take.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rewardloop.errors import UserError, unknown_name
from rewardloop.loop.config import RunConfig
from rewardloop.tasks import Task

SUITES: dict[str, str] = {
    "tiny": "tiny.json",
    "small": "small.json",
    "full": "full.json",
    "manipulation": "manipulation.json",
    "robots": "robots.json",
    "fullbody": "fullbody.json",
}
"""Shipped suites by name -> file in rewardloop/bench/suites/."""

SUITE_KEYS = ("name", "about", "seeds", "arms", "bodies", "tasks", "loop")
TASK_KEYS = ("task", "name", "description", "terrain", "duration_s", "bodies")


@dataclass(frozen=True)
class Pair:
    """One (task, body) pair of a suite."""

    task_name: str
    """The built-in task's name, or the free-text task's `name`."""
    body: str
    task: Task
    """The task on this body."""

    @property
    def key(self) -> str:
        """e.g. 'walk-flat@humanoid'."""
        return f"{self.task_name}@{self.body}"


@dataclass(frozen=True)
class Suite:
    """A parsed suite."""

    name: str
    about: str
    seeds: int
    """Seeds per (pair, arm): 0 .. seeds-1 (each the run's base seed)."""
    arms: tuple[str, ...]
    """Arms to run, in ARMS order."""
    pairs: tuple[Pair, ...]
    loop: RunConfig
    """The shape of every run (the arms change iterations, critic and starting program)."""
    data: dict[str, Any]
    """The suite as read (stored in the bench directory, so a resume runs the same suite)."""

    def other_body(self, pair: Pair) -> Pair | None:
        """The suite's pair with the same task on another body (where `transfer` takes its program), or None."""
        return next((p for p in self.pairs if p.task_name == pair.task_name and p.body != pair.body), None)


def load_suite(name_or_path: str) -> Suite:
    """A shipped suite by name, or a suite file by path; a one-line UserError for an unknown name or a bad file."""
    if name_or_path in SUITES:
        text = resources.files("rewardloop.bench").joinpath("suites", SUITES[name_or_path]).read_text()
        where = f"suite {name_or_path}"
    elif name_or_path.endswith(".json") or Path(name_or_path).is_file():
        path = Path(name_or_path)
        if not path.is_file():
            raise UserError(f"suite file {path} does not exist")
        text, where = path.read_text(), f"suite file {path}"
    else:
        raise unknown_name("suite", name_or_path, SUITES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{where} is not valid JSON: {error}") from None
    return parse_suite(data, where=where)


def parse_suite(data: Any, *, where: str = "suite") -> Suite:
    """A Suite from its JSON form; a one-line UserError naming what to fix."""
    from rewardloop.bench.arms import ARMS

    if not isinstance(data, dict):
        raise UserError(f"{where}: a suite is a JSON object with keys {', '.join(SUITE_KEYS)}")
    _known_keys(data, SUITE_KEYS, f"{where}")
    for key in ("name", "seeds", "arms", "tasks"):
        if key not in data:
            raise UserError(f"{where}: missing {key!r}")
    seeds, arms = data["seeds"], data["arms"]
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise UserError(f"{where}: seeds must be a whole number at least 1, got {seeds!r}")
    if not isinstance(arms, list) or not arms:
        raise UserError(f"{where}: arms must be a non-empty list of: {', '.join(ARMS)}")
    for arm in arms:
        if arm not in ARMS:
            raise unknown_name(f"arm in {where}:", str(arm), ARMS)
    if "transfer" in arms and "loop" not in arms:
        raise UserError(f"{where}: the transfer arm takes the loop arm's programs; add 'loop' to arms")
    loop = _loop_config(data.get("loop", {}), where)
    pairs = tuple(p for i, spec in enumerate(_list(data["tasks"], f"{where}: tasks"))
                  for p in _pairs(spec, data.get("bodies"), f"{where}: tasks[{i}]", loop))
    keys = [p.key for p in pairs]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise UserError(f"{where}: the (task, body) pair {twice} appears twice")
    return Suite(name=str(data["name"]), about=str(data.get("about", "")), seeds=seeds,
                 arms=tuple(a for a in ARMS if a in arms), pairs=pairs, loop=loop, data=data)


def _loop_config(data: Any, where: str) -> RunConfig:
    if not isinstance(data, dict):
        raise UserError(f"{where}: loop must be an object of run settings (RunConfig fields)")
    try:
        return RunConfig.from_dict(data)
    except (TypeError, ValueError) as error:  # UserError is a ValueError
        raise UserError(f"{where}: loop: {str(error).splitlines()[0]}") from None


def _pairs(spec: Any, bodies: Any, where: str, loop: RunConfig) -> list[Pair]:
    """The pairs one task entry gives: the task on each of its bodies (else the suite's)."""
    from rewardloop.tasks import get_task, task_from_description

    if not isinstance(spec, dict):
        raise UserError(f"{where}: a task is an object with 'task' or 'name' and 'description'")
    _known_keys(spec, TASK_KEYS, where)
    names = _list(spec.get("bodies", bodies), f"{where}: bodies")
    if "task" in spec:
        if "description" in spec:
            raise UserError(f"{where}: give either 'task' (a built-in task) or 'description', not both")
        return [Pair(str(spec["task"]), str(body), get_task(str(spec["task"]), body=str(body))) for body in names]
    if "name" not in spec or "description" not in spec:
        raise UserError(f"{where}: a free-text task needs 'name' and 'description' (or give 'task')")
    duration = float(spec.get("duration_s", 10.0))
    return [Pair(str(spec["name"]), str(body), task_from_description(
        str(spec["description"]), str(body), spec.get("terrain"), duration_s=duration))
        for body in names]


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise UserError(f"{where} must be a non-empty list")
    return value


def _known_keys(data: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(known)}")
