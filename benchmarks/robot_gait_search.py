"""A robot's shipped gait: an offline policy search of the servo tracker on long trials, asking for a walking speed
and a straight heading, from rest on flat ground.

    .venv/bin/python benchmarks/robot_gait_search.py --body berkeley_humanoid --speed 0.55 --seed 0

CMA-ES over every parameter of the servo tracker (`rewardloop optimize --optimizer search` with settings the CLI does
not offer): trials of `--duration` s from rest against the canonical walk at `--speed` m/s; a trial whose heading
strays more than `--heading-limit` degrees from +x, or whose centre of mass advances less than `--stall` m/s over a
second, counts as fallen there; each candidate is also tried under `--noise-draws` draws of `--noise` relative
parameter noise (a gait the planner steers must tolerate small changes). It starts from the body's shipped gait (or
the tracker's Froude-scaled defaults with --from-defaults) and writes the found gait, with the command, wall time,
date, commit and its own trial's figures, to rewardloop/control/gaits/BODY.json (or --out), and appends that record
to benchmarks/results/robot_gaits.json. Minutes per body.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from rewardloop.control.config import OptimizerConfig, Perturbations, SearchConfig
from rewardloop.control.metrics import TaskMetrics
from rewardloop.control.search.cmaes import search_motion
from rewardloop.control.search.policy import Policy
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.scene import Scene, compile_scene

GAITS = Path(__file__).parent.parent / "rewardloop" / "control" / "gaits"
RESULTS = Path(__file__).parent / "results" / "robot_gaits.json"


def search_settings(args: argparse.Namespace) -> SearchConfig:
    """The policy search the command line asks for."""
    return SearchConfig(controller="servo_tracker", population=args.population, generations=args.generations,
                        sigma=args.sigma, stall_speed=args.stall, heading_limit_deg=args.heading_limit,
                        max_seconds=None, warm_start=not args.from_defaults,
                        perturbations=Perturbations(param_noise=args.noise, noise_draws=args.noise_draws))


def found_by(args: argparse.Namespace, seconds: float, metrics: TaskMetrics) -> dict[str, object]:
    """How the gait was found: command, wall time, date, commit, machine and its own trial's figures."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"command": "benchmarks/robot_gait_search.py " + " ".join(sys.argv[1:]), "wall_time_s": round(seconds, 1),
            "date": datetime.date.today().isoformat(), "commit": commit,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "from": "the tracker's Froude-scaled defaults" if args.from_defaults else "the body's shipped gait",
            f"measured_{args.duration:g}s": {"distance_m": round(metrics.distance, 3), "fell": metrics.fell,
                                             "steps": metrics.steps,
                                             "heading_change_rad": round(metrics.heading_change, 3),
                                             "lateral_drift_m": round(metrics.lateral_drift, 3)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="berkeley_humanoid")
    parser.add_argument("--speed", type=float, default=0.55, help="target speed of the canonical walk (m/s)")
    parser.add_argument("--duration", type=float, default=8.0, help="trial length (s)")
    parser.add_argument("--generations", type=int, default=40)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--sigma", type=float, default=0.05, help="first step, as a fraction of each range")
    parser.add_argument("--heading-limit", type=float, default=20.0, help="degrees")
    parser.add_argument("--stall", type=float, default=0.15, help="m/s")
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--noise-draws", type=int, default=1)
    parser.add_argument("--from-defaults", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    scene = compile_scene(Scene(body=args.body, start_speed=0.0))
    reward = load_reward(canonical("walk", speed=args.speed), trusted=True)
    config = OptimizerConfig(kind="search", search=search_settings(args), duration_s=args.duration)
    trajectory = search_motion(scene, reward, config, seed=args.seed, progress=lambda p: print(p.message, flush=True))
    record = found_by(args, trajectory.wall_time_s, trajectory.metrics)
    out = args.out or GAITS / f"{args.body}.json"
    if not isinstance(trajectory.policy, Policy):
        raise SystemExit("the search returned no structured controller's policy")
    trajectory.policy.save(out, found_by=record)
    print(json.dumps(record), flush=True)
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    previous["runs"].append({"body": args.body, "out": str(out), **record})
    RESULTS.write_text(json.dumps(previous, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
