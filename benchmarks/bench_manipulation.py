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
from typing import Literal

from rewardloop.bench.runner import machine
from rewardloop.bench.steer import provenance
from rewardloop.control.optimizer import OptimizerConfig, optimize
from rewardloop.control.planners.grip import manipulation_planner
from rewardloop.errors import UserError, run_script
from rewardloop.sim.scene import compile_scene
from rewardloop.tasks import Task, get_task

RESULTS = Path(__file__).resolve().parent / "results"
"""Where the result files go."""


def bench_task(name: str, side: Literal["left", "right"] | None = None, turn_deg: float | None = None) -> Task:
    """The task `name`, its bottle poured to `side` and its cube turned by `turn_deg` when given."""
    task = get_task(name)
    if task.scene.manipulation is None:
        return task
    changes = {key: value for key, value in (("side", side), ("turn_deg", turn_deg)) if value is not None}
    manipulation = dataclasses.replace(task.scene.manipulation, **changes)  # type: ignore[arg-type]
    return dataclasses.replace(task, scene=dataclasses.replace(task.scene, manipulation=manipulation))


def planner_config(task: Task, kind: str = "mppi", changes: dict[str, float] | None = None) -> OptimizerConfig:
    """The loop's optimizer of an object task, as `kind`, with its planner's `changes` (field -> value)."""
    planner = manipulation_planner(task.scene.manipulation)
    try:
        planner = dataclasses.replace(planner, **{k: type(getattr(planner, k))(v) for k, v in (changes or {}).items()})
    except (AttributeError, TypeError) as error:
        raise UserError(f"--planner: {error}") from None
    return OptimizerConfig(kind=kind, planner=planner)


def run_seed(task: Task, seed: int, *, duration_s: float, nthread: int, save: Path | None = None,
             weights: dict[str, float] | None = None, optimizer: OptimizerConfig | None = None) -> dict[str, object]:
    """One seed of a task: the motion planned by `optimizer` (the loop's by default) against its canonical reward
    (with `weights` changed), and its figures (the trajectory saved under `save`/TASK_seedN when given)."""
    scene = compile_scene(task.scene)
    program = task.canonical_program()
    assert program is not None
    program = program.with_weights(weights or {})
    config = dataclasses.replace(optimizer or planner_config(task), duration_s=duration_s, nthread=nthread)
    begin = time.perf_counter()
    trajectory = optimize(scene, program.evaluate_trusted, config, seed=seed)
    wall = time.perf_counter() - begin
    if save is not None:
        trajectory.save(save / f"{task.name}_seed{seed}")
    m = trajectory.metrics
    return {"seed": seed, "position_error_cm": round(m.object_position_error_cm, 2),
            "orientation_error_deg": round(m.object_orientation_error_deg, 1),
            "tilt_deg": round(m.object_tilt_deg, 1), "turn_deg": round(m.object_turn_deg, 1),
            "dropped": m.dropped, "time_at_goal_s": round(m.time_at_goal_s, 2),
            "goal_error": round(m.goal_error, 3), "achieved": task.achieved(m), "wall_s": round(wall, 1)}


def _numbers(text: str) -> dict[str, float]:
    """--weights, --planner: a JSON object of name -> number."""
    try:
        weights = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error.msg}") from None
    if not isinstance(weights, dict) or not all(isinstance(v, int | float) for v in weights.values()):
        raise argparse.ArgumentTypeError('expected an object of term -> number, e.g. {"position": 40}')
    return {str(k): float(v) for k, v in weights.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="cube-rotate", choices=("cube-rotate", "bottle-pour"))
    parser.add_argument("--side", default=None, choices=("left", "right"), help="the bottle's pour side")
    parser.add_argument("--turn", type=float, default=None, help="the cube's turn (deg, + left, - right)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--duration", type=float, default=5.0, help="simulated seconds (s)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="result file (default results/manipulation_TASK.json)")
    parser.add_argument("--save", type=Path, default=None, help="folder to save each seed's trajectory in")
    parser.add_argument("--weights", type=_numbers, default={},
                        help='canonical weights to change, as JSON: \'{"position": 40}\'')
    parser.add_argument("--optimizer", default="mppi", choices=("mppi", "cem"))
    parser.add_argument("--planner", type=_numbers, default={},
                        help='planner settings to change, as JSON: \'{"samples": 64, "planning_dt": 0.002}\'')
    args = parser.parse_args()
    if not 0.1 <= args.duration <= 30:
        raise UserError(f"--duration must be within [0.1, 30] s, got {args.duration}")
    task = bench_task(args.task, args.side, args.turn)
    optimizer = planner_config(task, args.optimizer, args.planner)
    rows = []
    for seed in args.seeds:
        rows.append(run_seed(task, seed, duration_s=args.duration, nthread=args.threads, save=args.save,
                             weights=args.weights, optimizer=optimizer))
        print(json.dumps(rows[-1]), flush=True)
    result = {**provenance(" ".join(["benchmarks/bench_manipulation.py", *sys.argv[1:]])), "cpu": machine(),
              "task": args.task, "side": task.scene.manipulation.side if task.scene.manipulation else None,
              "turn_deg": task.scene.manipulation.turn_deg if task.scene.manipulation else None,
              "weights_changed": args.weights, "success_rule": task.success_rule(),
              "duration_s": args.duration,
              "optimizer": args.optimizer, "planner": dataclasses.asdict(optimizer.planner), "rows": rows,
              "achieved": f"{sum(bool(r['achieved']) for r in rows)} of {len(rows)}"}
    out = args.out or RESULTS / f"manipulation_{args.task}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{result['achieved']} achieved; wrote {out}")


if __name__ == "__main__":
    run_script(main, "bench_manipulation")
