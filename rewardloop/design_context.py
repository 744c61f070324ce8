"""What a designer is told: the task, the best program, its critique and statistics, and the edits tried so far.

Shared by the designers (`rewardloop.designer`) and the prompts they fill in (`rewardloop.prompts.design`), which
both read it and neither owns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rewardloop.control.metrics import TaskMetrics
from rewardloop.critic.critique import Critique
from rewardloop.reward.base import TermStats
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.scene import CompiledScene

if TYPE_CHECKING:
    from rewardloop.critic.physics import Targets
    from rewardloop.critic.regions import GaitFaults
    from rewardloop.spec import TaskSpec


@dataclass(frozen=True)
class EditRecord:
    """An edit tried in an earlier iteration, for the designer's history."""

    iteration: int
    program_hash: str
    change: str
    """What was changed and why (the candidate's rationale)."""
    score: float | None = None
    """Critic score of its motion (0-10), None if it never ran."""
    metric: float | None = None
    """Task metric of its motion (e.g. distance walked, m)."""
    kept: bool = False
    """Whether it became the best program."""
    unchanged: bool = False
    """Whether its motion equalled an earlier candidate's to the bit: what their programs differ in did not steer it."""


@dataclass(frozen=True)
class DesignContext:
    """Everything a designer is told."""

    description: str
    program: RewardProgram | None
    """The current best program; None before any exists (write from scratch)."""
    critique: Critique | None
    """The critic's judgement of the best program's motion; None before any motion was judged."""
    term_stats: dict[str, TermStats] = field(default_factory=dict)
    """Term name -> statistics over the best program's motion."""
    metrics: TaskMetrics | None = None
    history: tuple[EditRecord, ...] = ()
    scene: CompiledScene | None = None
    """Scene the checker runs candidates in (None: the body's flat scene)."""
    body: str = "humanoid"
    gait: GaitFaults | None = None
    """Gait faults measured in the best program's motion (`rewardloop.critic.regions.gait_faults`); None before
    any motion."""
    spec: TaskSpec | None = None
    """The task's reading of the description (`Task.understood`: a model's or the rules'); None: read it here."""

    def targets(self) -> Targets:
        """What the description asks for: from the task's spec, else the rules' reading of the description."""
        from rewardloop.critic.physics import targets_from_description, targets_from_spec

        return targets_from_spec(self.spec) if self.spec is not None else targets_from_description(self.description)
