"""Frozen records of a run: what each candidate was, what it scored, and why each iteration kept what it kept.

Records are written to the run directory as JSON (`to_dict`) and read back (`from_dict`) on resume and by
the report, so every field is a plain JSON value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class CandidateStatus(str, Enum):
    """How a candidate ended."""

    EVALUATED = "evaluated"
    """Optimized, rolled out, rendered and critiqued."""
    REJECTED = "rejected"
    """The designer produced no program that passes the checker; nothing was simulated."""
    FAILED = "failed"
    """Its worker died or timed out, or its reward raised: no trajectory."""


class IterationStatus(str, Enum):
    """What an iteration did to the best program."""

    IMPROVED = "improved"
    """A candidate of this iteration became the best."""
    KEPT = "kept"
    """Every candidate lost to the best so far, which stays."""
    NO_CANDIDATE = "no_candidate"
    """No candidate of this iteration was evaluated (all rejected or failed)."""
    DESIGN_FAILED = "design_failed"
    """The designer failed after its retries (a server that timed out, refused or went away): nothing to
    evaluate; the best so far stays and the run goes on."""


class StopReason(str, Enum):
    """Why a run stopped."""

    ITERATIONS = "iterations"
    """All configured iterations ran."""
    SUCCESS = "success"
    """The critic's success verdict on the best held through the configured number of rounds of edits."""
    UNCHECKED = "unchecked"
    """As SUCCESS, but parts of the description were not understood (`TaskSpec.unread`): what they ask was measured
    by nobody, so the run stops without calling itself a success."""
    BUDGET = "budget"
    """The cost, call or time budget ran out."""


@dataclass(frozen=True)
class CandidateRecord:
    """One candidate reward program and what came of it."""

    iteration: int
    """Iteration index, 0-based."""
    index: int
    """Candidate index within its iteration, 0-based."""
    status: CandidateStatus
    """How it ended."""
    program_hash: str | None
    """RewardProgram.hash of its program (None when the designer failed)."""
    rationale: str
    """The designer's reason for this program."""
    error: str | None = None
    """Why it was rejected or failed (one paragraph), None when evaluated."""
    weights: dict[str, float] = field(default_factory=dict)
    """Term name -> weight of its program."""
    metrics: dict[str, Any] | None = None
    """TaskMetrics.to_dict() of the executed motion."""
    task_score: float | None = None
    """The task's metric of the executed motion (metric units, larger is better)."""
    fell: bool = False
    """The executed motion fell (a physics gate: a fall loses)."""
    reward_return: float | None = None
    """Mean reward per step of the executed motion under its own program."""
    term_stats: dict[str, dict[str, float]] = field(default_factory=dict)
    """Term name -> TermStats fields of the executed motion."""
    critic_score: float | None = None
    """The critic's score, 0-10."""
    success: bool = False
    """The critic's success verdict."""
    tokens: int = 0
    """Model tokens (input + output) spent on this candidate: design share, critique."""
    cost_usd: float = 0.0
    """Model cost of this candidate (USD)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Stage -> wall seconds: design, check, optimize, render, critique."""
    gait: dict[str, float] = field(default_factory=dict)
    """`critic.gait.GAIT_FACTS` field -> the executed motion's gait measure (empty for object tasks)."""
    same_motion_as: tuple[int, int] | None = None
    """(iteration, index) of a candidate evaluated before it whose executed motion this one's equals to the bit: every
    candidate optimizes with the run's seed, so what their programs differ in did not change the motion."""

    @property
    def key(self) -> tuple[int, int]:
        """(iteration, index)."""
        return self.iteration, self.index

    @property
    def unchanged(self) -> str:
        """In words, the earlier candidate whose motion this one's equals (`same_motion_as`); '' when none."""
        if self.same_motion_as is None:
            return ""
        iteration, index = self.same_motion_as
        return (f"the same motion as iteration {iteration} candidate {index}, to the bit: what their programs differ "
                "in did not change it")

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "status": self.status.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateRecord:
        same = data.get("same_motion_as")
        return cls(**{**data, "status": CandidateStatus(data["status"]),
                      "same_motion_as": None if same is None else (int(same[0]), int(same[1]))})


@dataclass(frozen=True)
class Comparison:
    """One step of selection: a challenger against the best so far."""

    challenger: tuple[int, int]
    """(iteration, index) of the candidate challenging."""
    incumbent: tuple[int, int] | None
    """(iteration, index) of the best so far, None when there was none."""
    winner: str
    """'challenger' or 'incumbent'."""
    by: str
    """What decided: 'only', 'fall', 'task' (its success rule), 'critic' or 'metric'."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Comparison:
        incumbent = data["incumbent"]
        return cls(challenger=(int(data["challenger"][0]), int(data["challenger"][1])),
                   incumbent=None if incumbent is None else (int(incumbent[0]), int(incumbent[1])),
                   winner=data["winner"], by=data["by"])


@dataclass(frozen=True)
class IterationRecord:
    """One finished iteration: its candidates, the selection and the best program after it."""

    index: int
    """Iteration index, 0-based."""
    status: IterationStatus
    """What it did to the best program."""
    best: tuple[int, int] | None
    """(iteration, index) of the best candidate after this iteration."""
    comparisons: tuple[Comparison, ...]
    """The selection, in order."""
    reason: str
    """Why the best is the best, in a sentence."""
    success_streak: int
    """Consecutive iterations, ending with this one, that began and ended with a best holding the critic's success
    verdict (`run.success_streak`)."""
    cost_usd: float
    """Model cost of the whole iteration: designer, critiques and comparisons (USD)."""
    tokens: int
    """Model tokens of the whole iteration."""
    wall_s: float
    """Wall-clock seconds the iteration took (the last attempt's, if it was resumed)."""
    calls: int = 0
    """Paid model calls of the whole iteration (cache hits excluded)."""

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "status": self.status.value,
                "comparisons": [c.to_dict() for c in self.comparisons]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IterationRecord:
        best = data["best"]
        return cls(**{**data, "status": IterationStatus(data["status"]),
                      "best": None if best is None else (int(best[0]), int(best[1])),
                      "comparisons": tuple(Comparison.from_dict(c) for c in data["comparisons"])})
