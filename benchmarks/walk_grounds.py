"""How often gaits walk unseen rough ground: each gait 10 s from the walking start on many rough grounds.

    .venv/bin/python benchmarks/walk_grounds.py rewardloop/control/gaits/myolegs.json --first 100 --grounds 40
    .venv/bin/python benchmarks/walk_grounds.py search.json --offered --first 200 --grounds 40 --out pick.json

Every gait given (a gait file's policy and, with --offered, every gait its search offered for validation:
found_by.validation.offered) walks the rough grounds of seeds FIRST, FIRST + 1, ... at the default roughness, all
gaits at once on each ground (one batched rollout). The benchmark's unseen grounds are seeds 100-104
(`bench_gait.py`), a search's validation grounds 500 on and the grounds it draws afresh 1000 on: pick among a
search's gaits on grounds 200-499, then measure the pick on grounds it was not picked by. Prints, per gait, the
grounds walked without a fall with the binomial standard error, the mean distance and the seeds it fell on; --out
writes them with the command. Minutes, not a test (a 10-s walk of the muscle legs takes about 2.5 s of one core).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from rewardloop.control.controllers.base import make_controller, run_controller
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.search.policy import Policy
from rewardloop.errors import UserError, run_script
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gaits", nargs="+", help="gait files (shipped gaits or find_gait.py's output)")
    parser.add_argument("--offered", action="store_true",
                        help="also every gait each file's search offered for validation")
    parser.add_argument("--first", type=int, default=100, help="the first rough ground's seed")
    parser.add_argument("--grounds", type=int, default=40, help="how many rough grounds")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds each walk lasts")
    parser.add_argument("--threads", type=int, default=1, help="simulation threads")
    parser.add_argument("--out", type=Path, help="write the results here (json)")
    args = parser.parse_args(argv)
    if args.grounds < 1 or args.duration <= 0:
        raise UserError(f"--grounds takes a count >= 1 and --duration seconds > 0, got {args.grounds}, "
                        f"{args.duration}")
    return args


def gaits(paths: list[str], offered: bool) -> tuple[Policy, list[str], np.ndarray]:
    """The first file's policy (body and controller of them all), each gait's name and [G, P] parameters."""
    policies = [Policy.load(path) for path in paths]
    first = policies[0]
    controller = make_controller(first.controller, compile_scene(Scene(first.body)))
    names, rows = [], []
    for path, policy in zip(paths, policies, strict=True):
        if (policy.body, policy.controller) != (first.body, first.controller):
            raise UserError(f"{path} is a {policy.controller} gait of {policy.body}, not a {first.controller} gait "
                            f"of {first.body} like {paths[0]}: walk them separately")
        vector = policy.vector(controller)
        names.append(path)
        rows.append(vector)
        for k, entry in enumerate(offered_params(path) if offered else []):
            row = vector.copy()
            row[:len(entry)] = entry
            if not any(np.array_equal(row, seen) for seen in rows):
                names.append(f"{path}#offered{k}")
                rows.append(row)
    return first, names, np.stack(rows)


def offered_params(path: str) -> list[list[float]]:
    """The parameter vectors a search offered for validation (find_gait.py --validate), in the order offered."""
    found_by = json.loads(Path(path).read_text()).get("found_by") or {}
    return [entry["params"] for entry in (found_by.get("validation") or {}).get("offered", [])]


def walk(policy: Policy, params: np.ndarray, seeds: range, duration: float, threads: int) -> tuple[np.ndarray, ...]:
    """[G, P] params walked on each rough ground of `seeds` -> ([G, N] fell, [G, N] distance (m))."""
    fell, distance = np.zeros((len(params), len(seeds)), bool), np.zeros((len(params), len(seeds)))
    for column, seed in enumerate(seeds):
        scene = compile_scene(Scene(policy.body, Terrain("rough", seed=seed), start_speed=WALKING_START_SPEED))
        with Simulator(scene, nthread=threads) as sim:
            rollouts = run_controller(sim, make_controller(policy.controller, scene), params,
                                      nstep=round(duration / scene.dt))
        for row, metrics in enumerate(batch_metrics(rollouts.features(scene))):
            fell[row, column], distance[row, column] = metrics.fell, metrics.distance
    return fell, distance


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    policy, names, params = gaits(args.gaits, args.offered)
    seeds = range(args.first, args.first + args.grounds)
    begin = time.perf_counter()
    fell, distance = walk(policy, params, seeds, args.duration, args.threads)
    results = []
    for name, row_fell, row_distance, row in zip(names, fell, distance, params, strict=True):
        rate = 1.0 - row_fell.mean()
        results.append({"gait": name, "walked": int((~row_fell).sum()), "grounds": len(seeds), "rate": rate,
                        "rate_se": float(np.sqrt(rate * (1.0 - rate) / len(seeds))),
                        "distance": float(row_distance.mean()),
                        "fell_on": [seed for seed, down in zip(seeds, row_fell, strict=True) if down],
                        "params": row.tolist()})
        print(f"{results[-1]['walked']:3d} of {len(seeds)} ({rate:.0%} ± {results[-1]['rate_se']:.0%}), "
              f"{row_distance.mean():5.2f} m: {name}; fell on {results[-1]['fell_on']}")
    if args.out:
        args.out.write_text(json.dumps({
            "script": "benchmarks/walk_grounds.py", "argv": sys.argv[1:] if argv is None else argv,
            "grounds": [seeds.start, seeds.stop - 1], "roughness": Terrain().roughness, "duration_s": args.duration,
            "wall_s": time.perf_counter() - begin, "date": datetime.date.today().isoformat(),
            "machine": platform.processor() or platform.machine(), "results": results}, indent=1))


if __name__ == "__main__":
    run_script(main, "walk_grounds.py")
