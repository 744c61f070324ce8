"""Evaluating one candidate in a worker: check its program, optimize a controller, save and render the motion.

`evaluate_candidate` is the executors' job function. It runs in a worker process (or a Ray task) and writes
check.json, trajectory/, video.mp4, sheet.png and, as its last step, rollout.json (the returned summary)
into its directory; the loop, in the main process, then asks the critic and writes candidate.json. A
candidate whose rollout.json exists is never simulated again, even if the loop died before it heard back.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardloop.control.optimizer import OptimizerConfig, Progress, optimize
from rewardloop.control.trajectory import Trajectory
from rewardloop.loop.store import write_json
from rewardloop.sim.render import RenderConfig, contact_sheet, render, write_video
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene

TRAJECTORY_DIR = "trajectory"
VIDEO_FILE = "video.mp4"
SHEET_FILE = "sheet.png"
ROLLOUT_FILE = "rollout.json"


@dataclass(frozen=True)
class CandidateJob:
    """Everything a worker needs to evaluate one candidate (picklable)."""

    source: str
    """The reward program."""
    trusted: bool
    """True for vetted programs (canonical ones) evaluated in-process; model-written ones run sandboxed."""
    scene: Scene
    """Where the body moves."""
    optimizer: OptimizerConfig
    """The optimizer, its duration_s the rollout length."""
    render: RenderConfig
    """Video settings."""
    seed: int
    """Optimizer seed."""


def evaluate_candidate(job: CandidateJob, directory: Path, report: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Check, optimize, save, render; the summary the loop records (metrics, return, term statistics, timings).

    A program the checker rejects returns {"check_passed": False, "problems": ...} without simulating.
    """
    from rewardloop.reward import load_reward
    from rewardloop.reward.check import check_program
    from rewardloop.reward.program import RewardProgram

    timings: dict[str, float] = {}
    start = clock = time.perf_counter()
    scene = compile_scene(job.scene)
    program = RewardProgram.from_source(job.source)
    check = check_program(program, scene, body=job.scene.body)
    write_json(directory / "check.json", check.to_dict())
    timings["check"] = time.perf_counter() - clock
    if not check.passed:
        return {"check_passed": False, "problems": check.to_text(), "timings": timings}

    def forward(progress: Progress) -> None:
        report({"fraction": progress.fraction, "message": progress.message})

    clock = time.perf_counter()
    with load_reward(program, trusted=job.trusted) as reward:
        trajectory = optimize(scene, reward, job.optimizer, seed=job.seed, progress=forward)
    trajectory.save(directory / TRAJECTORY_DIR)
    timings["optimize"] = time.perf_counter() - clock
    clock = time.perf_counter()
    frames = render(scene, trajectory.rollouts.states_with_initial(0), job.render)
    write_video(frames, directory / VIDEO_FILE)
    contact_sheet(frames, directory / SHEET_FILE)
    timings["render"] = time.perf_counter() - clock
    summary = {"check_passed": True, "metrics": trajectory.metrics.to_dict(), "return": trajectory.total_return,
               "weights": dict(trajectory.reward.weights),
               "term_stats": {n: dataclasses.asdict(s) for n, s in trajectory.term_stats.items()},
               "planner_steps": trajectory.planner_steps, "gait": _gait(job, scene, trajectory), "timings": timings,
               "wall_s": time.perf_counter() - start}
    write_json(directory / ROLLOUT_FILE, summary)  # last: its presence means the candidate was simulated
    return summary


def _gait(job: CandidateJob, scene: CompiledScene, trajectory: Trajectory) -> dict[str, float]:
    """The motion's gait measures (`critic.gait.gait_facts`); none for a hand holding an object."""
    from rewardloop.critic.gait import gait_facts

    return {} if job.scene.manipulation is not None else gait_facts(trajectory.features(scene))
