"""The live terminal view of a run (rich): iteration, candidates with planner progress, best score, cost, and a
model's answer as it streams in (tokens, tokens/s).

On a terminal it redraws a small table in place; elsewhere (pipes, logs, tests) it prints one line per
finished step, never per planner tick.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table

from rewardloop.loop.run import LoopEvent

LINE_EVENTS = ("run", "iteration", "design", "model_done", "note", "candidate_done", "selection", "stop")
"""Events printed as lines when the output is not a terminal (a model call once, when its answer is in)."""
HEADLINE_EVENTS = ("run", "selection", "stop", "design", "model", "model_done")
"""Events whose message becomes the table's caption on a terminal (a model answer's tokens/s as it streams)."""
KEPT_EVENTS = ("note",)
"""Events printed as lines on a terminal too, above the table, so they stay in sight (a note about a model server,
said once)."""


class LiveView:
    """An EventHandler for run_loop. Use as a context manager."""

    def __init__(self, *, quiet: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.console = Console(file=stream or sys.stdout)
        self.live: Live | None = None
        self.iteration: int | None = None
        self.candidates: dict[int, str] = {}
        self.best: float | None = None
        self.cost = 0.0
        self.headline = ""

    def __enter__(self) -> LiveView:
        if not self.quiet and self.console.is_terminal:
            self.live = Live(self._table(), console=self.console, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)

    def __call__(self, event: LoopEvent) -> None:
        self.best, self.cost = event.best_score, event.cost_usd
        if event.kind == "iteration":
            self.iteration, self.candidates = event.iteration, {}
        if event.candidate is not None:
            progress = f"{event.fraction:4.0%} " if event.fraction is not None else ""
            self.candidates[event.candidate] = f"{progress}{event.message}"
        if event.kind in HEADLINE_EVENTS:
            self.headline = event.message
        if self.live is not None:
            self.live.update(self._table())
        if not self.quiet and event.kind in (KEPT_EVENTS if self.live is not None else LINE_EVENTS):
            where = "" if event.iteration is None else f"[it {event.iteration}" + (
                "]" if event.candidate is None else f" c {event.candidate}]")
            self.console.print(f"{where} {event.message}".strip(), markup=False, highlight=False, soft_wrap=True)

    def _table(self) -> Table:
        best = "–" if self.best is None else f"{self.best:.3g}"
        table = Table(title=f"iteration {self.iteration if self.iteration is not None else '–'} · best {best} · "
                            f"cost ${self.cost:.4f}", caption=self.headline, title_justify="left")
        table.add_column("candidate", justify="right")
        table.add_column("state")
        for index, state in sorted(self.candidates.items()):
            table.add_row(str(index), state)
        return table
