"""Built-in tasks: a description, a scene, a duration, a success metric and a canonical reward.

Each task is written once and runs on any body of TASK_BODIES: `get_task("walk-rough", body="myolegs")`
moves it onto that body (an injured task picks the body's own injury). A free-text description works too:
`task_from_description(text, body, terrain)` builds a task around its task spec (`rewardloop.spec`): the
metric, the success rule and the canonical reward all follow that one reading, as the critic's targets do.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rewardloop.control.metrics import COURSES, STAY_RADIUS_M, STEP_RADIUS_M, TaskMetrics
from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.bodies import BODIES
from rewardloop.sim.hand import Manipulation
from rewardloop.sim.scene import WALKING_START_SPEED, Physics, Scene, walking_start_speed
from rewardloop.sim.terrain import Terrain
from rewardloop.spec import TaskSpec, spec_from_description

if TYPE_CHECKING:
    from rewardloop.reward.program import RewardProgram

METRICS: dict[str, str] = {
    "distance": "m walked forward along +x",
    "backward_distance": "m walked backward along -x",
    "heading_change": "rad turned, + is left",
    "right_turn": "rad turned, + is right",
    "speed": "mean speed along +x (m/s); with a target, scored as -|speed - target|",
    "stay_fraction": f"fraction of the rollout before the pelvis left {STAY_RADIUS_M:g} m of its start or the "
                     "body fell",
    "step_rate_in_place": f"touchdowns per second before the pelvis left {STEP_RADIUS_M:g} m of its start or the "
                          "body fell",
    "sideways_left": "m travelled toward the start's left, less m off that course (45° off scores 0)",
    "sideways_right": "m travelled toward the start's right, less m off that course",
    "sideways": "m travelled sideways to either side, less m off that course",
    "forward_left": "m travelled diagonally forward and to the left, less m off that course",
    "forward_right": "m travelled diagonally forward and to the right, less m off that course",
    "backward_left": "m travelled diagonally backward and to the left, less m off that course",
    "backward_right": "m travelled diagonally backward and to the right, less m off that course",
    "left_leg_stand": f"fraction of the rollout on the left foot alone, before the pelvis left {STAY_RADIUS_M:g} m "
                      "of its start or the body fell",
    "right_leg_stand": "the same on the right foot alone",
    "one_leg_stand": "the same on either foot alone (the larger)",
    "travel": "m of horizontal pelvis displacement from start to end, any direction",
    "flight_fraction": "fraction of the rollout with both feet off the ground, before any fall",
    "hip_flexion_peak": "rad: the lower over both legs of each leg's 90th-percentile hip flexion, before any fall",
    "goal_error": "manipulation: the object's largest final error relative to its tolerance (cube: position / 2 cm, "
                  "orientation / 20°; bottle: mouth to target / 3 cm, tilt short of 100°); at most 1 at the goal; "
                  "scored as -|goal_error - 0|",
}
"""Task metrics by name (fields of TaskMetrics) and what they measure; larger is better for each (a metric with
a target scores the distance from it, negated)."""

UNITS: dict[str, str] = {"distance": "m", "backward_distance": "m", "heading_change": "rad", "right_turn": "rad",
                         "speed": "m/s", "stay_fraction": "", "step_rate_in_place": "steps/s",
                         "goal_error": "", **{name: "m" for name in COURSES}, "sideways": "m",
                         "left_leg_stand": "", "right_leg_stand": "", "one_leg_stand": "", "flight_fraction": "",
                         "hip_flexion_peak": "rad", "travel": "m"}
"""Unit of each metric, for the success rule in words."""

DEFAULT_DISTANCE_M = 2.0
"""Distance a travel task must cover to succeed when the description states none (m)."""
STEP_RATE_SUCCESS = 1.0
"""Touchdowns per second a step-in-place task must keep up (steps/s; people march at about 2)."""
SIDEWAYS_DISTANCE_M = 1.5
"""On-course distance a sideways or diagonal travel must cover when the description states none (m): people
side-step at about 0.3-0.6 m/s, so 10 s of it covers 3 m or more; a forward walk drifting aside scores below 0."""
ONE_LEG_FRACTION = 0.6
"""Share of the duration a stand on one leg must spend on that foot alone, near the start, without a fall: time to
lift the leg and to put it down once to catch the balance is allowed (6 s of 10 s)."""
HIGH_KNEES_DEG = 60.0
"""Hip flexion (deg) both thighs must reach in their swings (`hip_flexion_peak`, a 90th percentile) for high knees or
a march: well above a walk's 30-40° (people and both bodies), short of the thigh level (90°)."""
FLIGHT_FRACTION = 0.05
"""Share of the rollout with both feet off the ground that a run or a jog must have: a walk has none, people's jog
about 10-30 %."""
TURN_SPOT_TOLERANCE_DEG = 15.0
"""How far (deg, either way) a turn on the spot may end from the angle asked: it turns to a heading and stays."""
TURN_SPOT_M = 0.5
"""How far (m) a turn on the spot may end from where it began (about one of people's steps), and a turn while walking
must: beyond it, it walked. A walking turn right round a small circle ends near its start too, and fails this
(`benchmarks/results/motions_beyond.json`)."""
FACING_TURN_DEG = 30.0
"""How far (deg, either way) a sideways or diagonal travel may turn from its start heading: turning to face the
course is walking forward, not sideways."""
SPEED_TOLERANCE = (0.1, 0.2)
"""A stated speed is met within max(0.1 m/s, 20 % of it)."""


def speed_tolerance(speed: float) -> float:
    """How far from a stated `speed` (m/s, either sign) a walk may go and still meet it (SPEED_TOLERANCE)."""
    return round(max(SPEED_TOLERANCE[0], SPEED_TOLERANCE[1] * abs(speed)), 3)


TASK_BODIES = ("humanoid", "myolegs")
"""Bodies the built-in locomotion tasks are listed for (any registered body with legs works)."""
HAND_BODIES = ("myohand",)
"""Bodies the built-in manipulation tasks are listed for."""
LOCOMOTION_S = 10.0
"""Duration of a locomotion task (s), free-text ones included unless they say otherwise."""
MANIPULATION_S = 5.0
"""Duration of a manipulation task (s): MoVLR judges the object's pose at the end of it."""

INJURIES: dict[str, tuple[tuple[str, float], ...]] = {
    "humanoid": (("right_knee", 0.3),),
    "myolegs": (("left_plantarflexors", 0.3),),
    "myofullbody": (("left_plantarflexors", 0.3),),
    "berkeley_humanoid": (("right_knee", 0.3),),
    "unitree_g1": (("right_knee", 0.3),),
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
    """Score (`score`) at or above which the task counts as achieved, with no fall (metric units)."""
    canonical: str | None
    """Key of the hand-written starting reward in rewardloop.reward.canonical.CANONICAL, or None."""
    target: float | None = None
    """The metric's wanted value (metric units; a signed speed along +x for a stated speed), or None: then
    larger is better; with a target the score is -|metric - target| and `success` is minus the tolerance."""
    spec: TaskSpec | None = None
    """The reading of the description the task was built from; None: the rules' reading (`understood`)."""
    limits: tuple[tuple[str, float, float | None], ...] = ()
    """Further conditions of success, each (metric in METRICS, low, high) in metric units: the metric must end
    within [low, high] (high None: no top), e.g. ('heading_change', -0.52, 0.52) for a sideways walk that keeps facing
    ahead, ('flight_fraction', 0.05, None) for a run."""

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise unknown_name("task metric", self.metric, METRICS)
        if not 0.1 <= self.duration_s <= 120.0:
            raise UserError(f"task duration must be within [0.1, 120] s, got {self.duration_s}")
        if not self.description.strip():
            raise UserError("the task description is empty; say what the body should do")
        for name, low, high in self.limits:
            if name not in METRICS:
                raise unknown_name("limit metric", name, METRICS)
            if high is not None and low > high:
                raise UserError(f"a task limit on {name} is empty: low {low} > high {high}")
        if self.target is not None and self.success > 0:
            raise UserError(f"a task with a target scores -|{self.metric} - target|: its success must be <= 0 "
                            f"(minus the tolerance), got {self.success}")

    @property
    def understood(self) -> TaskSpec:
        """The task spec: the one it was built from, else the rules' reading of its description."""
        return self.spec if self.spec is not None else spec_from_description(self.description)

    @property
    def manipulation(self) -> bool:
        """An object task (a hand holding an object)."""
        return self.scene.manipulation is not None

    def on_body(self, body: str) -> Task:
        """This task on another body (an injured task takes that body's injury); a UserError for an object task on
        a body without a hand, or a locomotion task on a hand."""
        if body not in BODIES:
            raise unknown_name("body", body, BODIES)
        _check_body_fits(body, manipulation=self.manipulation)
        injury = INJURIES.get(body, ()) if self.scene.injury else ()
        walking = self.scene.start_speed == walking_start_speed(self.scene.body)
        start = walking_start_speed(body) if walking else self.scene.start_speed  # a robot's walk starts from rest
        return dataclasses.replace(self, scene=dataclasses.replace(self.scene, body=body, injury=injury,
                                                                   start_speed=start))

    def canonical_program(self) -> RewardProgram | None:
        """The canonical reward the task starts from (None without one); a canonical walk for a stated forward
        speed targets that speed, and for a pace in words ("walk fast") that pace's speed (`spec.PACES`); the
        backward walk a stated backward speed."""
        from rewardloop.reward.canonical import BACKWARD_CANONICALS, SPEED_CANONICALS, canonical

        if self.canonical is None:
            return None
        spec = self.understood
        if self.canonical.startswith("turn_") and self.canonical.endswith("_in_place"):
            return canonical(self.canonical, heading=math.radians(spec.turn_deg) * (1 if spec.turn == "left" else -1))
        speed = None
        if self.canonical in SPEED_CANONICALS:
            speed = self.forward_speed
        elif self.canonical in BACKWARD_CANONICALS and self.metric == "speed" and (self.target or 0.0) < 0:
            speed = self.target
        return canonical(self.canonical, speed=speed)

    @property
    def forward_speed(self) -> float | None:
        """The forward speed the task asks for (m/s): a stated one (the task's target), else its pace's in words;
        None for neither, or for a task that does not walk forward."""
        if self.metric == "speed" and self.target is not None:
            return self.target if self.target > 0 else None
        spec = self.understood
        return spec.pace_mps if spec.direction == "forward" and spec.turn is None else None

    @property
    def score_name(self) -> str:
        """What `score` is, for a person: the metric's name, or '-|speed - 0.6|' for a task with a target."""
        return self.metric if self.target is None else f"-|{self.metric} - {self.target:g}|"

    def value(self, metrics: TaskMetrics) -> float:
        """The task metric's own value for a trajectory (metric units)."""
        return float(getattr(metrics, self.metric))

    def score(self, metrics: TaskMetrics) -> float:
        """The task metric of a trajectory (metric units, larger is better): the metric itself, or
        -|metric - target| for a task with a target."""
        value = self.value(metrics)
        return value if self.target is None else -abs(value - self.target)

    def achieved(self, metrics: TaskMetrics) -> bool:
        """The success rule: the score reaches `success` and the body did not fall."""
        within = all(low <= float(getattr(metrics, name)) <= (math.inf if high is None else high)
                     for name, low, high in self.limits)
        return not metrics.fell and self.score(metrics) >= self.success and within

    def success_rule(self) -> str:
        """The success rule in words, e.g. 'distance >= 2 m without a fall'."""
        unit = f" {UNITS[self.metric]}".rstrip()
        if self.manipulation:
            return _manipulation_rule(self.scene.manipulation)  # type: ignore[arg-type]
        limits = "".join(f", {_limit_words(*limit)}" for limit in self.limits)
        if self.target is not None:
            return f"{self.metric} within {-self.success:g}{unit} of {self.target:g}{unit}{limits} without a fall"
        return f"{self.metric} >= {_shown(self.success, self.metric)}{limits} without a fall"

    def explain(self) -> str:
        """Two lines for a person: what the description was understood to ask, and how it will be judged."""
        start = f"the canonical reward '{self.canonical}'" if self.canonical else "a program the designer writes"
        return (f"understood: {self.understood.describe()}\n"
                f"judged by: {self.success_rule()}; starts from {start}")

    def to_dict(self) -> dict:
        """JSON-ready form (the scene's terrain and injury spelled out)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Task:
        """Inverse of to_dict; a task saved before `target` and `spec` existed reads with None for both."""
        scene = data["scene"]
        injury = tuple((str(g), float(f)) for g, f in scene.get("injury", ()))
        held = scene.get("manipulation")
        rebuilt = Scene(body=scene["body"], terrain=Terrain(**scene["terrain"]), injury=injury,
                        start_speed=float(scene.get("start_speed", 0.0)), physics=Physics(**scene.get("physics", {})),
                        manipulation=Manipulation(**held) if held else None)
        spec = TaskSpec.from_dict(data["spec"]) if data.get("spec") is not None else None
        limits = tuple((str(name), float(low), None if high is None else float(high))
                       for name, low, high in data.get("limits", ()))
        return cls(**{**data, "scene": rebuilt, "spec": spec, "limits": limits})


def _shown(value: float, metric: str) -> str:
    """A metric's value in words with its unit: '2 m', '90°' for radians."""
    unit = f" {UNITS[metric]}".rstrip()
    return f"{math.degrees(value):.0f}°" if unit == " rad" else f"{value:g}{unit}"


def _limit_words(metric: str, low: float, high: float | None) -> str:
    """A task limit in words: 'heading_change within ±30°', 'flight_fraction >= 0.05'."""
    if high is None:
        return f"{metric} >= {_shown(low, metric)}"
    if low == 0.0:
        return f"{metric} <= {_shown(high, metric)}"
    if low == -high:
        return f"{metric} within ±{_shown(high, metric)}"
    return f"{metric} within {_shown(low, metric)} to {_shown(high, metric)}"


def _manipulation_rule(manipulation: Manipulation) -> str:
    """The success rule of an object task in words."""
    if manipulation.object == "cube":
        return (f"the cube within {manipulation.goal_radius_m * 100:g} cm and "
                f"{math.degrees(manipulation.goal_angle_rad):.0f}° of its goal at the end, not dropped")
    return (f"the bottle tilted at least {math.degrees(manipulation.min_tilt_rad):.0f}° with its mouth within "
            f"{manipulation.goal_radius_m * 100:g} cm of the pour target at the end, not dropped")


def _manipulate(name: str, description: str, manipulation: Manipulation, canonical: str) -> Task:
    return Task(name=name, description=description, scene=Scene("myohand", manipulation=manipulation),
                duration_s=MANIPULATION_S, metric="goal_error", success=-1.0, canonical=canonical, target=0.0)


def _check_body_fits(body: str, *, manipulation: bool) -> None:
    """A UserError when an object task meets a body without a hand, or a locomotion task meets a hand."""
    hand = bool(BODIES[body].fingertips)
    if manipulation and not hand:
        raise UserError(f"{body} has no hand: object tasks need one of {', '.join(HAND_BODIES)}")
    if hand and not manipulation:
        raise UserError(f"{body} is a hand and cannot walk or turn; give it an object task (cube-rotate, bottle-pour) "
                        "or a locomotion body: " + ", ".join(TASK_BODIES))


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
    "cube-rotate": _manipulate("cube-rotate", "turn the cube a quarter turn to the left about the vertical, held in "
                               "the hand", Manipulation("cube", turn_deg=90.0), "cube_rotate"),
    "bottle-pour": _manipulate("bottle-pour", "pour from the bottle into the cup on the left, tipping it past "
                               "horizontal", Manipulation("bottle", side="left"), "bottle_pour"),
}
"""The built-in tasks by name, written for the humanoid (object tasks for the muscle hand); `get_task(name, body=...)`
moves them to a body."""


def get_task(name: str, *, body: str | None = None) -> Task:
    """A built-in task by name, on `body` (default: the task's own body, the humanoid)."""
    if name not in TASKS:
        raise unknown_name("task", name, TASKS)
    task = TASKS[name]
    return task if body is None else task.on_body(body)


_CANONICAL_BY_TERRAIN = {"flat": "walk", "slope": "walk_slope", "rough": "walk_rough", "stairs": "walk_stairs"}


def task_from_description(text: str, body: str, terrain: Terrain | str | None = None, *,
                          duration_s: float | None = None, spec: TaskSpec | None = None) -> Task:
    """A task for any description, built around its spec (default: the rules' reading of `text`).

    The spec picks the metric and success rule (`judged_by`) and the canonical reward (`canonical_for`, with
    the terrain: `ground_for`, the ground the description names where none is given); an injured spec weakens the
    body; forward walks and turns start from the walking start, everything else from rest.
    """
    if not text.strip():
        raise UserError("the task description is empty; say what the body should do, e.g. \"walk forward\"")
    if body not in BODIES:
        raise unknown_name("body", body, BODIES)
    spec = spec if spec is not None else spec_from_description(text)
    _check_body_fits(body, manipulation=spec.manipulation is not None)
    ground = ground_for(spec, terrain) if spec.manipulation is None else Terrain()
    if spec.manipulation is not None:
        task = _manipulate("custom", text.strip(), manipulation_of(spec), OBJECT_CANONICALS[spec.manipulation])
        return dataclasses.replace(task, scene=dataclasses.replace(task.scene, body=body), spec=spec,
                                   duration_s=duration_s or MANIPULATION_S)
    metric, success, target = judged_by(spec)
    canonical = canonical_for(spec, ground.kind)
    injury = INJURIES.get(body, ()) if spec.injured else ()
    spot = spec.turn is not None and not spec.locomotion  # a turn on the spot starts from rest
    walking = canonical is not None and spec.direction != "backward" and not (
        spec.stay_in_place or spec.step_in_place or spec.lateral or spot)
    return Task(name="custom", description=text.strip(),
                scene=Scene(body, ground, injury, walking_start_speed(body) if walking else 0.0),
                duration_s=duration_s or LOCOMOTION_S,
                metric=metric, success=success, canonical=canonical, target=target, spec=spec,
                limits=limits_for(spec))


def ground_for(spec: TaskSpec, given: Terrain | str | None) -> Terrain:
    """The ground a task of `spec` runs on: `given` (the scene a user chose), else the one its description names
    ("on rough ground", "up the stairs"), else flat. A given ground other than the one the words name is a UserError:
    the motion would be claimed on a ground it never touched."""
    named = spec.terrain
    if given is None:
        return Terrain(kind=named or "flat")
    ground = given if isinstance(given, Terrain) else Terrain(kind=given)
    if named is not None and ground.kind != named:
        raise UserError(f"the description asks for {named} ground but the scene given is {ground.describe()}: give "
                        f"--terrain {named}, or no terrain to take the ground the description names")
    return ground


OBJECT_CANONICALS = {"cube": "cube_rotate", "bottle": "bottle_pour"}
"""Object -> the canonical reward of its task."""


def manipulation_of(spec: TaskSpec) -> Manipulation:
    """The object and goal an object spec asks for: the cube turned its way by its angle, the bottle poured to its
    side."""
    if spec.manipulation == "cube":
        return Manipulation("cube", turn_deg=spec.turn_deg * (-1.0 if spec.turn == "right" else 1.0))
    return Manipulation("bottle", side="right" if spec.side == "right" else "left")


def judged_by(spec: TaskSpec) -> tuple[str, float, float | None]:
    """(metric, success threshold, target) that fit a spec.

    A turn: the heading change its way, at least the angle asked (on the spot, within TURN_SPOT_TOLERANCE_DEG of
    it, `limits_for`). Stepping in place: the step rate while near
    the start. Sideways or diagonal travel: the on-course distance its way (`course_of`), at least the distance
    stated (SIDEWAYS_DISTANCE_M), facing kept (`limits_for`). A stand on one leg: the share of the rollout on that
    foot alone near the start (ONE_LEG_FRACTION). Staying in place, or a motion without travel: the
    fraction of the rollout spent near the start without a fall, all of it. A stated speed: the signed mean speed,
    within SPEED_TOLERANCE. Travel: the distance its way, at least the distance stated (DEFAULT_DISTANCE_M).
    """
    if spec.turn is not None:
        metric = "heading_change" if spec.turn == "left" else "right_turn"
        short = 0.0 if spec.locomotion else TURN_SPOT_TOLERANCE_DEG  # on the spot: to the angle, give or take
        return metric, math.radians(spec.turn_deg - short), None
    if spec.step_in_place:
        return "step_rate_in_place", STEP_RATE_SUCCESS, None
    if spec.lateral is not None:
        return course_of(spec), spec.distance_m if spec.distance_m is not None else SIDEWAYS_DISTANCE_M, None
    if spec.stance_leg is not None:
        return ("one" if spec.stance_leg == "either" else spec.stance_leg) + "_leg_stand", ONE_LEG_FRACTION, None
    if not spec.locomotion:
        return "stay_fraction", 1.0, None
    if spec.speed_mps is not None:
        return "speed", -speed_tolerance(spec.speed_mps), spec.sign * spec.speed_mps
    metric = "distance" if spec.direction == "forward" else "backward_distance"
    return metric, spec.distance_m if spec.distance_m is not None else DEFAULT_DISTANCE_M, None


def course_of(spec: TaskSpec) -> str:
    """The course metric of a sideways or diagonal spec: 'sideways_left', 'sideways' (either side),
    'forward_right'..."""
    if spec.direction == "none":
        return "sideways" if spec.lateral == "either" else f"sideways_{spec.lateral}"
    return f"{spec.direction}_{spec.lateral}"


def limits_for(spec: TaskSpec) -> tuple[tuple[str, float, float | None], ...]:
    """The further conditions of success a spec asks for (`Task.limits`): a sideways or diagonal travel keeps
    facing ahead (FACING_TURN_DEG either way); high knees lift both thighs to HIGH_KNEES_DEG; a run or a jog has a
    flight phase (FLIGHT_FRACTION); a turn on the spot ends near it (TURN_SPOT_M), a turn while walking beyond it."""
    facing = math.radians(FACING_TURN_DEG)
    limits: list[tuple[str, float, float | None]] = []
    if spec.lateral is not None:
        limits.append(("heading_change", -facing, facing))
    if "high-knees" in spec.styles:
        limits.append(("hip_flexion_peak", math.radians(HIGH_KNEES_DEG), None))
    if spec.pace == "run":
        limits.append(("flight_fraction", FLIGHT_FRACTION, None))
    if spec.turn is not None and spec.locomotion:
        limits.append(("travel", TURN_SPOT_M, None))
    elif spec.turn is not None:  # on the spot: not past the angle either
        metric = "heading_change" if spec.turn == "left" else "right_turn"
        limits += [("travel", 0.0, TURN_SPOT_M), (metric, 0.0, math.radians(spec.turn_deg + TURN_SPOT_TOLERANCE_DEG))]
    return tuple(limits)


def canonical_for(spec: TaskSpec, terrain: str) -> str | None:
    """The canonical reward that fits a spec on a terrain kind; None for a motion the rules do not know
    (the designer writes the first program)."""
    if spec.turn is not None:
        return f"turn_{spec.turn}" + ("" if spec.locomotion else "_in_place")
    if spec.step_in_place:
        return "step_in_place_high_knees" if "high-knees" in spec.styles else "step_in_place"
    if spec.stance_leg is not None:  # either leg: the left one
        return "stand_right_leg" if spec.stance_leg == "right" else "stand_left_leg"
    if spec.stay_in_place:
        return "stand"
    if spec.lateral is not None:  # either side: the left one
        course = course_of(spec)
        return "walk_" + ("sideways_left" if course == "sideways" else course)
    if not spec.locomotion:
        return None
    if spec.direction == "backward":
        return "walk_backward"
    if spec.straight_knees or "stiff-knee" in spec.styles:
        return "walk_straight_knees"
    return "walk_injured" if spec.injured else _CANONICAL_BY_TERRAIN[terrain]
