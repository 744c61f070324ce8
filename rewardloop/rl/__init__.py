"""Reinforcement learning: PPO through rsl_rl on many copies of a scene stepped in threads on native MuJoCo.

The environment (`env`), the block reward (`blocks`) and the base-policy lookup (`base`) need only NumPy and MuJoCo;
training (`train`), trained policies (`policy`) and the optimizer (`optimize`) need the `rl` extra (torch 2.13 CPU,
rsl-rl-lib, onnxruntime). Everything outside this package imports those lazily, through `missing_extra`'s message
when they are absent, so the base install runs without torch.
"""

from __future__ import annotations

from rewardloop.errors import UserError

INSTALL = "pip install 'rewardloop[rl]'"
"""How to get the rl extra (from a clone: pip install -e '.[rl]')."""


def missing_extra(what: str, error: ImportError) -> UserError:
    """The one-line error for `what` (e.g. '--optimizer ppo') when torch, rsl_rl or onnxruntime is missing."""
    return UserError(f"{what} needs the rl extra (torch, rsl-rl-lib, onnxruntime): {INSTALL} "
                     f"(could not import {error.name or error})")
