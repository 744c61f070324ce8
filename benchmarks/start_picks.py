"""Which shipped gait each benchmark row's search starts from, and why.

    .venv/bin/python benchmarks/start_picks.py --body myolegs --rows fast walk "straight knees" --seeds 0 1 2 \\
        --json picks.json

For every row (`bench_gait.ROWS`: its reward and ground) and seed, each shipped gait of the body for that ground is
scored as the loop's search scores its starts: once as set (alive, return) and by its median outcome over that run
and the start draws (8 draws of ±1 % noise on every parameter, `SearchConfig.start_draws`); then the start the
search runs from (`search.pick_start`): the best as set unless another's median beats its own clearly. Prints one
line per row and seed; --json writes them. Seconds per row and seed, no search; not a test.
"""

from __future__ import annotations

import argparse
import json
import time

from bench_gait import ROWS, _reward, row_scene

from rewardloop.control.defaults import default_config
from rewardloop.control.policy import shipped_gait_names
from rewardloop.control.search import PolicySearch, pick_start, search_starts
from rewardloop.errors import run_script, unknown_name
from rewardloop.sim.rollout import Simulator


def picks(body: str, row: str, seed: int) -> dict:
    """Each start's outcome as set and its median under the start draws, and the start picked, for one row and
    seed."""
    scene = row_scene(row, body)
    settings = default_config(scene, kind="search").search
    names = shipped_gait_names(body, scene.scene.terrain.kind)
    with Simulator(scene) as sim:
        searches = [(PolicySearch(scene, controller, _reward(row), settings, duration_s=10.0, seed=seed), start)
                    for controller, start in search_starts(scene, settings)]
        as_set = [search.score_start(sim, start) for search, start in searches]
        medians = [search.start_outcome(sim, start) for search, start in searches]
    picked = pick_start(as_set, medians if len(medians) > 1 else None, settings.start_margin)
    return {"row": row, "seed": seed, "picked": names[picked],
            "starts": {name: {"as_set": scores.key(0), "median": median}
                       for name, scores, median in zip(names, as_set, medians, strict=True)}}


def line(entry: dict) -> str:
    """One printed line: the pick, then each start's (alive, return) as set and its median."""
    starts = "  ".join(f"{name}: {one['as_set'][1]:.2f}/{one['as_set'][2]:.3f} median {one['median'][1]:.2f}/"
                       f"{one['median'][2]:.3f}" for name, one in entry["starts"].items())
    return f"{entry['row']}, seed {entry['seed']}: {entry['picked']}  ({starts})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--body", default="myolegs")
    parser.add_argument("--rows", nargs="*", default=list(ROWS), help=f"rows: {', '.join(ROWS)}")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--json", default=None, help="write every row's picks here")
    args = parser.parse_args()
    for name in args.rows:
        if name not in ROWS:
            raise unknown_name("row", name, ROWS)
    entries = []
    for row in args.rows:
        for seed in args.seeds:
            begin = time.perf_counter()
            entries.append(picks(args.body, row, seed))
            print(line(entries[-1]), f"({time.perf_counter() - begin:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"body": args.body, "entries": entries}, handle, indent=1)


if __name__ == "__main__":
    run_script(main, "start_picks.py")
