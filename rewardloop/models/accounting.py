"""Tokens, estimated cost and a hard budget per run.

Costs are estimates from a small price table (US dollars per million tokens, list prices at the time of
writing); a model not in the table costs 0 and its records say so. Cache hits cost nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rewardloop.models.base import ModelError, Usage

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "openai:gpt-4o-mini": (0.15, 0.60),
    "openai:gpt-4o": (2.50, 10.00),
    "openai:gpt-4.1-mini": (0.40, 1.60),
    "openai:gpt-4.1": (2.00, 8.00),
    "gemini:gemini-2.0-flash": (0.10, 0.40),
    "gemini:gemini-2.5-flash": (0.30, 2.50),
    "gemini:gemini-2.5-pro": (1.25, 10.00),
    "anthropic:claude-3-5-haiku": (0.80, 4.00),
    "anthropic:claude-sonnet-4": (3.00, 15.00),
    "anthropic:claude-3-5-sonnet": (3.00, 15.00),
    "anthropic:claude-opus-4": (15.00, 75.00),
}
"""Model label prefix -> (input, output) US dollars per million tokens. The longest matching prefix wins."""


class BudgetExceeded(ModelError):
    """A run reached its budget of model calls or cost; no further call is made."""


def price_of(label: str) -> tuple[float, float] | None:
    """(input, output) $/Mtok for a model label such as 'openai:gpt-4o-2024-08-06'; None when unknown."""
    matches = [prefix for prefix in PRICES_PER_MTOK if label.startswith(prefix)]
    return PRICES_PER_MTOK[max(matches, key=len)] if matches else None


def usage_with_cost(label: str, input_tokens: int, output_tokens: int) -> Usage:
    """Usage with its estimated cost (0 for models without a price)."""
    price = price_of(label)
    cost = 0.0 if price is None else (input_tokens * price[0] + output_tokens * price[1]) / 1e6
    return Usage(input_tokens, output_tokens, cost)


@dataclass(frozen=True)
class Budget:
    """Limits on model use for one run."""

    max_calls: int | None = None
    """Most model calls (cache hits do not count); None for no limit."""
    max_cost_usd: float | None = None
    """Most estimated spend in US dollars; None for no limit."""


@dataclass(frozen=True)
class CallRecord:
    """One model call as accounted."""

    model: str
    """Model label (backend:model, no URL, no key)."""
    purpose: str
    """What it was for: 'critique', 'compare', 'design', 'repair', ..."""
    usage: Usage
    cached: bool
    priced: bool
    """False when the model has no entry in the price table (its cost is counted as 0)."""
    wall_s: float


@dataclass
class Ledger:
    """Every call of a run, their totals and the run's budget. Thread-safe."""

    budget: Budget = field(default_factory=Budget)
    records: list[CallRecord] = field(default_factory=list)
    journal: Path | None = None
    """A JSON-lines file every paid call is appended to as it happens (one line each), so a resumed run
    counts money spent in an interrupted step; see `read_journal`. None keeps no journal."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, label: str) -> None:
        """Raise BudgetExceeded if one more call would break the budget."""
        with self._lock:
            calls, cost = self._paid_calls(), self.total.cost_usd
        if self.budget.max_calls is not None and calls >= self.budget.max_calls:
            raise BudgetExceeded(f"model budget reached: {calls} of {self.budget.max_calls} calls used; "
                                 f"not calling {label}")
        if self.budget.max_cost_usd is not None and cost >= self.budget.max_cost_usd:
            raise BudgetExceeded(f"model budget reached: ${cost:.4f} of ${self.budget.max_cost_usd:.4f} spent; "
                                 f"not calling {label}")

    def record(self, record: CallRecord) -> None:
        with self._lock:
            self.records.append(record)
            if self.journal is not None and not record.cached:
                _append_line(self.journal, {"time": time.time(), "model": record.model, "purpose": record.purpose,
                                            "input_tokens": record.usage.input_tokens,
                                            "output_tokens": record.usage.output_tokens,
                                            "cost_usd": record.usage.cost_usd})

    def _paid_calls(self) -> int:
        return sum(not r.cached for r in self.records)

    @property
    def total(self) -> Usage:
        """Sum of usage over all calls (cache hits count 0 cost)."""
        total = Usage()
        for r in list(self.records):
            total = total + (Usage(r.usage.input_tokens, r.usage.output_tokens, 0.0) if r.cached else r.usage)
        return total

    def summary(self) -> dict[str, object]:
        """Totals for run files and reports: calls, cache hits, tokens, cost, unpriced models."""
        total = self.total
        return {"calls": self._paid_calls(), "cache_hits": sum(r.cached for r in self.records),
                "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
                "cost_usd": round(total.cost_usd, 6),
                "unpriced_models": sorted({r.model for r in self.records if not r.priced}),
                "note": "cost is an estimate from list prices; models without a price count as $0"}

    def to_dict(self) -> dict[str, object]:
        return {"summary": self.summary(), "calls": [asdict(r) for r in self.records]}


def _append_line(path: Path, data: dict[str, object]) -> None:
    """Append one JSON line with a single write on an O_APPEND descriptor (a line is whole or absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (json.dumps(data) + "\n").encode())
    finally:
        os.close(descriptor)


def read_journal(path: Path) -> tuple[int, Usage]:
    """(paid calls, their summed usage) from a Ledger journal; (0, zero) if there is none.

    A line cut short by a kill mid-write is skipped.
    """
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return 0, Usage()
    calls, total = 0, Usage()
    for line in lines:
        try:
            entry = json.loads(line)
            usage = Usage(int(entry["input_tokens"]), int(entry["output_tokens"]), float(entry["cost_usd"]))
        except (ValueError, KeyError, TypeError):
            continue
        calls, total = calls + 1, total + usage
    return calls, total
