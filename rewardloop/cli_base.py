"""What subcommand modules need from the CLI, kept apart so they can import it without cycles."""

from __future__ import annotations

import argparse
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], "int | None"]
"""A subcommand: parsed arguments -> exit code (None means 0). Raise UserError for bad input (exit 2)."""

AddCommand = Callable[[str, Handler], argparse.ArgumentParser]
"""Registers a subcommand by name and returns its parser."""
