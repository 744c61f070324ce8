"""The starting program: library terms chosen by rules from what the description asks, for a task with no program
yet (no canonical reward), so that the first iteration has a motion to judge.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rewardloop.reward.program import RewardProgram

if TYPE_CHECKING:
    from rewardloop.critic.physics import Targets

Term = tuple[str, float, dict[str, Any]]
"""A library term of the starting program: its name, weight and parameters."""

_STEPPING: list[Term] = [("feet_air_time", 1.0, {"target": 0.3}), ("cadence", 1.0, {"target": 1.8})]
"""Swing each foot in turn at people's step rate: a motion of steps that does not travel along its heading (on the
spot, sideways) gets no steps from a travel term."""


def library_program(t: Targets) -> RewardProgram:
    """A library-only program for what a description asks (its targets, as the critic reads them)."""
    from rewardloop.reward.program import format_weights

    terms: list[Term] = [
        ("alive", 1.0, {}), ("upright", 1.0, {}), ("nonfoot_contact", 1.0, {}), ("action_smoothness", 0.5, {})]
    terms += _travel_terms(t) + _pose_terms(t)
    if t.straight_knees:
        terms.append(("knee_extension", 1.0, {"stance_only": True}))
    if t.high_steps:
        terms.append(("foot_clearance", 20.0, {"target": 0.1 if t.terrain == "stairs" else 0.06}))
    if t.efficient:
        terms.append(("muscle_effort", 0.05, {}))
    chosen: dict[str, Term] = {}
    for term in terms:
        chosen.setdefault(term[0], term)  # a term two asks share (a jog on the spot's step rate) comes once, first
    functions = [f"def {name}(f):\n    return lib.{name}(f{''.join(f', {k}={v!r}' for k, v in params.items())})\n"
                 for name, _, params in chosen.values()]
    weights = {name: weight for name, weight, _ in chosen.values()}
    return RewardProgram.from_source("\n".join(functions) + "\n" + format_weights(weights))


def _travel_terms(t: Targets) -> list[Term]:
    """How the body travels or turns: along a course facing ahead (sideways, diagonally), along its heading, turning
    while walking, or turning on the spot to the angle asked (to a heading: a rate held for the whole motion
    overshoots it)."""
    if t.course is not None:
        from rewardloop.reward.canonical import COURSES_DEG, SIDEWAYS_SPEED

        course = {"course_deg": COURSES_DEG.get(t.course, 90.0), "speed": SIDEWAYS_SPEED}
        return [("course_velocity", 1.0, course), ("course_path", 5.0, {"course_deg": course["course_deg"]}),
                ("heading_error", 3.0, {"target": 0.0}), *_STEPPING]
    sign = 1.0 if t.turn == "left" else -1.0
    if t.turn and not t.locomotion:
        return [("heading_error", 2.0, {"target": round(sign * math.radians(t.turn_deg), 4)}), *_STEPPING]
    terms: list[Term] = []
    if t.locomotion:
        terms.append(("velocity_tracking", 2.0, {"forward": t.direction * (t.speed_mps or 1.0)}))
    if t.turn:
        terms.append(("yaw_rate", 2.0, {"target": 0.5 * sign}))
    elif t.locomotion:
        terms += [("heading", 0.5, {"target": 0.0}), ("side_velocity", 0.5, {})]
    if t.run:
        terms.append(("cadence", 1.0, {"target": 2.8}))
    return terms


def _pose_terms(t: Targets) -> list[Term]:
    """What the body holds or repeats in place: a stand on one leg over that foot, steps on the spot, thighs lifted
    high (high knees, a march)."""
    terms: list[Term] = []
    if t.stance_leg is not None:
        stance = "left" if t.stance_leg == "either" else t.stance_leg
        terms += [("one_leg_stance", 6.0, {"stance": stance, "lift": 0.1}), ("stance_balance", 6.0, {"stance": stance}),
                  ("heading_error", 1.0, {"target": 0.0})]
    if t.step_in_place and not t.turn:
        terms += _STEPPING
    if "high-knees" in t.styles:
        terms.append(("swing_hip_flexion", 15.0, {"target": 1.4}))
    return terms
