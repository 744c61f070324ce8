"""The closed loop end to end on a tiny budget, resume after a real kill, and the CLI's bad-input errors."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rewardloop.cli import main
from rewardloop.control.optimizer import OptimizerConfig, PlannerConfig
from rewardloop.loop.config import PRESETS, RunConfig
from rewardloop.loop.records import CandidateRecord, CandidateStatus, IterationStatus, StopReason
from rewardloop.loop.run import DECIDERS, run_loop, start_run, success_streak
from rewardloop.loop.store import FORMAT_VERSION, RunStore, list_runs
from rewardloop.reward.canonical import canonical
from rewardloop.sim.render import RenderConfig
from rewardloop.tasks import get_task

TINY = RunConfig(iterations=2, candidates=2, duration_s=0.4, workers=2,
                 optimizer=OptimizerConfig(planner=PlannerConfig(samples=8, horizon_s=0.1), nthread=1),
                 render=RenderConfig(width=64, height=48, fps=10))
"""A loop that runs in seconds: 0.4-s rollouts, 8 planner samples, tiny videos."""


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    events = []
    store = start_run(get_task("walk-flat"), TINY, out=tmp_path_factory.mktemp("runs"))
    result = run_loop(store, on_event=events.append)
    return store, result, events


def test_loop_records_every_candidate_and_decision(finished_run):
    store, result, events = finished_run
    assert result.stop_reason == StopReason.ITERATIONS
    first, second = store.iterations()
    # Iteration 0 evaluates the canonical walking reward alone; iteration 1 has the designer's 2 candidates.
    (start,) = store.candidates(0)
    assert start.status == CandidateStatus.EVALUATED and start.program_hash == canonical("walk").hash
    assert first.status == IterationStatus.IMPROVED and first.best == (0, 0)
    assert len(store.candidates(1)) == 2
    # Each evaluated candidate of iteration 1 challenged the best in turn.
    evaluated = [c for c in store.candidates(1) if c.status == CandidateStatus.EVALUATED]
    assert [c.challenger for c in second.comparisons] == [c.key for c in evaluated]
    assert any(f"by {DECIDERS[c.by]}" in second.reason for c in second.comparisons)  # what decided, in words
    assert result.best is not None and result.best.key == second.best
    for c in evaluated:  # 0.4 s of simulated time, scored, critiqued, rendered
        folder = store.candidate_dir(*c.key)
        assert c.metrics["duration"] == pytest.approx(0.4, abs=0.011)
        assert c.task_score == c.metrics["distance"] and 0.0 <= c.critic_score <= 10.0
        assert all((folder / name).is_file() for name in ("program.py", "check.json", "video.mp4", "sheet.png",
                                                          "critique.json", "trajectory/trajectory.npz"))
    best_program = store.candidate_dir(*second.best) / "program.py"
    assert (store.path / "best_program.py").read_text() == best_program.read_text()
    kinds = [e.kind for e in events]
    assert kinds[0] == "run" and kinds[-1] == "stop" and kinds.count("iteration") == 2
    assert kinds.count("progress") > 0  # planner progress came back from the worker processes


def test_a_motion_that_meets_the_tasks_success_rule_beats_one_that_does_not(finished_run):
    from rewardloop.loop.run import _Loop

    store = finished_run[0]
    loop = _Loop(store, lambda event: None)
    real, success = store.candidates(0)[0], loop.task.success  # walk-flat: a distance
    far, near = (dataclasses.replace(real, fell=False, metrics={**real.metrics, "distance": d, "fell": False})
                 for d in (success + 0.5, success - 0.5))
    assert loop._duel(far, near) == ("challenger", "task") and loop._duel(near, far) == ("incumbent", "task")
    fallen = dataclasses.replace(far, fell=True, metrics={**far.metrics, "fell": True})
    assert loop._duel(fallen, near) == ("incumbent", "fall")  # a fall still comes first
    loop.close()


def test_a_walk_the_critic_ties_is_decided_by_peoples_gait_targets_then_by_the_metric(finished_run, monkeypatch):
    from rewardloop.critic import observe
    from rewardloop.critic.likeness import met
    from rewardloop.loop.run import _Loop

    store = finished_run[0]
    loop = _Loop(store, lambda event: None)
    real = store.candidates(0)[0]
    judged = met(observe(loop.models.scene, loop._trajectory(real.key)).gait)  # as the bench's judge counts them
    assert loop.models.unlike(loop._trajectory(real.key)) == sum(not ok[0] for ok in judged.values()) > 0
    far, near = (dataclasses.replace(real, iteration=i, task_score=d, metrics={**real.metrics, "distance": d})
                 for i, d in ((7, 0.3), (8, 0.2)))
    missed = {far.key: 2, near.key: 1}
    monkeypatch.setattr(loop.models, "compare", lambda *args: "tie")
    monkeypatch.setattr(loop, "_trajectory", lambda key: key)
    monkeypatch.setattr(loop.models, "unlike", lambda trajectory: missed[trajectory])
    assert loop._duel(far, near) == ("incumbent", "likeness")  # further, but less like people's walking
    missed[far.key] = 1
    assert loop._duel(far, near) == ("challenger", "metric") and loop._duel(near, far) == ("incumbent", "metric")
    loop.close()


def test_every_candidate_optimizes_with_the_runs_seed_and_an_unchanged_motion_is_recorded(finished_run, monkeypatch):
    import numpy as np

    from rewardloop.design_context import EditRecord
    from rewardloop.loop.design import ProposalRecord
    from rewardloop.loop.run import _Loop
    from rewardloop.prompts.design import _history

    store = finished_run[0]
    loop = _Loop(store, lambda event: None)
    proposal = ProposalRecord(source=canonical("walk").source, rationale="")
    assert {loop._job(i, k, proposal).seed for i, k in ((0, 0), (1, 0), (1, 1))} == {TINY.seed}
    evaluated = [c for i in (0, 1) for c in store.candidates(i) if c.status == CandidateStatus.EVALUATED]
    for c in evaluated:  # what the run recorded is what the states say
        assert c.same_motion_as is None or np.array_equal(loop._trajectory(c.key).rollouts.state,
                                                          loop._trajectory(c.same_motion_as).rollouts.state)
    start, edit = evaluated[0], evaluated[1]
    real = loop._trajectory
    monkeypatch.setattr(loop, "_trajectory", lambda key: real(start.key if key == edit.key else key))
    assert loop._same_motion(edit.key) == start.key  # an edit that left the motion as it was
    record = dataclasses.replace(edit, same_motion_as=start.key)
    assert CandidateRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    assert record.unchanged.startswith("the same motion as iteration 0 candidate 0, to the bit")
    told = _history([EditRecord(iteration=1, program_hash="ab12", change="add hands_still", unchanged=True)],
                    compact=False)
    assert told.endswith("(the same motion as an earlier candidate)")
    loop.close()


def test_finished_run_is_listed_and_reported(finished_run, capsys):
    store, _, _ = finished_run
    (summary,) = list_runs(store.path.parent)
    assert summary.iterations_done == 2 and summary.stop_reason == "iterations"
    assert main(["report", str(store.path)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {store.path / 'report.html'}"
    assert main(["runs", "--out", str(store.path.parent)]) == 0
    assert "walk-flat" in capsys.readouterr().out


def test_resume_after_kill_redoes_nothing_finished(tmp_path):
    config = RunConfig(**{**TINY.__dict__, "iterations": 3, "workers": 1})  # candidates one after the other
    store = start_run(get_task("walk-flat"), config, out=tmp_path)
    command = [sys.executable, "-m", "rewardloop.cli", "resume", str(store.path), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        _wait_for(lambda: len(store.candidates(1)) == 1, process, timeout_s=60)  # the second is running
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the loop and its workers, mid-iteration
        process.wait()
    finished = {p: p.stat().st_mtime_ns for p in store.path.glob("iterations/*/candidates/*/candidate.json")}
    assert store.iteration(0) is not None and store.iteration(1) is None and len(finished) == 2
    assert main(["resume", str(store.path), "--quiet"]) == 0
    assert len(store.iterations()) == 3 and store.result()["stop_reason"] == "iterations"
    assert {p: p.stat().st_mtime_ns for p in finished} == finished  # finished candidates untouched
    done = [(e["iteration"], e["candidate"]) for e in store.events() if e["event"] == "candidate_done"]
    assert len(done) == len(set(done)) == 5  # 1 + 2 + 2 candidates, each finished exactly once
    assert [e["event"] for e in store.events()].count("proposals_written") == 3  # nothing designed twice


def _wait_for(condition, process: subprocess.Popen, *, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run did not get that far in time"
        time.sleep(0.02)


def test_presets_are_the_papers_shapes():
    assert (PRESETS["movlr"].candidates, PRESETS["movlr"].iterations) == (1, 15)
    assert (PRESETS["motionvl"].candidates, PRESETS["motionvl"].iterations) == (10, 5)
    assert RunConfig.from_dict(TINY.to_dict()) == TINY


def _one_line_error(capsys, argv: list[str], expected: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    out = ["--out", str(tmp_path)]
    _one_line_error(capsys, ["run", "--task", "moonwalk", *out], "unknown task 'moonwalk'; choose one of:")
    _one_line_error(capsys, ["run", "walk", "--body", "robot", *out], "unknown body 'robot'; choose one of:")
    _one_line_error(capsys, ["run", "  ", *out], "the task description is empty")
    _one_line_error(capsys, ["run", "walk", "--preset", "huge", *out], "unknown preset 'huge'")
    _one_line_error(capsys, ["resume", str(tmp_path)], "is not a run directory")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    _one_line_error(capsys, ["run", "walk", "--critic", "openai:gpt-4o@http://127.0.0.1:9/v1", *out], "")
    assert list(tmp_path.iterdir()) == []  # nothing was started


def test_run_of_another_format_version_is_refused(finished_run, tmp_path, capsys):
    store, _, _ = finished_run
    config = json.loads((store.path / "config.json").read_text())
    other = tmp_path / "old"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({**config, "format": FORMAT_VERSION + 1}))
    (other / "task.json").write_text((store.path / "task.json").read_text())
    _one_line_error(capsys, ["resume", str(other)], f"run format {FORMAT_VERSION + 1}")
    _one_line_error(capsys, ["report", str(other)], "another version of rewardloop")
    with pytest.raises(Exception, match="another version"):
        RunStore.open(other)


ONE = RunConfig(**{**TINY.__dict__, "iterations": 1})
"""Iteration 0 only: the canonical reward alone, one candidate."""


def test_a_critic_error_fails_its_candidate_and_the_run_goes_on(tmp_path, monkeypatch):
    from rewardloop.loop.design import ModelSession
    from rewardloop.models.base import ModelError

    def broken(self, trajectory, video):
        raise ModelError("server said 500 after 3 attempts\ndetails")

    monkeypatch.setattr(ModelSession, "critique", broken)
    result = run_loop(start_run(get_task("walk-flat"), ONE, out=tmp_path))
    assert result.stop_reason == StopReason.ITERATIONS
    (candidate,) = result_store(result).candidates(0)
    assert candidate.status == CandidateStatus.FAILED
    assert candidate.error == "critic failed: server said 500 after 3 attempts"  # one line


def result_store(result) -> RunStore:
    return RunStore.open(result.run_dir)


def test_budget_reached_by_the_critic_stops_cleanly_and_resume_only_critiques(tmp_path, monkeypatch):
    from rewardloop.loop.design import ModelSession
    from rewardloop.models.accounting import BudgetExceeded

    real = ModelSession.critique

    def over_budget(self, trajectory, video):
        raise BudgetExceeded("model budget reached: 1 of 1 calls used; not calling critic")

    monkeypatch.setattr(ModelSession, "critique", over_budget)
    store = start_run(get_task("walk-flat"), ONE, out=tmp_path)
    assert run_loop(store).stop_reason == StopReason.BUDGET
    folder = store.candidate_dir(0, 0)
    # The worker wrote rollout.json last; no candidate record; no temporary file left behind.
    assert (folder / "rollout.json").is_file() and store.candidate(0, 0) is None
    assert not list(folder.rglob("*.tmp"))
    simulated = (folder / "trajectory" / "trajectory.npz").stat().st_mtime_ns
    (store.path / "result.json").unlink()  # as if the run had been interrupted there
    monkeypatch.setattr(ModelSession, "critique", real)
    assert run_loop(RunStore.open(store.path)).stop_reason == StopReason.ITERATIONS
    assert store.candidate(0, 0).status == CandidateStatus.EVALUATED
    assert (folder / "trajectory" / "trajectory.npz").stat().st_mtime_ns == simulated  # not simulated again


def test_paid_calls_are_journaled_and_counted_on_resume(tmp_path):
    from rewardloop.loop.run import CALLS_FILE, _Loop
    from rewardloop.models.accounting import CallRecord, Ledger, read_journal
    from rewardloop.models.base import Usage

    config = RunConfig(**{**ONE.__dict__, "budget_usd": 1.0, "budget_calls": 5})
    store = start_run(get_task("walk-flat"), config, out=tmp_path)
    ledger = Ledger(journal=store.path / CALLS_FILE)
    for cost, cached in ((0.25, False), (0.5, True), (0.125, False)):  # a cache hit costs nothing, no line
        ledger.record(CallRecord("openai:gpt-4o", "critique", Usage(100, 10, cost), cached, True, 0.1))
    with open(store.path / CALLS_FILE, "a") as handle:
        handle.write('{"input_tokens": 7, "outp')  # a line cut short by a kill mid-write is skipped
    calls, usage = read_journal(store.path / CALLS_FILE)
    assert (calls, usage.cost_usd, usage.input_tokens + usage.output_tokens) == (2, 0.375, 220)
    # No iteration finished, yet the resumed loop knows $0.375 and 2 calls are spent: $0.625 and 3 calls remain.
    loop = _Loop(RunStore.open(store.path), lambda event: None)
    assert (loop.progress.cost_before, loop.progress.calls_before) == (0.375, 2)
    assert loop.ledger.budget.max_cost_usd == 0.625 and loop.ledger.budget.max_calls == 3


def test_trusted_is_derived_from_the_source_not_read_back():
    from rewardloop.loop.design import ProposalRecord

    forged = {"source": "def x(f):\n    return f.root_height\nWEIGHTS = {'x': 1.0}\n", "rationale": "r",
              "trusted": True}
    assert not ProposalRecord.from_dict(forged).trusted
    assert ProposalRecord.from_dict({**forged, "source": canonical("walk").source, "trusted": False}).trusted


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "walk-flat", "--budget-usd", "nan"], "budget_usd must be a positive finite number, got nan"),
    (["run", "walk-flat", "--out", "/proc/rewardloop-no"], "--out /proc/rewardloop-no: cannot create"),
    (["report", "/nonexistent-run", "--out", "/proc/no/r.html"], "--out /proc/no: cannot create"),
])
def test_nan_budgets_and_unwritable_outputs_are_one_line(capsys, argv, expected):
    _one_line_error(capsys, argv, expected)


def test_the_success_patience_counts_rounds_of_edits_after_the_first_success():
    def record(success: bool) -> CandidateRecord:
        return CandidateRecord(0, 0, CandidateStatus.EVALUATED, "h", "r", success=success)

    passed, failed = record(True), record(False)
    assert success_streak(0, None, passed) == 0  # iteration 0 evaluates the start: no edit has been tried
    assert success_streak(0, passed, passed) == 1 and success_streak(1, passed, passed) == 2
    assert success_streak(0, failed, passed) == 0  # first success this iteration: the rounds count from here
    assert success_streak(2, passed, failed) == 0


def test_a_run_whose_description_was_not_all_understood_never_ends_as_a_success(tmp_path, monkeypatch):
    import io

    from rewardloop.critic.critique import Critique
    from rewardloop.loop.commands import _drive
    from rewardloop.loop.design import ModelSession
    from rewardloop.tasks import task_from_description

    def satisfied(self, trajectory, video):  # a critic that judges only what the spec kept: always a success
        return Critique(success=True, score=9.5, summary="walks well")

    monkeypatch.setattr(ModelSession, "critique", satisfied)
    config = RunConfig(**{**TINY.__dict__, "iterations": 3, "candidates": 1, "success_patience": 1})
    store = start_run(task_from_description("hop forward", "humanoid"), config, out=tmp_path)
    out = io.StringIO()
    assert _drive(store, quiet=True, stream=out) == 0
    # Iteration 1 held iteration 0's success, so the run stops before iteration 2: unchecked, not a success.
    assert len(store.iterations()) == 2 and store.result()["stop_reason"] == "unchecked"
    assert store.result()["not_understood"] == ["hop"]
    first = out.getvalue().splitlines()[0]
    assert first.startswith("stopped (unchecked); best: iteration ")
    assert "; not checked: 'hop' was not understood; model cost $" in first
    report = (store.path / "report.html").read_text()
    assert "not understood: &#x27;hop&#x27;" in report and "<th>not checked</th>" in report
    assert "success on what was understood (unchecked)" in report and "stopped: unchecked" in report
    # The same run with the whole description understood stops as a success at the same point.
    read = task_from_description("walk forward", "humanoid")
    store.write_json("task.json", {**store.task, "description": "walk forward", "spec": read.spec.to_dict()})
    (store.path / "result.json").unlink()
    assert run_loop(RunStore.open(store.path)).stop_reason == StopReason.SUCCESS


def test_two_resumes_started_together_run_every_candidate_once(tmp_path):
    import socket

    store = start_run(get_task("walk-flat"), TINY, out=tmp_path)  # 1 + 2 candidates
    command = [sys.executable, "-m", "rewardloop.cli", "resume", str(store.path), "--quiet"]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]  # a user in two terminals
    outputs = [p.communicate(timeout=300) for p in processes]
    codes = [p.returncode for p in processes]
    assert sorted(codes) == [0, 2]
    winner, loser = codes.index(0), codes.index(2)
    err = outputs[loser][1]
    assert err.count("\n") == 1 and err.startswith(f"rewardloop: error: {store.path} is in use by process "
                                                   f"{processes[winner].pid} on {socket.gethostname()} (started ")
    events = store.events()
    started = [(e["iteration"], e["candidate"]) for e in events if e["event"] == "candidate_started"]
    assert len(started) == len(set(started)) == 3  # every candidate started exactly once
    names = [e["event"] for e in events]
    assert names.count("run_started") == 1 and names.count("run_resumed") == 0 and names.count("run_finished") == 1
    assert store.lock_holder() is None  # the winner cleared its record when it let go


def test_a_lock_left_by_a_killed_process_does_not_block_a_resume(tmp_path, capsys):
    store = start_run(get_task("walk-flat"), ONE, out=tmp_path)
    hold = ("import sys, time\nfrom rewardloop.loop.store import RunStore\n"
            "with RunStore.open(sys.argv[1]).lock():\n    print('held', flush=True)\n    time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(store.path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["resume", str(store.path), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"is in use by process {holder.pid} on " in err
    finally:
        holder.kill()  # SIGKILL: no cleanup of its own
        holder.wait()
    assert store.lock_holder().pid == holder.pid  # its record is left behind; the OS released its lock
    assert main(["resume", str(store.path), "--quiet"]) == 0
    assert store.result()["stop_reason"] == "iterations" and store.lock_holder() is None
