"""Rule-based reward edits: a critique's suggestion applied to a program (raise or lower a weight, add a library
term, drop a conflicting one), and how a program's own terms are matched to the library terms a suggestion names.

The builtin designer's plans (`fixes`, `speed`) are built from these; the edits themselves know nothing of tasks.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardloop.critic.critique import Suggestion
from rewardloop.reward.library import TERMS
from rewardloop.reward.program import RewardProgram, term_reads

ADD_WEIGHTS: dict[str, float] = {
    "foot_clearance": 20.0, "muscle_effort": 0.05, "torques": 1e-4, "velocity_tracking": 2.0, "yaw_rate": 2.0,
    "side_velocity": 0.5, "heading": 0.5, "gait_symmetry": 0.5, "cadence": 0.5, "action_smoothness": 0.5,
    "hands_still": 0.25, "one_leg_stance": 6.0, "stance_balance": 6.0, "swing_hip_flexion": 15.0, "course_path": 5.0,
    "heading_error": 2.0,
}
"""Starting weight of a library term the builtin designer adds (1.0 when not listed), sized from the canonical
programs so the new term neither vanishes nor dominates (the stands on one leg, high knees in place, the sideways and
diagonal walks and the turns on the spot hold their terms at these weights). hands_still: on the humanoid's injured
10-s walk (the gait planner, seed 0) a hand's range across or up-down went 0.25 m -> 0.16 m at 0.25 (11.9 -> 10.8 m
walked), 0.14 m at 0.5, 0.11 m at 1 (10.4 m, the cadence 113 -> 103 steps/min); 0.1 left it as it was."""

CONFLICTS: dict[str, tuple[str, ...]] = {
    "velocity_tracking": ("forward_velocity",),
    "yaw_rate": ("heading",),
    "knee_extension": ("joint_posture",),
    "course_velocity": ("velocity_tracking", "forward_velocity", "side_velocity"),
    "heading_error": ("yaw_rate",),
    "one_leg_stance": ("capture_point",),
    "stance_balance": ("capture_point",),
    "swing_hip_flexion": ("joint_posture",),
}
"""Adding the key term makes these library terms work against it; the strong candidate drops them. A course's
velocity is commanded in the world frame, where velocity_tracking's and side_velocity's heading-frame command of no
sideways speed forbids it; the capture point accepts the body between both feet, where a one-leg stand needs it over
one; a neutral posture pulls the lifted thigh down."""

FLOORS: dict[str, str] = {"swing_hip_flexion": "target", "foot_clearance": "target", "one_leg_stance": "lift"}
"""Library term -> its parameter that is a height the motion should reach at least. A critic asks for the least that
passes its check; a program already asking for more keeps it, since lowering the bar for a motion that fell short of
it would reward less of what was asked."""


@dataclass(frozen=True)
class Edit:
    """One reward edit derived from a suggestion."""

    suggestion: Suggestion
    strength: float
    """Weight factor for increase/decrease (a decrease divides), multiplier of the starting weight for add."""


def matching_terms(program: RewardProgram, term: str) -> list[str]:
    """Program terms that implement library term `term`: same name, a call of lib.term, or reading exactly the
    features lib.term reads."""
    library = set(TERMS[term].reads) if term in TERMS else None
    return [name for name, (reads, calls) in term_reads(program).items()
            if name == term or term in calls or (library is not None and not calls and reads and reads == library)]


def computed_arguments(program: RewardProgram, name: str, term: str) -> bool:
    """Whether term `name` calls lib.`term` with a keyword computed in the program (e.g. the canonical walks'
    `speed=target`), which a replacement from literal parameters would lose."""
    return any(not isinstance(keyword.value, ast.Constant) for call in _calls(program, name, term)
               for keyword in call.keywords)


def literal_arguments(program: RewardProgram, name: str, term: str) -> dict[str, Any]:
    """The literal keyword arguments term `name` passes lib.`term`."""
    return {keyword.arg: keyword.value.value for call in _calls(program, name, term) for keyword in call.keywords
            if keyword.arg and isinstance(keyword.value, ast.Constant)}


def with_params(program: RewardProgram, name: str, term: str, params: dict[str, Any]) -> RewardProgram:
    """`program` with term `name` rewritten as lib.`term` with `params`, at its weight; unchanged where it is the
    program's only term."""
    if len(program.term_names) < 2:
        return program
    return program.without_term(name).with_library_term(term, program.weights[name], params, name=name)


def _calls(program: RewardProgram, name: str, term: str) -> list[ast.Call]:
    """The calls of lib.`term` in the function of term `name`."""
    functions = [n for n in ast.parse(program.source).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return [node for function in functions for node in ast.walk(function) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == term]


def apply_edit(program: RewardProgram, edit: Edit) -> RewardProgram:
    """The program after one edit; unchanged when the edit does not apply (e.g. removing an absent term). An 'add'
    of a term the program has is a new setting of it (`asked_parameters`), or where it is already set so, a raise of
    its weight."""
    s, matches = edit.suggestion, matching_terms(program, edit.suggestion.term)
    if s.action == "remove":
        for name in matches:
            if len(program.term_names) > 1:
                program = program.without_term(name)
        return program
    if (s.action == "add" and matches and s.params and s.term in TERMS
            and not computed_arguments(program, matches[0], s.term)):
        current = literal_arguments(program, matches[0], s.term)
        wanted = asked_parameters(s.term, current, s.params)
        if wanted != current:  # same term, new parameters: replace
            return with_params(program, matches[0], s.term, wanted)
        # the term is there as asked and the motion still falls short: its weight rises below
    if matches and s.action in ("add", "increase", "decrease"):
        factor = edit.strength if s.action != "decrease" else 1.0 / edit.strength
        return program.with_weights({name: program.weights[name] * factor for name in matches})
    if s.action in ("add", "increase") and s.term in TERMS:
        weight = ADD_WEIGHTS.get(s.term, 1.0) * max(1.0, edit.strength / 2.0)
        return program.with_library_term(s.term, weight, s.params or None)
    return program


def asked_parameters(term: str, current: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
    """The literal parameters of lib.`term` after an 'add' asks for `asked`: `current` with the asked ones set, but
    for a height in FLOORS asked lower than the one in force (`current`'s, else the term's default)."""
    floor = FLOORS.get(term, "")
    held = current.get(floor, TERMS[term].params.get(floor)) if floor in asked else None
    lowered = isinstance(held, (int, float)) and held > asked[floor]
    return {**current, **{name: value for name, value in asked.items() if not (lowered and name == floor)}}


def drop_conflicts(program: RewardProgram, added: Sequence[str]) -> RewardProgram:
    """Remove terms that implement library terms conflicting with the ones just added."""
    for term in added:
        for rival in CONFLICTS.get(term, ()):
            for name in matching_terms(program, rival):
                if name in program.weights and len(program.term_names) > 1:
                    program = program.without_term(name)
    return program



def edited_by(program: RewardProgram, edits: list[Edit], *, drop: bool = False) -> Callable[[], RewardProgram]:
    """Makes the program after `edits`, then without the terms conflicting with those added where `drop`. Made when
    called, so that an edit that cannot apply raises where the designer skips it."""
    def make() -> RewardProgram:
        edited = program
        for edit in edits:
            edited = apply_edit(edited, edit)
        added = [e.suggestion.term for e in edits if e.suggestion.action in ("add", "increase")]
        return drop_conflicts(edited, added) if drop else edited
    return make
