"""Benchmark of planner fidelity: does the planner's coarse model rank plans as the body's own physics does?

    .venv/bin/python benchmarks/bench_fidelity.py --body myolegs --settings 0.004:0.004 0.004:0.008 \
        --json fidelity.json

A setting is PLANNING_DT:CONTROLLER_INTERVAL in seconds (the interval only matters for muscle bodies). From a
few states of the body (standing, then along a motion that holds a perturbed standing posture), it samples
plans as the planner does, scores every plan with the canonical walk reward on the planner's model and on the
body's own physics with the same controller interval, and reports the Spearman rank correlation of the two
score vectors and how many of the reference's top 10 % the model also puts in its top 10 %. MPPI only uses
the ranking, so a correlation near 1 means the planner's choices are the ones the real body would make.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: BLAS threads only fight the rollout threads

import argparse
import dataclasses
import json
from typing import Any

import numpy as np

from rewardloop.control.defaults import default_config
from rewardloop.control.optimizer import PlannerConfig, make_plant
from rewardloop.control.planners.mpc import interpolate
from rewardloop.errors import run_script
from rewardloop.reward import load_reward
from rewardloop.reward.base import RewardFunction
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene


def _planner(base: PlannerConfig, planning_dt: float | None, interval_s: float) -> PlannerConfig:
    return dataclasses.replace(base, planning_dt=planning_dt,
                               muscle=dataclasses.replace(base.muscle, interval_s=interval_s))


def scores(scene: CompiledScene, planner: PlannerConfig, reward: RewardFunction, state: np.ndarray,
           knots: np.ndarray) -> np.ndarray:
    """[S] mean reward per step of [S, K, J] knot plans rolled out from `state` on the planner's model."""
    plant = make_plant(scene, "posture", planner)
    inner = plant.planner_scene
    times = np.arange(max(1, round(planner.horizon_s / inner.dt))) * inner.dt
    with Simulator(inner) as sim:
        rollouts = plant.simulate(sim, state, interpolate(knots, planner.horizon_s, times))
    return np.asarray(reward(rollouts.features(inner)).returns())


def probe_states(scene: CompiledScene, planner: PlannerConfig, rng: np.random.Generator,
                 times: list[float]) -> list[np.ndarray]:
    """States at `times` (s) of the body holding a randomly perturbed standing posture on its own physics."""
    plant = make_plant(scene, "posture", dataclasses.replace(planner, planning_dt=None))
    start = plant.start(scene.initial_state)
    target = np.clip(start + rng.normal(0.0, 0.02, start.shape) * (plant.high - plant.low), plant.low, plant.high)
    nstep = max(1, round(max(times) / scene.dt))
    with Simulator(scene, nthread=1) as sim:
        motion = plant.execute(sim, scene.initial_state, np.repeat(target[None, None], nstep, axis=1))
    return [scene.initial_state if t <= 0 else motion.state[0, min(nstep, round(t / scene.dt)) - 1] for t in times]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation of two [S] score vectors (ties broken by order)."""
    ra, rb = (np.argsort(np.argsort(x, kind="stable")).astype(float) for x in (a, b))
    return float(np.corrcoef(ra, rb)[0, 1])


def measure(scene: CompiledScene, reward: RewardFunction, settings: list[tuple[float, float]], *, seed: int,
            times: list[float]) -> list[dict[str, Any]]:
    """One row per probe state and setting: the setting's rank agreement with the body's own physics."""
    base = default_config(scene).planner
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    plant = make_plant(scene, "posture", base)
    top = max(1, int(np.ceil(0.1 * base.samples)))
    for state_time, state in zip(times, probe_states(scene, base, rng, times), strict=True):
        noise = rng.standard_normal((base.samples, base.knots, len(plant.low))) * base.noise * (plant.high - plant.low)
        knots = np.clip(plant.start(state)[None, None] + noise, plant.low, plant.high)
        for planning_dt, interval in settings:
            truth = scores(scene, _planner(base, None, interval), reward, state, knots)
            model = scores(scene, _planner(base, planning_dt, interval), reward, state, knots)
            shared = len(set(np.argsort(-truth)[:top]) & set(np.argsort(-model)[:top]))
            rows.append({"state_time_s": state_time, "planning_dt": planning_dt, "interval_s": interval,
                         "spearman": round(spearman(truth, model), 3), "top_shared": shared,
                         "top": top})
            print(f"state at {state_time:.2f} s  planning_dt {planning_dt * 1e3:g} ms  controller "
                  f"{interval * 1e3:g} ms: Spearman {rows[-1]['spearman']:.2f}, top {top} shared {shared}",
                  flush=True)
    return rows


def _setting(text: str) -> tuple[float, float]:
    dt, _, interval = text.partition(":")
    return float(dt), float(interval or dt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--body", default="myolegs")
    parser.add_argument("--reward", default="walk")
    parser.add_argument("--settings", nargs="+", type=_setting, default=[(0.004, 0.004), (0.004, 0.008)],
                        help="PLANNING_DT:CONTROLLER_INTERVAL pairs in seconds")
    parser.add_argument("--times", nargs="+", type=float, default=[0.0, 0.3, 0.6, 1.0],
                        help="when along the probe motion to take the states (s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the figures to this JSON file")
    args = parser.parse_args()
    scene = compile_scene(Scene(args.body))
    with load_reward(canonical(args.reward), trusted=True) as reward:
        rows = measure(scene, reward, args.settings, seed=args.seed, times=args.times)
    summary = {}
    for dt, interval in args.settings:
        mine = [r["spearman"] for r in rows if r["planning_dt"] == dt and r["interval_s"] == interval]
        summary[f"{dt}:{interval}"] = {"spearman_min": min(mine), "spearman_mean": round(float(np.mean(mine)), 3)}
        print(f"planning_dt {dt * 1e3:g} ms, controller {interval * 1e3:g} ms: Spearman "
              f"{min(mine):.2f}-{max(mine):.2f}, mean {np.mean(mine):.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"body": args.body, "rows": rows, "summary": summary}, out, indent=1)


if __name__ == "__main__":
    run_script(main, "bench_fidelity")
