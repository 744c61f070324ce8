"""Benchmark of motions that are not forward walks, made as the loop makes them: stepping in place, walking backward,
standing on rough ground.

    .venv/bin/python benchmarks/bench_beyond.py --bodies humanoid myolegs --seeds 0 1 2 --json beyond.json

Each row is a description the loop reads (`tasks.task_from_description`): its scene (these start from rest), its
canonical reward and the optimizer the loop picks for it (`loop.run.body_optimizer`: the gait planner for motions
made of steps on a body with a gait controller, posture-space MPPI for standing still). For every body, row and
seed it makes one 10-s motion (one thread, as the loop runs each candidate) and reports what the targets ask:
falls, the step rate while within `control.metrics.STAY_RADIUS_M` of the start and the share of the motion spent
there, the distance walked backward, the furthest the centre of mass got from the start, the cadence and
mid-stance knee flexion of the steps, and the wall time per candidate.
Targets (issue 56): stepping in place at >= 1.5 steps/s within 0.25 m of the start; >= 3 m backward in 10 s;
standing 10 s on rough ground; no fall; <= 120 s per candidate. Issue 85 asks the robots to stand 10 s on flat
and rough ground (`--bodies berkeley_humanoid unitree_g1 --rows stand-flat stand-rough`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

import numpy as np

from rewardloop.bench.steer import provenance
from rewardloop.control.optimizer import optimize
from rewardloop.control.trajectory import Trajectory
from rewardloop.critic.gait import analyze_gait
from rewardloop.errors import UserError, run_script, unknown_name
from rewardloop.loop.config import RunConfig
from rewardloop.loop.run import body_optimizer
from rewardloop.reward.canonical import canonical
from rewardloop.sim.scene import compile_scene
from rewardloop.sim.terrain import Terrain
from rewardloop.tasks import task_from_description

ROWS = {"step-in-place": ("step in place", "flat"), "backward": ("walk backward", "flat"),
        "stand-rough": ("stand still", "rough"), "stand-flat": ("stand still", "flat")}
"""Row -> (description, ground)."""
DURATION_S = 10.0


def measure(trajectory: Trajectory, features: Any) -> dict[str, Any]:
    """One motion's figures ([1, T] features)."""
    metrics, gait = trajectory.metrics, analyze_gait(features).measures
    offset = features.com_pos[0, :, :2] - features.com_pos[0, :1, :2]
    return {"fell": bool(metrics.fell), "fall_time": metrics.fall_time, "steps": metrics.steps,
            "step_rate_in_place": metrics.step_rate_in_place, "stay_fraction": metrics.stay_fraction,
            "backward_distance": metrics.backward_distance, "furthest_m": float(np.linalg.norm(offset, axis=1).max()),
            "cadence": float(gait.cadence[0]), "knee_midstance": float(gait.knee_midstance[0]),
            "wall_s": trajectory.wall_time_s}


def run_row(body: str, row: str, seed: int) -> dict[str, Any]:
    """One body, row and seed as the loop would make its first candidate (the canonical reward)."""
    description, ground = ROWS[row]
    task = task_from_description(description, body, Terrain(ground))
    if task.canonical is None:
        raise UserError(f"{description!r} has no canonical reward")
    config = dataclasses.replace(body_optimizer(task, RunConfig()), duration_s=DURATION_S)  # one thread, as the loop
    scene = compile_scene(task.scene)
    trajectory = optimize(scene, canonical(task.canonical).evaluate_trusted, config, seed=seed)
    return {"body": body, "row": row, "seed": seed, "optimizer": config.kind, "reward": task.canonical,
            **measure(trajectory, trajectory.features(scene))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bodies", nargs="+", default=["humanoid", "myolegs"])
    parser.add_argument("--rows", nargs="+", default=list(ROWS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--json", required=True, help="file to write the rows to, with their provenance")
    args = parser.parse_args()
    for row in args.rows:
        if row not in ROWS:
            raise unknown_name("row", row, ROWS)
    result: dict[str, Any] = {**provenance("benchmarks/bench_beyond.py " + " ".join(
        f"--{k} {' '.join(map(str, v))}" for k, v in vars(args).items() if k != "json")), "rows": []}
    for body in args.bodies:
        for row in args.rows:
            for seed in args.seeds:
                result["rows"].append(run_row(body, row, seed))
                print(json.dumps(result["rows"][-1]), flush=True)
                with open(args.json, "w") as out:  # every finished row kept
                    json.dump(result, out, indent=1)


if __name__ == "__main__":
    run_script(main, "bench_beyond.py")
