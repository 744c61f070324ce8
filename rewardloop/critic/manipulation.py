"""The builtin critic's checks of object tasks: the object's errors at the end, drops, the grip, finger gaiting and
wrist posture, measured from the hand and object features and judged against the task's goal.

Like the locomotion rules it is a set of rules over physics measurements, not a learned model. Its suggestions
name the manipulation terms of the reward library, so the builtin designer's edits do too.
"""

from __future__ import annotations

import numpy as np

from rewardloop.critic.critique import Issue, Suggestion
from rewardloop.critic.rules import FALL_CAP, Descriptors, Finding, Gate, Judgement
from rewardloop.sim.hand import Manipulation

WRIST_LIMIT_DEG = 40.0
"""Wrist flexion or deviation beyond this is an awkward posture (deg); people pour and turn with the wrist within
about 30-40° of neutral."""
REGRIPS_PER_S = 3.0
"""More fingertip touch-downs on the object than this per second is finger gaiting (re-gripping) rather than a
steady hold."""
GRIP_FRACTION = 0.5
"""A hold keeps at least two parts of the hand on the object for this fraction of the motion."""


def _num(d: Descriptors, name: str) -> float:
    value = d.get(name)
    return float("nan") if value is None else float(value)


def _closeness(error: float, tolerance: float) -> float:
    """1 within the tolerance, falling linearly to 0 at five times it."""
    return float(np.clip(1.0 - (error - tolerance) / (4 * tolerance), 0.0, 1.0)) if np.isfinite(error) else 0.0


def _position(goal: Manipulation, d: Descriptors) -> Finding:
    error, tolerance = _num(d, "object_position_error_cm"), goal.goal_radius_m * 100
    what = "the cube's centre" if goal.object == "cube" else "the bottle's mouth"
    if error <= tolerance:
        return Finding("object position", 1.0, 3.0)
    return Finding("object position", _closeness(error, tolerance), 3.0,
                   Issue("object", f"{what} ended {error:.1f} cm from its goal (within {tolerance:g} cm wanted)"),
                   (Suggestion("position_error", "increase", f"{what} drifted from its goal"),))


def _orientation(goal: Manipulation, d: Descriptors) -> Finding:
    if goal.object == "bottle":
        tilt, wanted = _num(d, "object_tilt_deg"), float(np.degrees(goal.min_tilt_rad))
        if tilt >= wanted:
            return Finding("bottle tilt", 1.0, 3.0)
        return Finding("bottle tilt", float(np.clip(tilt / wanted, 0.0, 1.0)) ** 2, 3.0,
                       Issue("bottle", f"tilted {tilt:.0f}° from upright; pouring needs at least {wanted:.0f}°"),
                       (Suggestion("spill_angle", "increase", "the bottle did not tip past horizontal"),))
    error, tolerance = _num(d, "object_orientation_error_deg"), float(np.degrees(goal.goal_angle_rad))
    if error <= tolerance:
        return Finding("cube orientation", 1.0, 3.0)
    return Finding("cube orientation", _closeness(error, tolerance), 3.0,
                   Issue("cube", f"ended {error:.0f}° from the goal orientation (turned "
                         f"{_num(d, 'object_turn_deg'):.0f}° of {goal.turn_deg:g}°)"),
                   (Suggestion("orientation_error", "increase", "the cube did not turn far enough"),
                    Suggestion("object_turn", "add", "reward the turn about the vertical directly",
                               {"target": round(float(np.radians(goal.turn_deg)), 4)})))


def _grip(goal: Manipulation, d: Descriptors) -> Finding:
    fraction = _num(d, "grip_fraction")
    if fraction >= GRIP_FRACTION:
        return Finding("grip", 1.0, 1.5)
    return Finding("grip", float(np.clip(fraction / GRIP_FRACTION, 0.0, 1.0)), 1.5,
                   Issue("fingers", f"held the {goal.object} with two or more parts for only {fraction:.0%} of "
                         "the motion"),
                   (Suggestion("grasp", "add", "keep the fingertips and palm on the object"),
                    Suggestion("object_reach", "add", "keep the fingertips close to the object")))


def _gaiting(goal: Manipulation, d: Descriptors) -> Finding:
    rate = _num(d, "regrips_per_s")
    if not rate > REGRIPS_PER_S:
        return Finding("steady grip", 1.0, 0.5)
    return Finding("steady grip", float(np.clip(REGRIPS_PER_S / rate, 0.0, 1.0)), 0.5,
                   Issue("fingers", f"re-gripped {rate:.1f} times per second (finger gaiting) instead of holding"),
                   (Suggestion("grasp", "increase", "the fingers keep letting go of the object"),))


def _wrist(goal: Manipulation, d: Descriptors) -> Finding:
    worst = max(_num(d, "wrist_flexion_max_deg"), _num(d, "wrist_deviation_max_deg"))
    if not worst > WRIST_LIMIT_DEG:
        return Finding("wrist posture", 1.0, 0.5)
    return Finding("wrist posture", float(np.clip(WRIST_LIMIT_DEG / worst, 0.0, 1.0)), 0.5,
                   Issue("wrist", f"bent {worst:.0f}° (people keep it within about {WRIST_LIMIT_DEG:.0f}°)"),
                   (Suggestion("wrist_posture", "add", "keep the wrist near neutral"),))


CHECKS = {"object position": _position, "orientation": _orientation, "grip": _grip, "steady grip": _gaiting,
          "wrist posture": _wrist}
"""The object checks by name."""


def drop_gate(d: Descriptors) -> Gate | None:
    """A dropped object caps the score like a fall, earlier drops lower."""
    if not d.get("dropped"):
        return None
    time, duration = _num(d, "drop_time_s"), _num(d, "duration_s")
    time = time if np.isfinite(time) else 0.0
    return Gate("drop", round(FALL_CAP * time / max(duration, 1e-9), 2), f"dropped the object at {time:.2f} s",
                Issue("object", f"the object dropped at {time:.2f} s", time))


def judge_manipulation(goal: Manipulation, d: Descriptors) -> Judgement:
    """Run the object checks, combine them (weighted mean × 10), cap by a drop; success as the task's rule (the
    object within its tolerances at the end, not dropped): the grip, gaiting and wrist checks weigh on the score."""
    findings = tuple(check(goal, d) for check in CHECKS.values())
    total = sum(f.weight for f in findings)
    score = 10.0 * sum(f.weight * f.score for f in findings) / total
    gate = drop_gate(d)
    gates = (gate,) if gate is not None else ()
    if gate is not None:
        score = min(score, gate.cap)
        findings += (Finding("drop", 0.0, 3.0, gate.issue, (
            Suggestion("drop_penalty", "increase", "penalise dropping the object"),
            Suggestion("grasp", "add", "hold the object with more of the hand"))),)
    at_goal = all(f.score == 1.0 for f in findings if f.check in GOAL_CHECKS)
    return Judgement(round(score, 2), not gates and at_goal, findings, gates)


GOAL_CHECKS = ("object position", "cube orientation", "bottle tilt")
"""The checks of the task's success rule: the object within its tolerances at the end."""
