"""What a designer hands back, and the check each candidate program passes before it costs compute.

Both designers (`model.Designer`, `builtin.BuiltinDesigner`) return `Proposal`s and take a `Checker`, so the loop
reads one kind of answer whichever designer wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from rewardloop.design_context import DesignContext
from rewardloop.reward.program import RewardProgram

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
