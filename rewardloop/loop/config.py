"""The run configuration: one typed, frozen tree, stored in the run directory and read back on resume.

MoVLR's shape (one candidate per iteration, fifteen iterations) and MotionVL's (ten candidates, five
iterations) are plain settings: `PRESETS["movlr"]`, `PRESETS["motionvl"]`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from rewardloop.control.config import PPOSettings
from rewardloop.control.optimizer import OptimizerConfig, SearchConfig
from rewardloop.critic import CriticConfig
from rewardloop.designer import DesignerConfig
from rewardloop.errors import UserError, unknown_name
from rewardloop.models.base import Timeouts
from rewardloop.models.client import RetryPolicy
from rewardloop.sim.render import RenderConfig


@dataclass(frozen=True)
class ModelSettings:
    """How a run talks to its model critic and designer (the builtin ones ignore it)."""

    context_tokens: int | None = None
    """The context (tokens) to assume of a server that reports none (llama.cpp, vLLM and Ollama report theirs)."""
    timeouts: Timeouts = field(default_factory=Timeouts)
    """First-token and silence limits of a call (a local server gets a long first-token limit)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How a failing call is retried before its candidate or iteration is recorded as failed."""
    critic: CriticConfig = field(default_factory=CriticConfig)
    """How a model critic looks (keyframes, views, every 0.1 s) and asks."""
    designer: DesignerConfig = field(default_factory=DesignerConfig)
    """How a model designer asks (temperature, repairs, full or compact prompt)."""

    def __post_init__(self) -> None:
        if self.context_tokens is not None and self.context_tokens < 256:
            raise UserError(f"the model context must be at least 256 tokens, got {self.context_tokens}")


LOCOMOTION_OPTIMIZERS = ("plan", "search")
"""The optimizers a run may pick for locomotion (RunConfig.locomotion)."""


@dataclass(frozen=True)
class RunConfig:
    """How a run searches: its shape, models, executor, budgets, optimizer and rendering."""

    iterations: int = 3
    """Iterations at most (N)."""
    candidates: int = 2
    """Candidates the designer proposes per iteration (K); iteration 0 of a task with a canonical reward
    evaluates that reward alone."""
    success_patience: int = 2
    """Stop once the best motion has held the critic's success verdict through this many rounds of edits (M): the
    iterations after the one it first succeeded in. Counting that one too, a canonical walk that passed from the start
    stopped the loop after a single round of edits (2 of the small bench's 3 iterations, 2026-12-07)."""
    critic: str = "builtin"
    """Critic model string (see `rewardloop models`); 'none' runs without a critic: the designer sees only the
    task metric and per-term statistics, and the metric alone selects (the bench's `designer` arm)."""
    designer: str = "builtin"
    """Designer model string."""
    executor: str = "local"
    """'local' worker processes or 'ray'."""
    address: str | None = None
    """Ray cluster address; None starts a local Ray instance."""
    workers: int = 2
    """Candidates evaluated at once."""
    budget_usd: float | None = None
    """Stop before model cost exceeds this (USD); None is unlimited."""
    budget_calls: int | None = None
    """Stop before more paid model calls than this; None is unlimited."""
    budget_s: float | None = None
    """Start no new iteration after this much wall time (s, summed over sessions); None is unlimited."""
    seed: int = 0
    """The optimizer's seed, the same for every candidate of the run (common random numbers): two candidates then differ
    in their motion only by what their programs ask, not by their draws."""
    duration_s: float | None = None
    """Rollout length (s); None uses the task's."""
    optimizer: OptimizerConfig | None = None
    """The controller optimizer (its duration_s is replaced by the rollout length); None picks one for the task,
    one thread per worker: `locomotion` for locomotion on a body with a gait controller, else the posture MPC tuned
    for the body and ground (rewardloop.control.defaults.planner_for)."""
    locomotion: str = "plan"
    """The optimizer the loop picks for locomotion (optimizer None): 'plan', the body's gait planned against each
    candidate's reward, or 'search', policy search warm-started from the shipped gaits (with `search`)."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """Policy search settings when the loop picks policy search (optimizer None); the gait planner's controller and
    warm starts."""
    render: RenderConfig = field(default_factory=RenderConfig)
    """Video settings of each candidate."""
    candidate_timeout_s: float | None = None
    """A candidate's worker running longer than this is stopped and the candidate fails (s)."""
    models: ModelSettings = field(default_factory=ModelSettings)
    """Context, time limits, retries and prompts of the model critic and designer."""
    start_program: str | None = None
    """Source of a reward program that iteration 0 evaluates alone instead of the canonical reward (the bench's
    `transfer` arm: a program learned on another body); None starts as usual."""

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.candidates < 1 or self.success_patience < 1 or self.workers < 1:
            raise UserError("iterations, candidates, success_patience and workers must be at least 1")
        if self.executor not in ("local", "ray"):
            raise unknown_name("executor", self.executor, ("local", "ray"))
        if self.locomotion not in LOCOMOTION_OPTIMIZERS:
            raise unknown_name("locomotion optimizer", self.locomotion, LOCOMOTION_OPTIMIZERS)
        for name in ("budget_usd", "budget_calls", "budget_s", "duration_s", "candidate_timeout_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise UserError(f"{name} must be a positive finite number, got {value}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Inverse of to_dict; a UserError for a field this version does not know."""
        return _build(cls, data)


def _build(kind: Any, value: Any) -> Any:
    """Rebuild a value of type `kind` from its JSON form (dataclasses, tuples and optionals, recursively)."""
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = typing.get_type_hints(kind)
        names = {f.name for f in dataclasses.fields(kind)}
        unknown = set(value) - names
        if unknown:
            raise UserError(f"unknown {kind.__name__} settings: {', '.join(sorted(unknown))}")
        return kind(**{name: _build(hints[name], item) for name, item in value.items()})
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return None if value is None else _build(options[0], value)
    if origin is tuple:
        return tuple(value)
    return value


PRESETS: dict[str, RunConfig] = {
    "movlr": RunConfig(iterations=15, candidates=1, workers=1),
    "motionvl": RunConfig(iterations=5, candidates=10),
    "quick": RunConfig(iterations=3, candidates=2, duration_s=4.0, render=RenderConfig(width=240, height=180, fps=15),
                       search=SearchConfig(generations=10, population=8)),
}
"""Named run shapes: MoVLR's 1 × 15, MotionVL's 10 × 5, and a quick offline one (the demo: 4-s rollouts with
the body's own planner settings)."""

PPO_BUDGETS: dict[str, PPOSettings] = {"quick": PPOSettings(steps=300_000, max_seconds=150.0)}
"""A preset -> each PPO candidate's training (`run --optimizer ppo`; other presets: PPOSettings' defaults). Quick's
150 s are about 150k env steps per candidate with two candidates sharing 2 cores (`rl_collection.json`: 2400 env
steps/s collecting with the reward on both)."""


def ppo_optimizer(preset: str | None, **changes: Any) -> OptimizerConfig:
    """The optimizer of a run whose candidates train PPO policies: the preset's budget with `changes`, one physics
    thread per candidate (candidates run in parallel)."""
    settings = dataclasses.replace(PPO_BUDGETS.get(preset or "", PPOSettings()), **changes)
    return OptimizerConfig(kind="ppo", ppo=settings, nthread=1)

