"""Benchmark of the muscle hand's object tasks: cube rotation and bottle pouring, MoVLR's manipulation rows.

    .venv/bin/python benchmarks/bench_manipulation.py --task cube-rotate --seeds 0 1 2

For each seed the loop's optimizer for object tasks (posture-space MPPI through the gripping muscle plant,
`rewardloop.control.planners.grip.manipulation_planner`) plans a 5-s motion against the task's canonical reward on two
threads, from the hand resting around the object. Each row reports the object's final position error (the cube's
centre, the bottle's mouth, cm), orientation error (deg), tilt from upright (deg), turn about the vertical (deg),
whether it dropped, time at the goal, the task's success rule, and the wall time of the candidate. The result is
written to benchmarks/results/manipulation_<task>.json with the command, commit, date and machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from rewardloop.bench.runner import machine
from rewardloop.bench.steer import provenance
from rewardloop.control.optimizer import OptimizerConfig, optimize
from rewardloop.control.planners.grip import manipulation_planner
from rewardloop.errors import UserError, run_script
from rewardloop.sim.scene import compile_scene
from rewardloop.tasks import get_task

RESULTS = Path(__file__).resolve().parent / "results"
"""Where the result files go."""


def run_seed(task_name: str, seed: int, *, duration_s: float, nthread: int,
             save: Path | None = None) -> dict[str, object]:
    """One seed of a task: the motion planned against its canonical reward, and its figures (the trajectory saved
    under `save`/TASK_seedN when given)."""
    task = get_task(task_name)
    scene = compile_scene(task.scene)
    program = task.canonical_program()
    assert program is not None
    config = OptimizerConfig(kind="mppi", planner=manipulation_planner(task.scene.manipulation), duration_s=duration_s,
                             nthread=nthread)
    begin = time.perf_counter()
    trajectory = optimize(scene, program.evaluate_trusted, config, seed=seed)
    wall = time.perf_counter() - begin
    if save is not None:
        trajectory.save(save / f"{task_name}_seed{seed}")
    m = trajectory.metrics
    return {"seed": seed, "position_error_cm": round(m.object_position_error_cm, 2),
            "orientation_error_deg": round(m.object_orientation_error_deg, 1),
            "tilt_deg": round(m.object_tilt_deg, 1), "turn_deg": round(m.object_turn_deg, 1),
            "dropped": m.dropped, "time_at_goal_s": round(m.time_at_goal_s, 2),
            "goal_error": round(m.goal_error, 3), "achieved": task.achieved(m), "wall_s": round(wall, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="cube-rotate", choices=("cube-rotate", "bottle-pour"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--duration", type=float, default=5.0, help="simulated seconds (s)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="result file (default results/manipulation_TASK.json)")
    parser.add_argument("--save", type=Path, default=None, help="folder to save each seed's trajectory in")
    args = parser.parse_args()
    if not 0.1 <= args.duration <= 30:
        raise UserError(f"--duration must be within [0.1, 30] s, got {args.duration}")
    rows = []
    for seed in args.seeds:
        rows.append(run_seed(args.task, seed, duration_s=args.duration, nthread=args.threads, save=args.save))
        print(json.dumps(rows[-1]), flush=True)
    task = get_task(args.task)
    result = {**provenance(" ".join(["benchmarks/bench_manipulation.py", *sys.argv[1:]])), "cpu": machine(),
              "task": args.task, "success_rule": task.success_rule(), "duration_s": args.duration,
              "planner": dataclasses.asdict(manipulation_planner(task.scene.manipulation)), "rows": rows,
              "achieved": f"{sum(bool(r['achieved']) for r in rows)} of {len(rows)}"}
    out = args.out or RESULTS / f"manipulation_{args.task}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{result['achieved']} achieved; wrote {out}")


if __name__ == "__main__":
    run_script(main, "bench_manipulation")
