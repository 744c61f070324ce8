"""Exploration plans: the program's weights scaled by random log-normal factors, which fill the candidates the
critique's fixes and the speed plans leave, so that a critique with nothing to fix still yields K programs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from rewardloop.designer.aims import Plan
from rewardloop.reward.program import RewardProgram

EXPLORE = "explore: weights scaled by random log-normal factors"
"""The rationale of every exploration plan."""


def reweightings(base: RewardProgram, *, seed: int, iteration: int, spread: float) -> Iterator[Plan]:
    """Endless plans of `base` with each weight times exp(N(0, `spread`)), rounded to 4 decimals. The draws follow
    the run's `seed` and the `iteration` (the number of edits tried), so each iteration draws anew."""
    import numpy as np

    rng = np.random.default_rng(seed + 1000 * iteration)
    while True:
        factors = np.exp(rng.normal(0.0, spread, len(base.term_names)))
        weights = {n: round(w * float(f), 4) for (n, w), f in zip(base.weights.items(), factors, strict=True)}
        yield EXPLORE, functools.partial(base.with_weights, weights)
