"""Fix plans: the critic's suggestions applied to the program (all of them, all of them strongly, each alone), and
in a travelling task the fix again with its travel kept, since a fix may cost effort the planner pays from the
travel the task scores.
"""

from __future__ import annotations

from collections.abc import Callable

from rewardloop.critic.critique import Suggestion
from rewardloop.design_context import DesignContext
from rewardloop.designer.aims import Plan, aim_words, describe, off_stated_speed, travel_push
from rewardloop.designer.edits import Edit, edited_by
from rewardloop.designer.speed import reaimed, sped_up
from rewardloop.errors import UserError
from rewardloop.reward.program import RewardProgram

FIX = 2.0
"""Weight factor of a suggestion's edit (`Edit.strength`) in the plain fix and in each suggestion alone."""

STRONG_FIX = 4.0
"""Weight factor of a suggestion's edit in the strong fix, which also drops the terms conflicting with it."""

PACE_RAISES = (1.05, 1.1)
"""Factors on the target speed (`sped_up`) in `paced_plans`, one plan each. The humanoid's flat walk
with the critic's fix for its hands (`hands_still`, `action_smoothness`), 4-s motions against its canonical walk in the
same seed (3 seeds, 2026-12-07): the fix alone -0.23, -0.02 and +0.13 m; with the target ×1.05 +0.01, -0.18 and +0.05
m; ×1.1 -0.04, +0.33 and +0.13 m; all nine of people's gait targets met throughout."""

PACE_PUSH = 1.5
"""Weight factor on the travel terms of `paced_plans` where the program has no target speed."""


def fix_plans(context: DesignContext, program: RewardProgram, usable: list[Suggestion]) -> list[Plan]:
    """Every suggestion applied; the same with its travel kept (`paced_plans`); every suggestion applied strongly with
    conflicting terms dropped; then each suggestion alone, in that order."""
    plans: list[Plan] = [("apply every suggestion: " + describe(usable),
                          edited_by(program, [Edit(s, FIX) for s in usable]))]
    plans += paced_plans(context, program, usable)
    plans.append(("apply every suggestion strongly, drop conflicting terms: " + describe(usable),
                  edited_by(program, [Edit(s, STRONG_FIX) for s in usable], drop=True)))
    return plans + [(f"only {describe([s])}: {s.reason}", edited_by(program, [Edit(s, FIX)])) for s in usable]


def paced_plans(context: DesignContext, program: RewardProgram, usable: list[Suggestion]) -> list[Plan]:
    """For a task that travels and states no speed: every suggestion applied with its target speed raised too,
    one plan per factor of PACE_RAISES (`sped_up`), or where it has no target, its travel terms pushed
    (`travel_terms` ×PACE_PUSH). Where the critic ties this motion with the plain fix, the task's metric keeps the
    one that went further. At a stated speed the walk missed by REAIM_MIN or more: every suggestion applied with its
    travel target aimed by the miss (`reaimed`), as the aim alone is in `speed.missed_speed_plans`."""
    fixes = [Edit(s, FIX) for s in usable]
    if (speeds := off_stated_speed(context)) is not None:
        miss = speeds[1] - speeds[0]
        return [(f"apply every suggestion and {aim_words(miss)}: " + describe(usable),
                 lambda: reaimed(edited_by(program, fixes)(), -miss))]
    push = travel_push(context, program, "keep the travel the task scores", skip={s.term for s in usable})
    if not push:
        return []
    try:
        sped_up(program, PACE_RAISES[0])
    except UserError:  # no target speed to raise: push the travel terms instead
        return [("apply every suggestion and keep the pace: " + describe([*usable, *push]),
                 edited_by(program, fixes + [Edit(s, PACE_PUSH) for s in push]))]

    def paced(factor: float) -> Callable[[], RewardProgram]:
        return lambda: sped_up(edited_by(program, fixes)(), factor)
    return [(f"apply every suggestion and keep the pace (its target speed ×{factor:g}): " + describe(usable),
             paced(factor)) for factor in PACE_RAISES]
