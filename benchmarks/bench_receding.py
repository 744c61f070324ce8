"""Benchmark of the receding-horizon mode: a gait file replayed on unseen rough grounds, as found and with the planner.

    .venv/bin/python benchmarks/bench_receding.py --policy rewardloop/control/gaits/humanoid.json \\
        --grounds 20 --seeds 0 1 2 --json receding.json

Each ground is ±4-cm rough ground of seed 100 + k (the benchmark's unseen grounds; no search uses them), walked 10 s
from the walking start; success is 10 s without a fall. The gait runs once as found (deterministic) and once per
planner seed with the receding-horizon planner pursuing `--reward` (default settings, `RecedingConfig`). The flat
ground's walk is measured both ways too (distance, human-like targets met), to show what the planner costs where
nothing goes wrong.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from bench_gait import measure, replay_motion

from rewardloop.control.search.policy import Policy
from rewardloop.control.trajectory import replayed
from rewardloop.errors import run_script
from rewardloop.reward.canonical import canonical
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain


def walk(policy: Policy, terrain: Terrain, reward_name: str | None, seed: int) -> dict:
    """One 10-s replay's numbers (bench_gait.measure) plus the ground and planner seed; no planner without a
    reward name."""
    scene = compile_scene(Scene(policy.body, terrain, start_speed=WALKING_START_SPEED))
    reward = canonical(reward_name).evaluate_trusted if reward_name else None
    begin = time.perf_counter()
    rollouts = replay_motion(scene, policy, reward, seed)
    row = measure(scene, replayed(scene, rollouts, policy))
    return {**row, "ground": terrain.describe(), "planner_seed": seed if reward_name else None,
            "wall_s": time.perf_counter() - begin}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", required=True, help="a gait file (or policy.json)")
    parser.add_argument("--grounds", type=int, default=20, help="unseen rough grounds, seeds 100, 101, ...")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2], help="planner seeds")
    parser.add_argument("--reward", default="walk", help="the canonical reward the planner pursues")
    parser.add_argument("--json", default=None, help="write every replay and the summary here")
    args = parser.parse_args()
    policy = Policy.load(args.policy)
    grounds = [Terrain("rough", seed=100 + k) for k in range(args.grounds)]
    modes = [(None, 0), *((args.reward, seed) for seed in args.seeds)]
    replays = []
    for name, seed in modes:
        for terrain in [Terrain("flat"), *grounds]:
            replays.append(walk(policy, terrain, name, seed))
            print(json.dumps(replays[-1], default=float), flush=True)
    summary = []
    for name, seed in modes:
        mine = [r for r in replays if r["planner_seed"] == (seed if name else None)]
        rough, flat = mine[1:], mine[0]
        summary.append({"planner": f"receding, seed {seed}" if name else "as found",
                        "rough_walked": sum(not r["fell"] for r in rough), "rough_grounds": len(rough),
                        "rough_mean_distance": float(np.mean([r["distance"] for r in rough])),
                        "flat_distance": flat["distance"], "flat_fell": flat["fell"],
                        "flat_human_like": flat["human_like"],
                        "wall_s_per_motion": float(np.mean([r["wall_s"] for r in mine]))})
        print(json.dumps(summary[-1], default=float), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"policy": args.policy, "reward": args.reward, "summary": summary, "replays": replays},
                      handle, indent=1, default=float)


if __name__ == "__main__":
    run_script(main, "bench_receding.py")
