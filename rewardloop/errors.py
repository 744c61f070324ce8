"""Errors a user can act on. The CLI prints them as one line and exits with code 2."""

from __future__ import annotations

from collections.abc import Iterable


class UserError(ValueError):
    """Bad input from a user: an unknown name, a bad parameter, a malformed file."""


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> UserError:
    """An error for an unknown registry name that lists the valid choices."""
    return UserError(f"unknown {kind} {name!r}; choose one of: {', '.join(sorted(valid))}")
