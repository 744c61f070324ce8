"""Benchmark of the controller optimizer: distance walked, falls, wall time and planner efficiency.

    .venv/bin/python benchmarks/bench_control.py --bodies humanoid myolegs --terrains flat rough \
        --duration 10 --seeds 0 1 2 --json control.json

For each body and terrain it optimizes the canonical walk reward for --duration seconds and reports the
distance walked, whether the body fell, the wall time, and the planner efficiency: physics steps per second
achieved inside the planner (rollouts with the low-level controller + features + reward) ÷ raw batched
`mujoco.rollout` steps per second of the very same controls from the same states, with the same threads
(`paired_rates`: 8 states along the executed motion, the fastest of 3 alternating timings of each side).
Sampling MPC is chaotic, so it runs every seed given and summarises them per body and terrain. Timings on a
shared machine are noisy.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: BLAS threads only fight the rollout threads

import argparse
import json
import time

import numpy as np

from rewardloop.control.defaults import default_config
from rewardloop.control.optimizer import make_plant, optimize
from rewardloop.errors import run_script
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.sim.terrain import Terrain


def paired_rates(scene, config, trajectory, reward, *, points: int = 8,  # type: ignore[no-untyped-def]
                 repeats: int = 3) -> tuple[float, float]:
    """(planner steps/s, raw steps/s) on the same batches: planning iterations from `points` states along the
    executed motion, timed whole (plant rollout incl. low-level control + features + reward) and as plain
    batched open-loop `mujoco.rollout` of the very same controls from the same states, with the same threads.
    Each pair is timed `repeats` times, alternating, and the fastest of each side counts (as `timeit` does): a
    hiccup of the shared machine during one side then no longer decides the ratio."""
    plant = make_plant(scene, "raw" if config.kind == "predictive" else "posture", config.planner)
    inner, planner = plant.planner_scene, config.planner
    steps = max(1, round(planner.horizon_s / inner.dt))
    rng = np.random.default_rng(0)
    states = trajectory.rollouts.state[0, np.linspace(0, trajectory.rollouts.state.shape[1] - 1, points).astype(int)]
    planned = raw = 0.0
    with Simulator(inner, nthread=config.nthread) as sim:
        for state in states:
            noise = rng.normal(0.0, planner.noise, (planner.samples, 1, len(plant.low))) * (plant.high - plant.low)
            targets = np.clip(plant.start(state) + noise, plant.low, plant.high).repeat(steps, axis=1)
            times = np.array([_timed_pair(sim, plant, inner, reward, state, targets) for _ in range(repeats)])
            planned, raw = planned + times[:, 0].min(), raw + times[:, 1].min()
    total = points * planner.samples * steps
    return total / planned, total / raw


def _timed_pair(sim, plant, inner, reward, state, targets) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(s for one planning iteration's rollouts + reward, s for raw rollouts of the same controls)."""
    begin = time.perf_counter()
    rollouts = plant.simulate(sim, state, targets)
    reward(rollouts.features(inner)).returns()
    middle = time.perf_counter()
    sim.open_loop(rollouts.control, initial_state=state)
    return middle - begin, time.perf_counter() - middle


def measure(body: str, terrain: str, *, duration: float, reward_name: str, seed: int,
            nthread: int | None, samples: int | None = None) -> dict[str, object]:
    scene = compile_scene(Scene(body, Terrain(terrain)))
    config = default_config(scene, kind="mppi", duration_s=duration, nthread=nthread, samples=samples)
    with load_reward(canonical(reward_name), trusted=True) as reward:
        trajectory = optimize(scene, reward, config, seed=seed)
        planner_rate, raw = paired_rates(scene, config, trajectory, reward)
    in_run_rate = trajectory.planner_steps / max(trajectory.planner_time_s, 1e-9)
    metrics = trajectory.metrics
    return {
        "body": body, "terrain": terrain, "reward": reward_name, "seed": seed, "duration_s": duration,
        "distance_m": round(metrics.distance, 3), "fell": metrics.fell, "fall_time_s": metrics.fall_time,
        "lateral_drift_m": round(metrics.lateral_drift, 3), "steps": metrics.steps,
        "wall_s": round(trajectory.wall_time_s, 1),
        "wall_s_per_10s": round(trajectory.wall_time_s * 10.0 / duration, 1),
        "planner_steps_per_s_in_run": round(in_run_rate),
        "planner_steps_per_s": round(planner_rate), "raw_steps_per_s": round(raw),
        "efficiency": round(planner_rate / raw, 3), "return": round(trajectory.total_return, 4),
        "planner": {k: v for k, v in vars(config.planner).items() if not k.startswith(("pd", "muscle"))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", nargs="+", default=["humanoid", "myolegs"])
    parser.add_argument("--terrains", nargs="+", default=["flat", "rough"])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of motion per run")
    parser.add_argument("--reward", default="walk", help="canonical reward name")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="one run per seed (results vary a lot)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--samples", type=int, default=None, help="planner samples (default: the body's own)")
    parser.add_argument("--json", default=None, help="write the figures to this JSON file")
    args = parser.parse_args()
    results, summaries = [], []
    for body in args.bodies:
        for terrain in args.terrains:
            rows = []
            for seed in args.seeds:
                rows.append(measure(body, terrain, duration=args.duration, reward_name=args.reward, seed=seed,
                                    nthread=args.threads, samples=args.samples))
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "planner"}), flush=True)
            results += rows
            summaries.append(summary(rows))
            print(json.dumps(summaries[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"note": "timings on a shared machine are noisy", "summaries": summaries, "results": results},
                      handle, indent=2)


def summary(rows: list[dict[str, object]]) -> dict[str, object]:
    """One body and terrain over its seeds: distances, falls, worst wall time, mean efficiency."""
    distances = [float(row["distance_m"]) for row in rows]  # type: ignore[arg-type]
    return {
        "body": rows[0]["body"], "terrain": rows[0]["terrain"], "seeds": [row["seed"] for row in rows],
        "distance_m_mean": round(float(np.mean(distances)), 3), "distance_m_min": min(distances),
        "distance_m_max": max(distances), "falls": sum(bool(row["fell"]) for row in rows),
        "wall_s_per_10s_max": max(float(row["wall_s_per_10s"]) for row in rows),  # type: ignore[arg-type]
        "efficiency_mean": round(float(np.mean([row["efficiency"] for row in rows])), 3),
    }


if __name__ == "__main__":
    run_script(main, "bench_control")
