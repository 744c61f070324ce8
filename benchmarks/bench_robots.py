"""Walking on the robots: 10-s motions of the gait planner (the servo tracker steered against the reward) from rest.

    .venv/bin/python benchmarks/bench_robots.py --bodies berkeley_humanoid --asks walk --seeds 0 1 2
    .venv/bin/python benchmarks/bench_robots.py --asks walk --planner samples=32   # the gait planner's settings changed

Each (body, ask, seed) is one `rewardloop optimize --body BODY --reward ASK --start-speed 0 --duration 10 --seed
SEED`: distance, speed, fall, wall time, steps, and the knee flexion at mid-stance (the middle of each single-foot
contact, averaged) that a straight-knee ask should lower. Results go to benchmarks/results/robots_walk.json with the
command, commit, date and machine. It is a benchmark, not a test: minutes per body.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

from rewardloop.control.defaults import default_config, receding_changed
from rewardloop.control.optimizer import optimize
from rewardloop.control.planners.gait_planning import planner_settings
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.features import Features
from rewardloop.sim.scene import Scene, compile_scene

RESULTS = Path(__file__).parent / "results" / "robots_walk.json"
ASKS: dict[str, dict[str, float]] = {"walk": {}, "walk_straight_knees": {}, "turn_left": {}, "turn_right": {},
                                     "walk_slow": {"speed": 0.4}}
"""Ask name -> the canonical program's name (the part before '_slow') and its options."""


def knee_mid_stance(features: Features) -> float:
    """Mean knee flexion (rad) at the middle of each contact of one foot alone (single stance), both legs."""
    values = []
    for side, other in (("left", "right"), ("right", "left")):
        mine, theirs = getattr(features, f"{side}_foot_contact")[0], getattr(features, f"{other}_foot_contact")[0]
        alone = (mine > 0) & (theirs == 0)
        knee = getattr(features, f"{side}_knee_flexion")[0]
        edges = np.flatnonzero(np.diff(np.concatenate([[0], alone.astype(int), [0]])))
        values += [knee[(start + stop) // 2] for start, stop in zip(edges[::2], edges[1::2], strict=True)
                   if stop - start > 5]
    return float(np.mean(values)) if values else float("nan")


def run_one(body: str, ask: str, seed: int, planner: list[str]) -> dict[str, object]:
    """One 10-s motion from rest with the body's default optimizer, its gait planner's settings changed by
    `planner` (NAME=VALUE items of RecedingConfig); its figures."""
    name = "walk" if ask == "walk_slow" else ask
    scene = compile_scene(Scene(body=body, start_speed=0.0))
    reward = load_reward(canonical(name, **ASKS[ask]), trusted=True)
    config = default_config(scene, duration_s=10.0)
    if planner:
        config = dataclasses.replace(config, gait_planner=receding_changed(planner_settings(config, scene), planner))
    trajectory = optimize(scene, reward, config, seed=seed)
    m = trajectory.metrics
    return {"body": body, "ask": ask, "seed": seed, "optimizer": config.kind, "distance_m": round(m.distance, 3),
            "speed_m_s": round(m.speed, 3), "fell": m.fell, "fall_time_s": m.fall_time, "steps": m.steps,
            "heading_change_rad": round(m.heading_change, 3), "lateral_drift_m": round(m.lateral_drift, 3),
            "knee_mid_stance_rad": round(knee_mid_stance(trajectory.rollouts.features(scene)), 3),
            "wall_time_s": round(trajectory.wall_time_s, 1), "planner": " ".join(planner),
            "command": f"rewardloop optimize --body {body} --reward {name} --start-speed 0 --duration 10 "
                       f"--seed {seed}" + (" (speed 0.4 m/s)" if ask == "walk_slow" else "")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", nargs="+", default=["berkeley_humanoid"])
    parser.add_argument("--asks", nargs="+", default=["walk"], choices=list(ASKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--planner", nargs="+", default=[], metavar="NAME=VALUE",
                        help="changes to the gait planner's settings (RecedingConfig fields, e.g. samples=32)")
    args = parser.parse_args(argv)
    rows = []
    for body in args.bodies:
        for ask in args.asks:
            for seed in args.seeds:
                rows.append(run_one(body, ask, seed, args.planner))
                print(json.dumps(rows[-1]), flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record = {"date": datetime.date.today().isoformat(), "commit": commit,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "command": " ".join(sys.argv),
              "rows": rows}
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    previous["runs"].append(record)
    RESULTS.write_text(json.dumps(previous, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
