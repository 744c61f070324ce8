"""The loop's side of the models: the designer and critic of a run, their context, and stored proposals.

`ModelSession` builds the designer's context from the run's records (best program, its critique and term
statistics, the history of edits) and turns the critic's answers into what the loop stores. Model calls are
accounted in the run's Ledger and cached under the run directory, so a resumed run replays finished calls.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewardloop.control.metrics import TaskMetrics
from rewardloop.control.trajectory import Trajectory
from rewardloop.critic.critique import Critique
from rewardloop.loop.config import ModelSettings, RunConfig
from rewardloop.loop.records import CandidateRecord
from rewardloop.loop.store import read_json
from rewardloop.models.accounting import Ledger
from rewardloop.models.base import StreamProgress
from rewardloop.reward.base import TermStats
from rewardloop.sim.scene import CompiledScene, compile_scene
from rewardloop.tasks import Task

if TYPE_CHECKING:
    from rewardloop.critic.gait import GaitAnalysis
    from rewardloop.critic.regions import GaitFaults
    from rewardloop.models.client import ServerOptions


@dataclass(frozen=True)
class ProposalRecord:
    """A candidate program as the designer gave it (stored in proposals.json before anything runs)."""

    source: str | None
    """The program, None when the designer failed."""
    rationale: str
    """Why this program."""
    trusted: bool = False
    """True only for vetted programs (canonical rewards): evaluated in-process; others run sandboxed."""
    program_hash: str | None = None
    weights: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    """Why the designer failed (the checker's last problems)."""
    tokens: int = 0
    """This candidate's share of the design call's tokens."""
    cost_usd: float = 0.0
    """This candidate's share of the design call's cost (USD)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProposalRecord:
        """Inverse of to_dict, except `trusted`: derived from the source, never believed from the file."""
        return cls(**{**data, "trusted": trusted_source(data.get("source"))})


def trusted_source(source: str | None) -> bool:
    """True only for the source of a canonical reward or of SEED_PROGRAM: the programs that may run in-process."""
    return source is not None and source in _trusted_sources()


@functools.cache
def _trusted_sources() -> frozenset[str]:
    from rewardloop.reward.canonical import CANONICAL, canonical
    from rewardloop.reward.program import RewardProgram

    return frozenset([RewardProgram.from_source(SEED_PROGRAM).source, *(canonical(n).source for n in CANONICAL)])


class ModelSession:
    """The designer and critic of one run, with their ledger and cache."""

    def __init__(self, config: RunConfig, task: Task, ledger: Ledger, *, cache: Path,
                 on_stream: Callable[[str, StreamProgress], None] | None = None,
                 on_note: Callable[[str, str], None] | None = None):
        """`on_stream(role, progress)` hears how each streamed answer comes along ('critic' or 'designer');
        `on_note(role, note)` hears each server's notes, once (e.g. the context assumed for one that reports
        none)."""
        from rewardloop.critic import make_critic
        from rewardloop.designer import make_designer
        from rewardloop.models.cache import ResponseCache

        self.task, self.ledger = task, ledger
        responses, models = ResponseCache(cache), config.models
        self.critic: Any = MetricOnlyCritic(task) if config.critic == NO_CRITIC else make_critic(
            config.critic, config=models.critic, ledger=ledger, cache=responses, retry=models.retry,
            server=server_options(models, "critic", on_stream, on_note))
        self.designer = make_designer(config.designer, config=models.designer, seed=config.seed, ledger=ledger,
                                      cache=responses, retry=models.retry,
                                      server=server_options(models, "designer", on_stream, on_note))
        self._scene: CompiledScene | None = None

    @property
    def scene(self) -> CompiledScene:
        if self._scene is None:
            self._scene = compile_scene(self.task.scene)
        return self._scene

    def canonical(self) -> ProposalRecord:
        """The task's canonical reward as iteration 0's only candidate."""
        program = self.task.canonical_program()
        assert program is not None
        return ProposalRecord(source=program.source, rationale=f"the task's canonical reward '{self.task.canonical}'",
                              trusted=trusted_source(program.source), program_hash=program.hash,
                              weights=dict(program.weights))

    def given(self, source: str) -> ProposalRecord:
        """A program given in the run configuration (`start_program`) as iteration 0's only candidate; it runs
        in-process only when it is a vetted program."""
        from rewardloop.reward.program import RewardProgram

        program = RewardProgram.from_source(source)
        return ProposalRecord(source=program.source, rationale="the given starting program (start_program)",
                              trusted=trusted_source(program.source), program_hash=program.hash,
                              weights=dict(program.weights))

    def seed(self) -> ProposalRecord:
        """The starting program of a task without a canonical reward, when the designer has nothing better."""
        program = _program(None)
        return ProposalRecord(source=program.source, rationale="the seed program: stay upright, do not fall",
                              trusted=True, program_hash=program.hash, weights=dict(program.weights))

    def propose(self, history: list[CandidateRecord], best: CandidateRecord | None, folder: Path | None,
                *, k: int) -> list[ProposalRecord]:
        """K programs from the designer, improving on `best` (whose files are in `folder`)."""
        from rewardloop.design_context import DesignContext, EditRecord

        before = self.ledger.total
        context = DesignContext(
            description=self.task.description, program=_program(folder), critique=_critique(folder, self.task),
            term_stats=_term_stats(best), metrics=TaskMetrics(**best.metrics) if best and best.metrics else None,
            history=tuple(EditRecord(iteration=c.iteration, program_hash=c.program_hash or "", change=c.rationale,
                                     score=c.critic_score, metric=c.task_score, kept=best is not None and
                                     c.key == best.key, unchanged=c.same_motion_as is not None) for c in history),
            scene=self.scene, body=self.task.scene.body, gait=self._gait(folder), spec=self.task.understood)
        proposals = self.designer.propose(context, k)
        if folder is None and not any(p.program for p in proposals):
            return [self.seed()]
        spent = self.ledger.total
        tokens = (spent.input_tokens + spent.output_tokens - before.input_tokens - before.output_tokens) // max(
            len(proposals), 1)
        cost = (spent.cost_usd - before.cost_usd) / max(len(proposals), 1)
        return [_record(p, tokens, cost) for p in proposals]

    def _gait(self, folder: Path | None) -> GaitFaults | None:
        """The gait faults of the motion in a candidate folder (None without one)."""
        from rewardloop.critic.regions import gait_faults
        from rewardloop.loop.candidate import TRAJECTORY_DIR

        if folder is None or not (folder / TRAJECTORY_DIR).is_dir() or self.task.manipulation:
            return None  # an object task has no gait
        return gait_faults(self._analysis(Trajectory.load(folder / TRAJECTORY_DIR)))

    def _analysis(self, trajectory: Trajectory) -> GaitAnalysis:
        """The gait analysis of the trajectory's first rollout in this run's scene."""
        from rewardloop.critic.gait import analyze_gait

        return analyze_gait(trajectory.rollouts.features(self.scene).slice(slice(0, 1)))

    def critique(self, trajectory: Trajectory, video: Path) -> Critique:
        from rewardloop.critic.media import Media

        media = Media(video=video if video.is_file() else None)
        return self.critic.critique(self.task.description, self.scene, trajectory, media, spec=self.task.understood)

    def compare(self, a: Trajectory, b: Trajectory, video_a: Path, video_b: Path) -> str:
        """'a', 'b' or 'tie': which motion does the task better, by the critic (always 'tie' without one)."""
        from rewardloop.critic import observe
        from rewardloop.critic.media import Media

        if isinstance(self.critic, MetricOnlyCritic):
            return "tie"

        first = observe(self.scene, a, Media(video=video_a if video_a.is_file() else None))
        second = observe(self.scene, b, Media(video=video_b if video_b.is_file() else None))
        return str(self.critic.compare(self.task.description, first, second, spec=self.task.understood))

    def unlike(self, trajectory: Trajectory) -> int:
        """How many of the human-likeness targets (`critic.likeness.met`) the motion misses, in a run with a critic
        whose task is a plain forward walk (no gait style asked, no turn, not on the spot); 0 otherwise."""
        from rewardloop.critic.likeness import met
        from rewardloop.critic.physics import targets_from_spec

        t = targets_from_spec(self.task.understood)
        if isinstance(self.critic, MetricOnlyCritic) or self.task.manipulation or not (
                t.locomotion and t.direction > 0 and t.turn is None and not t.step_in_place and not t.styles):
            return 0
        return sum(not bool(ok[0]) for ok in met(self._analysis(trajectory)).values())


NO_CRITIC = "none"
"""The critic setting of a run without a critic (the bench's `designer` arm)."""


class MetricOnlyCritic:
    """No critic: the critique states only the task metric and the success rule (`Task.achieved`), scored 10 when
    it is met and 0 otherwise; `compare` always ties, so the loop's selection falls to the fall gate and the metric.
    The designer then sees only task metrics and per-term statistics (Eureka-style reflection)."""

    name = NO_CRITIC

    def __init__(self, task: Task):
        self.task = task

    def critique(self, description: str, scene: CompiledScene, trajectory: Any, media: Any = None, *,
                 spec: Any = None) -> Critique:
        metrics: TaskMetrics = trajectory.metrics
        achieved = self.task.achieved(metrics)
        summary = (f"No critic watched this motion; only the task metric is known: {self.task.score_name} "
                   f"{self.task.score(metrics):.3g}{' (fell)' if metrics.fell else ''}; the success rule "
                   f"({self.task.success_rule()}) is {'met' if achieved else 'not met'}.")
        return Critique(success=achieved, score=10.0 if achieved else 0.0, summary=summary,
                        critic="none (task metric only)")

    def compare(self, description: str, a: Any, b: Any, *, spec: Any = None) -> str:
        return "tie"


def server_options(models: ModelSettings, role: str, on_stream: Callable[[str, StreamProgress], None] | None,
                   on_note: Callable[[str, str], None] | None = None) -> ServerOptions:
    """How the critic or the designer talks to its server; its stream reports and notes labelled with its role."""
    from rewardloop.models.client import ServerOptions

    report = None if on_stream is None else functools.partial(on_stream, role)
    note = None if on_note is None else functools.partial(on_note, role)
    return ServerOptions(timeouts=models.timeouts, context_tokens=models.context_tokens, on_stream=report,
                         on_note=note)


def _record(proposal: Any, tokens: int, cost: float) -> ProposalRecord:
    program = proposal.program
    if program is None:
        return ProposalRecord(source=None, rationale=proposal.rationale, tokens=tokens, cost_usd=cost,
                              error="; ".join(proposal.problems) or "the designer produced no valid program")
    return ProposalRecord(source=program.source, rationale=proposal.rationale, program_hash=program.hash,
                          weights=dict(program.weights), tokens=tokens, cost_usd=cost)


SEED_PROGRAM = '''
def upright(f):
    """z of the torso up axis: 1 upright."""
    return lib.upright(f, part="torso")

def fallen(f):
    """-1 for every non-foot contact with the ground."""
    return lib.nonfoot_contact(f)

WEIGHTS = {"upright": 1.0, "fallen": 1.0}
'''
"""Where a task without a canonical reward starts: only "stay upright, do not fall"; the designer adds the rest."""


def starting_program(task: Task) -> Any:
    """The program a task starts from: its canonical reward, else the seed program (a RewardProgram)."""
    program = task.canonical_program()
    return program if program is not None else _program(None)


def _program(folder: Path | None) -> Any:
    """The program in a candidate folder, or the seed program."""
    from rewardloop.reward.program import RewardProgram

    source = SEED_PROGRAM if folder is None else (folder / "program.py").read_text()
    return RewardProgram.from_source(source)


def _critique(folder: Path | None, task: Task) -> Critique:
    """The critique in a candidate folder, or the one a task starts from before any motion exists."""
    path = None if folder is None else folder / "critique.json"
    if path is not None and path.is_file():
        return Critique.from_dict(read_json(path))
    return Critique(success=False, score=0.0, summary=f"No motion yet. The current program only keeps the body "
                    f"upright; write rewards for the whole task: {task.description}")


def _term_stats(best: CandidateRecord | None) -> dict[str, TermStats]:
    return {} if best is None else {name: TermStats(**s) for name, s in best.term_stats.items()}
