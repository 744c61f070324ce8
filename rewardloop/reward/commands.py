"""Command-line subcommands of rewardloop.reward, registered into `rewardloop` by cli.build_parser.

`rewardloop check FILE --body NAME`: validation and the pre-flight checker; exit 0 with the report when it
passes, exit 1 with the reasons when not. `rewardloop export FILE --out PATH [--format module|gym]`.
Whatever FILE holds (binary, empty, missing, huge), the answer is a message, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from rewardloop.cli_base import AddCommand, positive_number
from rewardloop.errors import UserError

MAX_FILE_BYTES = 1_000_000
"""Larger files are refused before reading (programs are limited to 20,000 characters anyway)."""


def read_program_text(path: str) -> str:
    """The text of a program file, or a UserError saying why it cannot be one."""
    from pathlib import Path

    file = Path(path)
    try:
        if not file.is_file():
            raise UserError(f"{path}: no such file")
        if file.stat().st_size > MAX_FILE_BYTES:
            raise UserError(f"{path}: {file.stat().st_size} bytes is far too large for a reward program")
        data = file.read_bytes()
    except OSError as error:
        raise UserError(f"{path}: cannot read it ({error.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text; a reward program is a Python source file") from None


def cmd_check(args: argparse.Namespace) -> int:
    """Validate a reward program file and run the pre-flight checker on random rollouts (exit 1 if it fails)."""
    from rewardloop.reward.check import check_program
    from rewardloop.sim.scene import Scene, compile_scene

    positive_number(args.timeout, flag="--timeout")
    try:
        text = read_program_text(args.file)
        scene = compile_scene(Scene(args.body))
    except UserError as error:
        sys.stderr.write(f"Reward check FAILED: {error}\n")
        return 1
    report = check_program(text, scene, timeout_s=args.timeout)
    stream = sys.stdout if report.passed else sys.stderr
    stream.write(report.to_text() + "\n")
    return 0 if report.passed else 1


def cmd_export(args: argparse.Namespace) -> int:
    """Export a reward program as a standalone NumPy module or a Gymnasium environment script."""
    from rewardloop.reward.export import write_export
    from rewardloop.reward.program import ProgramError, RewardProgram

    try:
        program = RewardProgram.from_source(read_program_text(args.file))
    except ProgramError as error:
        sys.stderr.write(f"rewardloop: {args.file}: {error}\n")
        return 1
    path = write_export(program, args.out, kind=args.format, body=args.body)
    print(f"wrote {path} ({args.format}, program {program.hash})")
    return 0


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
    check = add("check", cmd_check)
    check.add_argument("file", help="reward program file (.py)")
    check.add_argument("--body", default="humanoid", help="body to check on (see `rewardloop bodies`)")
    check.add_argument("--timeout", type=float, default=10.0, help="wall-clock seconds per evaluation")
    export = add("export", cmd_export)
    export.add_argument("file", help="reward program file (.py)")
    export.add_argument("--out", required=True, help="output path (.py)")
    export.add_argument("--format", default="module", choices=["module", "gym"],
                        help="module: standalone NumPy; gym: a Gymnasium environment script")
    export.add_argument("--body", default="humanoid", help="body for the gym environment")
