"""The closed loop: design candidates, evaluate them in parallel, critique, select the best, repeat.

    store = start_run(task, RunConfig(iterations=5, candidates=4), out="runs")
    result = run_loop(store, on_event=print)          # or, after a crash: run_loop(RunStore.open(path))

Iteration 0 evaluates the task's canonical reward alone when it has one (else the designer's first K
programs). Each later iteration the designer proposes K programs from the best so far, its critique and its
per-term statistics; each candidate is checked, optimized (a model's program in the sandbox), rolled out,
rendered and critiqued. Selection: a fall loses (physics gate), then a motion that meets the task's success rule
beats one that does not, then the critic's pairwise comparison with the best so far; where the critic ties, a plain
forward walk that misses fewer of people's gait targets (`critic.likeness`) wins, then the task metric.
A run whose description had parts the spec did not read never stops as a success: it stops 'unchecked' and says
what was not checked.
Everything finished is on disk before the next step starts, so `run_loop` on a reopened store continues where a
crash, kill or Ctrl-C left off.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.control.metrics import TaskMetrics
from rewardloop.control.optimizer import OptimizerConfig
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError
from rewardloop.loop.candidate import ROLLOUT_FILE, TRAJECTORY_DIR, VIDEO_FILE, CandidateJob, evaluate_candidate
from rewardloop.loop.config import RunConfig
from rewardloop.loop.design import ModelSession, ProposalRecord, trusted_source
from rewardloop.loop.executors import Job, JobOutcome, make_executor
from rewardloop.loop.records import (
    CandidateRecord,
    CandidateStatus,
    Comparison,
    IterationRecord,
    IterationStatus,
    StopReason,
)
from rewardloop.loop.store import RunStore, read_json, write_json
from rewardloop.models.accounting import Budget, BudgetExceeded, Ledger, read_journal
from rewardloop.models.base import ModelError, StreamProgress
from rewardloop.tasks import Task


@dataclass(frozen=True)
class LoopEvent:
    """Progress of a run, for a live view. Kinds: run, iteration, design, candidate, progress,
    candidate_done, model (an answer streaming in), model_done, note (about a model server, said once),
    selection, stop."""

    kind: str
    iteration: int | None = None
    candidate: int | None = None
    fraction: float | None = None
    """Planner progress of the candidate (0..1), for 'progress'."""
    message: str = ""
    best_score: float | None = None
    """Task metric of the best candidate so far."""
    cost_usd: float = 0.0
    """Model cost of the run so far (USD), all sessions."""


EventHandler = Callable[[LoopEvent], None]


@dataclass(frozen=True)
class LoopResult:
    """How a run ended."""

    run_dir: Path
    stop_reason: StopReason
    best: CandidateRecord | None
    """The best candidate, None if no candidate was ever evaluated."""
    cost_usd: float
    """Model cost of the whole run (USD)."""
    not_checked: str = ""
    """What the run could not check, in one line ('' when the whole description was understood), e.g.
    "not checked: 'sideways to the left' was not understood" (`TaskSpec.not_checked`)."""


def start_run(task: Task, config: RunConfig, *, out: Path | str) -> RunStore:
    """Create the run directory for `task` under `out`."""
    return RunStore.create(out, config=config.to_dict(), task=task.to_dict(), name=task.name
                           if task.name != "custom" else task.description)


def run_loop(store: RunStore, *, on_event: EventHandler | None = None) -> LoopResult:
    """Run (or continue) the loop of a run directory until it stops, holding its lock (`RunStore.lock`): a UserError
    naming the process that runs it already, or saying that it has finished."""
    with store.lock():
        result = store.result()
        if result is not None:  # finished while this process waited to start: nothing is left to do
            raise UserError(f"{store.path} has already finished ({result['stop_reason']}); "
                            f"see `rewardloop report {store.path}`")
        loop = _Loop(store, on_event or (lambda event: None))
        try:
            return loop.run()
        except KeyboardInterrupt:
            store.log("interrupted")
            raise
        finally:
            loop.close()


DECIDERS = {"only": "being the only one", "fall": "a fall", "task": "the task's success rule", "critic": "the critic",
            "likeness": "the human-likeness targets met", "metric": "the task metric"}
"""What decided a comparison (Comparison.by), in the words of an iteration's reason."""

CALLS_FILE = "calls.jsonl"
"""The run's journal of paid model calls (one JSON line each, appended as each call is made)."""


@dataclass
class _Progress:
    """What the loop carries from iteration to iteration (rebuilt from the run directory on resume)."""

    best: CandidateRecord | None = None
    streak: int = 0
    cost_before: float = 0.0
    """Model cost of earlier sessions (USD), interrupted iterations included."""
    calls_before: int = 0
    wall_before: float = 0.0


class _Loop:
    def __init__(self, store: RunStore, emit: EventHandler):
        self.store, self.emit = store, emit
        self.config = RunConfig.from_dict(store.config)
        self.task = Task.from_dict(store.task)
        self.progress = self._restore()
        calls, usd = self.config.budget_calls, self.config.budget_usd
        self.ledger = Ledger(budget=Budget(max_calls=None if calls is None else calls - self.progress.calls_before,
                                           max_cost_usd=None if usd is None else usd - self.progress.cost_before),
                             journal=store.path / CALLS_FILE)
        self.models = ModelSession(self.config, self.task, self.ledger, cache=store.path / "cache",
                                   on_stream=self._stream, on_note=self._note)
        self.executor: Any = None
        self.started = time.monotonic()
        self._trajectories: dict[tuple[int, int], Trajectory] = {}
        self._budget_stop: BudgetExceeded | None = None
        """Set when the budget ran out while candidates were running: they finish, then the run stops."""

    def _restore(self) -> _Progress:
        """Best, streak and wall time from finished iterations; model spend from the call journal, which also
        holds the paid calls of an interrupted iteration (a run without one falls back to iteration.json)."""
        done = self.store.iterations()
        best = self.store.candidate(*done[-1].best) if done and done[-1].best else None
        journal = self.store.path / CALLS_FILE
        if journal.is_file():
            calls, usage = read_journal(journal)
            cost = usage.cost_usd
        else:
            calls, cost = sum(r.calls for r in done), sum(r.cost_usd for r in done)
        return _Progress(best=best, streak=done[-1].success_streak if done else 0, cost_before=cost,
                         calls_before=calls, wall_before=sum(r.wall_s for r in done))

    def close(self) -> None:
        if self.executor is not None:
            self.executor.close()

    # ---- the story ---------------------------------------------------------------------------------------

    def run(self) -> LoopResult:
        done = len(self.store.iterations())
        self.store.log("run_resumed" if done else "run_started", iterations_done=done)
        self._emit("run", message=f"{self.task.description} — {self.task.scene.describe()}")
        reason = StopReason.ITERATIONS
        for index in range(done, self.config.iterations):
            if self.progress.streak >= self.config.success_patience:
                reason = self._success()
                break
            if self._out_of_time():
                reason = StopReason.BUDGET
                break
            try:
                record = self._iteration(index)
            except BudgetExceeded as error:
                self.store.log("budget_exceeded", iteration=index, message=str(error))
                reason = StopReason.BUDGET
                break
            self._advance(record)
        else:
            if self.progress.streak >= self.config.success_patience:
                reason = self._success()
        return self._finish(reason)

    def _success(self) -> StopReason:
        """The stop of a success verdict that held: SUCCESS, or UNCHECKED when parts of the description were not
        understood (the critic and the success rule judged only what was)."""
        return StopReason.UNCHECKED if self.task.understood.unread else StopReason.SUCCESS

    def _iteration(self, index: int) -> IterationRecord:
        start, usage = time.monotonic(), self._usage()
        self._emit("iteration", index, message=f"iteration {index + 1} of {self.config.iterations}")
        proposals, design_error = self._proposals(index)
        self._evaluate(index, proposals)
        status, best, comparisons, reason = self._select(index)
        if design_error is not None:
            status, reason = IterationStatus.DESIGN_FAILED, f"{design_error}; the best so far stays"
        streak = success_streak(self.progress.streak, self.progress.best, best)
        spent = self._usage()
        record = IterationRecord(index=index, status=status, best=best.key if best else None,
                                 comparisons=tuple(comparisons), reason=reason, success_streak=streak,
                                 cost_usd=spent[0] - usage[0], tokens=spent[1] - usage[1],
                                 wall_s=time.monotonic() - start, calls=spent[2] - usage[2])
        self.store.save_iteration(record)
        return record

    def _advance(self, record: IterationRecord) -> None:
        best = self.store.candidate(*record.best) if record.best else None
        self.progress = dataclasses.replace(self.progress, best=best, streak=record.success_streak)
        self._emit("selection", record.index, message=record.reason)

    def _finish(self, reason: StopReason) -> LoopResult:
        best = self.progress.best
        cost = self.progress.cost_before + self._usage()[0]
        spec = self.task.understood
        if best is not None:
            shutil.copyfile(self.store.candidate_dir(*best.key) / "program.py", self.store.path / "best_program.py")
        self.store.write_json("result.json", {"stop_reason": reason.value, "best": list(best.key) if best else None,
                                              "task_score": best.task_score if best else None,
                                              "critic_score": best.critic_score if best else None,
                                              "not_understood": list(spec.unread),
                                              "cost_usd": cost, "ledger": self.ledger.summary()})
        self.store.log("run_finished", stop_reason=reason.value)
        self._emit("stop", message="; ".join(filter(None, [f"stopped: {reason.value}", spec.not_checked()])))
        return LoopResult(self.store.path, reason, best, cost, spec.not_checked())

    # ---- proposals ---------------------------------------------------------------------------------------

    def _proposals(self, index: int) -> tuple[list[ProposalRecord], str | None]:
        """The iteration's programs, and why the designer failed (None when it did not): read back if designed
        before, else designed now and written first. A designer that fails after its retries (a server that timed
        out, went silent or refused) is recorded, not raised: the run goes on or stops with its report."""
        path = self.store.iteration_dir(index) / "proposals.json"
        if path.is_file():
            stored = read_json(path)
            return [ProposalRecord.from_dict(p) for p in stored["proposals"]], stored.get("design_error")
        self._emit("design", index, message="designing candidates")
        clock, usage = time.perf_counter(), self._usage()
        proposals, error = self._design(index)
        spent = self._usage()
        for k, proposal in enumerate(proposals):
            if proposal.source is not None:
                folder = self.store.candidate_dir(index, k)
                folder.mkdir(parents=True, exist_ok=True)
                write_json(folder / "proposal.json", proposal.to_dict())
                (folder / "program.py").write_text(proposal.source)
        write_json(path, {"proposals": [p.to_dict() for p in proposals], "design_s": time.perf_counter() - clock,
                          "cost_usd": spent[0] - usage[0], "tokens": spent[1] - usage[1], "design_error": error})
        self.store.log("proposals_written", iteration=index, count=len(proposals),
                       **({"design_error": error} if error else {}))
        return proposals, error

    def _design(self, index: int) -> tuple[list[ProposalRecord], str | None]:
        """The given starting program or the canonical reward (iteration 0 of a task with one), else the designer's
        programs; none and the reason when the designer failed."""
        if index == 0 and self.config.start_program is not None:
            return [self.models.given(self.config.start_program)], None
        if index == 0 and self.task.canonical:
            return [self.models.canonical()], None
        best = self.progress.best
        folder = self.store.candidate_dir(*best.key) if best else None
        try:
            return self.models.propose(self._history(), best, folder, k=self.config.candidates), None
        except BudgetExceeded:
            raise
        except ModelError as error:
            reason = f"the designer failed: {_first_line(error)}"
            self._emit("design", index, message=reason)
            return [], reason

    def _history(self) -> list[CandidateRecord]:
        """Every finished candidate so far, oldest first."""
        return [c for r in self.store.iterations() for c in self.store.candidates(r.index)]

    # ---- evaluation --------------------------------------------------------------------------------------

    def _evaluate(self, index: int, proposals: list[ProposalRecord]) -> None:
        """Evaluate the candidates not done yet; each is recorded as soon as it finishes."""
        jobs = []
        for k, proposal in enumerate(proposals):
            folder = self.store.candidate_dir(index, k)
            if self.store.candidate(index, k) is not None:
                continue
            if proposal.source is None:
                self._save(self._rejected(index, k, proposal, proposal.error or "the designer failed"))
            elif (folder / ROLLOUT_FILE).is_file():  # simulated before a crash; only the critique is missing
                self._critique_and_save(index, k, proposal, read_json(folder / ROLLOUT_FILE))
            else:
                jobs.append(Job((index, k), folder, self._job(index, k, proposal)))
        if jobs and self._budget_stop is None:
            for job in jobs:
                self._emit("candidate", *job.key, message="optimizing")
                self.store.log("candidate_started", iteration=job.key[0], candidate=job.key[1])
            self._executor().run(evaluate_candidate, jobs, on_done=lambda o: self._done(o, proposals),
                                 on_progress=self._planner_progress)
        if self._budget_stop is not None:  # simulated candidates keep their rollout.json; resume critiques them
            raise self._budget_stop

    def _job(self, index: int, k: int, proposal: ProposalRecord) -> CandidateJob:
        duration = self.config.duration_s or self.task.duration_s
        optimizer = dataclasses.replace(self.config.optimizer or body_optimizer(self.task, self.config),
                                        duration_s=duration)
        return CandidateJob(source=proposal.source or "", trusted=trusted_source(proposal.source),
                            scene=self.task.scene, optimizer=optimizer, render=self.config.render,
                            seed=self.config.seed)

    def _executor(self) -> Any:
        if self.executor is None:
            self.executor = make_executor(self.config.executor, workers=self.config.workers,
                                          address=self.config.address, timeout_s=self.config.candidate_timeout_s)
        return self.executor

    def _planner_progress(self, key: tuple[int, int], fields: dict[str, Any]) -> None:
        self._emit("progress", *key, fraction=float(fields.get("fraction", 0.0)),
                   message=str(fields.get("message", "")))

    def _done(self, outcome: JobOutcome, proposals: list[ProposalRecord]) -> None:
        index, k = outcome.key
        proposal = proposals[k]
        value = outcome.value or {}
        if not outcome.ok:
            self._save(self._failed(index, k, proposal, outcome.error or "failed", {"wall": outcome.wall_s}))
        elif not value.get("check_passed", False):
            self._save(self._rejected(index, k, proposal, str(value.get("problems", ""))))
        elif self._budget_stop is None:  # else its rollout.json (written by the worker) waits for a resume
            self._critique_and_save(index, k, proposal, {**value, "wall_s": outcome.wall_s})

    def _failed(self, index: int, k: int, proposal: ProposalRecord, error: str,
                timings: dict[str, float]) -> CandidateRecord:
        return CandidateRecord(iteration=index, index=k, status=CandidateStatus.FAILED,
                               program_hash=proposal.program_hash, rationale=proposal.rationale,
                               error=error.splitlines()[0] if error else error, weights=proposal.weights,
                               timings=timings)

    def _rejected(self, index: int, k: int, proposal: ProposalRecord, error: str) -> CandidateRecord:
        return CandidateRecord(iteration=index, index=k, status=CandidateStatus.REJECTED,
                               program_hash=proposal.program_hash, rationale=proposal.rationale, error=error,
                               weights=proposal.weights)

    def _critique_and_save(self, index: int, k: int, proposal: ProposalRecord, summary: dict[str, Any]) -> None:
        folder = self.store.candidate_dir(index, k)
        usage, clock = self._usage(), time.perf_counter()
        try:
            critique = self.models.critique(self._trajectory((index, k)), folder / VIDEO_FILE)
        except BudgetExceeded as error:  # stop after the running candidates; this one is critiqued on resume
            if self._budget_stop is None:
                self._budget_stop = error
                self.store.log("budget_exceeded", iteration=index, candidate=k, message=str(error))
            return
        except ModelError as error:  # the critic failed this candidate (after its retries); the run goes on
            reason = f"critic failed: {_first_line(error)}"
            self._save(self._failed(index, k, proposal, reason, {"critique": time.perf_counter() - clock}))
            return
        write_json(folder / "critique.json", critique.to_dict())
        spent = self._usage()
        metrics = summary["metrics"]
        record = CandidateRecord(
            iteration=index, index=k, status=CandidateStatus.EVALUATED, program_hash=proposal.program_hash,
            rationale=proposal.rationale, weights=dict(summary["weights"]), metrics=metrics,
            task_score=self.task.score(TaskMetrics(**metrics)), fell=bool(metrics["fell"]),
            reward_return=float(summary["return"]), term_stats=summary["term_stats"],
            critic_score=float(critique.score), success=bool(critique.success),
            tokens=spent[1] - usage[1] + proposal.tokens, cost_usd=spent[0] - usage[0] + proposal.cost_usd,
            timings={**summary["timings"], "critique": time.perf_counter() - clock}, gait=summary.get("gait", {}),
            same_motion_as=self._same_motion((index, k)))
        self._save(record)

    def _same_motion(self, key: tuple[int, int]) -> tuple[int, int] | None:
        """The first candidate evaluated before this one (in its iteration or an earlier one) whose executed motion
        equals this one's to the bit, else None: with every candidate at the run's seed, an edit that changes nothing
        the planner chooses between leaves the motion as it was."""
        state = self._trajectory(key).rollouts.state
        earlier = [c.key for i in range(key[0] + 1) for c in self.store.candidates(i)
                   if c.key != key and c.status == CandidateStatus.EVALUATED]
        return next((k for k in earlier if np.array_equal(self._trajectory(k).rollouts.state, state)), None)

    def _save(self, record: CandidateRecord) -> None:
        self.store.save_candidate(record)
        self._emit("candidate_done", record.iteration, record.index,
                   message=f"{record.status.value}: {self.task.score_name} {_fmt(record.task_score)}, "
                           f"critic {_fmt(record.critic_score)}{f'; {record.unchanged}' if record.unchanged else ''}"
                   if record.error is None
                   else f"{record.status.value}: {record.error.splitlines()[0][:120]}")

    def _trajectory(self, key: tuple[int, int]) -> Trajectory:
        if key not in self._trajectories:
            self._trajectories[key] = Trajectory.load(self.store.candidate_dir(*key) / TRAJECTORY_DIR)
        return self._trajectories[key]

    # ---- selection ---------------------------------------------------------------------------------------

    def _select(self, index: int) -> tuple[IterationStatus, CandidateRecord | None, list[Comparison], str]:
        """Challenge the best so far with each evaluated candidate in turn: fall, then the task's success rule, then
        critic, then (a forward walk) the human-likeness targets missed, then metric."""
        best, comparisons = self.progress.best, []
        challengers = [c for c in self.store.candidates(index) if c.status == CandidateStatus.EVALUATED]
        for challenger in challengers:
            winner, by = self._duel(challenger, best)
            comparisons.append(Comparison(challenger.key, best.key if best else None, winner, by))
            if winner == "challenger":
                best = challenger
        if not challengers:
            return IterationStatus.NO_CANDIDATE, best, comparisons, "no candidate of this iteration was evaluated"
        if best is not None and best.iteration == index:
            last = next(c for c in reversed(comparisons) if c.challenger == best.key and c.winner == "challenger")
            reason = (f"candidate {best.index} became the best"
                      + (f", beating iteration {last.incumbent[0]} candidate {last.incumbent[1]} by {DECIDERS[last.by]}"
                         if last.incumbent else " (first evaluated)"))
            return IterationStatus.IMPROVED, best, comparisons, reason
        assert best is not None
        bys = ", ".join(sorted({DECIDERS[c.by] for c in comparisons}))
        return (IterationStatus.KEPT, best, comparisons,
                f"iteration {best.iteration} candidate {best.index} stays the best (decided by {bys})")

    def _duel(self, challenger: CandidateRecord, incumbent: CandidateRecord | None) -> tuple[str, str]:
        """('challenger' | 'incumbent', what decided)."""
        if incumbent is None:
            return "challenger", "only"
        if challenger.fell != incumbent.fell:
            return ("incumbent" if challenger.fell else "challenger"), "fall"
        achieved = self._achieved(challenger)
        if achieved != self._achieved(incumbent):  # the numbers the task asks for come first
            return ("challenger" if achieved else "incumbent"), "task"
        try:
            verdict = self.models.compare(self._trajectory(challenger.key), self._trajectory(incumbent.key),
                                          self.store.candidate_dir(*challenger.key) / VIDEO_FILE,
                                          self.store.candidate_dir(*incumbent.key) / VIDEO_FILE)
        except BudgetExceeded:
            raise
        except ModelError as error:  # the critic failed to compare (after its retries): the metric decides
            self.store.log("compare_failed", challenger=list(challenger.key), message=_first_line(error))
            verdict = "tie"
        if verdict != "tie":
            return ("challenger" if verdict == "a" else "incumbent"), "critic"
        unlike = [self.models.unlike(self._trajectory(c.key)) for c in (challenger, incumbent)]
        if unlike[0] != unlike[1]:  # a walk the critic ties: the one more like people's, then the metric
            return ("challenger" if unlike[0] < unlike[1] else "incumbent"), "likeness"
        better = (challenger.task_score or 0.0) > (incumbent.task_score or 0.0)
        return ("challenger" if better else "incumbent"), "metric"

    def _achieved(self, candidate: CandidateRecord) -> bool:
        """The candidate's motion meets the task's success rule (e.g. a speed within 0.12 m/s of the one asked)."""
        return candidate.metrics is not None and self.task.achieved(TaskMetrics(**candidate.metrics))

    # ---- accounting and display --------------------------------------------------------------------------

    def _usage(self) -> tuple[float, int, int]:
        """(cost USD, tokens, paid calls) of this session's model calls."""
        total = self.ledger.total
        calls = int(self.ledger.summary()["calls"])  # type: ignore[call-overload]
        return total.cost_usd, total.input_tokens + total.output_tokens, calls

    def _out_of_time(self) -> bool:
        limit = self.config.budget_s
        return limit is not None and self.progress.wall_before + time.monotonic() - self.started >= limit

    def _stream(self, role: str, progress: StreamProgress) -> None:
        """A model's answer streaming in: tokens and tokens/s for the live view, one line when it is done."""
        rate = progress.tokens_per_s
        first = "" if progress.first_token_s is None else f"; first token after {progress.first_token_s:.0f} s"
        speed = "" if rate is None else f", {rate:.1f} tokens/s"
        verb = "answered" if progress.done else "answering"
        self._emit("model_done" if progress.done else "model",
                   message=f"{role} {verb}: {progress.tokens} tokens in {progress.waited_s:.0f} s{speed}{first}")

    def _note(self, role: str, note: str) -> None:
        """A note about the critic's or designer's server (said once): logged and shown."""
        self.store.log("model_note", role=role, message=note)
        self._emit("note", message=f"{role}: {note}")

    def _emit(self, kind: str, iteration: int | None = None, candidate: int | None = None, *,
              fraction: float | None = None, message: str = "") -> None:
        best = self.progress.best
        self.emit(LoopEvent(kind=kind, iteration=iteration, candidate=candidate, fraction=fraction, message=message,
                            best_score=best.task_score if best else None,
                            cost_usd=self.progress.cost_before + self._usage()[0]))


def body_optimizer(task: Task, config: RunConfig) -> OptimizerConfig:
    """The optimizer for the task's body and ground, one thread (candidates run in parallel): on a body with a gait
    controller, for every motion made of steps (forward and backward walks, turns, stepping on the spot) the gait
    planned against the candidate's reward (config.locomotion 'plan'; policy search warm-started from the shipped
    gaits, with the ground's search settings, keeps forward walks and turns with 'search' and leaves the rest to
    MPPI); MPPI otherwise (standing still, motions the rules do not read as steps, and steps from a start the body's
    gaits cannot start from: the muscle legs from rest, `defaults.gaits_start`, with the stepping settings). The
    planner steps the humanoid on the spot at 2.1-2.2 steps/s within 0.25 m and walks it 3.9 m backward in 10 s, no
    falls over 3 seeds, in 31-46 s a motion, where posture-space MPPI's march drifted and flailed in 285-436 s
    (`benchmarks/results/beyond_forward_humanoid.json`)."""
    from rewardloop.control.defaults import default_kind, fitted_to_body, mppi_steps, planner_for, search_for
    from rewardloop.sim.bodies import get_body
    from rewardloop.sim.scene import compile_scene

    if task.manipulation:  # a hand holding an object: the gripping posture planner
        from rewardloop.control.planners.grip import manipulation_planner

        return OptimizerConfig(kind="mppi", planner=manipulation_planner(task.scene.manipulation), nthread=1)
    spec = task.understood
    forward = (spec.direction == "forward" and not spec.stay_in_place) or spec.turn is not None
    stepping = forward or spec.direction == "backward" or spec.step_in_place or spec.lateral is not None
    scene = compile_scene(task.scene)
    kind = default_kind(scene, locomotion=forward if config.locomotion == "search" else stepping)
    ground = get_body(task.scene.body).actuator_kind, task.scene.terrain.kind
    return OptimizerConfig(kind=config.locomotion if kind == "plan" else kind,
                           planner=fitted_to_body(planner_for(*ground, standing=spec.stay_in_place,
                                                              stepping=stepping and mppi_steps(scene, kind)), scene),
                           search=search_for(*ground, config.search), nthread=1)


def success_streak(streak: int, before: CandidateRecord | None, after: CandidateRecord | None) -> int:
    """The rounds of edits the success verdict has held through (`RunConfig.success_patience`) after an iteration
    that began with the best `before` and ended with `after`: one more where both succeed, else 0."""
    held = before is not None and before.success and after is not None and after.success
    return streak + 1 if held else 0


def _first_line(error: Exception) -> str:
    """An error's first line (its type when it says nothing)."""
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
