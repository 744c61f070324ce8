"""Built-in tasks: a description, a scene, a duration, a success metric and a canonical reward.

Each task is written once and runs on any body of TASK_BODIES: `get_task("walk-rough", body="myolegs")`
moves it onto that body (an injured task picks the body's own injury). A free-text description works too:
`task_from_description(text, body, terrain)` builds a task around it, picking a metric and a canonical
reward by the words it uses.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from rewardloop.control.metrics import TaskMetrics
from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.bodies import BODIES
from rewardloop.sim.scene import WALKING_START_SPEED, Physics, Scene
from rewardloop.sim.terrain import Terrain

METRICS: dict[str, str] = {
    "distance": "m walked forward along +x",
    "heading_change": "rad turned, + is left",
}
"""Task metrics by name (fields of TaskMetrics) and what they measure; larger is better for each."""

TASK_BODIES = ("humanoid", "myolegs")
"""Bodies the built-in tasks are listed for (any registered body works)."""

INJURIES: dict[str, tuple[tuple[str, float], ...]] = {
    "humanoid": (("right_knee", 0.3),),
    "myolegs": (("left_plantarflexors", 0.3),),
    "myofullbody": (("left_plantarflexors", 0.3),),
}
"""The injury an injured task gives each body: (group, strength factor) pairs."""


@dataclass(frozen=True)
class Task:
    """What the body should do, where, for how long, and how success is measured."""

    name: str
    """Registry name, e.g. 'walk-rough'; 'custom' for a free-text task."""
    description: str
    """The motion in words; the critic and designer read it."""
    scene: Scene
    """Body, terrain and injury."""
    duration_s: float
    """Simulated seconds of each rollout (s)."""
    metric: str
    """Name in METRICS: the number the task is judged by (larger is better)."""
    success: float
    """Metric value at or above which the task counts as achieved (metric units)."""
    canonical: str | None
    """Key of the hand-written starting reward in rewardloop.reward.canonical.CANONICAL, or None."""

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise unknown_name("task metric", self.metric, METRICS)
        if not 0.1 <= self.duration_s <= 120.0:
            raise UserError(f"task duration must be within [0.1, 120] s, got {self.duration_s}")
        if not self.description.strip():
            raise UserError("the task description is empty; say what the body should do")

    def on_body(self, body: str) -> Task:
        """This task on another body (an injured task takes that body's injury)."""
        if body not in BODIES:
            raise unknown_name("body", body, BODIES)
        injury = INJURIES.get(body, ()) if self.scene.injury else ()
        return dataclasses.replace(self, scene=dataclasses.replace(self.scene, body=body, injury=injury))

    def score(self, metrics: TaskMetrics) -> float:
        """The task metric of a trajectory (metric units, larger is better)."""
        return float(getattr(metrics, self.metric))

    def to_dict(self) -> dict:
        """JSON-ready form (the scene's terrain and injury spelled out)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Task:
        """Inverse of to_dict."""
        scene = data["scene"]
        injury = tuple((str(g), float(f)) for g, f in scene.get("injury", ()))
        rebuilt = Scene(body=scene["body"], terrain=Terrain(**scene["terrain"]), injury=injury,
                        start_speed=float(scene.get("start_speed", 0.0)), physics=Physics(**scene.get("physics", {})))
        return cls(**{**data, "scene": rebuilt})


def _walk(name: str, description: str, terrain: Terrain, canonical: str, *, injured: bool = False) -> Task:
    injury = INJURIES["humanoid"] if injured else ()
    return Task(name=name, description=description, scene=Scene("humanoid", terrain, injury, WALKING_START_SPEED),
                duration_s=10.0,
                metric="distance", success=2.0, canonical=canonical)


TASKS: dict[str, Task] = {
    "walk-flat": _walk("walk-flat", "walk forward on flat ground with an upright trunk", Terrain("flat"), "walk"),
    "walk-slope": _walk("walk-slope", "walk forward up a 5 degree slope with an upright trunk",
                        Terrain("slope", slope_deg=5.0), "walk_slope"),
    "walk-rough": _walk("walk-rough", "walk forward on rough ground with an upright posture",
                        Terrain("rough", roughness=0.04), "walk_rough"),
    "walk-stairs": _walk("walk-stairs", "walk forward and climb the stairs ahead with an upright trunk",
                         Terrain("stairs", step_height=0.08), "walk_stairs"),
    "turn-left": Task(name="turn-left", description="walk while turning to the left, keeping the trunk upright",
                      scene=Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED), duration_s=10.0,
                      metric="heading_change",
                      success=math.pi / 2, canonical="turn_left"),
    "walk-straight-knees": _walk("walk-straight-knees", "walk forward on flat ground with straight knees",
                                 Terrain("flat"), "walk_straight_knees"),
    "walk-injured": _walk("walk-injured", "walk forward on flat ground despite a weakened leg, without falling",
                          Terrain("flat"), "walk_injured", injured=True),
}
"""The built-in tasks by name, written for the humanoid; `get_task(name, body=...)` moves them to a body."""


def get_task(name: str, *, body: str | None = None) -> Task:
    """A built-in task by name, on `body` (default: the task's own body, the humanoid)."""
    if name not in TASKS:
        raise unknown_name("task", name, TASKS)
    task = TASKS[name]
    return task if body is None else task.on_body(body)


_CANONICAL_BY_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bturn\w*\s+(to\s+the\s+)?left|\bleft\s+turn", "turn_left"),
    (r"straight[- ]?knee|knees? straight|stiff[- ]?knee", "walk_straight_knees"),
    (r"injur|weak|limp", "walk_injured"),
)
"""Phrases in a description that pick a canonical reward, tried in order (regular expressions)."""

_CANONICAL_BY_TERRAIN = {"flat": "walk", "slope": "walk_slope", "rough": "walk_rough", "stairs": "walk_stairs"}


def task_from_description(text: str, body: str, terrain: Terrain | str = "flat", *,
                          duration_s: float = 10.0) -> Task:
    """A task for any description: the metric and canonical reward follow its words and the terrain.

    "turn left" picks heading change and the turning reward; other walking words pick distance and the walking
    reward of the terrain (or a straight-knee or injured one when the words say so); a description with no
    walking or turning word gets no canonical reward, so the designer writes the first one.
    """
    if not text.strip():
        raise UserError("the task description is empty; say what the body should do, e.g. \"walk forward\"")
    if body not in BODIES:
        raise unknown_name("body", body, BODIES)
    ground = terrain if isinstance(terrain, Terrain) else Terrain(kind=terrain)
    lowered = text.lower()
    canonical = next((key for pattern, key in _CANONICAL_BY_WORDS if re.search(pattern, lowered)), None)
    if canonical is None and re.search(r"\b(walk|run|jog|step|stride|climb|go|move)", lowered):
        canonical = _CANONICAL_BY_TERRAIN[ground.kind]
    turning = canonical == "turn_left"
    injury = INJURIES.get(body, ()) if canonical == "walk_injured" else ()
    start = WALKING_START_SPEED if canonical else 0.0
    return Task(name="custom", description=text.strip(), scene=Scene(body, ground, injury, start),
                duration_s=duration_s,
                metric="heading_change" if turning else "distance",
                success=math.pi / 2 if turning else 2.0, canonical=canonical)
