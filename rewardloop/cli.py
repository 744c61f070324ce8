"""The `rewardloop` command line. Bad input prints one line and exits with code 2; never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rewardloop.cli_base import Handler, positive_number, scene_arguments, scene_from_args, writable_directory
from rewardloop.errors import EXIT_USAGE, UserError

if TYPE_CHECKING:
    from rewardloop.sim.scene import Scene


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"rewardloop: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_USAGE)


def cmd_bodies(args: argparse.Namespace) -> None:
    """List bodies with their size and measured speed."""
    from rewardloop.sim.bodies import BODIES
    from rewardloop.sim.measure import measure_body

    print(f"{'body':<17} {'kind':<7} {'dof':>4} {'actuators':>9} {'muscles':>7} {'step ms':>7} {'steps/s':>8}  summary")
    for name, body in BODIES.items():
        if args.fast and name == "myofullbody":
            continue
        try:
            m = measure_body(name, seconds=0.0 if args.fast else 0.5)
        except UserError as error:  # a robot whose model package is not installed is listed with how to get it
            print(f"{name:<17} {body.actuator_kind:<7} {'':>47}  {body.summary}; {error}")
            continue
        speed = f"{m.steps_per_second:8.0f}" if m.steps_per_second else f"{'-':>8}"
        print(f"{name:<17} {body.actuator_kind:<7} {m.dof:>4} {m.actuators:>9} {m.muscles:>7} "
              f"{m.timestep * 1000:>7.1f} {speed}  {body.summary}")


def cmd_features(args: argparse.Namespace) -> None:
    """Print the feature reference table."""
    from rewardloop.sim.features import reference_table

    print(reference_table())


def cmd_render(args: argparse.Namespace) -> None:
    """Render a saved trajectory or a zero/random controller's rollout to video and a contact sheet."""
    from rewardloop.sim.render import RenderConfig, contact_sheet, render, write_video
    from rewardloop.sim.rollout import Rollouts, Simulator, random_controls, zero_controls
    from rewardloop.sim.scene import compile_scene

    positive_number(args.duration, flag="--duration")
    if args.sheet and Path(args.sheet).suffix.lower() != ".png":
        raise UserError(f"--sheet {args.sheet}: the contact sheet is a .png file")
    for flag, path in (("--out", args.out), ("--sheet", args.sheet)):
        if path:
            writable_directory(Path(path).parent, flag=flag)
    config = RenderConfig(width=args.width, height=args.height, fps=args.fps, views=tuple(args.views.split(",")))
    scene = compile_scene(_task_scene(args.task) if args.task else scene_from_args(args))
    if args.trajectory:
        rollouts = Rollouts.load(args.trajectory)
    else:
        nstep = max(1, round(args.duration / scene.dt))
        make = {"zero": lambda: zero_controls(scene, 1, nstep),
                "random": lambda: random_controls(scene, 1, nstep, seed=args.seed)}
        if args.controller not in make:
            raise UserError(f"unknown controller {args.controller!r}; choose one of: random, zero")
        with Simulator(scene, nthread=1) as sim:
            rollouts = sim.open_loop(make[args.controller]())
    if rollouts.state.shape[-1] != scene.nstate:
        raise UserError(f"{args.trajectory} was recorded in a different scene (state size "
                        f"{rollouts.state.shape[-1]}, {scene.scene.describe()} has {scene.nstate})")
    frames = render(scene, rollouts.states_with_initial(0), config)
    video = write_video(frames, args.out)
    print(f"video: {video} ({len(frames.images)} frames)")
    if args.sheet:
        print(f"contact sheet: {contact_sheet(frames, args.sheet)}")


def _task_scene(text: str) -> Scene:
    """--task: a built-in task's name, or a run's folder or task.json -> its scene."""
    from rewardloop.loop.store import read_json
    from rewardloop.tasks import Task, get_task

    path = Path(text)
    if path.is_dir():
        path = path / "task.json"
    if path.suffix != ".json":
        return get_task(text).scene
    try:
        return Task.from_dict(read_json(path)).scene
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UserError(f"{path} does not hold a task: {error!r}") from None


def cmd_demo(args: argparse.Namespace) -> None:
    """The offline main job: a short reward-learning loop with the builtin critic and designer, then its report."""
    from rewardloop.loop.commands import demo

    report = demo(Path(args.out))
    print(f"report: {report}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rewardloop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add(name: str, handler: Handler) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=handler.__doc__, description=handler.__doc__)
        p.set_defaults(handler=handler)
        return p

    add("bodies", cmd_bodies).add_argument("--fast", action="store_true", help="skip timing and the heavy body")
    add("features", cmd_features)
    render = add("render", cmd_render)
    scene_arguments(render)
    render.add_argument("--trajectory", help="a saved trajectory (.npz, or a trajectory folder such as "
                        "`replay --out` writes); default: roll out --controller")
    render.add_argument("--task", help="render in this task's scene instead of the scene options: a built-in task "
                        "(`rewardloop tasks`) or a run's folder or task.json")
    render.add_argument("--controller", default="random", help="zero or random (without --trajectory)")
    render.add_argument("--duration", type=float, default=2.0, help="seconds to simulate")
    render.add_argument("--seed", type=int, default=0)
    render.add_argument("--views", default="side", help="comma-separated: side, front, back, top")
    render.add_argument("--width", type=int, default=320)
    render.add_argument("--height", type=int, default=240)
    render.add_argument("--fps", type=int, default=20)
    render.add_argument("--out", default="out/render.mp4", help=".mp4 or .gif")
    render.add_argument("--sheet", help="also write a keyframe contact sheet (.png)")
    add("demo", cmd_demo).add_argument("--out", default="out", help="output directory")
    for module in _command_modules():
        module.register(add)
    return parser


def _command_modules() -> list:
    """Packages that contribute subcommands."""
    from rewardloop.bench import commands as bench
    from rewardloop.control import commands as control
    from rewardloop.critic import commands as critic
    from rewardloop.loop import commands as loop
    from rewardloop.models import commands as models
    from rewardloop.reward import commands as reward
    from rewardloop.rl import commands as rl

    return [reward, control, models, critic, loop, bench, rl]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.handler(args)
    except UserError as error:
        sys.stderr.write(f"rewardloop: error: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("rewardloop: interrupted\n")
        return 130
    except OSError as error:  # last resort: a file that cannot be written or read, said in one line
        where = f": {error.filename}" if error.filename else ""
        sys.stderr.write(f"rewardloop: error: {error.strerror or error}{where}\n")
        return EXIT_USAGE
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())
