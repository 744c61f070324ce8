"""Policies: a controller kind and its parameters, saved beside a trajectory and replayable in other scenes.

A policy file is JSON: {"controller": kind, "body": name, "params": {name: value}, ...}; extra keys (how it was
found, what it measured) are kept for people and ignored here. Shipped gaits live in `control/gaits/`: BODY.json is
the body's main gait, BODY-NAME.json are more gaits for it (another controller, say). Together they are the warm
starts of every policy search on that body, and the search keeps whichever does best under the reward.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.control.controllers.base import Controller
from rewardloop.errors import UserError

POLICY_FILE = "policy.json"
"""Name of the policy file inside a saved trajectory directory."""


@dataclass(frozen=True)
class Policy:
    """A structured controller's kind and parameter values."""

    controller: str
    """Registry name in CONTROLLERS."""
    body: str
    """The body the parameters were found for."""
    params: dict[str, float]
    """Parameter name -> value (units in the controller's parameter table)."""

    def vector(self, controller: Controller) -> np.ndarray:
        """[P] the parameters in the controller's order (its defaults for names not given)."""
        if controller.kind != self.controller:
            raise UserError(f"this policy is for the {self.controller!r} controller, not {controller.kind!r}")
        return controller.space.vector(self.params)

    @classmethod
    def of(cls, controller: Controller, body: str, vector: np.ndarray) -> Policy:
        """The policy running `controller` with [P] `vector`."""
        return cls(controller.kind, body, controller.space.named(vector))

    def to_dict(self) -> dict[str, Any]:
        return {"controller": self.controller, "body": self.body, "params": dict(self.params)}

    def save(self, path: str | Path, **extra: Any) -> Path:
        """Write the policy (and any `extra` keys, e.g. how it was found) as JSON; a reader (or a kill mid-write)
        sees the old file or the new one, never half of one."""
        path = Path(path)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps({**self.to_dict(), **extra}, indent=1) + "\n")
        partial.replace(path)
        return path

    @classmethod
    def from_dict(cls, data: Any, origin: str = "policy") -> Policy:
        """Inverse of to_dict; a UserError naming `origin` when it is not a policy."""
        try:
            params = {str(name): float(value) for name, value in data["params"].items()}
            return cls(str(data["controller"]), str(data["body"]), params)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise UserError(f"{origin} is not a rewardloop policy (controller, body, params): {error!r}") from None

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read a policy file, or the policy.json inside a saved trajectory directory."""
        path = Path(path)
        if path.is_dir():
            path = path / POLICY_FILE
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise UserError(f"cannot read policy file {path}: {error}") from None
        return cls.from_dict(data, str(path))


def shipped_gaits(body: str, terrain: str | None = None) -> tuple[Policy, ...]:
    """The gaits shipped for `body`: control/gaits/BODY.json (its main gait) first, then BODY-*.json by name.

    A gait file with a "for_terrain" key (a terrain kind: "slope") was found for that ground and walks it better
    than the others, but not every ground: it is among the gaits only when `terrain` names that kind."""
    return tuple(Policy.from_dict(data, f"shipped gait {name}") for name, data in _shipped(body, terrain))


def shipped_gait_names(body: str, terrain: str | None = None) -> tuple[str, ...]:
    """The file names of `shipped_gaits(body, terrain)`, in the same order."""
    return tuple(name for name, _ in _shipped(body, terrain))


def _shipped(body: str, terrain: str | None) -> list[tuple[str, Any]]:
    """(file name, contents) of each gait file of `shipped_gaits(body, terrain)`."""
    folder = resources.files("rewardloop.control") / "gaits"
    names = sorted(item.name for item in folder.iterdir() if item.name.startswith(f"{body}-")
                   and item.name.endswith(".json"))
    files = [(name, json.loads((folder / name).read_text())) for name in [f"{body}.json", *names]
             if (folder / name).is_file()]
    return [(name, data) for name, data in files if data.get("for_terrain", terrain) == terrain]


def shipped_gait(body: str) -> Policy | None:
    """The first of `body`'s shipped gaits (its main gait, control/gaits/BODY.json), or None when there is none."""
    gaits = shipped_gaits(body)
    return gaits[0] if gaits else None
