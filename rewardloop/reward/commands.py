"""Command-line subcommands of rewardloop.reward, registered into `rewardloop` by cli.build_parser."""

from __future__ import annotations

from rewardloop.cli_base import AddCommand


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
