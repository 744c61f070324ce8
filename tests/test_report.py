"""The HTML report: self-contained, and it renders in headless Chromium with its videos and plots."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from rewardloop.loop.records import (
    CandidateRecord,
    CandidateStatus,
    Comparison,
    IterationRecord,
    IterationStatus,
)
from rewardloop.loop.store import RunStore
from rewardloop.report.html import write_report
from rewardloop.report.plots import heatmap_svg, line_plot_svg
from rewardloop.sim.render import RenderConfig, render, write_video
from rewardloop.sim.rollout import Simulator, random_controls
from rewardloop.tasks import get_task

PROGRAM_0 = "WEIGHTS = {'forward': 1.0, 'upright': 0.5}\n"
PROGRAM_1 = "WEIGHTS = {'forward': 2.0, 'upright': 0.5, 'energy': -0.01}\n"


def _candidate(store: RunStore, iteration: int, index: int, program: str, video: bool, **fields) -> None:
    folder = store.candidate_dir(iteration, index)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "program.py").write_text(program)
    if video:
        shutil.copy(store.path.parent / "clip.mp4", folder / "video.mp4")
        store.write_json(folder.relative_to(store.path) / "critique.json",
                         {"summary": f"critique {iteration}.{index} <ok>", "score": 5.0, "success": False,
                          "issues": [{"part": "torso", "problem": "leans forward", "time": 0.5}]})
    store.save_candidate(CandidateRecord(iteration=iteration, index=index, program_hash=f"h{iteration}{index}",
                                         rationale="because", **fields))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, humanoid_flat):
    root = tmp_path_factory.mktemp("runs")
    with Simulator(humanoid_flat, nthread=1) as sim:
        rollouts = sim.open_loop(random_controls(humanoid_flat, 1, 100, seed=0))  # 0.5 s
    frames = render(humanoid_flat, rollouts.states_with_initial(0), RenderConfig(width=96, height=64, fps=20))
    write_video(frames, root / "clip.mp4")
    task = get_task("walk-flat")
    store = RunStore.create(root, config={"iterations": 3, "candidates": 2, "critic": "builtin",
                                          "designer": "builtin", "executor": "local"},
                            task=task.to_dict(), name=task.name)
    evaluated = CandidateStatus.EVALUATED
    _candidate(store, 0, 0, PROGRAM_0, True, status=evaluated, weights={"forward": 1.0, "upright": 0.5},
               task_score=0.3, critic_score=4.0, timings={"optimize": 2.0},
               gait={"cadence": 135.2, "step_time_asymmetry": 0.21})
    _candidate(store, 1, 0, PROGRAM_1, True, status=evaluated, task_score=0.9, critic_score=6.0,
               weights={"forward": 2.0, "upright": 0.5, "energy": -0.01}, timings={"optimize": 2.5},
               gait={"cadence": 128.4, "step_time_asymmetry": 0.25})
    _candidate(store, 1, 1, PROGRAM_0, False, status=CandidateStatus.FAILED, error="worker process was killed")
    store.save_iteration(IterationRecord(0, IterationStatus.IMPROVED, (0, 0), (Comparison((0, 0), None,
                         "challenger", "only"),), "the only candidate", 0, 0.0, 0, 3.0))
    store.save_iteration(IterationRecord(1, IterationStatus.IMPROVED, (1, 0), (Comparison((1, 0), (0, 0),
                         "challenger", "critic"),), "critic preferred 1.0", 0, 0.01, 1200, 4.0))
    return store.path


def test_report_is_self_contained(run_dir):
    page = write_report(run_dir).read_text()
    assert page.count("<video") == 2 and page.count("data:video/mp4;base64,") == 2  # the failed one has none
    assert page.count("<svg") == 3  # metric, critic score, weight heatmap
    assert not re.search(r"(src|href)=['\"]https?:", page)  # nothing fetched from the network
    assert "critique 1.0 &lt;ok&gt;" in page  # model text is escaped
    assert "<span class='add'>+WEIGHTS = {&#x27;forward&#x27;: 2.0" in page  # the diff from the start
    assert "worker process was killed" in page
    # each candidate's gait, and what the edit changed against the program it edited (iteration 0's best)
    assert "gait: cadence 135 steps/min · limp 21 %" in page
    assert ("gait (±: change from iteration 0 candidate 0, the program edited): cadence 128 steps/min (-7) · "
            "limp 25 % (+4)") in page


def test_heatmap_marks_absent_weights_and_scales_rows():
    svg = heatmap_svg(["a", "b"], ["it 0", "it 1"], np.array([[1.0, -2.0], [np.nan, 0.5]]), title="w")
    # Row a scaled by 2: -2 -> full blue rgb(31,119,180); 1 -> half red: 255 + (214-255)/2 = 234.5 -> 234.
    assert "rgb(31,119,180)" in svg and "rgb(234,147,148)" in svg
    assert svg.count("–") == 1  # the absent weight


def test_line_plot_maps_points_into_the_frame():
    svg = line_plot_svg({"best": [(0, 0.0), (2, 1.0)]}, title="t", x_label="x", y_label="y")
    # y range padded by 8 % of 1: [-0.08, 1.08]; plot height 240 - 28 - 40 = 172 px; y = 0 sits at
    # 200 - 0.08 / 1.16 * 172 = 188.1; x = 0 at the left margin 54, x = 2 at 420 - 12 = 408.
    assert '<polyline points="54.0,188.1 408.0,39.9"' in svg


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="needs Debian's chromium package (apt-get install chromium)")
def test_report_renders_in_headless_chromium(run_dir, tmp_path):
    page = write_report(run_dir)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--autoplay-policy=no-user-gesture-required",
             "--virtual-time-budget=8000", "--dump-dom", page.as_uri()]
    dom = subprocess.run([_chromium(), *flags], capture_output=True, text=True, timeout=60).stdout
    match = re.search(r'<pre id="render-check" hidden="">(.*?)</pre>', dom)
    assert match, dom[-2000:]
    check = json.loads(match.group(1))
    assert check["plots"] == 3 and check["drawn"] == 3
    assert len(check["videos"]) == 2
    for video in check["videos"]:  # decoded: 11 frames at 20 fps = 0.55 s, 96 pixels wide
        assert video["error"] is None and video["readyState"] >= 2 and video["width"] == 96
        assert video["duration"] == pytest.approx(0.55, abs=0.06)
