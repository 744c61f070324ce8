"""Write a gait file that is another gait with some parameters set by hand, and what it measures over 10 s.

    .venv/bin/python benchmarks/set_gait.py --gait rewardloop/control/gaits/myolegs.json \\
        --set turn_rate=0.18 path_steer=0.2 --for-terrain flat --out rewardloop/control/gaits/myolegs-turn_left.json

The shipped turning gaits of the muscle legs are made this way: the main gait steered by its feet (`path_steer`) at
a steady `turn_rate`, the settings picked by hand from a grid (`benchmarks/grid_gait.py`; docs/gaits.md).
A file with --for-terrain is among the body's shipped gaits on that ground only, where the loop's per-candidate
search picks its start: the one the reward ranks best.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from find_gait import measure, named_numbers

from rewardloop.control.controllers.base import make_controller
from rewardloop.control.search.policy import Policy
from rewardloop.errors import UserError, run_script
from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.sim.terrain import TERRAINS


def parse_values(items: list[str]) -> dict[str, float]:
    """['name=value', ...] -> {name: value}; a one-line UserError for anything else."""
    values = {}
    for item in items:
        name, numbers = named_numbers(item, "--set", "NAME=VALUE")
        if len(numbers) != 1:
            raise UserError(f"--set takes NAME=VALUE, got {item!r}")
        values[name] = numbers[0]
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gait", required=True, help="the gait file to start from")
    parser.add_argument("--set", nargs="+", required=True, metavar="NAME=VALUE", help="parameters to set")
    parser.add_argument("--for-terrain", default=None, choices=list(TERRAINS), help="a start on that ground only")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    base = Policy.load(args.gait)
    controller = make_controller(base.controller, compile_scene(Scene(base.body)))
    policy = Policy(base.controller, base.body, {**base.params, **parse_values(args.set)})
    vector = policy.vector(controller)  # a UserError for an unknown name or a value out of bounds
    extra = {"found_by": {"script": "benchmarks/set_gait.py", "argv": sys.argv[1:], "from": args.gait,
                          "date": date.today().isoformat()},
             "measured": measure(base.controller, base.body, vector)}
    if args.for_terrain is not None:
        extra["for_terrain"] = args.for_terrain
    policy.save(Path(args.out), **extra)
    metrics = extra["measured"]["metrics"]
    print(json.dumps({name: metrics[name] for name in ("distance", "fell", "fall_time", "heading_change")}))


if __name__ == "__main__":
    run_script(main, "set_gait.py")
