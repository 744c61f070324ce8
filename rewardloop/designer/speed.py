"""Speed plans: a travelling walk's target speed raised or its travel terms pushed when it passes every check at no
stated speed, and its travel target aimed by the miss when it is off a stated speed.

The target moves (`sped_up`, `reaimed`) change where the program's travel target sits (the top of a canonical walk's
speed ramp, the `forward` of a library velocity_tracking term) and leave its weights; the pushes change the weights of
its travel terms (`aims.travel_terms`) and leave the target.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from rewardloop.design_context import DesignContext
from rewardloop.designer.aims import Plan, aim_words, describe, off_stated_speed, travel_push
from rewardloop.designer.edits import (
    Edit,
    computed_arguments,
    edited_by,
    literal_arguments,
    matching_terms,
    with_params,
)
from rewardloop.errors import UserError
from rewardloop.reward.program import RewardProgram

TRAVEL_PUSHES = (2.0, 1.4, 1.2)
"""Weight factors on the travel terms of `travel_plans`, strongest first. A walk that already meets every check may
go further when pushed, but the push also quickens the steps and swings the hips and pelvis more
(the small bench's muscle legs, 2026-12-06: ×2 went 0.07-0.35 m further in 4 s, and 4 of the 5 walks pushed so
missed people's cadence, pelvis yaw or hip peak), so milder pushes come next, for the loop to keep the furthest walk
that stays like people's."""

SPEED_RAISES = (1.05, 1.1)
"""Factors on the target speed (`sped_up`) of `travel_plans`, before the pushes of TRAVEL_PUSHES. The
canonical walk's target raised with its cadence band's pace, 4-s motions as the small bench's loop makes them (3 seeds,
2026-12-07): at ×1.05 the humanoid went 0.10-0.45 m further than its canonical walk in every seed with all nine of
people's gait targets met, the muscle legs 0.11 m in 1 seed and within 4 mm in 2; at ×1.1 the humanoid 0.21-0.39 m in
2 seeds with all nine (the third missed the hip peak), the muscle legs 0.03-0.22 m in every seed with all nine. The
raise with the cadence band kept went about as far, with the same motion as the canonical walk's in 1 of 6 at ×1.05;
at ×1.15 both bodies missed 1-3 targets (hip peak, trunk lean, knee swing) in every seed, and pushing the speed term's
weight ×1.4 as well missed the pelvis yaw or the hip peak in 2 of 6."""


def travel_plans(context: DesignContext, program: RewardProgram) -> list[Plan]:
    """For a motion that passes with nothing to fix and states no speed: its target speed raised (`sped_up`), one
    plan per factor of SPEED_RAISES, then its travel terms pushed (`travel_terms`), one per factor of
    TRAVEL_PUSHES; at a stated speed `missed_speed_plans` aims it instead."""
    push = travel_push(context, program, "push the travel the task scores")
    if not push:
        return []
    from rewardloop.reward.canonical import has_pace

    pace = " with people's cadence for it" if has_pace(program.source) else ""
    raises = [(f"the motion passes every check, raise its target speed (×{factor:g}){pace}",
               functools.partial(sped_up, program, factor)) for factor in SPEED_RAISES]
    return raises + [(f"the motion passes every check, push its travel (×{factor:g}): " + describe(push),
                      edited_by(program, [Edit(s, factor) for s in push])) for factor in TRAVEL_PUSHES]


def missed_speed_plans(context: DesignContext, program: RewardProgram) -> list[Plan]:
    """For a walk off its stated speed by REAIM_MIN or more: its travel target moved by the miss (`reaimed`),
    before the critic's suggestions, which rank the faults a person sees and may leave the speed out (a walk
    within the task's tolerance, `tasks.speed_tolerance`, succeeds, but is still aimed at what was asked)."""
    from rewardloop.tasks import speed_tolerance

    if (speeds := off_stated_speed(context)) is None:
        return []
    stated, measured = speeds
    within = abs(measured - stated) <= speed_tolerance(stated)
    return [reaim_plan(program, stated, measured, "the motion is off" if within else "the motion misses")]


def reaimed(program: RewardProgram, by: float) -> RewardProgram:
    """`program` with its travel target moved by `by` m/s: the top of a canonical walk's speed ramp at a stated
    speed (`canonical.with_ramp_top`), and the literal `forward` of its library velocity_tracking terms. A walk that
    misses its stated speed by d is aimed d the other way, as a person tuning it would. A UserError when it has
    neither."""
    from rewardloop.reward.canonical import ramp_top, with_ramp_top

    top = ramp_top(program.source)
    edited = program if top is None else RewardProgram.from_source(with_ramp_top(program.source, top + by))
    return tracking_moved(program, edited, lambda forward: forward + by)


def sped_up(program: RewardProgram, factor: float) -> RewardProgram:
    """`program` with its travel target at no stated speed × `factor`: the top of a canonical walk's speed ramp (k ×
    standing height) with its cadence band's pace (`canonical.with_faster_top`), and the literal `forward` of its
    library velocity_tracking terms. A UserError when it has neither."""
    from rewardloop.reward.canonical import with_faster_top

    try:
        edited = RewardProgram.from_source(with_faster_top(program.source, factor))
    except UserError:
        edited = program
    return tracking_moved(program, edited, lambda forward: forward * factor)


def tracking_moved(program: RewardProgram, edited: RewardProgram,
                    move: Callable[[float], float]) -> RewardProgram:
    """`edited` (`program` with its ramps moved, or itself) with the literal `forward` of its library velocity_tracking
    terms moved by `move` (m/s -> m/s); a UserError when that leaves `program` as it was."""
    for name in matching_terms(program, "velocity_tracking"):
        if not computed_arguments(edited, name, "velocity_tracking"):
            params = literal_arguments(edited, name, "velocity_tracking")
            params["forward"] = round(move(float(params.get("forward", 1.2))), 3)
            edited = with_params(edited, name, "velocity_tracking", params)
    if edited.hash == program.hash:
        raise UserError("the program has no travel target to move")
    return edited


def reaim_plan(program: RewardProgram, stated: float, measured: float, why: str) -> Plan:
    """The plan that aims `program`'s travel target by what the walk missed its stated speed (`reaimed`); `why`
    opens its rationale, e.g. 'the motion misses'."""
    miss = measured - stated
    return (f"{why} its stated speed at {measured:.3f} m/s, {miss:+.3f} from the stated {stated:g}: {aim_words(miss)}",
            functools.partial(reaimed, program, -miss))

