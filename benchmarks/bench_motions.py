"""Benchmark of the motions beyond walking forward (issue 87): each description read by the rules, its canonical
reward optimized on a body, the motion measured from its trajectory and judged by its task's success rule and by
the builtin critic.

    .venv/bin/python benchmarks/bench_motions.py --bodies humanoid myolegs --rows sideways-left --seeds 0 1 2 \
        --duration 10 --json benchmarks/results/motions_beyond.json

Each row is a description (`tasks.task_from_description`: its scene, which starts from rest for these motions,
its metric, success rule and canonical reward). The optimizer is the one `rewardloop optimize` picks for that
scene (`control.defaults.default_config`: the gait planner where the body's gaits start from rest, posture MPPI
with the stepping settings where they do not, the standing settings for a stand), one thread, as the loop runs each
candidate. For a sideways walk that is not yet the loop's own pick: `loop.run.body_optimizer` counts only forward,
backward and in-place motions as steps, and sends a sideways one to posture MPPI without the stepping settings.
Reported per body, row and seed: the pelvis displacement forward and to the left, the heading change, the time on one
foot alone, the flight phase, the hip flexion peak, falls, steps, the task metric, whether the success rule holds,
the builtin critic's score and success, and the wall time. Rows are appended to the --json file as they finish, so
an interrupted run keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from rewardloop.bench.steer import provenance
from rewardloop.control.defaults import default_config
from rewardloop.control.optimizer import optimize
from rewardloop.critic import BuiltinCritic, apply_gates, observe
from rewardloop.errors import UserError, run_script, unknown_name
from rewardloop.sim.scene import compile_scene
from rewardloop.tasks import Task, task_from_description

ROWS = {
    "sideways-left": "walk sideways to the left",
    "sideways-right": "side-step to the right",
    "diagonal-forward-left": "walk diagonally forward and to the left",
    "diagonal-backward-right": "walk diagonally backward and to the right",
    "stand-right-leg": "stand on your right leg",
    "stand-left-leg": "balance on the left foot",
    "high-knees-in-place": "march in place with high knees",
    "jog-forward": "jog forward",
    "jog-in-place": "jog on the spot",
    "turn-on-the-spot": "turn left on the spot",
    "turn-while-walking": "walk while turning to the left",
}
"""Row -> description (flat ground)."""


def measure(task: Task, trajectory: Any, scene: Any) -> dict[str, Any]:
    """One motion's figures from its trajectory, its success rule's verdict and the builtin critic's."""
    metrics = trajectory.metrics
    observation = observe(scene, trajectory)
    critique = BuiltinCritic().critique_observation(task.description, observation, spec=task.spec)
    critique = apply_gates(critique, task.description, observation.descriptors, observation.gait, task.spec)
    return {"forward_m": round(metrics.distance, 3), "left_m": round(metrics.lateral_drift, 3),
            "left_leg_stand": round(metrics.left_leg_stand, 3), "right_leg_stand": round(metrics.right_leg_stand, 3),
            "flight_fraction": round(metrics.flight_fraction, 3),
            "hip_flexion_peak_deg": round(math.degrees(metrics.hip_flexion_peak), 1),
            "travel_m": round(metrics.travel, 3),
            "step_rate_in_place": round(metrics.step_rate_in_place, 2),
            "heading_change_deg": round(math.degrees(metrics.heading_change), 1), "fell": metrics.fell,
            "fall_time": metrics.fall_time, "steps": metrics.steps, "metric": task.metric,
            "metric_value": round(task.value(metrics), 3), "success_rule": task.success_rule(),
            "achieved": task.achieved(metrics), "critic_score": critique.score, "critic_success": critique.success,
            "wall_s": round(trajectory.wall_time_s, 1)}


def run_row(body: str, row: str, seed: int, duration_s: float) -> dict[str, Any]:
    """One body, row and seed: the row's canonical reward optimized as `rewardloop optimize` would."""
    task = task_from_description(ROWS[row], body, duration_s=duration_s)
    program = task.canonical_program()
    if program is None:
        raise UserError(f"{ROWS[row]!r} has no canonical reward")
    scene = compile_scene(task.scene)
    standing = task.understood.stay_in_place  # as `rewardloop optimize --standing` and the loop: posture MPPI
    config = default_config(scene, kind="mppi" if standing else None, duration_s=duration_s, nthread=1,
                            standing=standing)
    trajectory = optimize(scene, program.evaluate_trusted, config, seed=seed)
    return {"body": body, "row": row, "description": ROWS[row], "seed": seed, "optimizer": config.kind,
            "reward": task.canonical, "understood": task.understood.describe(), **measure(task, trajectory, scene)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bodies", nargs="+", default=["humanoid", "myolegs"])
    parser.add_argument("--rows", nargs="+", default=list(ROWS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of motion")
    parser.add_argument("--json", required=True, help="file the rows are appended to; `runs` lists each run's "
                        "provenance and a row's `run` its index there")
    args = parser.parse_args()
    for row in args.rows:
        if row not in ROWS:
            raise unknown_name("row", row, ROWS)
    path = Path(args.json)
    result = json.loads(path.read_text()) if path.exists() else {"runs": [], "rows": []}
    command = "benchmarks/bench_motions.py " + " ".join(
        f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in vars(args).items() if k != "json")
    run = provenance(command)
    result = {**result, **run, "runs": [*result["runs"], run]}  # the file's provenance: its latest run's
    for body in args.bodies:
        for row in args.rows:
            for seed in args.seeds:
                result["rows"].append({"run": len(result["runs"]) - 1, **run_row(body, row, seed, args.duration)})
                print(json.dumps(result["rows"][-1]), flush=True)
                path.write_text(json.dumps(result, indent=1) + "\n")  # every finished row kept

if __name__ == "__main__":
    run_script(main, "bench_motions.py")
