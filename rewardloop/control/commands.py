"""Command-line subcommands of rewardloop.control, registered into `rewardloop` by cli.build_parser."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rewardloop.cli_base import AddCommand, positive_number, scene_arguments, scene_from_args, writable_directory
from rewardloop.errors import UserError


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
    parser = add("optimize", _optimize)
    scene_arguments(parser)
    parser.add_argument("--reward", default="walk", help="a canonical reward name or a reward program file")
    parser.add_argument("--optimizer", default="mppi", help="mppi, cem or predictive (default mppi)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of motion (default 3)")
    parser.add_argument("--samples", type=int, default=None, help="planner samples per iteration")
    parser.add_argument("--horizon", type=float, default=None, help="planning horizon (s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="rollout threads (default: one per core)")
    parser.add_argument("--out", required=True, help="directory for trajectory.npz/.json (and video.mp4)")
    parser.add_argument("--video", action="store_true", help="also render video.mp4 of the motion")


def _program(reward: str):  # type: ignore[no-untyped-def]
    """(program, trusted) from a canonical name or a file path."""
    from rewardloop.reward.canonical import CANONICAL, canonical
    from rewardloop.reward.commands import read_program_text
    from rewardloop.reward.program import RewardProgram

    if reward in CANONICAL:
        return canonical(reward), True
    if not Path(reward).is_file():
        raise UserError(f"--reward {reward!r} is neither a canonical reward ({', '.join(CANONICAL)}) nor a file")
    return RewardProgram.from_source(read_program_text(reward)), False


def _optimize(args: argparse.Namespace) -> int:
    """Optimize a controller for a reward on a body and write the executed trajectory (and a video)."""
    from rewardloop.control.defaults import default_config
    from rewardloop.control.optimizer import Progress, optimize
    from rewardloop.reward import load_reward
    from rewardloop.sim.scene import compile_scene

    positive_number(args.duration, flag="--duration")
    writable_directory(args.out, flag="--out")  # before optimizing, not after
    scene = compile_scene(scene_from_args(args))
    config = default_config(scene, kind=args.optimizer, duration_s=args.duration, nthread=args.threads,
                            samples=args.samples, horizon_s=args.horizon)
    program, trusted = _program(args.reward)

    def show(progress: Progress) -> None:
        sys.stderr.write(f"\r{progress.fraction:6.1%}  {progress.message}  best return {progress.best_return:.3f}")

    with load_reward(program, trusted=trusted) as reward:
        trajectory = optimize(scene, reward, config, seed=args.seed, progress=show)
    sys.stderr.write("\n")
    out = trajectory.save(args.out)
    if args.video:
        from rewardloop.sim.render import render, write_video

        write_video(render(scene, trajectory.rollouts.states_with_initial()), out / "video.mp4")
    print(json.dumps({"metrics": trajectory.metrics.to_dict(), "return": trajectory.total_return,
                      "wall_time_s": round(trajectory.wall_time_s, 2), "out": str(out)}, indent=2))
    return 0
