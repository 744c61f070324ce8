"""Weight tuning: CMA-ES over a program's log-weights against a task metric, for a designer that has a metric to
climb rather than a critique to answer (`tune_weights`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardloop.reward.program import RewardProgram


@dataclass(frozen=True)
class TuneResult:
    """Outcome of tune_weights."""

    program: RewardProgram
    """The best program found (the starting one if nothing beat it)."""
    score: float
    """Its task metric."""
    start_score: float
    """The starting program's task metric."""
    evaluations: int
    """Calls of `evaluate` made (the starting program included)."""
    history: tuple[tuple[dict[str, float], float], ...]
    """(weights, score) of every evaluation, in order."""


def tune_weights(program: RewardProgram, evaluate: Callable[[RewardProgram], float], *, budget: int, seed: int,
                 sigma: float = 0.5, popsize: int | None = None) -> TuneResult:
    """CMA-ES (the `cma` package) over log-weights, maximizing `evaluate(program)` (a task metric, higher is
    better) with at most `budget` evaluations. Weights keep their signs; log-factors stay within ±3."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cma warns when matplotlib is missing
        import cma

    start = float(evaluate(program))
    history = [(dict(program.weights), start)]
    size = max(2, min(popsize or 4 + int(3 * np.log(len(program.term_names))), budget - 1))
    best = program, start
    if budget - 1 >= size:
        es = cma.CMAEvolutionStrategy(np.zeros(len(program.term_names)), sigma, {
            "seed": seed + 1, "popsize": size, "bounds": [-3.0, 3.0], "verbose": -9})
        best = _generations(es, program, evaluate, (budget - 1) // size, history, best)
    return TuneResult(*best, start, len(history), tuple(history))


def _generations(es: Any, program: RewardProgram, evaluate: Callable[[RewardProgram], float], count: int,
                 history: list[tuple[dict[str, float], float]],
                 best: tuple[RewardProgram, float]) -> tuple[RewardProgram, float]:
    """`count` generations of the strategy `es` (a cma.CMAEvolutionStrategy) over `program`'s log-weights, each
    evaluation appended to `history`; the best (program, score), `best` unless a candidate scores higher."""
    import numpy as np

    names, base = program.term_names, np.array(list(program.weights.values()))
    for _ in range(count):
        xs = es.ask()
        candidates = [program.with_weights(dict(zip(names, (base * np.exp(x)).tolist(), strict=True))) for x in xs]
        scores = [float(evaluate(c)) for c in candidates]
        history += [(dict(c.weights), s) for c, s in zip(candidates, scores, strict=True)]
        es.tell(xs, [-s for s in scores])
        top = int(np.argmax(scores))
        if scores[top] > best[1]:
            best = candidates[top], scores[top]
    return best
