"""Errors a user can act on. The CLI prints them as one line and exits with code 2."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

EXIT_USAGE = 2
"""Exit code for bad input, from the CLI and the scripts alike (argparse's own)."""


class UserError(ValueError):
    """Bad input from a user: an unknown name, a bad parameter, a malformed file."""


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> UserError:
    """An error for an unknown registry name that lists the valid choices."""
    return UserError(f"unknown {kind} {name!r}; choose one of: {', '.join(sorted(valid))}")


def run_script(main: Callable[[], object], prog: str) -> None:
    """Run a script's `main`; a UserError ends it with one line on stderr and exit code 2, as the CLI does."""
    try:
        main()
    except UserError as error:
        sys.stderr.write(f"{prog}: error: {error}\n")
        sys.exit(EXIT_USAGE)
