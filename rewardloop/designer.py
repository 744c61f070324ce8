"""Designers: turn the best reward program and its critique into K new candidate programs.

`Designer` asks a language model. Its prompt holds the description, the feature reference, the program
format and term library, the current best program, the critique, per-term statistics, task metrics and the
history of edits tried; it answers with K programs in code blocks. Each goes through the reward checker, and
a failing one goes back to the model with the checker's report for up to `max_repairs` repairs.

`BuiltinDesigner` is the offline default. It is not a language model: it maps the critique's suggestions to
reward edits with fixed rules (raise or lower a weight, add a library term, drop a conflicting one) and can
tune weights with CMA-ES on a task metric (`tune_weights`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rewardloop.critic.critique import Critique, Suggestion
from rewardloop.design_context import DesignContext
from rewardloop.models.accounting import BudgetExceeded
from rewardloop.models.base import (
    Completion,
    Message,
    ModelBackend,
    ModelError,
    ModelSpec,
    context_is_assumed,
    context_window,
)
from rewardloop.models.context import (
    MESSAGE_TOKENS,
    answer_room,
    complete_fitted,
    context_too_small,
    estimate_tokens,
    message_tokens,
)
from rewardloop.prompts import render_prompt
from rewardloop.prompts.design import compact_prompt, full_prompt, program_text
from rewardloop.reward.library import TERMS
from rewardloop.reward.program import ProgramError, RewardProgram, term_reads

if TYPE_CHECKING:
    from rewardloop.critic.physics import Targets

Status = Literal["ok", "failed"]


@dataclass(frozen=True)
class Proposal:
    """One candidate: a checked program and why, or a failure after repairs."""

    program: RewardProgram | None
    """None when status is 'failed'."""
    rationale: str
    status: Status
    problems: tuple[str, ...] = ()
    """The checker's problems of the last attempt (for a failure)."""
    repairs: int = 0
    """Repair rounds it took."""
    designer: str = ""


class CheckResult(Protocol):
    """What the designer needs from a check report (rewardloop.reward.check.CheckReport)."""

    @property
    def passed(self) -> bool: ...

    @property
    def problems(self) -> list[str]: ...

    def to_text(self) -> str: ...


Checker = Callable[[str], CheckResult]
"""Program source -> check report."""


def default_checker(context: DesignContext) -> Checker:
    """The reward checker (rewardloop.reward.check.check_program) on the context's scene."""
    from rewardloop.reward.check import check_program

    return lambda source: check_program(source, context.scene, body=context.body)


_CANDIDATE = re.compile(r"###\s*Candidate[^:\n]*:?\s*(?P<why>[^\n]*)\n(?P<between>.*?)```(?:python|py)?\s*\n"
                        r"(?P<code>.*?)```", re.DOTALL)
_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


def parse_candidates(text: str) -> list[tuple[str, str]]:
    """(rationale, source) pairs from '### Candidate N: why' headings with code blocks, or bare code blocks."""
    found = [(m.group("why").strip(), m.group("code")) for m in _CANDIDATE.finditer(text)]
    return found or [("", code) for code in _BLOCK.findall(text)]


PromptForm = Literal["auto", "full", "compact"]


@dataclass(frozen=True)
class DesignerConfig:
    """How a model designer asks."""

    temperature: float = 0.3
    """Sampling temperature (MotionVL uses 0.3)."""
    max_repairs: int = 2
    """Times a candidate that fails the checker goes back to the model with the report."""
    max_tokens: int = 6000
    """Answer tokens asked for at most; fewer when the server's context is shorter."""
    rounds: int = 2
    """Requests made to collect K distinct candidates, beyond those the context needs (a small context takes
    one candidate per request)."""
    prompt_form: PromptForm = "auto"
    """'full' (designer_v2), 'compact' (designer_compact_v1, for 4k contexts and slow servers) or 'auto': full
    when it fits the server's context with room for the answers, else compact."""


@dataclass(frozen=True)
class DesignPlan:
    """How one propose() asks: which prompt, and how many candidates per request."""

    form: Literal["full", "compact"]
    per_call: int
    """Candidates asked per request."""
    candidate_tokens: int
    """Answer tokens one candidate is expected to take."""

    def prompt(self, context: DesignContext, k: int, already: Sequence[str] = ()) -> str:
        return (full_prompt if self.form == "full" else compact_prompt)(context, k, already)


def candidate_tokens(program: RewardProgram | None) -> int:
    """Answer tokens one candidate takes: its heading and a program a little longer than the current one
    (estimated from its text without docstrings), 250 at least."""
    return max(250, int(1.3 * estimate_tokens(program_text(program, compact=True))) + 40)


class Designer:
    """A language-model designer: K candidate programs, each checked and repaired.

    The prompt and its answer are fitted to the server's context: the full prompt when it fits, else the compact
    one, asking for as many candidates per request as the context leaves room for. A local server that ends its
    answer early (most likely a context smaller than it was taken to be) is asked once more with the compact
    prompt and fewer answer tokens. A request that fails after its retries ends the design (the loop records the
    iteration as failed) unless candidates already came; an answer without a program, or a repair request that
    fails, fails only that candidate."""

    def __init__(self, backend: ModelBackend, config: DesignerConfig = DesignerConfig(), *,
                 checker: Callable[[DesignContext], Checker] = default_checker):
        self.backend, self.config, self._checker = backend, config, checker
        self.name = backend.name

    def propose(self, context: DesignContext, k: int) -> list[Proposal]:
        """Up to k proposals: distinct programs that passed the checker, or failures after repairs."""
        plan = self.plan(context, k)
        drafts: dict[str, tuple[str, str]] = {}
        prompt, unparsed = "", ""
        for _ in range(-(-k // plan.per_call) + self.config.rounds - 1):
            count = min(plan.per_call, k - len(drafts))
            already = [rationale for rationale, _ in drafts.values()]
            prompt = plan.prompt(context, count, already)
            compact = [Message.user(compact_prompt(context, count, already))]
            try:
                answer = self._ask([Message.user(prompt)], count * plan.candidate_tokens, plan.form, compact)
            except BudgetExceeded:
                raise
            except ModelError:
                if not drafts:
                    raise
                break  # keep the candidates that came
            found = parse_candidates(answer.text)
            unparsed = unparsed or ("" if found else answer.text)
            self._collect(context, found, drafts)
            if len(drafts) >= k:
                break
        if not drafts:
            return [_no_program(unparsed, self.name)]
        check = self._checker(context)
        return [self._checked(prompt, rationale, source, check, plan) for rationale, source in
                list(drafts.values())[:k]]

    def plan(self, context: DesignContext, k: int) -> DesignPlan:
        """The prompt form and candidates per request that fit the server's context (all k without one); a
        one-line ModelError naming the context to start the server with when not even one candidate fits (one
        is asked for all the same when the context is only assumed: the server may hold more)."""
        window, each = context_window(self.backend), candidate_tokens(context.program)
        form = self.config.prompt_form
        if form == "auto":
            full = estimate_tokens(full_prompt(context, k)) + MESSAGE_TOKENS
            form = "full" if window is None or answer_room(window, full) >= k * each else "compact"
        plan = DesignPlan(form, k, each)
        if window is None:
            return plan
        needed = estimate_tokens(plan.prompt(context, k)) + MESSAGE_TOKENS
        per_call = min(k, answer_room(window, needed) // each)
        if per_call < 1 and not context_is_assumed(self.backend):
            raise context_too_small(window, f"the {form} designer prompt", needed, each)
        return DesignPlan(form, max(per_call, 1), each)

    def _ask(self, messages: list[Message], minimum: int, form: str, shorter: list[Message]) -> Completion:
        """The answer to `messages`, fitted to the server's context; `shorter` is asked once instead when a local
        server ends its answer early."""
        return complete_fitted(self.backend, messages, wanted=self.config.max_tokens, minimum=minimum,
                               what=f"the {form} designer prompt", temperature=self.config.temperature,
                               shorter=shorter)

    @staticmethod
    def _collect(context: DesignContext, found: list[tuple[str, str]], drafts: dict[str, tuple[str, str]]) -> None:
        for rationale, source in found:
            key = "\n".join(line.rstrip() for line in source.strip().splitlines())
            if (context.program is None or key != context.program.source.strip()) and key not in drafts:
                drafts[key] = (rationale, source)

    def _checked(self, prompt: str, rationale: str, source: str, check: Checker, plan: DesignPlan) -> Proposal:
        for repair in range(self.config.max_repairs + 1):
            report = check(source)
            if report.passed:
                return Proposal(RewardProgram.from_source(source), rationale, "ok", repairs=repair,
                                designer=self.name)
            if repair == self.config.max_repairs:
                break
            conversation = self._repair_messages(prompt, rationale, source, report, plan)
            try:
                answer = self._ask(conversation, plan.candidate_tokens, plan.form, conversation[-1:])
            except BudgetExceeded:
                raise
            except ModelError as error:
                problems = (*report.problems, f"the repair request failed: {str(error).splitlines()[0]}")
                return Proposal(None, rationale, "failed", problems, repair, self.name)
            repaired = parse_candidates(answer.text)
            if repaired:
                rationale, source = repaired[0][0] or rationale, repaired[0][1]
        return Proposal(None, rationale, "failed", tuple(report.problems), self.config.max_repairs, self.name)

    def _repair_messages(self, prompt: str, rationale: str, source: str, report: CheckResult,
                         plan: DesignPlan) -> list[Message]:
        """The conversation so far and the checker's report; only the report and program when the conversation
        would not leave room for the answer in the server's context."""
        fix = render_prompt("repair_v1", program=source.strip(), report=report.to_text())
        conversation = [Message.user(prompt), Message.assistant(f"### Candidate: {rationale}\n```python\n{source}```"),
                        Message.user(fix)]
        window = context_window(self.backend)
        if window is None or answer_room(window, message_tokens(conversation)) >= plan.candidate_tokens:
            return conversation
        return [Message.user(fix)]


def _no_program(answer: str, designer: str) -> Proposal:
    """The failed candidate of a model whose answers held no program."""
    shown = " ".join(answer.split())[:160]
    return Proposal(None, "the model's answer held no program", "failed",
                    (f"no ```python code block in the answer: {shown!r}",), 0, designer)


ADD_WEIGHTS: dict[str, float] = {
    "foot_clearance": 20.0, "muscle_effort": 0.05, "torques": 1e-4, "velocity_tracking": 2.0, "yaw_rate": 2.0,
    "side_velocity": 0.5, "heading": 0.5, "gait_symmetry": 0.5, "cadence": 0.5, "action_smoothness": 0.5,
    "hands_still": 0.25,
}
"""Starting weight of a library term the builtin designer adds (1.0 when not listed), sized from the canonical
programs so the new term neither vanishes nor dominates. hands_still: on the humanoid's injured 10-s walk (the gait
planner, seed 0) a hand's range across or up-down went 0.25 m -> 0.16 m at 0.25 (11.9 -> 10.8 m walked), 0.14 m at
0.5, 0.11 m at 1 (10.4 m, the cadence 113 -> 103 steps/min); 0.1 left it as it was."""

CONFLICTS: dict[str, tuple[str, ...]] = {
    "velocity_tracking": ("forward_velocity",),
    "yaw_rate": ("heading",),
    "knee_extension": ("joint_posture",),
}
"""Adding the key term makes these library terms work against it; the strong candidate drops them."""


@dataclass(frozen=True)
class Edit:
    """One reward edit derived from a suggestion."""

    suggestion: Suggestion
    strength: float
    """Weight factor for increase/decrease (a decrease divides), multiplier of the starting weight for add."""


def matching_terms(program: RewardProgram, term: str) -> list[str]:
    """Program terms that implement library term `term`: same name, a call of lib.term, or reading exactly the
    features lib.term reads."""
    library = set(TERMS[term].reads) if term in TERMS else None
    return [name for name, (reads, calls) in term_reads(program).items()
            if name == term or term in calls or (library is not None and not calls and reads and reads == library)]


def _computed_arguments(program: RewardProgram, name: str, term: str) -> bool:
    """Whether term `name` calls lib.`term` with a keyword computed in the program (e.g. the canonical walks'
    `speed=target`), which a replacement from literal parameters would lose."""
    return any(not isinstance(keyword.value, ast.Constant) for call in _calls(program, name, term)
               for keyword in call.keywords)


def _literal_arguments(program: RewardProgram, name: str, term: str) -> dict[str, Any]:
    """The literal keyword arguments term `name` passes lib.`term`."""
    return {keyword.arg: keyword.value.value for call in _calls(program, name, term) for keyword in call.keywords
            if keyword.arg and isinstance(keyword.value, ast.Constant)}


def _with_params(program: RewardProgram, name: str, term: str, params: dict[str, Any]) -> RewardProgram:
    """`program` with term `name` rewritten as lib.`term` with `params`, at its weight; unchanged where it is the
    program's only term."""
    if len(program.term_names) < 2:
        return program
    return program.without_term(name).with_library_term(term, program.weights[name], params, name=name)


def _calls(program: RewardProgram, name: str, term: str) -> list[ast.Call]:
    """The calls of lib.`term` in the function of term `name`."""
    functions = [n for n in ast.parse(program.source).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return [node for function in functions for node in ast.walk(function) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == term]


def apply_edit(program: RewardProgram, edit: Edit) -> RewardProgram:
    """The program after one edit; unchanged when the edit does not apply (e.g. removing an absent term)."""
    s, matches = edit.suggestion, matching_terms(program, edit.suggestion.term)
    if s.action == "remove":
        for name in matches:
            if len(program.term_names) > 1:
                program = program.without_term(name)
        return program
    if (s.action == "add" and matches and s.params and s.term in TERMS
            and not _computed_arguments(program, matches[0], s.term)):  # same term, new parameters: replace
        return _with_params(program, matches[0], s.term, s.params)
    if matches and s.action in ("add", "increase", "decrease"):
        factor = edit.strength if s.action != "decrease" else 1.0 / edit.strength
        return program.with_weights({name: program.weights[name] * factor for name in matches})
    if s.action in ("add", "increase") and s.term in TERMS:
        weight = ADD_WEIGHTS.get(s.term, 1.0) * max(1.0, edit.strength / 2.0)
        return program.with_library_term(s.term, weight, s.params or None)
    return program


def drop_conflicts(program: RewardProgram, added: Sequence[str]) -> RewardProgram:
    """Remove terms that implement library terms conflicting with the ones just added."""
    for term in added:
        for rival in CONFLICTS.get(term, ()):
            for name in matching_terms(program, rival):
                if name in program.weights and len(program.term_names) > 1:
                    program = program.without_term(name)
    return program


Plan = tuple[str, Callable[[], RewardProgram]]
"""A builtin designer's candidate: its rationale, and what makes its program (an edit that cannot apply raises)."""

BUILTIN_LABEL = "builtin (rule-based reward edits from the critique, not a language model)"


class BuiltinDesigner:
    """Rule-based edits from the critique's suggestions (see apply_edit); offline and deterministic per seed.

    Candidates, in order: every suggestion applied (weights ×2); in a task that travels and states no speed, the
    same with its target speed raised, and at a stated speed the walk is off, the same with its target aimed by the
    miss (`_paced_plans`); every suggestion applied strongly (×4) with conflicting terms dropped; each suggestion
    alone; then random log-normal weight perturbations of the first.
    A walk off its stated speed gets its travel target moved by how far it missed (`reaimed`) first, before any
    suggestion (`_missed_speed_plans`). A motion the critic passes with nothing to fix, in a task that travels and
    states no speed, first gets its target speed raised ×1.05 and ×1.1, with people's cadence for it where its program
    has a cadence band (`sped_up`, `SPEED_RAISES`), then its travel pushed: the terms that reward it (`travel_terms`)
    weighted ×2, ×1.4 and ×1.2 (`TRAVEL_PUSHES`), since the task's metric (the distance) then decides between motions
    the critic ties and that miss as few of people's gait targets. The perturbations are drawn per run seed and per
    iteration (the number of edits tried), and no program is proposed twice in a run.
    """

    name = "builtin"

    def __init__(self, *, seed: int = 0, spread: float = 0.5,
                 checker: Callable[[DesignContext], Checker] | None = None):
        self.seed, self.spread, self._checker = seed, spread, checker

    def propose(self, context: DesignContext, k: int) -> list[Proposal]:
        """Up to k distinct programs, each different from the current one."""
        import numpy as np

        program = context.program or library_program(context.targets())
        critique = context.critique or Critique(False, 0.0)
        usable = [s for s in critique.suggestions if s.term in TERMS or s.term in program.weights]
        plans = self._missed_speed_plans(context, program)
        if usable:
            plans.append(("apply every suggestion: " + _describe(usable),
                          self._edits(program, [Edit(s, 2.0) for s in usable])))
            plans += self._paced_plans(context, program, usable)
            plans.append(("apply every suggestion strongly, drop conflicting terms: " + _describe(usable),
                          self._edits(program, [Edit(s, 4.0) for s in usable], drop=True)))
            plans += [(f"only {_describe([s])}: {s.reason}", self._edits(program, [Edit(s, 2.0)])) for s in usable]
        elif critique.success and _travels(context):
            plans += self._travel_plans(context, program)
        seen = {context.program.hash} if context.program else set()
        seen |= {record.program_hash for record in context.history}
        proposals = list[Proposal]()
        if context.program is None:
            self._add(proposals, seen, k, "starting program: library terms chosen from the description by rules",
                      lambda: program)
        for rationale, make in plans:
            self._add(proposals, seen, k, rationale, make)
        rng = np.random.default_rng(self.seed + 1000 * len(context.history))  # a new draw per edit tried
        base = proposals[0].program if proposals and proposals[0].program else program
        for _ in range(20 * k):
            if len(proposals) >= k:
                break
            factors = np.exp(rng.normal(0.0, self.spread, len(base.term_names)))
            weights = {n: round(w * float(f), 4) for (n, w), f in zip(base.weights.items(), factors, strict=True)}
            self._add(proposals, seen, k, "explore: weights scaled by random log-normal factors",
                      functools.partial(base.with_weights, weights))
        return self._checked(context, proposals)

    @staticmethod
    def _edits(program: RewardProgram, edits: list[Edit], *, drop: bool = False) -> Callable[[], RewardProgram]:
        """Makes the program after `edits`, then without the terms conflicting with those added where `drop`."""
        def make() -> RewardProgram:
            edited = program
            for edit in edits:
                edited = apply_edit(edited, edit)
            added = [e.suggestion.term for e in edits if e.suggestion.action in ("add", "increase")]
            return drop_conflicts(edited, added) if drop else edited
        return make

    def _travel_plans(self, context: DesignContext, program: RewardProgram) -> list[Plan]:
        """For a motion that passes with nothing to fix and states no speed: its target speed raised (`sped_up`), one
        plan per factor of SPEED_RAISES, then its travel terms pushed (`travel_terms`), one per factor of
        TRAVEL_PUSHES; at a stated speed `_missed_speed_plans` aims it instead."""
        push = _travel_push(context, program, "push the travel the task scores")
        if not push:
            return []
        from rewardloop.reward.canonical import has_pace

        pace = " with people's cadence for it" if has_pace(program.source) else ""
        raises = [(f"the motion passes every check, raise its target speed (×{factor:g}){pace}",
                   functools.partial(sped_up, program, factor)) for factor in SPEED_RAISES]
        return raises + [(f"the motion passes every check, push its travel (×{factor:g}): " + _describe(push),
                          self._edits(program, [Edit(s, factor) for s in push])) for factor in TRAVEL_PUSHES]

    def _paced_plans(self, context: DesignContext, program: RewardProgram, usable: list[Suggestion]) -> list[Plan]:
        """For a task that travels and states no speed: every suggestion applied with its target speed raised too,
        one plan per factor of PACE_RAISES (`sped_up`), or where it has no target, its travel terms pushed
        (`travel_terms` ×PACE_PUSH). A fix may cost effort the planner pays from the travel the task scores; where the
        critic ties this motion with the plain fix, the task's metric keeps the one that went further. At a stated
        speed the walk missed by REAIM_MIN or more: every suggestion applied with its travel target aimed by the miss
        (`reaimed`), as the aim alone is in `_missed_speed_plans`."""
        from rewardloop.errors import UserError

        fixes = [Edit(s, 2.0) for s in usable]
        if (speeds := _off_stated_speed(context)) is not None:
            miss = speeds[1] - speeds[0]
            return [(f"apply every suggestion and {_aim(miss)}: " + _describe(usable),
                     lambda: reaimed(self._edits(program, fixes)(), -miss))]
        push = _travel_push(context, program, "keep the travel the task scores", skip={s.term for s in usable})
        if not push:
            return []
        try:
            sped_up(program, PACE_RAISES[0])
        except UserError:
            return [("apply every suggestion and keep the pace: " + _describe([*usable, *push]),
                     self._edits(program, fixes + [Edit(s, PACE_PUSH) for s in push]))]

        def paced(factor: float) -> Callable[[], RewardProgram]:
            return lambda: sped_up(self._edits(program, fixes)(), factor)
        return [(f"apply every suggestion and keep the pace (its target speed ×{factor:g}): " + _describe(usable),
                 paced(factor)) for factor in PACE_RAISES]

    @staticmethod
    def _missed_speed_plans(context: DesignContext, program: RewardProgram) -> list[Plan]:
        """For a walk off its stated speed by REAIM_MIN or more: its travel target moved by the miss (`reaimed`),
        before the critic's suggestions, which rank the faults a person sees and may leave the speed out (a walk
        within the task's tolerance, `tasks.speed_tolerance`, succeeds, but is still aimed at what was asked)."""
        from rewardloop.tasks import speed_tolerance

        if (speeds := _off_stated_speed(context)) is None:
            return []
        stated, measured = speeds
        within = abs(measured - stated) <= speed_tolerance(stated)
        return [_reaim_plan(program, stated, measured, "the motion is off" if within else "the motion misses")]

    def _add(self, proposals: list[Proposal], seen: set[str], k: int, rationale: str,
             make: Callable[[], RewardProgram]) -> None:
        from rewardloop.errors import UserError

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


_VELOCITY = frozenset({"com_vel", "forward_vel"})
_TIME = frozenset({"time", "standing_height"})


def travel_terms(program: RewardProgram) -> list[str]:
    """The program's terms that reward travel: the library's forward_velocity and velocity_tracking, and terms of
    its own code that read only the body's velocity (and the time or standing height), such as the canonical walks'
    `speed`."""
    own = {name for name, (reads, calls) in term_reads(program).items()
           if not calls and reads & _VELOCITY and reads <= _VELOCITY | _TIME}
    found = own.union(*(matching_terms(program, term) for term in ("forward_velocity", "velocity_tracking")))
    return [name for name in program.term_names if name in found]


def _travel_push(context: DesignContext, program: RewardProgram, reason: str, *,
                 skip: frozenset[str] | set[str] = frozenset()) -> list[Suggestion]:
    """An 'increase' of each of the program's `travel_terms` not in `skip`, in a task that travels and states no
    speed (at a stated speed the walk is aimed, not pushed); [] otherwise."""
    if _stated_speed(context) is not None or not _travels(context):
        return []
    return [Suggestion(name, "increase", reason) for name in travel_terms(program) if name not in skip]


TRAVEL_PUSHES = (2.0, 1.4, 1.2)
"""Weight factors on the travel terms of `BuiltinDesigner._travel_plans`, strongest first. A walk that already meets
every check may go further when pushed, but the push also quickens the steps and swings the hips and pelvis more
(the small bench's muscle legs, 2026-12-06: ×2 went 0.07-0.35 m further in 4 s, and 4 of the 5 walks pushed so
missed people's cadence, pelvis yaw or hip peak), so milder pushes come next, for the loop to keep the furthest walk
that stays like people's."""

SPEED_RAISES = (1.05, 1.1)
"""Factors on the target speed (`sped_up`) of `BuiltinDesigner._travel_plans`, before the pushes of TRAVEL_PUSHES. The
canonical walk's target raised with its cadence band's pace, 4-s motions as the small bench's loop makes them (3 seeds,
2026-12-07): at ×1.05 the humanoid went 0.10-0.45 m further than its canonical walk in every seed with all nine of
people's gait targets met, the muscle legs 0.11 m in 1 seed and within 4 mm in 2; at ×1.1 the humanoid 0.21-0.39 m in
2 seeds with all nine (the third missed the hip peak), the muscle legs 0.03-0.22 m in every seed with all nine. The
raise with the cadence band kept went about as far, with the same motion as the canonical walk's in 1 of 6 at ×1.05;
at ×1.15 both bodies missed 1-3 targets (hip peak, trunk lean, knee swing) in every seed, and pushing the speed term's
weight ×1.4 as well missed the pelvis yaw or the hip peak in 2 of 6."""

PACE_RAISES = (1.05, 1.1)
"""Factors on the target speed (`sped_up`) in `BuiltinDesigner._paced_plans`, one plan each. The humanoid's flat walk
with the critic's fix for its hands (`hands_still`, `action_smoothness`), 4-s motions against its canonical walk in the
same seed (3 seeds, 2026-12-07): the fix alone -0.23, -0.02 and +0.13 m; with the target ×1.05 +0.01, -0.18 and +0.05
m; ×1.1 -0.04, +0.33 and +0.13 m; all nine of people's gait targets met throughout."""

PACE_PUSH = 1.5
"""Weight factor on the travel terms of `BuiltinDesigner._paced_plans` where the program has no target speed."""


REAIM_MIN = 0.005
"""A walk within this of its stated speed (m/s) is not re-aimed (`reaimed`)."""


def reaimed(program: RewardProgram, by: float) -> RewardProgram:
    """`program` with its travel target moved by `by` m/s: the top of a canonical walk's speed ramp at a stated
    speed (`canonical.with_ramp_top`), and the literal `forward` of its library velocity_tracking terms. A walk that
    misses its stated speed by d is aimed d the other way, as a person tuning it would. A UserError when it has
    neither."""
    from rewardloop.reward.canonical import ramp_top, with_ramp_top

    top = ramp_top(program.source)
    edited = program if top is None else RewardProgram.from_source(with_ramp_top(program.source, top + by))
    return _tracking_moved(program, edited, lambda forward: forward + by)


def sped_up(program: RewardProgram, factor: float) -> RewardProgram:
    """`program` with its travel target at no stated speed × `factor`: the top of a canonical walk's speed ramp (k ×
    standing height) with its cadence band's pace (`canonical.with_faster_top`), and the literal `forward` of its
    library velocity_tracking terms. A UserError when it has neither."""
    from rewardloop.errors import UserError
    from rewardloop.reward.canonical import with_faster_top

    try:
        edited = RewardProgram.from_source(with_faster_top(program.source, factor))
    except UserError:
        edited = program
    return _tracking_moved(program, edited, lambda forward: forward * factor)


def _tracking_moved(program: RewardProgram, edited: RewardProgram,
                    move: Callable[[float], float]) -> RewardProgram:
    """`edited` (`program` with its ramps moved, or itself) with the literal `forward` of its library velocity_tracking
    terms moved by `move` (m/s -> m/s); a UserError when that leaves `program` as it was."""
    from rewardloop.errors import UserError

    for name in matching_terms(program, "velocity_tracking"):
        if not _computed_arguments(edited, name, "velocity_tracking"):
            params = _literal_arguments(edited, name, "velocity_tracking")
            params["forward"] = round(move(float(params.get("forward", 1.2))), 3)
            edited = _with_params(edited, name, "velocity_tracking", params)
    if edited.hash == program.hash:
        raise UserError("the program has no travel target to move")
    return edited


def _reaim_plan(program: RewardProgram, stated: float, measured: float, why: str) -> Plan:
    """The plan that aims `program`'s travel target by what the walk missed its stated speed (`reaimed`); `why`
    opens its rationale, e.g. 'the motion misses'."""
    miss = measured - stated
    return (f"{why} its stated speed at {measured:.3f} m/s, {miss:+.3f} from the stated {stated:g}: {_aim(miss)}",
            functools.partial(reaimed, program, -miss))


def _aim(miss: float) -> str:
    """The words of an aim for a walk `miss` m/s faster (+) or slower (-) than its stated speed."""
    return f"aim its travel target {abs(miss):.3f} m/s {'lower' if miss > 0 else 'higher'}"


def _off_stated_speed(context: DesignContext) -> tuple[float, float] | None:
    """The stated and measured speeds (m/s, signed along +x) of a travelling walk off its stated speed by REAIM_MIN
    or more; None where it states no speed, has no metrics or is within REAIM_MIN."""
    stated, measured = _stated_speed(context), _measured_speed(context)
    if stated is None or measured is None or not _travels(context) or abs(measured - stated) < REAIM_MIN:
        return None
    return stated, measured


def _measured_speed(context: DesignContext) -> float | None:
    """The signed mean speed along +x (m/s) of the motion the context judges, None where it has no metrics."""
    return context.metrics.speed if context.metrics else None


def _stated_speed(context: DesignContext) -> float | None:
    """The signed speed along +x (m/s) the description states, None where it states none."""
    from rewardloop.spec import spec_from_description

    spec = context.spec or spec_from_description(context.description)
    return spec.sign * spec.speed_mps if spec.speed_mps is not None and spec.locomotion else None


def _travels(context: DesignContext) -> bool:
    """Whether the task travels forward or backward (not standing, stepping on the spot or turning)."""
    t = context.targets()
    return t.locomotion and t.direction != 0 and t.turn is None and not t.step_in_place


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


def _describe(suggestions: Sequence[Suggestion]) -> str:
    return ", ".join(f"{s.action} {s.term}" + (f" {s.params}" if s.params else "") for s in suggestions)


@dataclass(frozen=True)
class TuneResult:
    """Outcome of tune_weights."""

    program: RewardProgram
    """The best program found (the starting one if nothing beat it)."""
    score: float
    """Its task metric."""
    start_score: float
    """The starting program's task metric."""
    evaluations: int
    """Calls of `evaluate` made (the starting program included)."""
    history: tuple[tuple[dict[str, float], float], ...]
    """(weights, score) of every evaluation, in order."""


def tune_weights(program: RewardProgram, evaluate: Callable[[RewardProgram], float], *, budget: int, seed: int,
                 sigma: float = 0.5, popsize: int | None = None) -> TuneResult:
    """CMA-ES (the `cma` package) over log-weights, maximizing `evaluate(program)` (a task metric, higher is
    better) with at most `budget` evaluations. Weights keep their signs; log-factors stay within ±3."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cma warns when matplotlib is missing
        import cma

    names, base = program.term_names, np.array(list(program.weights.values()))
    start = float(evaluate(program))
    history = [(dict(program.weights), start)]
    best, best_score = program, start
    size = max(2, min(popsize or 4 + int(3 * np.log(len(names))), budget - 1))
    if budget - 1 >= size:
        es = cma.CMAEvolutionStrategy(np.zeros(len(names)), sigma, {
            "seed": seed + 1, "popsize": size, "bounds": [-3.0, 3.0], "verbose": -9})
        for _ in range((budget - 1) // size):
            xs = es.ask()
            candidates = [program.with_weights(dict(zip(names, (base * np.exp(x)).tolist(), strict=True)))
                          for x in xs]
            scores = [float(evaluate(c)) for c in candidates]
            history += [(dict(c.weights), s) for c, s in zip(candidates, scores, strict=True)]
            es.tell(xs, [-s for s in scores])
            top = int(np.argmax(scores))
            if scores[top] > best_score:
                best, best_score = candidates[top], scores[top]
    return TuneResult(best, best_score, start, len(history), tuple(history))


def make_designer(model: str | ModelSpec | ModelBackend = "builtin", *, config: DesignerConfig = DesignerConfig(),
                  seed: int = 0, **backend_options: Any) -> Designer | BuiltinDesigner:
    """The designer a model string (or backend) names; 'builtin' gives the offline BuiltinDesigner.

    backend_options go to `rewardloop.models.client.make_backend` (ledger, cache, retry, server)."""
    from rewardloop.models.client import make_backend

    backend = model if not isinstance(model, (str, ModelSpec)) else make_backend(model, role="designer",
                                                                                   **backend_options)
    if backend.name == "builtin":
        return BuiltinDesigner(seed=seed)
    return Designer(backend, config)
