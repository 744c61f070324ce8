"""Which shipped gait each benchmark row's search starts from, and why.

    .venv/bin/python benchmarks/start_picks.py --body myolegs --rows fast walk "straight knees" --seeds 0 1 2 \\
        --json picks.json

For every row (`bench_gait.ROWS`: its reward and ground) and seed, each shipped gait of the body for that ground is
scored as the loop's search scores its starts: once as set (alive, return), and by its median outcome over that run
and the start draws (8 draws of ±1 % noise on every parameter, `SearchConfig.start_draws`) and how many of those 9
runs fell; then the start the search runs from (`search.pick_start`): of the starts whose medians are about equal to
the best, the best as set of those that never fell, else the best as set. Prints one line per row and seed; --json
writes them. Seconds per row and seed, no search; not a test.

    .venv/bin/python benchmarks/start_picks.py --body myolegs --rows walk --gaits myolegs.json \
        myolegs-straight_knees.json --cpus 6 --json walk_cpus.json

With --cpus N, each row and seed is also scored as N - 1 other CPUs would score it, emulated: every start's
parameters under one draw of ±--cpu-noise relative noise (default 0.01 %: a stand-in for a CPU's last bits), the
draw of CPU k the same for every row and seed; CPU 0 is this one. --gaits keeps those starts only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
from bench_gait import ROWS, _reward, row_scene

from rewardloop.control.defaults import default_config
from rewardloop.control.search.cmaes import PolicySearch, pick_start, search_starts
from rewardloop.control.search.policy import shipped_gait_names
from rewardloop.errors import UserError, run_script, unknown_name
from rewardloop.sim.rollout import Simulator

CPU_STREAM = 99
"""The emulated CPUs' draws come from `np.random.default_rng((cpu, CPU_STREAM))`."""


def picks(body: str, row: str, seed: int, *, cpu: int = 0, cpu_noise: float = 1e-4,
          gaits: list[str] | None = None) -> dict:
    """Each start's outcome as set, its median and falls under the start draws, and the start picked, for one row
    and seed, on this CPU (`cpu` 0) or on emulated CPU `cpu` (every start's parameters under its draw of
    ±`cpu_noise` relative noise); only the starts named in `gaits` (None: all)."""
    scene = row_scene(row, body)
    settings = default_config(scene, kind="search").search
    shipped = shipped_gait_names(body, scene.scene.terrain.kind)
    for name in gaits or ():
        if name not in shipped:
            raise unknown_name("gait", name, shipped)
    kept = [index for index, name in enumerate(shipped) if gaits is None or name in gaits]
    every = search_starts(scene, settings)
    starts = [every[index] for index in kept]
    names = [shipped[index] for index in kept]
    if cpu:
        rng = np.random.default_rng((cpu, CPU_STREAM))
        starts = [(controller, np.clip(start * (1 + rng.uniform(-cpu_noise, cpu_noise, start.shape)),
                                       controller.space.low, controller.space.high)) for controller, start in starts]
    with Simulator(scene) as sim:
        searches = [(PolicySearch(scene, controller, _reward(row), settings, duration_s=10.0, seed=seed), start)
                    for controller, start in starts]
        as_set = [search.score_start(sim, start) for search, start in searches]
        outcomes = [search.start_outcome(sim, start) for search, start in searches]
    picked = pick_start(as_set, outcomes if len(outcomes) > 1 else None, settings.start_margin)
    return {"row": row, "seed": seed, "cpu": cpu, "picked": names[picked],
            "starts": {name: {"as_set": scores.key(0), "median": outcome.median, "falls": outcome.falls}
                       for name, scores, outcome in zip(names, as_set, outcomes, strict=True)}}


def line(entry: dict) -> str:
    """One printed line: the pick, then each start's (alive, return) as set, its median and its falls."""
    starts = "  ".join(f"{name}: {one['as_set'][1]:.2f}/{one['as_set'][2]:.3f} median {one['median'][1]:.2f}/"
                       f"{one['median'][2]:.3f}, {one['falls']} fell" for name, one in entry["starts"].items())
    cpu = f", CPU {entry['cpu']}" if entry["cpu"] else ""
    return f"{entry['row']}, seed {entry['seed']}{cpu}: {entry['picked']}  ({starts})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--body", default="myolegs")
    parser.add_argument("--rows", nargs="*", default=list(ROWS), help=f"rows: {', '.join(ROWS)}")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--gaits", nargs="*", default=None, help="only these shipped gaits (file names)")
    parser.add_argument("--cpus", type=int, default=1, help="this CPU and N - 1 emulated others")
    parser.add_argument("--cpu-noise", type=float, default=1e-4, help="relative parameter noise per emulated CPU")
    parser.add_argument("--json", default=None, help="write every row's picks here")
    args = parser.parse_args()
    for name in args.rows:
        if name not in ROWS:
            raise unknown_name("row", name, ROWS)
    if args.cpus < 1 or args.cpu_noise < 0:
        raise UserError(f"--cpus takes a count >= 1 and --cpu-noise a fraction >= 0, got {args.cpus}, "
                        f"{args.cpu_noise}")
    entries = []
    for row, seed, cpu in itertools.product(args.rows, args.seeds, range(args.cpus)):
        begin = time.perf_counter()
        entries.append(picks(args.body, row, seed, cpu=cpu, cpu_noise=args.cpu_noise, gaits=args.gaits))
        print(line(entries[-1]), f"({time.perf_counter() - begin:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"body": args.body, "entries": entries}, handle, indent=1)


if __name__ == "__main__":
    run_script(main, "start_picks.py")
