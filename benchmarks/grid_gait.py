"""Walk a gait over a grid of settings of some of its parameters, each setting with draws of noise on them.

    .venv/bin/python benchmarks/grid_gait.py --gait rewardloop/control/gaits/myolegs.json \\
        --grid turn_rate=-0.14:-0.16:-0.18:-0.20 path_steer=0.1:0.15:0.2:0.25 --draws 8 --out grid.json

Hand-set gaits (`set_gait.py`: the turning gaits) are picked from such a grid. Every combination of the values given
walks 10 s from the walking start, as set (draw 0) and with draws 1, 2, ... of uniform ±--noise relative noise on the
gridded parameters (with --noise-all on every parameter; the same draws for every setting, kept within bounds), all
in one batched rollout (with --receding one after another, each with the receding-horizon planner on top pursuing
--reward, as `optimize` runs it on that ground: how far the planner carries a gait off its cliff). Prints, per
setting, how many draws walked without a fall, their heading change (degrees, + left), mean distance, mean sideways
drift, mean pelvis yaw range (degrees, peak to peak), how many draws met every human-like target
(`critic.likeness`) and, with --reward, the mean return under that canonical program; --out writes them, each
draw's distance and return, and the command. A setting that walks every draw on one machine can fall on another
(the arithmetic differs in the last digits and the motion is chaotic): pick one whose draws and neighbours walk.
Minutes, not a test.

    .venv/bin/python benchmarks/grid_gait.py --gait rewardloop/control/gaits/myolegs-stairs.json --terrain stairs \\
        --grid speed=0.45038817586881724 --noise-all --draws 9 --reward walk_stairs --receding --out stairs.json
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import itertools
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from find_gait import ground, named_numbers

from rewardloop.control.config import RecedingConfig
from rewardloop.control.controllers.base import Controller, make_controller, run_controller
from rewardloop.control.defaults import receding_changed, receding_for
from rewardloop.control.metrics import batch_metrics, fall_mask
from rewardloop.control.planners.receding import planning_simulator, receding_motion
from rewardloop.control.search.policy import Policy
from rewardloop.critic.gait import analyze_gait
from rewardloop.critic.likeness import met
from rewardloop.errors import UserError, run_script
from rewardloop.reward.base import RewardFunction
from rewardloop.reward.canonical import canonical
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, CompiledScene, Scene, compile_scene


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gait", required=True, help="the gait file whose parameters are set")
    parser.add_argument("--grid", nargs="+", required=True, metavar="NAME=V1:V2:...", help="values to try")
    parser.add_argument("--draws", type=int, default=8, help="motions per setting: as set, then noise draws")
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise on the gridded parameters")
    parser.add_argument("--noise-all", action="store_true",
                        help="the noise on every parameter of the gait (how far a gait is from a cliff: one that "
                             "falls under ±0.1 %% falls on another CPU)")
    parser.add_argument("--terrain", default="flat", metavar="KIND[:VALUE]",
                        help="ground: flat, rough[:SEED], slope[:DEGREES] or stairs[:RISE_M]")
    parser.add_argument("--reward", metavar="NAME", help="also score each motion under this canonical reward "
                        "program (e.g. walk): its mean return per setting")
    parser.add_argument("--reward-speed", type=float, metavar="M_S", help="the --reward program's target speed")
    parser.add_argument("--receding", action="store_true",
                        help="run each motion with the receding-horizon planner pursuing --reward (the ground's "
                             "planner settings, as `optimize` uses them; one motion after another: minutes each)")
    parser.add_argument("--planner-seed", type=int, default=0, help="with --receding: the planner's random seed")
    parser.add_argument("--planner", nargs="+", default=[], metavar="NAME=VALUE",
                        help="with --receding: changes to the ground's planner settings (RecedingConfig fields, "
                             "e.g. samples=8 screen=1)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds each motion lasts")
    parser.add_argument("--threads", type=int, default=1, help="simulation threads")
    parser.add_argument("--out", type=Path, help="write the results here (json)")
    args = parser.parse_args(argv)
    if args.draws < 1 or args.noise < 0 or args.duration <= 0:
        raise UserError(f"--draws takes a count >= 1, --noise a fraction >= 0 and --duration seconds > 0, got "
                        f"{args.draws}, {args.noise}, {args.duration}")
    if args.reward_speed is not None and args.reward is None:
        raise UserError("--reward-speed sets the target speed of a --reward program; name one with --reward")
    if args.receding and args.reward is None:
        raise UserError("--receding runs a planner that pursues a reward; name one with --reward")
    if args.planner and not args.receding:
        raise UserError("--planner changes the receding-horizon planner's settings; add --receding")
    return args


def planner_config(scene: CompiledScene, items: list[str]) -> RecedingConfig:
    """The ground's planner settings (`receding_for`) with the --planner NAME=VALUE changes; a one-line UserError
    naming the fields for anything else."""
    return receding_changed(receding_for(scene.body.actuator_kind, scene.scene.terrain.kind), items)


def grid_values(items: list[str]) -> dict[str, tuple[float, ...]]:
    """['name=v1:v2', ...] -> {name: (v1, v2)}; a one-line UserError for anything else."""
    grid = dict(named_numbers(item, "--grid", "NAME=V1:V2:...") for item in items)
    if len(grid) != len(items) or not all(grid):
        raise UserError(f"--grid takes each parameter once, as NAME=V1:V2:..., got {' '.join(items)}")
    return grid


def grid_rows(vector: np.ndarray, columns: list[int], settings: list[tuple[float, ...]], draws: int,
              noise: float, noisy: list[int] | None = None) -> np.ndarray:
    """[S·D, P] the gait's vector with each setting in `columns`, draw 0 as set and draw d ≥ 1 with the `noisy`
    columns (default: `columns`) scaled by 1 + U(-noise, noise) from generator seed d (the same draws for every
    setting)."""
    noisy = columns if noisy is None else noisy
    scale = np.ones((draws, len(noisy)))
    for draw in range(1, draws):
        scale[draw] = 1.0 + np.random.default_rng(draw).uniform(-noise, noise, len(noisy))
    rows = np.repeat(vector[None], len(settings) * draws, axis=0)
    rows[:, columns] = np.repeat(np.asarray(settings, dtype=float), draws, axis=0)
    rows[:, noisy] *= np.tile(scale, (len(settings), 1))
    return rows


def motions(scene: CompiledScene, controller: Controller, rows: np.ndarray, args: argparse.Namespace,
            reward: RewardFunction | None, config: RecedingConfig | None) -> Rollouts:
    """[R, T, ·] the motion of each of the [R, P] `rows` from the walking start: in one batched rollout, or with a
    planner `config` one after another, each with the receding-horizon planner pursuing `reward`."""
    with Simulator(scene, nthread=args.threads) as sim:
        if config is None or reward is None:
            return run_controller(sim, controller, rows, nstep=round(args.duration / scene.dt))
        with planning_simulator(sim) as planner:
            parts = [receding_motion(sim, planner, controller, row, reward, config, duration_s=args.duration,
                                     seed=args.planner_seed)[0] for row in rows]
    return Rollouts.stacked(parts)


def _mean(values: np.ndarray) -> float | None:
    """The mean of the finite values (None if none is: motions without strides)."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    policy, grid, terrain = Policy.load(args.gait), grid_values(args.grid), ground(args.terrain, "--terrain")
    reward = None if args.reward is None else canonical(args.reward, speed=args.reward_speed).evaluate_trusted
    scene = compile_scene(Scene(policy.body, terrain, start_speed=WALKING_START_SPEED))
    controller = make_controller(policy.controller, scene)
    vector = policy.vector(controller)
    columns = [controller.space.index(name) for name in grid]  # a UserError names an unknown parameter
    settings = list(itertools.product(*grid.values()))
    for setting in settings:  # a UserError for a value outside its parameter's bounds
        controller.space.vector(dict(zip(grid, setting, strict=True)), vector)
    noisy = list(range(len(vector))) if args.noise_all else columns
    rows = np.clip(grid_rows(vector, columns, settings, args.draws, args.noise, noisy), controller.space.low,
                   controller.space.high)
    config = planner_config(scene, args.planner) if args.receding else None
    begin = time.perf_counter()
    features = motions(scene, controller, rows, args, reward, config).features(scene)
    seconds = time.perf_counter() - begin
    walked = ~fall_mask(features).any(axis=1).reshape(len(settings), args.draws)
    metrics = batch_metrics(features)
    turned = np.degrees([m.heading_change for m in metrics]).reshape(len(settings), args.draws)
    distance = np.array([m.distance for m in metrics]).reshape(len(settings), args.draws)
    drift = np.array([abs(m.lateral_drift) for m in metrics]).reshape(len(settings), args.draws)
    returns = (np.full(len(rows), np.nan) if reward is None else reward(features).returns()).reshape(drift.shape)
    analysis = analyze_gait(features)
    yaw = analysis.measures.pelvis_yaw_range.reshape(len(settings), args.draws)
    human = np.logical_and.reduce(list(met(analysis).values())).reshape(len(settings), args.draws)
    results = []
    for setting, row_walked, row_turned, row_distance, row_drift, row_yaw, row_human, row_returns in zip(
            settings, walked, turned, distance, drift, yaw, human, returns, strict=True):
        results.append({"set": dict(zip(grid, setting, strict=True)), "walked": int(row_walked.sum()),
                        "turned_deg": row_turned.round(1).tolist(), "distance": float(row_distance.mean()),
                        "distances": row_distance.round(2).tolist(), "lateral_drift_m": float(row_drift.mean()),
                        "pelvis_yaw_deg": _mean(row_yaw), "human_like": int(row_human.sum()),
                        "return": _mean(row_returns), "returns": [None if np.isnan(r) else round(float(r), 3)
                                                                  for r in row_returns]})
        named = " ".join(f"{name}={value:g}" for name, value in results[-1]["set"].items())
        yaw_deg = results[-1]["pelvis_yaw_deg"] or float("nan")
        scored = "" if reward is None else f", return {row_returns.mean():.3f} under {args.reward}"
        print(f"{named}: walked {results[-1]['walked']} of {args.draws}, turned {np.round(row_turned).astype(int)}°, "
              f"{row_distance.mean():.1f} m, {row_drift.mean():.2f} m sideways, pelvis yaw {yaw_deg:.1f}°, "
              f"human-like {row_human.sum()}{scored}")
    print(f"{len(rows)} motions in {seconds:.0f} s")
    if args.out:
        args.out.write_text(json.dumps({
            "script": "benchmarks/grid_gait.py", "argv": sys.argv[1:] if argv is None else argv,
            "terrain": terrain.describe(), "date": datetime.date.today().isoformat(),
            "machine": platform.processor() or platform.machine(), "wall_s": round(seconds, 1),
            "planner": config and dataclasses.asdict(config),
            "results": results}, indent=1))


if __name__ == "__main__":
    run_script(main, "grid_gait.py")
