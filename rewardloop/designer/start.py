"""The starting program: library terms chosen by rules from what the description asks, for a task with no program
yet (no canonical reward), so that the first iteration has a motion to judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rewardloop.reward.program import RewardProgram

if TYPE_CHECKING:
    from rewardloop.critic.physics import Targets


def library_program(t: Targets) -> RewardProgram:
    """A library-only program for what a description asks (its targets, as the critic reads them)."""
    from rewardloop.reward.program import format_weights

    terms: list[tuple[str, float, dict[str, Any]]] = [
        ("alive", 1.0, {}), ("upright", 1.0, {}), ("nonfoot_contact", 1.0, {}), ("action_smoothness", 0.5, {})]
    if t.locomotion:
        terms.append(("velocity_tracking", 2.0, {"forward": t.direction * (t.speed_mps or 1.0)}))
    if t.turn:
        terms.append(("yaw_rate", 2.0, {"target": 0.5 if t.turn == "left" else -0.5}))
    elif t.locomotion:
        terms += [("heading", 0.5, {"target": 0.0}), ("side_velocity", 0.5, {})]
    if t.straight_knees:
        terms.append(("knee_extension", 1.0, {"stance_only": True}))
    if t.high_steps:
        terms.append(("foot_clearance", 20.0, {"target": 0.1 if t.terrain == "stairs" else 0.06}))
    if t.efficient:
        terms.append(("muscle_effort", 0.05, {}))
    functions = [f"def {name}(f):\n    return lib.{name}(f{''.join(f', {k}={v!r}' for k, v in params.items())})\n"
                 for name, _, params in terms]
    return RewardProgram.from_source("\n".join(functions) + "\n" + format_weights({n: w for n, w, _ in terms}))


