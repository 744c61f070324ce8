"""What the builtin designer's plans share: what a task asks of travel (does it travel, at what stated speed, how far
the motion missed it), which of a program's terms reward travel, and the words a candidate's rationale is made of.

A plan family (`fixes`, `speed`) decides what to edit; these helpers say whether the task lets it, so that every
family reads the task the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rewardloop.critic.critique import Suggestion
from rewardloop.design_context import DesignContext
from rewardloop.designer.edits import matching_terms
from rewardloop.reward.program import RewardProgram, term_reads

Plan = tuple[str, Callable[[], RewardProgram]]
"""A builtin designer's candidate: its rationale, and what makes its program (an edit that cannot apply raises)."""

REAIM_MIN = 0.005
"""A walk within this of its stated speed (m/s) is not re-aimed (`speed.reaimed`)."""

_VELOCITY = frozenset({"com_vel", "forward_vel"})
_TIME = frozenset({"time", "standing_height"})


def describe(suggestions: Sequence[Suggestion]) -> str:
    """The suggestions in a rationale's words, e.g. 'add hands_still, increase speed'."""
    return ", ".join(f"{s.action} {s.term}" + (f" {s.params}" if s.params else "") for s in suggestions)


def aim_words(miss: float) -> str:
    """The words of an aim for a walk `miss` m/s faster (+) or slower (-) than its stated speed."""
    return f"aim its travel target {abs(miss):.3f} m/s {'lower' if miss > 0 else 'higher'}"


def travel_terms(program: RewardProgram) -> list[str]:
    """The program's terms that reward travel: the library's forward_velocity and velocity_tracking, and terms of
    its own code that read only the body's velocity (and the time or standing height), such as the canonical walks'
    `speed`."""
    own = {name for name, (reads, calls) in term_reads(program).items()
           if not calls and reads & _VELOCITY and reads <= _VELOCITY | _TIME}
    found = own.union(*(matching_terms(program, term) for term in ("forward_velocity", "velocity_tracking")))
    return [name for name in program.term_names if name in found]


def travel_push(context: DesignContext, program: RewardProgram, reason: str, *,
                skip: frozenset[str] | set[str] = frozenset()) -> list[Suggestion]:
    """An 'increase' of each of the program's `travel_terms` not in `skip`, in a task that travels and states no
    speed (at a stated speed the walk is aimed, not pushed); [] otherwise."""
    if stated_speed(context) is not None or not travels(context):
        return []
    return [Suggestion(name, "increase", reason) for name in travel_terms(program) if name not in skip]


def off_stated_speed(context: DesignContext) -> tuple[float, float] | None:
    """The stated and measured speeds (m/s, signed along +x) of a travelling walk off its stated speed by REAIM_MIN
    or more; None where it states no speed, has no metrics or is within REAIM_MIN."""
    stated, measured = stated_speed(context), measured_speed(context)
    if stated is None or measured is None or not travels(context) or abs(measured - stated) < REAIM_MIN:
        return None
    return stated, measured


def measured_speed(context: DesignContext) -> float | None:
    """The signed mean speed along +x (m/s) of the motion the context judges, None where it has no metrics."""
    return context.metrics.speed if context.metrics else None


def stated_speed(context: DesignContext) -> float | None:
    """The signed speed along +x (m/s) the description states, None where it states none."""
    from rewardloop.spec import spec_from_description

    spec = context.spec or spec_from_description(context.description)
    return spec.sign * spec.speed_mps if spec.speed_mps is not None and spec.locomotion else None


def travels(context: DesignContext) -> bool:
    """Whether the task travels forward or backward (not standing, stepping on the spot or turning)."""
    t = context.targets()
    return t.locomotion and t.direction != 0 and t.turn is None and not t.step_in_place
