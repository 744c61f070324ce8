"""Versioned prompt templates, shipped as package data in rewardloop/prompts/<name>_<version>.md.

Templates use `$name` / `${name}` placeholders (string.Template), so JSON braces in them need no escaping.
A prompt's file name is recorded with every model call's purpose, so a run says which prompt produced what.
"""

from __future__ import annotations

import string
from importlib import resources

from rewardloop.errors import UserError

PROMPTS: tuple[str, ...] = ("critic_v1", "compare_v1", "designer_v1", "repair_v1", "taskspec_v1",
                            "critic_v2", "compare_v2", "designer_v2", "designer_compact_v1", "taskspec_v2")
"""Every template in the package."""


def load_prompt(name: str) -> str:
    """The template text of e.g. 'critic_v1'."""
    if name not in PROMPTS:
        raise UserError(f"unknown prompt {name!r}; choose one of: {', '.join(PROMPTS)}")
    return resources.files("rewardloop").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")


def render_prompt(name: str, **fields: object) -> str:
    """The template filled in; a UserError naming any placeholder left without a value."""
    try:
        return string.Template(load_prompt(name)).substitute({k: str(v) for k, v in fields.items()})
    except KeyError as error:
        raise UserError(f"prompt {name} needs a value for ${error.args[0]}") from None
