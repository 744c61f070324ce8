"""Walking on the full musculoskeletal body (myofullbody, 416 muscles): 10-s motions of the body's default optimizer
from the walking start, on each ground, as `rewardloop optimize` makes them.

    .venv/bin/python benchmarks/bench_fullbody.py --grounds flat rough --seeds 0 1 2
    .venv/bin/python benchmarks/bench_fullbody.py --grounds flat --seeds 0 --shipped   # the shipped gait, no planning

Each (ground, seed) is one `rewardloop optimize --body myofullbody --reward R --terrain G --duration 10 --seed S`
with the ground's canonical reward (walk, walk_rough, walk_slope, walk_stairs; 'injured' is the flat walk with the
walk-injured task's weakened left plantarflexors). Reported: distance, fall, wall time per candidate, the hip's
and knee's curve against people's (r), the hands' swing against their own thighs (m, + opposite as people's), the
trunk's pitch range and cadence. Results are appended to benchmarks/results/fullbody_walk.json with the command,
commit, date and machine. A benchmark, not a test: about ten minutes per motion on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rewardloop.control.controllers.base import make_controller, run_controller
from rewardloop.control.defaults import default_config
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.optimizer import optimize
from rewardloop.control.search.policy import shipped_gait
from rewardloop.critic.gait import analyze_gait
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene, walking_start_speed
from rewardloop.sim.terrain import Terrain
from rewardloop.tasks import INJURIES

BODY = "myofullbody"
RESULTS = Path(__file__).parent / "results" / "fullbody_walk.json"
GROUNDS = {"flat": ("flat", "walk"), "rough": ("rough", "walk_rough"), "slope": ("slope", "walk_slope"),
           "stairs": ("stairs", "walk_stairs"), "injured": ("flat", "walk")}
"""Row -> (terrain kind, canonical reward)."""
DURATION_S = 10.0


def scene_of(row: str) -> CompiledScene:
    kind, _ = GROUNDS[row]
    injury = INJURIES[BODY] if row == "injured" else ()
    return compile_scene(Scene(body=BODY, terrain=Terrain(kind=kind), injury=injury,
                               start_speed=walking_start_speed(BODY)))


def run_one(row: str, seed: int, shipped: bool) -> dict[str, object]:
    """One 10-s motion on `row`'s ground: planned against its canonical reward, or the shipped gait as it is."""
    scene, reward_name = scene_of(row), GROUNDS[row][1]
    begin = time.perf_counter()
    if shipped:
        gait = shipped_gait(BODY)
        if gait is None:
            raise SystemExit(f"no shipped gait for {BODY}")
        controller = make_controller(gait.controller, scene)
        with Simulator(scene) as sim:
            rollouts = run_controller(sim, controller, gait.vector(controller)[None],
                                      nstep=round(DURATION_S / scene.dt))
        features, optimizer = rollouts.features(scene), "shipped gait"
    else:
        config = default_config(scene, duration_s=DURATION_S)
        trajectory = optimize(scene, load_reward(canonical(reward_name), trusted=True), config, seed=seed)
        features, optimizer = trajectory.rollouts.features(scene), config.kind
    wall = time.perf_counter() - begin
    metrics, gait_row = batch_metrics(features)[0], analyze_gait(features).row(0)
    return {"ground": row, "seed": seed, "optimizer": optimizer, "distance_m": round(metrics.distance, 3),
            "fell": metrics.fell, "fall_time_s": metrics.fall_time, "wall_time_s": round(wall, 1),
            **{name: _rounded(gait_row[name]) for name in ("hip_flexion_r", "knee_flexion_r", "arm_swing",
                                                           "trunk_pitch_range", "cadence")},
            "command": _command(row, seed, shipped)}


def _command(row: str, seed: int, shipped: bool) -> str:
    """The command that makes one row's motion."""
    kind, reward_name = GROUNDS[row]
    injury = "".join(f" --injury {group}={factor}" for group, factor in INJURIES[BODY]) if row == "injured" else ""
    if shipped:
        return f"rewardloop replay shipped --body {BODY} --terrain {kind}{injury} --duration 10"
    return (f"rewardloop optimize --body {BODY} --reward {reward_name} --terrain {kind}{injury} --duration 10 "
            f"--seed {seed}")


def _rounded(value: object) -> float | None:
    number = float(value)  # type: ignore[arg-type]
    return None if number != number else round(number, 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grounds", nargs="+", default=["flat", "rough"], choices=list(GROUNDS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--shipped", action="store_true", help="replay the shipped gait instead of planning")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = " ".join(["benchmarks/bench_fullbody.py", *(sys.argv[1:] if argv is None else argv)])
    record = {"date": datetime.date.today().isoformat(), "commit": commit,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "command": command, "rows": []}
    for row in args.grounds:
        for seed in args.seeds:
            record["rows"].append(run_one(row, seed, args.shipped))
            print(json.dumps(record["rows"][-1]), flush=True)
            _save(record)  # each row as it is made: a run killed hours in keeps what it finished
    return 0


def _save(record: dict[str, Any]) -> None:
    """Write `record` as the last run of the results file (added on its first save, replaced after)."""
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    runs = results["runs"]
    if runs and runs[-1].get("started") == record.setdefault("started", datetime.datetime.now().isoformat()):
        runs[-1] = record
    else:
        runs.append(record)
    partial = RESULTS.with_name(RESULTS.name + ".partial")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(RESULTS)


if __name__ == "__main__":
    sys.exit(main())
