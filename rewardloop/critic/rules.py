"""The builtin critic's rules: measured descriptors judged against the targets read from a description.

Each check returns a `Finding`: a score in [0, 1], its weight, and, when the motion falls short, an issue and
the reward edits that should help (named after library terms). Physics gates cap the overall score whatever
any critic believes: a body that fell, or that did not travel when asked to, cannot be scored well.
This is a set of hand-written rules over physics measurements, not a learned model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rewardloop.control.metrics import COURSES, STAY_RADIUS_M, course_metrics
from rewardloop.critic.critique import Action, Issue, Suggestion
from rewardloop.critic.physics import WALK_SPEED_MPS, Targets

Descriptors = dict[str, float | bool | None]

NO_PROGRESS_CAP = 3.0
"""Highest score for a motion that did not travel when asked to."""
FALL_CAP = 3.0
"""Highest score for a fall at the very end; a fall at time t caps at FALL_CAP × t / duration."""
STILL_STEPS = 2
"""Steps a motion asked to stand still may take (to catch its balance) before they count against it."""
STEPPING_ABOUT = STILL_STEPS + 4
"""Steps that cap a motion asked to stand still at NO_PROGRESS_CAP: it stepped about instead (the gait planner's
march on the spot, 8 steps in 4 s, scored 6.5 as "stand still" before this gate)."""
ONE_LEG_GATE = 0.2
"""Share of the motion on the asked foot alone below which a stand on one leg is capped at NO_PROGRESS_CAP: it stood
on both feet (or the other one)."""
ONE_LEG_FULL = 0.6
"""Share on that foot alone that scores full marks (the tasks' success rule, `tasks.ONE_LEG_FRACTION`)."""
FLIGHT_FULL = 0.05
"""Share of the motion with both feet off the ground that scores a run or a jog full marks (`tasks.FLIGHT_FRACTION`):
without a flight phase it is a walk, whatever its speed."""
HIGH_KNEES_FULL_DEG = 60.0
"""Hip flexion (deg, `hip_flexion_peak_deg`) that scores high knees full marks (`tasks.HIGH_KNEES_DEG`)."""
FACING_CAP_DEG = 45.0
"""Turn (deg, either way) that caps a sideways or diagonal travel at NO_PROGRESS_CAP: it turned to face the way and
walked there forward (the tasks' success rule allows `tasks.FACING_TURN_DEG`)."""
SIDEWAYS_SPEED_MPS = 0.3
"""On-course speed that counts as full progress for a sideways or diagonal travel (m/s): people side-step at about
0.3-0.6 m/s."""
STAY_DRIFT_M = 1.0
"""Travel (m) that caps a motion asked to stay in place at NO_PROGRESS_CAP."""
STAND_TILT_DEG = 45.0
"""Trunk tilt (deg from vertical, at its worst) that caps a motion asked to stand still at NO_PROGRESS_CAP: it pitched
or kicked about instead (the calibration set's flailing stand tips to 76° and swings a foot 1.2 m up, yet scored 9.2
as "stand still" before this gate)."""


@dataclass(frozen=True)
class Finding:
    """One check's verdict."""

    check: str
    score: float
    """0 (fails) to 1 (meets the target)."""
    weight: float
    """Importance in the overall score; checks the description asked for weigh more."""
    issue: Issue | None = None
    suggestions: tuple[Suggestion, ...] = ()
    meets: bool = True
    """False when the motion misses the check's target even with a passing score (a gait check's human-like
    target); success needs every weighted check to pass and meet its target."""


PASS_SCORE = 0.6
"""Least score of every weighted check for success."""


def is_walking(targets: Targets) -> bool:
    """Whether the task asks for a gait (judged against people's walking): travel forward or backward, or step on
    the spot. Not a sideways or diagonal travel: people's normative gait data are of walking straight ahead, so a
    diagonal walk's side-steps would be judged unlike a walk for doing what was asked."""
    return (targets.locomotion and targets.direction != 0 and targets.lateral is None) or targets.step_in_place


def is_standing(targets: Targets) -> bool:
    """Whether the task asks to stand still: stay in place (not stepping on the spot) without turning."""
    return targets.stay_in_place and targets.turn is None


@dataclass(frozen=True)
class Gate:
    """A physics fact that caps any critic's score and forbids success."""

    check: str
    """The check (in CHECKS) this gate settles."""
    cap: float
    """Highest allowed score (0-10)."""
    reason: str
    issue: Issue


def _num(d: Descriptors, name: str, default: float = float("nan")) -> float:
    value = d.get(name)
    return default if value is None else float(value)


def physics_gates(targets: Targets, d: Descriptors) -> list[Gate]:
    """The hard facts: a fall, no progress (or the wrong way) when asked to travel, stepping about or the trunk
    tipping over when asked to stand still, travel when asked to stay."""
    gates = []
    if d.get("fell"):
        t, duration = _num(d, "fall_time_s", 0.0), _num(d, "duration_s", 1.0)
        gates.append(Gate("fall", round(FALL_CAP * t / duration, 2), f"fell at {t:.2f} s",
                          Issue("whole body", f"the body fell at {t:.2f} s (pelvis low or a non-foot part on the "
                                "ground)", t)))
    if targets.course is not None:
        gates += _course_gates(targets, d)
    elif targets.locomotion and targets.turn is None:
        progress = targets.direction * _num(d, "speed_mps", 0.0)
        if progress < 0.1 * WALK_SPEED_MPS:
            way = "forward" if targets.direction > 0 else "backward"
            gates.append(Gate("speed", NO_PROGRESS_CAP, f"no progress {way} ({progress:.2f} m/s)",
                              Issue("pelvis", f"travelled {progress:.2f} m/s {way}; the task asks to move {way}")))
    if targets.stance_leg is not None and not d.get("fell") and one_leg_share(targets, d) < ONE_LEG_GATE:
        share, leg = one_leg_share(targets, d), _leg_words(targets)
        gates.append(Gate("one_leg", NO_PROGRESS_CAP, f"{share:.0%} of the motion on {leg} alone",
                          Issue("feet", f"stood on {leg} alone {share:.0%} of the time; the task asks to stand on it")))
    steps = _num(d, "steps", 0.0)
    if is_standing(targets) and not d.get("fell") and steps > STEPPING_ABOUT:
        gates.append(Gate("still", NO_PROGRESS_CAP, f"stepped {steps:.0f} times while asked to stand still",
                          Issue("feet", f"{steps:.0f} steps; the task asks to stand still")))
    tilt = _num(d, "trunk_tilt_max_deg", 0.0)
    if is_standing(targets) and not d.get("fell") and tilt > STAND_TILT_DEG:
        gates.append(Gate("still", NO_PROGRESS_CAP, f"the trunk tipped {tilt:.0f}° while asked to stand still",
                          Issue("torso", f"the trunk tipped {tilt:.0f}° from vertical; the task asks to stand still")))
    drift = float(np.hypot(_num(d, "distance_m", 0.0), _num(d, "lateral_drift_m", 0.0)))
    if not targets.locomotion and targets.turn is None and drift > STAY_DRIFT_M:
        gates.append(Gate("stay", NO_PROGRESS_CAP, f"travelled {drift:.2f} m while asked to stay in place",
                          Issue("pelvis", f"travelled {drift:.2f} m; the task asks to stay in place")))
    return gates


def course_progress(targets: Targets, d: Descriptors) -> float:
    """On-course travel (m) of a sideways or diagonal task (`control.metrics.on_course`: metres its way less metres
    off it), from the descriptors' displacement."""
    displacement = np.array([[_num(d, "distance_m", 0.0), _num(d, "lateral_drift_m", 0.0)]])
    return float(course_metrics(displacement)[targets.course or "sideways"][0])


def _course_words(course: str) -> str:
    return course.replace("_", " and to the ").replace("sideways and to the", "sideways to the") \
        if course != "sideways" else "sideways"


def _course_gates(targets: Targets, d: Descriptors) -> list[Gate]:
    """A sideways or diagonal travel that did not go its way (a forward walk drifting aside goes 45° off it and
    less), or that turned to face its way."""
    gates = []
    way = _course_words(targets.course or "sideways")
    speed = course_progress(targets, d) / max(_num(d, "duration_s", 1.0), 1e-6)
    if speed < 0.1 * WALK_SPEED_MPS:
        gates.append(Gate("speed", NO_PROGRESS_CAP, f"no progress {way} ({speed:.2f} m/s on course)",
                          Issue("pelvis", f"travelled {speed:.2f} m/s {way} (on course); the task asks to move "
                                          f"{way}")))
    turn = _num(d, "heading_change_deg", 0.0)
    if abs(turn) > FACING_CAP_DEG:
        gates.append(Gate("facing", NO_PROGRESS_CAP, f"turned {turn:.0f}° while asked to travel {way} facing ahead",
                          Issue("pelvis", f"turned {turn:.0f}° to face its way; the task asks to travel {way} "
                                          "facing ahead")))
    return gates


def one_leg_share(targets: Targets, d: Descriptors) -> float:
    """Share of the motion (0-1) on the stance foot alone asked for (either: the larger)."""
    left, right = _num(d, "left_leg_stand", 0.0), _num(d, "right_leg_stand", 0.0)
    return {"left": left, "right": right}.get(targets.stance_leg or "", max(left, right))


def _leg_words(targets: Targets) -> str:
    return "one foot" if targets.stance_leg == "either" else f"the {targets.stance_leg} foot"


def _one_leg(t: Targets, d: Descriptors) -> Finding:
    """A stand on one leg: the share of the motion on that foot alone, full marks at ONE_LEG_FULL."""
    if t.stance_leg is None:
        return Finding("one_leg", 1.0, 0.0)
    share = one_leg_share(t, d)
    score = float(np.clip(share / ONE_LEG_FULL, 0.0, 1.0))
    if score >= 1.0:
        return Finding("one_leg", score, 3.0)
    stance = "left" if t.stance_leg == "either" else t.stance_leg
    return Finding("one_leg", score, 3.0, Issue("feet", f"on {_leg_words(t)} alone {share:.0%} of the time, wanted "
                                                        f"{ONE_LEG_FULL:.0%}"), (
        Suggestion("one_leg_stance", "add", "reward standing on that foot with the other lifted",
                   {"stance": stance, "lift": 0.1}),
        Suggestion("stance_balance", "add", "keep the capture point over the stance foot", {"stance": stance}),
        Suggestion("capture_point", "remove", "it accepts the body between both feet")), meets=share >= ONE_LEG_FULL)


def _flight(t: Targets, d: Descriptors) -> Finding:
    """A run or a jog has a flight phase: the share of the motion with both feet off the ground."""
    if not t.run:
        return Finding("flight", 1.0, 0.0)
    flight = _num(d, "flight_fraction", 0.0)
    score = float(np.clip(flight / FLIGHT_FULL, 0.0, 1.0))
    if score >= 1.0:
        return Finding("flight", score, 3.0)
    return Finding("flight", score, 3.0, Issue("feet", f"both feet off the ground {flight:.0%} of the time: a walk, "
                                                       "not a run"), (
        Suggestion("feet_air_time", "increase", "longer swings leave both feet in the air between steps"),
        Suggestion("cadence", "add", "run at a quicker step rate", {"target": 2.8})), meets=flight >= FLIGHT_FULL)


def _knee_height(t: Targets, d: Descriptors) -> Finding:
    """High knees (or a march): how high both thighs come up."""
    if "high-knees" not in t.styles:
        return Finding("knee_height", 1.0, 0.0)
    peak = _num(d, "hip_flexion_peak_deg", 0.0)
    score = float(np.clip(peak / HIGH_KNEES_FULL_DEG, 0.0, 1.0))
    if score >= 1.0:
        return Finding("knee_height", score, 2.0)
    return Finding("knee_height", score, 2.0, Issue("knees", f"thighs come up {peak:.0f}°, high knees need about "
                                                             f"{HIGH_KNEES_FULL_DEG:.0f}°"), (
        Suggestion("swing_hip_flexion", "add", "lift each swinging thigh higher",
                   {"target": round(float(np.radians(HIGH_KNEES_FULL_DEG + 10.0)), 2)}),
        Suggestion("joint_posture", "decrease", "it pulls the hips back to neutral")),
                   meets=peak >= HIGH_KNEES_FULL_DEG)


def _fall(t: Targets, d: Descriptors) -> Finding:
    if not d.get("fell"):
        return Finding("fall", 1.0, 3.0)
    time = _num(d, "fall_time_s", 0.0)
    return Finding("fall", 0.0, 3.0, Issue("whole body", f"fell at {time:.2f} s", time), (
        Suggestion("alive", "add", "reward every step the pelvis stays high"),
        Suggestion("upright", "increase", "the trunk tipped over before the fall"),
        Suggestion("nonfoot_contact", "add", "penalise knees, hands or trunk touching the ground")))


def _progress(t: Targets, d: Descriptors) -> Finding:
    if not t.locomotion and t.turn is not None:
        return Finding("stay", 1.0, 0.0)  # turning on the spot: some wandering is expected
    if t.course is not None:
        return _course_progress(t, d)
    if not t.locomotion:
        drift = float(np.hypot(_num(d, "distance_m", 0.0), _num(d, "lateral_drift_m", 0.0)))
        score = float(np.clip(1.0 - (drift - 0.2) / 0.5, 0.0, 1.0))
        meets = drift <= STAY_RADIUS_M  # the task metric's radius (stay_fraction)
        issue = None if meets else Issue("pelvis", f"wandered {drift:.2f} m while asked to stay in place (within "
                                                   f"{STAY_RADIUS_M:g} m)")
        return Finding("stay", score, 2.0, issue, (Suggestion("velocity_tracking", "add", "hold still",
                                                              {"forward": 0.0, "lateral": 0.0}),) if issue else (),
                       meets=meets)
    speed = _num(d, "mean_forward_vel", 0.0) if t.turn else t.direction * _num(d, "speed_mps", 0.0)
    wanted = t.speed_mps
    if wanted is None:
        score = float(np.clip(speed / WALK_SPEED_MPS, 0.0, 1.0))
    else:
        score = float(np.exp(-np.square((speed - wanted) / (0.5 * wanted))))
    if score >= 0.8:
        return Finding("speed", score, 3.0)
    goal = f"about {wanted:g} m/s" if wanted is not None else f"at least {WALK_SPEED_MPS:g} m/s"
    way = "backward" if t.direction < 0 else "forward"
    action: Action = "decrease" if wanted is not None and speed > wanted else "increase"
    target = t.direction * (wanted if wanted is not None else WALK_SPEED_MPS)
    return Finding("speed", score, 3.0, Issue("pelvis", f"moved {speed:.2f} m/s {way}, wanted {goal}"), (
        Suggestion("velocity_tracking", "add" if action == "increase" else "increase",
                   f"track {target:g} m/s {way}", {"forward": target}),
        Suggestion("forward_velocity", action if t.direction > 0 else "remove",
                   "speed is off target" if t.direction > 0 else "it rewards moving forward, the task is backward")))


def _course_progress(t: Targets, d: Descriptors) -> Finding:
    """A sideways or diagonal travel's on-course speed against SIDEWAYS_SPEED_MPS."""
    course = t.course or "sideways"
    speed = course_progress(t, d) / max(_num(d, "duration_s", 1.0), 1e-6)
    score = float(np.clip(speed / SIDEWAYS_SPEED_MPS, 0.0, 1.0))
    if score >= 0.8:
        return Finding("speed", score, 3.0)
    x, y = COURSES.get(course, COURSES["sideways_left"])
    course_deg = round(float(np.degrees(np.arctan2(y, x))))
    return Finding("speed", score, 3.0, Issue("pelvis", f"moved {speed:.2f} m/s {_course_words(course)} (on course), "
                                                        f"wanted at least {SIDEWAYS_SPEED_MPS:g} m/s"), (
        Suggestion("course_velocity", "add", f"track {SIDEWAYS_SPEED_MPS:g} m/s {_course_words(course)}",
                   {"course_deg": course_deg, "speed": SIDEWAYS_SPEED_MPS}),
        Suggestion("course_path", "add", "keep to a point moving along the course", {"course_deg": course_deg}),
        Suggestion("forward_velocity", "remove", "it rewards walking forward, the task is sideways")))


def _facing(t: Targets, d: Descriptors) -> Finding:
    """A sideways or diagonal travel keeps facing ahead: full marks within 15°, none at 45°."""
    if t.course is None:
        return Finding("facing", 1.0, 0.0)
    turn = _num(d, "heading_change_deg", 0.0)
    score = float(np.clip(1.0 - (abs(turn) - 15.0) / 30.0, 0.0, 1.0))
    if score >= 0.8:
        return Finding("facing", score, 2.0)
    return Finding("facing", score, 2.0, Issue("pelvis", f"turned {turn:.0f}° away from the start heading; the task "
                                                         "asks to keep facing ahead"), (
        Suggestion("heading_error", "add", "keep facing the start heading", {"target": 0.0}),
        Suggestion("yaw_rate", "remove", "it rewards turning")))


def _turn(t: Targets, d: Descriptors) -> Finding:
    sign = 1.0 if t.turn == "left" else -1.0
    if t.turn is None:
        return Finding("turn", 1.0, 0.0)
    turned = sign * _num(d, "heading_change_deg", 0.0)
    score = float(np.clip(turned / t.turn_deg, 0.0, 1.0)) * (0.5 if turned > 1.6 * t.turn_deg else 1.0)
    if score >= 0.8:
        return Finding("turn", score, 3.0)
    issue = Issue("pelvis", f"turned {turned:.0f}° {t.turn}, wanted {t.turn_deg:.0f}°")
    if not t.locomotion:  # on the spot: to a heading, since a rate held for the whole motion overshoots the angle
        end = round(sign * float(np.radians(t.turn_deg)), 4)
        return Finding("turn", score, 3.0, issue, (
            Suggestion("heading_error", "add", f"turn {t.turn} to {t.turn_deg:.0f}° and face there", {"target": end}),
            Suggestion("yaw_rate", "remove", "a rate held throughout overshoots the angle")))
    rate = sign * float(np.clip(np.radians(t.turn_deg) / max(_num(d, "duration_s", 1.0), 1e-6), 0.2, 1.0))
    return Finding("turn", score, 3.0, issue, (
        Suggestion("yaw_rate", "add", f"turn {t.turn} at {rate:.2f} rad/s", {"target": round(float(rate), 3)}),
        Suggestion("heading", "remove", "holding the start heading fights the turn")))


def _straight(t: Targets, d: Descriptors) -> Finding:
    if not (t.locomotion and t.straight_line and t.turn is None):
        return Finding("straight", 1.0, 0.0)
    drift, turn = abs(_num(d, "lateral_drift_m", 0.0)), abs(_num(d, "heading_change_deg", 0.0))
    score = float(np.clip(1.0 - max(drift - 0.2, 0.0) / 0.6 - max(turn - 15.0, 0.0) / 45.0, 0.0, 1.0))
    if score >= 0.8:
        return Finding("straight", score, 1.0)
    return Finding("straight", score, 1.0, Issue("pelvis", f"drifted {drift:.2f} m sideways and turned {turn:.0f}°"), (
        Suggestion("side_velocity", "add", "penalise sideways drift"),
        Suggestion("heading", "add", "keep facing the start direction", {"target": 0.0})))


def _upright(t: Targets, d: Descriptors) -> Finding:
    """The trunk's mean tilt; for a walk not asked to be upright only its roll (the gait check `trunk_lean`
    judges the forward or backward lean against people's)."""
    pitch, roll = _num(d, "trunk_pitch_deg", 0.0), _num(d, "trunk_roll_deg", 0.0)
    if is_walking(t) and not t.upright:
        pitch = 0.0
    tilt = float(np.hypot(pitch, roll))
    allowed = 8.0 if t.upright else 15.0
    score = float(np.clip(1.0 - (tilt - allowed) / 25.0, 0.0, 1.0))
    weight = 2.0 if t.upright else 0.5
    if score >= 0.8:
        return Finding("upright", score, weight)
    lean = (f"{abs(pitch):.0f}° {'forward' if pitch > 0 else 'backward'}" if abs(pitch) >= abs(roll)
            else f"{abs(roll):.0f}° to the {'left' if roll > 0 else 'right'}")
    return Finding("upright", score, weight, Issue("torso", f"trunk leans {lean} on average"), (
        Suggestion("upright", "increase", "keep the torso vertical"),))


def _knees(t: Targets, d: Descriptors) -> Finding:
    stance = _num(d, "knee_stance_deg", 0.0)
    if not t.straight_knees or np.isnan(stance):
        return Finding("knees", 1.0, 0.0)
    score = float(np.clip(1.0 - (stance - 10.0) / 30.0, 0.0, 1.0))
    if score >= 0.8:
        return Finding("knees", score, 2.0)
    return Finding("knees", score, 2.0, Issue("knees", f"knees bent {stance:.0f}° in stance, wanted near straight"), (
        Suggestion("knee_extension", "add", "straighten the knees in stance", {"stance_only": True}),))


def _clearance(t: Targets, d: Descriptors) -> Finding:
    wanted = {"stairs": 0.1, "rough": 0.05}.get(t.terrain or "", 0.08 if t.high_steps else 0.0)
    clearance = _num(d, "foot_clearance_m", 0.0)
    if not (t.locomotion and t.high_steps) or wanted == 0.0:
        return Finding("clearance", 1.0, 0.0)
    clearance = 0.0 if np.isnan(clearance) else clearance
    score = float(np.clip(clearance / wanted, 0.0, 1.0))
    if score >= 0.8:
        return Finding("clearance", score, 1.5)
    return Finding("clearance", score, 1.5, Issue("feet", f"swing feet rise {clearance * 100:.1f} cm, "
                                                           f"{wanted * 100:.0f} cm needed"), (
        Suggestion("foot_clearance", "add", "lift the swing foot", {"target": wanted}),))


def _stepping(t: Targets, d: Descriptors) -> Finding:
    if not t.locomotion or d.get("fell"):
        return Finding("stepping", 1.0, 0.0)
    steps, cadence = _num(d, "steps", 0.0), _num(d, "cadence_spm", 0.0)
    symmetry = _num(d, "stride_symmetry", 0.0)
    if steps < 2:
        return Finding("stepping", 0.0, 1.5, Issue("feet", f"{steps:.0f} steps: the body does not step"), (
            Suggestion("feet_air_time", "add", "reward lifting each foot for a swing phase"),))
    if (t.symmetric or steps >= 4) and symmetry < 0.6:
        return Finding("stepping", symmetry, 1.5 if t.symmetric else 1.0, Issue(
            "legs", f"uneven gait: {d.get('steps_left')} left and {d.get('steps_right')} right touchdowns"), (
            Suggestion("gait_symmetry", "add", "make both legs step alike"),))
    if not is_walking(t) and not 50.0 <= cadence <= 160.0:  # a walk's cadence is a gait check
        return Finding("stepping", 0.5, 1.0, Issue("legs", f"cadence {cadence:.0f} steps/min, humans walk 100-120"), (
            Suggestion("cadence", "add", "bring the step rate near 1.8 steps/s"),))
    return Finding("stepping", 1.0, 1.0)


def _still(t: Targets, d: Descriptors) -> Finding:
    """Standing still (asked to stay, not to step or turn): a step or two to catch the balance is what people do;
    more is stepping about, which a person asked to stand still would count as not doing it."""
    if not is_standing(t) or d.get("fell"):
        return Finding("still", 1.0, 0.0)
    steps = _num(d, "steps", 0.0)
    score = float(np.clip(1.0 - (steps - STILL_STEPS) / 6.0, 0.0, 1.0))
    if score >= 0.8:
        return Finding("still", score, 3.0)
    return Finding("still", score, 3.0, Issue("feet", f"{steps:.0f} steps while asked to stand still"), (
        Suggestion("velocity_tracking", "increase", "hold still", {"forward": 0.0, "lateral": 0.0}),
        Suggestion("feet_air_time", "remove", "it rewards lifting the feet")))


def _effort(t: Targets, d: Descriptors) -> Finding:
    effort = _num(d, "effort", 0.0)
    if not t.efficient:
        return Finding("effort", 1.0, 0.0)
    score = float(np.clip(1.0 - (effort - 0.1) / 0.3, 0.0, 1.0))
    if score >= 0.8:
        return Finding("effort", score, 1.0)
    return Finding("effort", score, 1.0, Issue("muscles", f"mean squared control {effort:.2f} is high"), (
        Suggestion("muscle_effort", "add", "penalise effort"),
        Suggestion("action_smoothness", "add", "smooth the controls")))


CHECKS: dict[str, Callable[[Targets, Descriptors], Finding]] = {
    "fall": _fall, "speed": _progress, "facing": _facing, "one_leg": _one_leg, "flight": _flight,
    "knee_height": _knee_height, "turn": _turn, "straight": _straight,
    "upright": _upright, "knees": _knees, "clearance": _clearance, "stepping": _stepping, "still": _still,
    "effort": _effort,
}
"""The builtin critic's checks, by name."""


@dataclass(frozen=True)
class Judgement:
    """All checks combined."""

    score: float
    """0-10: 10 × weighted mean of the physics checks' scores and, for a walking task, of the gait checks' weighted
    geometric mean (weighing their total weight), capped by physics gates."""
    success: bool
    """No gate applies and every weighted check scores at least PASS_SCORE and meets its target."""
    findings: tuple[Finding, ...]
    gates: tuple[Gate, ...]


def _geometric_mean(findings: Sequence[Finding]) -> float:
    """Weighted geometric mean of the findings' scores (0 without weight): one score near 0 pulls it down."""
    weight = sum(f.weight for f in findings)
    if not weight:
        return 0.0
    return float(np.exp(sum(f.weight * np.log(max(f.score, 1e-6)) for f in findings) / weight))


def judge(targets: Targets, d: Descriptors, gait: Sequence[Finding] = ()) -> Judgement:
    """Run every check, add the `gait` findings (`rewardloop.critic.gait_rules`), combine them (see Judgement)."""
    physics = tuple(check(targets, d) for check in CHECKS.values())
    findings = physics + tuple(gait)
    gait_weight = sum(f.weight for f in gait)
    total = sum(f.weight for f in physics) + gait_weight or 1.0
    score = 10.0 * (sum(f.weight * f.score for f in physics) + gait_weight * _geometric_mean(gait)) / total
    gates = tuple(physics_gates(targets, d))
    for gate in gates:
        score = min(score, gate.cap)
    success = not gates and all(f.score >= PASS_SCORE and f.meets for f in findings if f.weight > 0)
    return Judgement(round(score, 2), success, findings, gates)
