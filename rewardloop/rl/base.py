"""Base policies: one trained network per robot, shipped as package data the way the gaits are, that every PPO
candidate fine-tunes against its own reward (MotionVL's schedule made affordable on CPU).

A base policy is the folder `rewardloop train` writes to OUT/policy (policy.json, policy.pt, policy.onnx,
weights.pt), copied to rewardloop/rl/policies/BODY/. The documented command that makes one:

    rewardloop train --body berkeley_humanoid --reward walk --randomize --steps 20000000 --out runs/base-berkeley
    cp -r runs/base-berkeley/policy rewardloop/rl/policies/berkeley_humanoid

No base policy is shipped yet (none has met the issue's bar of walking under randomization); until one is, PPO
candidates train from a fresh network and say so. This module needs no torch.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from rewardloop.control.config import PPOSettings
from rewardloop.control.trajectory import NETWORK_MARK
from rewardloop.errors import UserError

POLICIES = "policies"
"""Folder of rewardloop.rl holding one base policy folder per body."""


def shipped_policy(body: str) -> Path | None:
    """The folder of `body`'s shipped base policy, or None when none is shipped."""
    folder = Path(str(resources.files("rewardloop.rl"))) / POLICIES / body
    return folder if (folder / NETWORK_MARK).is_file() else None


def not_shipped(body: str) -> str:
    """What to say where `body` has no shipped base policy."""
    return (f"no base policy is shipped for {body} yet (rewardloop/rl/{POLICIES}/{body}/); train one with "
            f"`rewardloop train --body {body} --reward walk --randomize --out OUT` and use OUT/policy")


def base_policy(body: str, settings: PPOSettings) -> tuple[Path | None, str]:
    """(the policy folder a PPO candidate fine-tunes, or None for a fresh network; one line saying which)."""
    if settings.start == "scratch":
        return None, "training from scratch"
    if settings.base is not None:
        folder = Path(settings.base)
        if not (folder / NETWORK_MARK).is_file():
            raise UserError(f"PPO base {folder} is not a trained policy folder (no {NETWORK_MARK}); "
                            "give the OUT/policy folder of `rewardloop train`")
        return folder, f"fine-tuning {folder}"
    shipped = shipped_policy(body)
    if shipped is None:
        return None, not_shipped(body) + "; training from scratch"
    return shipped, f"fine-tuning the shipped base policy of {body}"
