"""The offline builtin designer: candidates from fixed rules in a fixed order, one plan family after another.

It is not a language model. Each family lives in its own module: the speed plans (`speed`: aim a walk at its stated
speed, raise or push a passing walk's travel), the fixes of the critique's suggestions (`fixes`), and random
reweighting to fill the rest (`explore`). This module orders them, drops programs already tried, and checks them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from rewardloop.critic.critique import Critique
from rewardloop.design_context import DesignContext
from rewardloop.designer.aims import Plan, travels
from rewardloop.designer.explore import reweightings
from rewardloop.designer.fixes import fix_plans
from rewardloop.designer.proposal import Checker, Proposal
from rewardloop.designer.speed import missed_speed_plans, travel_plans
from rewardloop.designer.start import library_program
from rewardloop.errors import UserError
from rewardloop.reward.library import TERMS
from rewardloop.reward.program import ProgramError, RewardProgram

BUILTIN_LABEL = "builtin (rule-based reward edits from the critique, not a language model)"


class BuiltinDesigner:
    """Rule-based edits from the critique's suggestions (see apply_edit); offline and deterministic per seed.

    Candidates, in order: every suggestion applied (weights ×2); in a task that travels and states no speed, the
    same with its target speed raised, and at a stated speed the walk is off, the same with its target aimed by the
    miss (`fixes.paced_plans`); every suggestion applied strongly (×4) with conflicting terms dropped; each suggestion
    alone; then random log-normal weight perturbations of the first (`explore`).
    A walk off its stated speed gets its travel target moved by how far it missed (`reaimed`) first, before any
    suggestion (`speed.missed_speed_plans`). A motion the critic passes with nothing to fix, in a task that travels
    and states no speed, first gets its target speed raised ×1.05 and ×1.1, with people's cadence for it where its
    program has a cadence band (`sped_up`, `SPEED_RAISES`), then its travel pushed: the terms that reward it
    (`travel_terms`) weighted ×2, ×1.4 and ×1.2 (`TRAVEL_PUSHES`), since the task's metric (the distance) then decides
    between motions the critic ties and that miss as few of people's gait targets. The perturbations are drawn per
    run seed and per iteration (the number of edits tried), and no program is proposed twice in a run.
    """

    name = "builtin"

    def __init__(self, *, seed: int = 0, spread: float = 0.5,
                 checker: Callable[[DesignContext], Checker] | None = None):
        self.seed, self.spread, self._checker = seed, spread, checker

    def propose(self, context: DesignContext, k: int) -> list[Proposal]:
        """Up to k distinct programs, each different from the current one."""
        program = context.program or library_program(context.targets())
        plans = self._plans(context, program)
        seen = {context.program.hash} if context.program else set()
        seen |= {record.program_hash for record in context.history}
        proposals = list[Proposal]()
        if context.program is None:
            self._add(proposals, seen, k, "starting program: library terms chosen from the description by rules",
                      lambda: program)
        for rationale, make in plans:
            self._add(proposals, seen, k, rationale, make)
        base = proposals[0].program if proposals and proposals[0].program else program
        draws = reweightings(base, seed=self.seed, iteration=len(context.history), spread=self.spread)
        for rationale, make in itertools.islice(draws, 20 * k):
            if len(proposals) >= k:
                break
            self._add(proposals, seen, k, rationale, make)
        return self._checked(context, proposals)

    @staticmethod
    def _plans(context: DesignContext, program: RewardProgram) -> list[Plan]:
        """The rule-based plans, in order: the aim at a missed stated speed, then the fixes of the critique's
        suggestions that apply to this program, or for a passing travelling motion with nothing to fix, the raises
        and pushes of its travel."""
        critique = context.critique or Critique(False, 0.0)
        usable = [s for s in critique.suggestions if s.term in TERMS or s.term in program.weights]
        plans = missed_speed_plans(context, program)
        if usable:
            plans += fix_plans(context, program, usable)
        elif critique.success and travels(context):
            plans += travel_plans(context, program)
        return plans

    def _add(self, proposals: list[Proposal], seen: set[str], k: int, rationale: str,
             make: Callable[[], RewardProgram]) -> None:
        if len(proposals) >= k:
            return
        try:
            program = make()
        except (ProgramError, UserError):
            return  # an edit that cannot apply to this program is skipped
        if program.hash not in seen:
            seen.add(program.hash)
            proposals.append(Proposal(program, rationale, "ok", designer=BUILTIN_LABEL))

    def _checked(self, context: DesignContext, proposals: list[Proposal]) -> list[Proposal]:
        if self._checker is None:
            return proposals  # built only from validated programs and vetted library terms
        check = self._checker(context)
        out = []
        for p in proposals:
            report = check(p.program.source) if p.program else None
            ok = report is None or report.passed
            out.append(p if ok else Proposal(None, p.rationale, "failed", tuple(report.problems if report else ()),
                                             0, p.designer))
        return out
