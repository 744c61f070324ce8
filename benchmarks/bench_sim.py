"""Simulation benchmark: physics steps per second per body, a Python mj_step loop vs batched rollouts.

Run: .venv/bin/python benchmarks/bench_sim.py [--seconds 2] [--bodies humanoid,myolegs,myofullbody]
"""

from __future__ import annotations

import argparse
import json

from rewardloop.errors import run_script
from rewardloop.sim.bodies import BODIES
from rewardloop.sim.measure import batched_steps_per_second, python_steps_per_second
from rewardloop.sim.scene import Scene, compile_scene


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--bodies", default=",".join(BODIES))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    results = {}
    print(f"{'body':<12} {'python loop':>12} {'batched 1 thr':>14} {'batched 2 thr':>14}")
    for name in args.bodies.split(","):
        scene = compile_scene(Scene(body=name))
        row = {
            "python_loop": python_steps_per_second(scene, seconds=args.seconds),
            "batched_1_thread": batched_steps_per_second(scene, seconds=args.seconds, nthread=1),
            "batched_2_threads": batched_steps_per_second(scene, seconds=args.seconds, nthread=2),
        }
        results[name] = row
        cells = (row["python_loop"], row["batched_1_thread"], row["batched_2_threads"])
        print(f"{name:<12} {cells[0]:>12.0f} {cells[1]:>14.0f} {cells[2]:>14.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    run_script(main, "bench_sim")
