"""`rewardloop bench` on tiny suites: the arms run and are judged, the table and page are written, a bench that is
killed or interrupted resumes without redoing finished runs, --report rebuilds, bad input is one line."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewardloop.bench import runner
from rewardloop.bench.report import _cell, _seed_wins, _spread
from rewardloop.bench.runner import BENCH_FORMAT, BenchStore, run_bench
from rewardloop.bench.suite import load_suite
from rewardloop.cli import main
from rewardloop.loop.config import RunConfig
from rewardloop.loop.design import NO_CRITIC
from rewardloop.loop.run import run_loop, start_run
from rewardloop.loop.store import RunStore
from rewardloop.reward.canonical import canonical
from rewardloop.tasks import get_task

TINY_LOOP = load_suite("tiny").data["loop"]
"""The tiny suite's run shape: 2 iterations × 1 candidate, 0.2-s rollouts of a 4-sample planner, 64×48 video."""


def write_suite(folder: Path, *, arms: list[str], bodies: list[str] | None = None, **changes) -> Path:
    """A suite file of walk-flat with the tiny run shape."""
    data = {"name": "t", "seeds": 1, "arms": arms, "bodies": bodies or ["humanoid"], "tasks": [{"task": "walk-flat"}],
            "loop": TINY_LOOP, **changes}
    path = folder / "suite.json"
    path.write_text(json.dumps(data))
    return path


def only_bench(out: Path) -> Path:
    (bench,) = [p for p in out.iterdir() if p.is_dir()]
    return bench


def run_dir(bench: Path, unit: str) -> Path:
    (run,) = [p for p in (bench / "runs" / unit).iterdir() if p.is_dir()]
    return run


def events(run: Path, kind: str) -> list[dict]:
    return [e for e in RunStore.open(run).events() if e["event"] == kind]


@pytest.fixture(scope="module")
def humanoid_bench(tmp_path_factory) -> Path:
    """canonical, designer and loop on the humanoid, one seed (about 10 s)."""
    root = tmp_path_factory.mktemp("bench")
    suite = write_suite(root, arms=["canonical", "designer", "loop"])
    assert main(["bench", "--suite", str(suite), "--out", str(root / "out"), "--quiet"]) == 0
    return only_bench(root / "out")


def test_arms_run_are_judged_alike_and_the_table_and_page_are_written(humanoid_bench):
    summary = json.loads((humanoid_bench / "bench.json").read_text())
    units = {u["arm"]: u for u in summary["units"]}
    assert set(units) == {"canonical", "designer", "loop"} and summary["done"] == summary["total"] == 3
    for arm, unit in units.items():
        assert unit["status"] == "judged" and unit["metric"] == "distance" and 0.0 <= unit["judged_score"] <= 10.0
        # the human-like targets: hip and knee shape, knee in mid-stance and swing, hip peak, clearance, cadence,
        # pelvis yaw, trunk lean
        assert unit["gait_targets"] == 9
        assert 0 <= unit["gait_met"] <= unit["gait_targets"]
        store = RunStore.open(humanoid_bench / unit["run"])
        best = store.candidate(*unit["best"])
        # The judge re-measures the best motion: the same distance the run recorded for it.
        assert unit["score"] == pytest.approx(best.task_score) and unit["fell"] == best.fell
        assert unit["value"] == unit["score"] and unit["target"] is None  # distance, no target: the score itself
        assert len(store.iterations()) == (1 if arm == "canonical" else 2)
    canonical_run = RunStore.open(humanoid_bench / units["canonical"]["run"])
    assert canonical_run.candidate(0, 0).program_hash == canonical("walk").hash
    # The designer arm runs without a critic: its critiques state only the task metric, the metric selects.
    designer_run = RunStore.open(humanoid_bench / units["designer"]["run"])
    assert designer_run.config["critic"] == NO_CRITIC
    critique = json.loads((designer_run.candidate_dir(1, 0) / "critique.json").read_text())
    assert critique["critic"].startswith("none") and not critique["suggestions"]
    assert all(c.by in ("only", "fall", "metric") for r in designer_run.iterations() for c in r.comparisons)
    # wins: one pair, one seed each, counted against canonical's judged score
    loop_won = units["loop"]["judged_score"] > units["canonical"]["judged_score"]
    assert summary["wins"]["loop"] == {"pairs_won": int(loop_won), "pairs": 1, "seeds_won": int(loop_won), "seeds": 1}
    table = (humanoid_bench / "bench.md").read_text()
    assert "| walk-flat | humanoid |" in table and "**loop** beats canonical" in table
    page = (humanoid_bench / "bench.html").read_text()
    assert page.count("src='data:video/mp4;base64,") == 3 and 'class="plot bars"' in page
    assert "src='http" not in page and "src=\"http" not in page  # self-contained


def test_report_rebuilds_the_outputs_and_prints_the_readme_section(humanoid_bench, capsys):
    before = json.loads((humanoid_bench / "bench.json").read_text())
    for name in ("bench.json", "bench.md", "bench.html"):
        (humanoid_bench / name).unlink()
    assert main(["bench", "--report", str(humanoid_bench)]) == 0
    assert all((humanoid_bench / name).is_file() for name in ("bench.json", "bench.md", "bench.html"))
    assert json.loads((humanoid_bench / "bench.json").read_text()) == before
    capsys.readouterr()
    assert main(["bench", "--report", str(humanoid_bench), "--readme"]) == 0
    section = capsys.readouterr().out
    assert section.startswith("<!-- generated by `rewardloop bench --report DIR --readme`")
    assert (humanoid_bench / "bench.md").read_text().strip() in section
    readme = humanoid_bench.parent / "README.md"
    readme.write_text("# x\n<!-- bench:t -->\nold table\n<!-- /bench:t -->\nrest\n")
    assert main(["bench", "--report", str(humanoid_bench), "--readme", str(readme)]) == 0
    assert readme.read_text() == f"# x\n<!-- bench:t -->\n{section.strip()}\n<!-- /bench:t -->\nrest\n"


def test_an_exception_after_the_first_run_then_resume_redoes_nothing_finished(tmp_path, monkeypatch):
    suite = load_suite(str(write_suite(tmp_path, arms=["canonical", "loop"])))
    bench = BenchStore.create(tmp_path / "out", suite, runner.BenchOptions())
    judged, real_judge = [], runner.judge_run

    def judge_then_fail(*args, **kwargs):
        if judged:
            raise RuntimeError("injected after the first run")
        judged.append(real_judge(*args, **kwargs))
        return judged[-1]

    monkeypatch.setattr(runner, "judge_run", judge_then_fail)
    with pytest.raises(RuntimeError, match="injected"):
        run_bench(bench)
    first = bench.path / "runs" / "walk-flat--humanoid--canonical--s0" / "judged.json"
    stamp = first.stat().st_mtime_ns
    loop_run = run_dir(bench.path, "walk-flat--humanoid--loop--s0")
    assert RunStore.open(loop_run).result() is not None  # the loop's run finished; only its judgement is missing
    monkeypatch.setattr(runner, "judge_run", real_judge)
    assert main(["bench", "--resume", str(bench.path), "--quiet"]) == 0
    assert first.stat().st_mtime_ns == stamp
    canonical_run = run_dir(bench.path, "walk-flat--humanoid--canonical--s0")
    for run in (canonical_run, loop_run):  # each run started once, was never resumed, simulated each candidate once
        assert len(events(run, "run_started")) == 1 and not events(run, "run_resumed")
    assert len(events(loop_run, "candidate_started")) == 2
    assert json.loads((bench.path / "bench.json").read_text())["done"] == 2


def test_killed_mid_run_and_resumed_redoes_nothing_finished(tmp_path):
    suite = write_suite(tmp_path, arms=["canonical", "loop"], loop={**TINY_LOOP, "iterations": 3})
    out = tmp_path / "out"
    command = [sys.executable, "-m", "rewardloop.cli", "bench", "--suite", str(suite), "--out", str(out), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(out.glob("*/runs/*loop*/*/iterations/000/iteration.json")):
            time.sleep(0.1)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    bench = only_bench(out)
    loop_run = run_dir(bench, "walk-flat--humanoid--loop--s0")
    first = loop_run / "iterations" / "000" / "candidates" / "00" / "candidate.json"
    canonical_judged = bench / "runs" / "walk-flat--humanoid--canonical--s0" / "judged.json"
    stamps = (first.stat().st_mtime_ns, canonical_judged.stat().st_mtime_ns)
    assert RunStore.open(loop_run).result() is None  # killed mid-run
    assert main(["bench", "--resume", str(bench), "--quiet"]) == 0
    assert (first.stat().st_mtime_ns, canonical_judged.stat().st_mtime_ns) == stamps
    (resumed,) = events(loop_run, "run_resumed")
    assert resumed["iterations_done"] >= 1 and len(RunStore.open(loop_run).iterations()) == 3
    started = [(e["iteration"], e["candidate"]) for e in events(loop_run, "candidate_started")]
    done = [(e["iteration"], e["candidate"]) for e in events(loop_run, "candidate_done")]
    assert len(set(done)) == len(done) == 3  # every candidate recorded once
    assert len(started) - len(set(started)) <= 1  # at most the one running at the kill was started again


def test_start_program_is_iteration_zeros_only_candidate(tmp_path):
    """The transfer arm's hook: a given (model-written, so sandboxed) program replaces the canonical start."""
    given = canonical("walk").with_weights({**canonical("walk").weights, "speed": 3.0})
    config = RunConfig.from_dict({**TINY_LOOP, "iterations": 1, "start_program": given.source})
    store = start_run(get_task("walk-flat"), config, out=tmp_path)
    result = run_loop(store)
    assert result.best is not None and result.best.program_hash == given.hash
    assert (store.path / "best_program.py").read_text() == given.source


def test_a_run_without_a_critic_passes_preflight_and_its_critique_is_the_metric(humanoid_bench):
    from rewardloop.control.trajectory import Trajectory
    from rewardloop.loop.commands import preflight
    from rewardloop.loop.design import MetricOnlyCritic

    preflight(RunConfig(critic=NO_CRITIC))  # 'none' is no model string to check
    store = RunStore.open(run_dir(humanoid_bench, "walk-flat--humanoid--canonical--s0"))
    trajectory = Trajectory.load(store.candidate_dir(0, 0) / "trajectory")
    task = get_task("walk-flat")
    critique = MetricOnlyCritic(task).critique(task.description, None, trajectory)
    achieved = task.achieved(trajectory.metrics)  # 0.2 s cannot cover 2 m: not met, scored 0
    assert critique.success is achieved is False and critique.score == 0.0
    assert f"distance {trajectory.metrics.distance:.3g}" in critique.summary and "not met" in critique.summary
    assert MetricOnlyCritic(task).compare(task.description, None, None) == "tie"


def test_a_model_judge_scores_the_arms_and_its_answers_are_journaled_and_cached(tmp_path):
    from fakeserver import ScriptedChatServer, chat_reply

    answer = json.dumps({"success": False, "score": 6.5, "summary": "short steps", "issues": [], "suggestions": []})
    suite = write_suite(tmp_path, arms=["canonical"])
    with ScriptedChatServer([chat_reply("OK"), chat_reply(answer)]) as server:  # preflight, then one judgement
        judge = f"openai:judge@{server.base_url}"
        assert main(["bench", "--suite", str(suite), "--out", str(tmp_path / "out"), "--judge", judge, "--quiet"]) == 0
        bench = only_bench(tmp_path / "out")
        assert main(["bench", "--report", str(bench)]) == 0  # rebuilding the table asks nobody
    assert len(server.requests) == 2
    (unit,) = json.loads((bench / "bench.json").read_text())["units"]
    assert unit["judge"] == "openai:judge" and unit["judged_score"] <= 6.5  # physics gates may only lower it
    assert len((bench / "judge_calls.jsonl").read_text().splitlines()) == 1
    assert list((bench / "judge_cache").rglob("*.json"))  # a resumed bench replays the answer at no cost


def test_spread_and_seed_wins_by_hand():
    # scores 4 and 6: mean 5, sample standard deviation sqrt((1 + 1) / 1) = 1.414
    assert _spread([4.0, 6.0]) == {"mean": 5.0, "std": pytest.approx(math.sqrt(2.0))}
    assert _spread([7.0]) == {"mean": 7.0, "std": None} and _spread([]) == {"mean": None, "std": None}
    units = [{"arm": a, "seed": s, "status": "judged", "judged_score": v}
             for a, s, v in (("canonical", 0, 5.0), ("canonical", 1, 6.0), ("loop", 0, 5.5), ("loop", 1, 6.0),
                             ("designer", 0, 4.0))]
    # loop beats canonical on seed 0 (5.5 > 5) but not seed 1 (a tie is no win); designer ran seed 0 only
    assert _seed_wins(units, ("canonical", "designer", "loop")) == {"designer": [0, 1], "loop": [1, 2]}



def test_a_cell_shows_the_metric_itself_and_its_target_not_the_score():
    arm = {"n": 2, "judged_score": _spread([8.0, 8.5]), "value": _spread([0.61, 0.55]),
           "score": _spread([-0.01, -0.05]), "gait_met": _spread([4, 5]), "gait_targets": 9, "achieved": 2, "fell": 0}
    cell = _cell(arm, {"metric": "speed", "target": 0.6})
    assert cell.startswith("**8.25** ± 0.35 · speed 0.58 ± 0.042 m/s (target 0.6) · 2/2 ok") and "-0.03" not in cell
    assert "(target" not in _cell({**arm, "value": _spread([3.0])}, {"metric": "distance", "target": None})


def test_the_fullbody_suite_carries_the_muscle_legs_program_to_the_full_body():
    suite = load_suite("fullbody")
    legs, full = suite.pairs
    assert (legs.body, full.body) == ("myolegs", "myofullbody") and "transfer" in suite.data["arms"]
    assert suite.other_body(full) == legs and suite.other_body(legs) == full


@pytest.mark.slow
def test_tiny_suite_all_arms_on_both_bodies_transfer_takes_the_other_bodys_program(tmp_path):
    assert main(["bench", "--suite", "tiny", "--out", str(tmp_path), "--quiet"]) == 0
    bench = only_bench(tmp_path)
    summary = json.loads((bench / "bench.json").read_text())
    assert summary["done"] == summary["total"] == 8
    for body, other in (("humanoid", "myolegs"), ("myolegs", "humanoid")):
        transfer = RunStore.open(run_dir(bench, f"walk-flat--{body}--transfer--s0"))
        source = run_dir(bench, f"walk-flat--{other}--loop--s0") / "best_program.py"
        assert (transfer.candidate_dir(0, 0) / "program.py").read_text() == source.read_text()
        assert transfer.task["scene"]["body"] == body


def _bench_of_another_version(tmp_path: Path) -> Path:
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "plan.json").write_text(json.dumps({"format": BENCH_FORMAT + 1}))
    return folder


BAD_SUITES = {
    "not json": ("{", "is not valid JSON"),
    "unknown task": (json.dumps({"name": "x", "seeds": 1, "arms": ["canonical"], "bodies": ["humanoid"],
                                 "tasks": [{"task": "fly"}]}), "unknown task 'fly'"),
    "unknown body": (json.dumps({"name": "x", "seeds": 1, "arms": ["canonical"], "bodies": ["robot"],
                                 "tasks": [{"task": "walk-flat"}]}), "unknown body 'robot'"),
    "unknown arm": (json.dumps({"name": "x", "seeds": 1, "arms": ["rl"], "bodies": ["humanoid"],
                                "tasks": [{"task": "walk-flat"}]}), "unknown arm in suite file"),
    "unknown key": (json.dumps({"name": "x", "seeds": 1, "arms": ["loop"], "tasks": [{"task": "walk-flat"}],
                                "bodys": ["humanoid"]}), "unknown key 'bodys'"),
    "bad loop": (json.dumps({"name": "x", "seeds": 1, "arms": ["loop"], "bodies": ["humanoid"],
                             "tasks": [{"task": "walk-flat"}], "loop": {"iteration": 2}}), "unknown RunConfig"),
    "no seeds": (json.dumps({"name": "x", "seeds": 0, "arms": ["loop"], "bodies": ["humanoid"],
                             "tasks": [{"task": "walk-flat"}]}), "seeds must be"),
    "transfer alone": (json.dumps({"name": "x", "seeds": 1, "arms": ["transfer"], "bodies": ["humanoid"],
                                   "tasks": [{"task": "walk-flat"}]}), "add 'loop' to arms"),
}


@pytest.mark.parametrize("case", sorted(BAD_SUITES))
def test_a_malformed_suite_file_is_one_line_and_exit_2(tmp_path, capsys, case):
    text, expected = BAD_SUITES[case]
    path = tmp_path / "suite.json"
    path.write_text(text)
    assert main(["bench", "--suite", str(path), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("rewardloop: error: ") and expected in error
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing was created


@pytest.mark.parametrize("argv, expected", [
    (["--suite", "huge"], "unknown suite 'huge'; choose one of: full, fullbody, manipulation, robots, small, tiny"),
    (["--suite", "tiny", "--arms", "canonical,rl"], "unknown arm 'rl'"),
    (["--suite", "tiny", "--seeds", "0"], "--seeds must be at least 1"),
    (["--suite", "tiny", "--executor", "slurm"], "unknown executor 'slurm'"),
    (["--suite", "tiny", "--critic", "openai:gpt-4o", "--judge", "openai:gpt-4o"], "the judge must not be"),
    (["--readme"], "--readme goes with --report"),
    (["--resume", ".", "--seeds", "3"], "drop --seeds"),
    (["--report", "."], "is not a bench directory"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, argv, expected):
    assert main(["bench", *argv, "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and expected in error


@pytest.mark.parametrize("flag", ["--resume", "--report"])
def test_a_bench_of_another_version_is_refused(tmp_path, capsys, flag):
    assert main(["bench", flag, str(_bench_of_another_version(tmp_path))]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "another version of rewardloop (bench format 2" in error


def test_words_not_understood_withhold_success_and_the_rule_met_is_unchecked():
    from rewardloop.bench.judge import success_facts
    from rewardloop.bench.runner import _verdict_line
    from rewardloop.control.metrics import TaskMetrics
    from rewardloop.tasks import task_from_description

    far = TaskMetrics(duration=4.0, distance=4.0, speed=1.0, fell=False, fall_time=None, lateral_drift=0.0,
                      heading_change=0.0, steps=8)  # 4 m in 4 s without a fall: a forward walk's rule is met
    read = task_from_description("walk forward", "humanoid")
    assert success_facts(read, far) == {"achieved": True, "unchecked": False, "not_understood": []}
    juggle = task_from_description("walk forward and juggle", "humanoid")
    assert juggle.achieved(far)  # the rule on what was understood is met...
    facts = success_facts(juggle, far)  # ...but the juggling was not measured
    assert facts == {"achieved": False, "unchecked": True, "not_understood": ["juggle"]}
    verdict = {"status": "judged", "judged_score": 8.0, "metric": "distance", "value": 4.0, "fell": False,
               "gait_met": 9, "gait_targets": 9, **facts}
    line = _verdict_line(verdict)
    assert "unchecked (not understood: 'juggle')" in line and "success" not in line
    fallen = success_facts(juggle, dataclasses.replace(far, fell=True, fall_time=1.0))
    assert fallen == {"achieved": False, "unchecked": False, "not_understood": ["juggle"]}


def test_a_bench_of_a_description_with_words_not_understood_counts_them_unchecked(tmp_path, monkeypatch):
    from rewardloop.tasks import Task

    # The tiny run's 0.2 s meets no rule, so every rule is taken as met here: the unread words still withhold it.
    monkeypatch.setattr(Task, "achieved", lambda self, metrics: True)
    suite = write_suite(tmp_path, arms=["canonical"],
                        tasks=[{"name": "juggle", "description": "walk forward and juggle"}])
    assert main(["bench", "--suite", str(suite), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    bench = only_bench(tmp_path / "out")
    summary = json.loads((bench / "bench.json").read_text())
    (unit,) = summary["units"]
    assert (unit["achieved"], unit["unchecked"], unit["not_understood"]) == (False, True, ["juggle"])
    (pair,) = summary["pairs"]
    assert pair["not_understood"] == ["juggle"]
    assert (pair["arms"]["canonical"]["achieved"], pair["arms"]["canonical"]["unchecked"]) == (0, 1)
    table = (bench / "bench.md").read_text()
    assert "| juggle (not understood: 'juggle') | humanoid |" in table and "0/1 ok, 1 unchecked" in table
