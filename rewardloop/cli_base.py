"""What subcommand modules need from the CLI, kept apart so they can import it without cycles."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rewardloop.errors import UserError

if TYPE_CHECKING:
    from rewardloop.sim.scene import Scene

Handler = Callable[[argparse.Namespace], "int | None"]
"""A subcommand: parsed arguments -> exit code (None means 0). Raise UserError for bad input (exit 2)."""

AddCommand = Callable[[str, Handler], argparse.ArgumentParser]
"""Registers a subcommand by name and returns its parser."""


def scene_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that describe a scene: body, terrain and its parameters, injuries."""
    parser.add_argument("--body", default="humanoid", help="body name (see `rewardloop bodies`)")
    parser.add_argument("--terrain", help="flat, slope, rough or stairs (default: for a description, the ground it "
                                          "names, else flat)")
    parser.add_argument("--slope", type=float, default=5.0, help="slope incline in degrees")
    parser.add_argument("--roughness", type=float, default=0.04, help="rough terrain bump height in m")
    parser.add_argument("--terrain-seed", type=int, default=0, help="rough terrain pattern seed")
    parser.add_argument("--step-height", type=float, default=0.08, help="stairs rise in m")
    parser.add_argument("--injury", action="append", default=[], metavar="GROUP=FACTOR",
                        help="weaken a muscle group, e.g. left_plantarflexors=0.3 (repeatable)")
    parser.add_argument("--start-speed", type=float, default=None,
                        help="forward speed at the start in m/s (default: the walking start for locomotion, rest "
                             "for standing still, stepping in place and walking backward; 0 stands)")


def scene_from_args(args: argparse.Namespace, *, start_speed: float | None = None) -> Scene:
    """The Scene the scene arguments describe; `start_speed` unless --start-speed is given (default: the
    body's walking start, `walking_start_speed`)."""
    from rewardloop.sim.scene import Scene, walking_start_speed
    from rewardloop.sim.terrain import Terrain

    terrain = Terrain(kind=args.terrain or "flat", slope_deg=args.slope, roughness=args.roughness,
                      seed=args.terrain_seed, step_height=args.step_height)
    given = getattr(args, "start_speed", None)
    speed = given if given is not None else walking_start_speed(args.body) if start_speed is None else start_speed
    return Scene(body=args.body, terrain=terrain, injury=tuple(_parse_injury(i) for i in args.injury),
                 start_speed=speed)


def _parse_injury(text: str) -> tuple[str, float]:
    group, sep, factor = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return group.strip(), float(factor)
    except ValueError:
        raise UserError(f"--injury takes GROUP=FACTOR, e.g. left_plantarflexors=0.3; got {text!r}") from None


def positive_number(value: float, *, flag: str) -> float:
    """`value` if it is a finite number above 0, else a UserError naming `flag` (NaN and inf included)."""
    if not (math.isfinite(value) and value > 0):
        raise UserError(f"{flag} must be a positive finite number, got {value}")
    return value


def writable_directory(path: str | Path, *, flag: str) -> Path:
    """`path` as a directory that exists (created if needed) and can be written, else a UserError naming `flag`.

    Checked before an expensive step whose result is written there, so a bad path fails at once.
    """
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"{flag} {path}: cannot create the directory ({error.strerror or error})") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {path}: the directory is not writable")
    return directory
