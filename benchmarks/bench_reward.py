"""Reward evaluation cost per million state-steps: in-process (trusted) vs the sandbox worker (isolated).

Usage: python benchmarks/bench_reward.py [--batch 64] [--steps 50] [--calls 300] [--program walk]
Prints seconds per million state-steps for both and the overhead ratio. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import time

from rewardloop.errors import run_script
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Simulator, random_controls
from rewardloop.sim.scene import Scene, compile_scene


def seconds_per_call(reward, features, calls: int) -> float:
    reward(features)  # warm up (starts the worker, compiles the program)
    start = time.perf_counter()
    for _ in range(calls):
        reward(features)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--body", default="humanoid")
    parser.add_argument("--program", default="walk", help="canonical program name")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    scene = compile_scene(Scene(args.body))
    with Simulator(scene, nthread=1) as sim:
        features = sim.open_loop(random_controls(scene, args.batch, args.steps, seed=0)).features(scene)
    program = canonical(args.program)
    per_million = 1e6 / (args.batch * args.steps)
    results = {}
    for trusted in (True, False):
        with load_reward(program, trusted=trusted) as reward:
            results[trusted] = seconds_per_call(reward, features, args.calls)
    print(f"{args.program} on {args.body}, batch [{args.batch}, {args.steps}], {args.calls} calls")
    for trusted, label in ((True, "in-process"), (False, "isolated")):
        print(f"{label:>11}: {results[trusted] * 1e3:7.3f} ms/call  {results[trusted] * per_million:7.3f} s per "
              f"million state-steps  {1 / results[trusted]:7.0f} calls/s")
    print(f"   overhead: {results[False] / results[True]:.2f}x")


if __name__ == "__main__":
    run_script(main, "bench_reward")
