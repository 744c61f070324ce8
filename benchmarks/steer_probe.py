"""One ask of the steering benchmark on one body, alone, with the gait planner's settings changed: the probe behind
`rewardloop bench --suite steer --planner NAME=VALUE` when only the ask's motion is wanted (the plain walk it is
measured from made once elsewhere).

    .venv/bin/python benchmarks/steer_probe.py --body myofullbody --ask wider --seed 0 --planner preplan_generations=0

Prints one JSON line: the ask, the planner's changes, the fall time, distance, the asks' measures and the wall time.
A benchmark, not a test: one 10-s motion of the body's gait planner (6-9 minutes on the full body on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from rewardloop.bench.steer import ASKS, BodyScale, locomotion_optimizer, motion_row
from rewardloop.reward.canonical import canonical
from rewardloop.sim.scene import Scene, compile_scene, walking_start_speed
from rewardloop.sim.terrain import Terrain

MEASURES = ("speed", "cadence", "width", "arm_swing", "knee_midstance", "trunk_pitch", "heading")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="myofullbody")
    parser.add_argument("--ask", default="walk", choices=["walk", *(ask.name for ask in ASKS)],
                        help="an ask of the steering benchmark, or walk: the canonical walk itself")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--planner", nargs="*", default=[], metavar="NAME=VALUE",
                        help="changes to the body's gait planner settings (RecedingConfig fields)")
    args = parser.parse_args(argv)
    scene = compile_scene(Scene(args.body, Terrain("flat"), start_speed=walking_start_speed(args.body)))
    asks = {ask.name: ask.for_body(BodyScale.of(scene)) for ask in ASKS}
    program = canonical("walk") if args.ask == "walk" else asks[args.ask].program()
    begin = time.perf_counter()
    trajectory = locomotion_optimizer("plan", planner=args.planner)(scene, program, args.seed)
    row = motion_row(scene, trajectory)
    print(json.dumps({"body": args.body, "ask": args.ask, "seed": args.seed, "planner": " ".join(args.planner),
                      "fell": row["fell"], "fall_time_s": trajectory.metrics.fall_time,
                      "distance": trajectory.metrics.distance, **{name: row[name] for name in MEASURES},
                      "wall_s": round(time.perf_counter() - begin, 1),
                      "command": " ".join(["benchmarks/steer_probe.py", *sys.argv[1:]])}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
