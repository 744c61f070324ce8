"""Designers: turn the best reward program and its critique into K new candidate programs.

`Designer` asks a language model. Its prompt holds the description, the feature reference, the program
format and term library, the current best program, the critique, per-term statistics, task metrics and the
history of edits tried; it answers with K programs in code blocks. Each goes through the reward checker, and
a failing one goes back to the model with the checker's report for up to `max_repairs` repairs.

`BuiltinDesigner` is the offline default. It is not a language model: it maps the critique's suggestions to
reward edits with fixed rules (raise or lower a weight, add a library term, drop a conflicting one) and can
tune weights with CMA-ES on a task metric (`tune_weights`).

Where each part lives:

| module | what it holds |
|---|---|
| `proposal` | `Proposal`, what every designer returns, and the `Checker` candidates pass |
| `model` | `Designer`, the language-model designer: prompt fitting, parsing, repairs |
| `builtin` | `BuiltinDesigner`: the plan families in order, programs already tried dropped |
| `edits` | one suggestion as a reward edit (`apply_edit`), and program terms matched to library terms |
| `aims` | what the plans share: does the task travel, at what stated speed, which terms reward it; rationale words |
| `fixes` | plans that apply the critique's suggestions, with the travel kept where the task scores it |
| `speed` | plans that aim a walk at its stated speed, or raise and push a passing walk's travel |
| `explore` | plans that scale the weights by random log-normal factors |
| `start` | the library-only starting program for a task with none |
| `tune` | CMA-ES weight tuning on a task metric |
"""

from __future__ import annotations

from typing import Any

from rewardloop.designer.aims import REAIM_MIN, Plan, travel_terms
from rewardloop.designer.builtin import BUILTIN_LABEL, BuiltinDesigner
from rewardloop.designer.edits import ADD_WEIGHTS, CONFLICTS, FLOORS, Edit, apply_edit, drop_conflicts, matching_terms
from rewardloop.designer.fixes import PACE_PUSH, PACE_RAISES
from rewardloop.designer.model import (
    Designer,
    DesignerConfig,
    DesignPlan,
    PromptForm,
    candidate_tokens,
    parse_candidates,
)
from rewardloop.designer.proposal import Checker, CheckResult, Proposal, Status, default_checker
from rewardloop.designer.speed import SPEED_RAISES, TRAVEL_PUSHES, reaimed, sped_up
from rewardloop.designer.start import library_program
from rewardloop.designer.tune import TuneResult, tune_weights
from rewardloop.models.base import ModelBackend, ModelSpec

__all__ = [
    "ADD_WEIGHTS", "BUILTIN_LABEL", "CONFLICTS", "FLOORS", "PACE_PUSH", "PACE_RAISES", "REAIM_MIN", "SPEED_RAISES",
    "TRAVEL_PUSHES", "BuiltinDesigner", "CheckResult", "Checker", "DesignPlan", "Designer", "DesignerConfig", "Edit",
    "Plan", "PromptForm", "Proposal", "Status", "TuneResult", "apply_edit", "candidate_tokens", "default_checker",
    "drop_conflicts", "library_program", "make_designer", "matching_terms", "parse_candidates", "reaimed", "sped_up",
    "travel_terms", "tune_weights",
]

_DEFAULT_CONFIG = DesignerConfig()


def make_designer(model: str | ModelSpec | ModelBackend = "builtin", *, config: DesignerConfig = _DEFAULT_CONFIG,
                  seed: int = 0, **backend_options: Any) -> Designer | BuiltinDesigner:
    """The designer a model string (or backend) names; 'builtin' gives the offline BuiltinDesigner.

    backend_options go to `rewardloop.models.client.make_backend` (ledger, cache, retry, server)."""
    from rewardloop.models.client import make_backend

    backend = model if not isinstance(model, (str, ModelSpec)) else make_backend(model, role="designer",
                                                                                   **backend_options)
    if backend.name == "builtin":
        return BuiltinDesigner(seed=seed)
    return Designer(backend, config)
