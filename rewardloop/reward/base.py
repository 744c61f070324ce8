"""The reward contract every optimizer, critic and report relies on.

A reward is a weighted sum of named terms, r = Σ wᵢ·rᵢ, each term a [B, T] array over a batch of
trajectories. Whatever produces it (a vetted program in-process, a model's program in a sandbox worker),
it answers with a `RewardEval`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rewardloop.sim.features import Features


@dataclass(frozen=True)
class RewardEval:
    """A reward evaluated on a batch of trajectories."""

    terms: dict[str, np.ndarray]
    """Term name -> [B, T] unweighted term values."""
    weights: dict[str, float]
    """Term name -> weight."""

    @property
    def total(self) -> np.ndarray:
        """[B, T] Σ weight × term."""
        arrays = [self.weights[name] * values for name, values in self.terms.items()]
        return np.sum(arrays, axis=0) if arrays else np.zeros((0, 0))

    def returns(self) -> np.ndarray:
        """[B] mean reward per step of each trajectory."""
        return self.total.mean(axis=1)


class RewardFunction(Protocol):
    """Anything that scores a batch of trajectories."""

    def __call__(self, features: Features) -> RewardEval: ...


@dataclass(frozen=True)
class TermStats:
    """Statistics of one term over one trajectory, for reward reflection and reports."""

    weight: float
    mean: float
    """Mean unweighted value over time."""
    min: float
    max: float
    std: float
    share: float
    """Mean |weight × term| over time divided by the sum of that over all terms (0..1)."""


def term_statistics(evaluation: RewardEval, index: int = 0) -> dict[str, TermStats]:
    """Per-term statistics of trajectory `index` of the batch."""
    magnitude = {n: float(np.abs(evaluation.weights[n] * v[index]).mean()) for n, v in evaluation.terms.items()}
    total = sum(magnitude.values()) or 1.0
    return {
        name: TermStats(weight=evaluation.weights[name], mean=float(values[index].mean()),
                        min=float(values[index].min()), max=float(values[index].max()),
                        std=float(values[index].std()), share=magnitude[name] / total)
        for name, values in evaluation.terms.items()
    }
