"""Reward programs: parse, validate, compile and evaluate weighted sums of named terms over Features.

`load_reward(program, trusted=...)` is the one way the rest of rewardloop turns a program into a callable
RewardFunction: in-process for vetted programs, in a sandbox worker process for anything a model wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rewardloop.reward.base import RewardEval
    from rewardloop.reward.program import RewardProgram
    from rewardloop.sim.features import Features


class LoadedReward(Protocol):
    """A RewardFunction that must be closed (a context manager)."""

    def __call__(self, features: Features) -> RewardEval: ...

    def close(self) -> None: ...

    def __enter__(self) -> LoadedReward: ...

    def __exit__(self, *exc: object) -> None: ...


class TrustedReward:
    """In-process evaluation of a vetted program (canonical or library-only). Closing does nothing."""

    def __init__(self, program: RewardProgram):
        self.program = program

    def __call__(self, features: Features) -> RewardEval:
        return self.program.evaluate_trusted(features)

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> TrustedReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_reward(program: RewardProgram, *, trusted: bool, timeout_s: float = 10.0) -> LoadedReward:
    """A callable reward for `program`: in-process when `trusted`, else in a sandbox worker (close it)."""
    if trusted:
        return TrustedReward(program)
    from rewardloop.reward.sandbox import SandboxedReward

    return SandboxedReward(program, timeout_s=timeout_s)
