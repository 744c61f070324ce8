"""The language-model designer: K candidate programs from one prompt, each checked and repaired.

Its prompt holds the description, the feature reference, the program format and term library, the current best
program, the critique, per-term statistics, task metrics and the history of edits tried; it answers with K programs
in code blocks. Each goes through the reward checker, and a failing one goes back to the model with the checker's
report for up to `DesignerConfig.max_repairs` repairs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rewardloop.design_context import DesignContext
from rewardloop.designer.proposal import Checker, CheckResult, Proposal, default_checker
from rewardloop.models.accounting import BudgetExceeded
from rewardloop.models.base import (
    Completion,
    Message,
    ModelBackend,
    ModelError,
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
from rewardloop.reward.program import RewardProgram

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
