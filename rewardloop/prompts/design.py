"""The designer's prompts filled in: the full one and the compact one for small contexts.

- full (designer_v2): the whole feature reference, program format and term library, the best program as
  written, the critique, the gait faults, per-term statistics, metrics and every edit tried: about 4,500 tokens.
- compact (designer_compact_v1), for a 4,096-token context with room for the answer: only the features and
  library terms the task, the best program, the critique's suggestions and the gait faults touch (the other
  feature names listed bare), the program without docstrings, the critique's essentials and the last edits.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rewardloop.prompts import render_prompt
from rewardloop.reward.base import TermStats
from rewardloop.reward.library import TERMS
from rewardloop.sim.bodies import get_body
from rewardloop.sim.features import FEATURES, HAND_FEATURES, HAND_SCALARS, SCALARS

if TYPE_CHECKING:
    from rewardloop.critic.critique import Critique
    from rewardloop.design_context import DesignContext, EditRecord
    from rewardloop.reward.program import RewardProgram

COMMON_TERMS: tuple[str, ...] = ("alive", "upright", "nonfoot_contact", "action_smoothness")
"""Library terms every compact prompt offers."""
TASK_TERMS: dict[str, tuple[str, ...]] = {
    "turn": ("yaw_rate",),
    "straight_knees": ("knee_extension",),
    "high_steps": ("foot_clearance",),
    "efficient": ("muscle_effort", "torques"),
    "symmetric": ("gait_symmetry",),
    "locomotion": ("velocity_tracking", "heading", "side_velocity", "feet_follow", "capture_point",
                   "human_gait_tracking", "cadence_band", "swing_height_limit", "foot_clearance"),
    "in_place": ("height", "balance", "joint_posture"),
}
"""Library terms a compact prompt offers for what the description asks (keys: `Targets` flags), the particular
requests before the general ones."""
DETECTOR_TERMS: dict[str, tuple[str, ...]] = {
    "kick": ("swing_height_limit", "joint_limits"),
    "shuffling": ("cadence_band", "cadence", "feet_air_time"),
    "crouch": ("knee_extension", "human_gait_tracking"),
    "stiff_legged": ("human_gait_tracking",),
    "limp": ("gait_symmetry",),
    "trunk_wobble": ("upright",),
    "trunk_lean": ("upright",),
    "scuffing": ("foot_clearance",),
    "standing_still": ("velocity_tracking",),
    "flailing_arms": ("arm_swing",),
}
"""Library terms that address each gait fault (names not in the library are skipped)."""
MAX_COMPACT_TERMS = 16
CORE_FEATURES: tuple[str, ...] = (
    "time", "forward_vel", "lateral_vel", "root_height", "com_pos", "com_vel", "heading", "yaw_rate", "torso_up",
    "left_hip_flexion", "right_hip_flexion", "left_knee_flexion", "right_knee_flexion", "left_foot_contact",
    "right_foot_contact", "left_foot_height", "right_foot_height")
"""Features a compact prompt always documents (others it names only)."""

COMPACT_FORMAT = """\
r = sum of WEIGHTS[name] * name(f). Each term is `def name(f):` returning a [B, T] float array (B trajectories, \
T samples); then one literal `WEIGHTS = {"name": weight, ...}` (1-32 terms, positive weights; a penalty term \
returns values <= 0). Only `np` (numpy functions), `lib` (terms below) and `f.NAME` may be used: no imports, \
classes, `while`, `try`, `with` or names starting with `_`. [B, T, 3] vectors need an index, e.g. \
`f.torso_up[..., 2]`. Keep each weighted term within about 0.1-10 and guard divisions."""


def full_prompt(context: DesignContext, k: int, already: Sequence[str] = ()) -> str:
    """The designer_v2 prompt: everything, for contexts that hold it."""
    from rewardloop.reward.program import format_reference
    from rewardloop.sim.features import reference_table

    return render_prompt("designer_v2", scene=_scene(context), description=context.description,
                         features=reference_table(), format=format_reference(), program=_program(context, False),
                         term_stats=_stats(context.term_stats, compact=False), metrics=_metrics(context),
                         critique=_critique(context.critique, compact=False), gait=_gait(context, "\n"),
                         history=_history(context.history, compact=False), k=k, already=_already(already))


def compact_prompt(context: DesignContext, k: int, already: Sequence[str] = ()) -> str:
    """The designer_compact_v1 prompt: what this task and this critique need, for small contexts."""
    terms = relevant_terms(context)
    return render_prompt("designer_compact_v1", scene=_scene(context), description=context.description,
                         features=compact_features(context.program, terms, hand=_is_hand(context)),
                         format=COMPACT_FORMAT,
                         terms="\n".join(_term_line(name) for name in terms), program=_program(context, True),
                         term_stats=_stats(context.term_stats, compact=True), metrics=_metrics(context),
                         critique=_critique(context.critique, compact=True), gait=_gait(context, "; "),
                         history=_history(context.history[-4:], compact=True), k=k, already=_already(already))


def program_text(program: RewardProgram | None, *, compact: bool) -> str:
    """The program's source; compact: without docstrings and comments."""
    if program is None:
        return "# none yet: write the first program"
    if not compact:
        return program.source.strip()
    tree = ast.parse(program.source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and len(node.body) > 1 and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:]
    return ast.unparse(tree)


# --- what a compact prompt offers ---------------------------------------------------------------------------

def relevant_terms(context: DesignContext) -> tuple[str, ...]:
    """Library terms for a compact prompt, most pressing first: those the program calls, the critique suggests
    and the gait faults call for, then those the description asks for, then the common ones."""
    from rewardloop.reward.program import term_reads

    called = [t for _, calls in term_reads(context.program).values() for t in sorted(calls)] \
        if context.program is not None else []
    suggested = [s.term for s in context.critique.suggestions] if context.critique is not None else []
    faults = [t for f in (context.gait.findings if context.gait else ()) for t in DETECTOR_TERMS.get(f.detector, ())]
    targets = context.targets()
    flags = {"locomotion": targets.locomotion, "in_place": not targets.locomotion, "turn": bool(targets.turn),
             "straight_knees": targets.straight_knees, "high_steps": targets.high_steps,
             "efficient": targets.efficient, "symmetric": targets.symmetric}
    asked = [t for flag, terms in TASK_TERMS.items() if flags[flag] for t in terms]
    ordered = _unique(t for t in [*called, *suggested, *faults, *asked, *COMMON_TERMS] if t in TERMS)
    return tuple(ordered[:MAX_COMPACT_TERMS])


def compact_features(program: RewardProgram | None, terms: Iterable[str], *, hand: bool = False) -> str:
    """The core features and those the program reads, documented (left/right pairs on one line); the rest by
    name; the hand's and the object's only for a `hand` body (a small context has no room for features a body
    lacks)."""
    from rewardloop.reward.program import term_reads

    direct = {f for reads, _ in term_reads(program).values() for f in reads} if program is not None else set()
    both = {n.replace(side, other, 1) for n in direct for side, other in (("left_", "right_"), ("right_", "left_"))}
    names = [n for n in FEATURES if hand or n not in HAND_FEATURES]
    documented = [n for n in names if n in set(CORE_FEATURES) | direct | both]
    lines = [f"{_paired(n)} {FEATURES[n].shape} {FEATURES[n].units}: {_unsided(n, FEATURES[n].meaning)}"
             for n in _one_per_pair(documented)]
    lines.append("scalars: " + ", ".join(f"{n} ({doc.units})" for n, doc in SCALARS.items()
                                         if hand or n not in HAND_SCALARS))
    rest = [n for n in names if n not in documented]
    lines.append("also (see their names): " + ", ".join(_paired(n) for n in _one_per_pair(rest)))
    return "\n".join(lines)


def _term_line(name: str) -> str:
    term = TERMS[name]
    params = ", ".join(f"{k}={v!r}" for k, v in term.params.items())
    return f"- lib.{name}(f{', ' + params if params else ''}) [{term.sign}, {term.units}]: {term.meaning}"


def _one_per_pair(names: Sequence[str]) -> list[str]:
    """Names with each right_X dropped when left_X is there (shown once as {left,right}_X)."""
    present = set(names)
    return [n for n in names if not (n.startswith("right_") and "left_" + n.removeprefix("right_") in present)]


def _paired(name: str) -> str:
    return "{left,right}_" + name.removeprefix("left_") if name.startswith("left_") else name


def _unsided(name: str, meaning: str) -> str:
    """The meaning of a left_X feature worded for both sides."""
    return meaning.replace("left ", "", 1) if name.startswith("left_") else meaning


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- the parts both prompts fill in -------------------------------------------------------------------------

def _is_hand(context: DesignContext) -> bool:
    """Whether the context's body is a hand (it has fingertips)."""
    body = context.scene.scene.body if context.scene is not None else context.body
    return bool(get_body(body).fingertips)


def _scene(context: DesignContext) -> str:
    return context.scene.scene.describe() if context.scene is not None else context.body


def _program(context: DesignContext, compact: bool) -> str:
    return program_text(context.program, compact=compact)


def _metrics(context: DesignContext) -> str:
    if context.metrics is None:
        return "(not measured)"
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in context.metrics.to_dict().items())


def _stats(stats: dict[str, TermStats], *, compact: bool) -> str:
    if not stats:
        return "(not measured)"
    if compact:
        return "; ".join(f"{name} (w {s.weight:g}) {s.mean:.3g}, {s.share:.0%}" for name, s in stats.items())
    return "\n".join(f"- {name}: weight {s.weight:g}, mean {s.mean:.4g}, min {s.min:.4g}, max {s.max:.4g}, "
                     f"share {s.share:.0%}" for name, s in stats.items())


def _critique(critique: Critique | None, *, compact: bool) -> str:
    if critique is None:
        return "(no motion judged yet)"
    summary = critique.summary if not compact or len(critique.summary) <= 300 else critique.summary[:297] + "..."
    issues = critique.issues[:4] if compact else critique.issues
    suggestions = critique.suggestions[:5] if compact else critique.suggestions
    lines = [f"score {critique.score:g}/10, success {critique.success}. {summary}"]
    lines += [f"- issue ({i.part}{'' if i.time_s is None else f', t = {i.time_s:.2f} s'}): {i.problem}"
              for i in issues]
    lines += [f"- suggestion: {s.action} {s.term}{f' {s.params}' if s.params else ''} ({s.reason})"
              for s in suggestions]
    return "\n".join(lines) if not compact else "\n  ".join(lines)


def _gait(context: DesignContext, separator: str) -> str:
    if context.gait is None:
        return "(not measured)"
    return separator.join(context.gait.lines()) or "none found"


SAME_MOTION = " (the same motion as an earlier candidate)"
"""Said of an edit whose motion equalled an earlier candidate's to the bit: what they differ in did not steer it."""


def _history(history: Sequence[EditRecord], *, compact: bool) -> str:
    if not history:
        return "(none yet)"

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    def change(text: str) -> str:
        return text if not compact or len(text) <= 100 else text[:97] + "..."

    lines = "\n".join(f"{'  ' if compact else ''}- iteration {h.iteration}, program {h.program_hash}: "
                       f"{change(h.change)} -> score {number(h.score)}, metric {number(h.metric)}"
                       f"{' (kept)' if h.kept else ''}{SAME_MOTION if h.unchanged else ''}"
                       for h in history)
    return "\n" + lines if compact else lines


def _already(rationales: Sequence[str]) -> str:
    if not rationales:
        return ""
    return "Already proposed (write different ones):\n" + "\n".join(f"- {r or '(no rationale)'}" for r in rationales)
