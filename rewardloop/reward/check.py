"""The pre-flight checker: run a program on a small real batch before it costs an optimization.

In the spirit of Stable-Baselines3's `check_env`: validation, then evaluation in the sandbox on a few
random-control rollouts of the scene, checking shapes, finiteness and determinism, and reporting each term's
scale, constant terms and terms that dominate or vanish, in messages written for a model to act on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rewardloop.reward.base import RewardEval, TermStats
from rewardloop.reward.program import ProgramError, RewardProgram
from rewardloop.reward.runtime import RewardError
from rewardloop.sim.features import Features
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene

CHECK_BATCH = 4
"""Random-control rollouts the checker evaluates a program on."""
CHECK_STEPS = 100
"""Physics steps per rollout."""
DOMINANT_SHARE = 0.8
"""A term with more than this share of Σ|weight × term| is reported as dominating."""
TINY_SHARE = 0.005
"""A term with less than this share is reported as negligible."""


@dataclass(frozen=True)
class CheckReport:
    """What the checker found."""

    program_hash: str
    """Hash of the checked program ('' if it did not parse)."""
    scene: str
    """Description of the scene it ran in."""
    problems: list[str]
    """Errors: the program cannot be used until they are fixed."""
    warnings: list[str]
    """Things that work but probably hurt optimization."""
    terms: dict[str, TermStats] = field(default_factory=dict)
    """Term name -> statistics over the whole check batch (share of Σ|weight × term|)."""

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_text(self) -> str:
        """The report for a model or a person: verdict, problems, warnings, then a table of term scales."""
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [f"Reward check {verdict} for program {self.program_hash or '-'} on {self.scene}"]
        lines += [f"problem: {p}" for p in self.problems]
        lines += [f"warning: {w}" for w in self.warnings]
        if self.terms:
            lines.append(f"{'term':<24} {'weight':>8} {'mean':>10} {'min':>10} {'max':>10} {'std':>10} {'share':>6}")
            for name, s in self.terms.items():
                lines.append(f"{name:<24} {s.weight:>8.3g} {s.mean:>10.4g} {s.min:>10.4g} {s.max:>10.4g} "
                             f"{s.std:>10.4g} {s.share:>6.1%}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "program_hash": self.program_hash, "scene": self.scene,
                "problems": list(self.problems), "warnings": list(self.warnings),
                "terms": {name: asdict(s) for name, s in self.terms.items()}}


def check_program(program: RewardProgram | str, scene: CompiledScene | None = None, *, body: str = "humanoid",
                  timeout_s: float = 10.0) -> CheckReport:
    """Validate `program` (source or program) and run it in the sandbox on random rollouts of `scene` (default: the
    body standing, or a hand body holding the cube, so that object features exist)."""
    if scene is None:
        from rewardloop.sim.bodies import get_body
        from rewardloop.sim.hand import Manipulation

        held = Manipulation("cube") if get_body(body).fingertips else None
        scene = compile_scene(Scene(body, manipulation=held))
    where = scene.scene.describe()
    if isinstance(program, str):
        try:
            program = RewardProgram.from_source(program)
        except ProgramError as error:
            return CheckReport("", where, [str(p) for p in error.problems], [])
    features = check_features(scene)
    try:
        first, second = _evaluate_twice(program, features, timeout_s)
    except RewardError as error:
        return CheckReport(program.hash, where, [str(error)], [])
    problems = _determinism(first, second)
    stats = batch_term_statistics(first)
    return CheckReport(program.hash, where, problems, _scale_warnings(stats), stats)


def check_features(scene: CompiledScene, *, batch: int = CHECK_BATCH, nstep: int = CHECK_STEPS,
                   seed: int = 0) -> Features:
    """Features of `batch` random-control rollouts of `nstep` steps from the standing pose."""
    from rewardloop.sim.rollout import Simulator, random_controls

    with Simulator(scene, nthread=1) as sim:
        return sim.open_loop(random_controls(scene, batch, nstep, seed=seed)).features(scene)


def _evaluate_twice(program: RewardProgram, features: Features, timeout_s: float) -> tuple[RewardEval, RewardEval]:
    from rewardloop.reward.sandbox import SandboxedReward

    with SandboxedReward(program, timeout_s=timeout_s) as reward:
        return reward(features), reward(features)


def _determinism(first: RewardEval, second: RewardEval) -> list[str]:
    return [f"term {name!r} gave different values on the same input; terms must be deterministic pure "
            "functions of f (no randomness, no state kept between calls)"
            for name in first.terms if not np.array_equal(first.terms[name], second.terms[name])]


def batch_term_statistics(evaluation: RewardEval) -> dict[str, TermStats]:
    """Per-term statistics over every trajectory and sample of the batch."""
    magnitude = {n: float(np.abs(evaluation.weights[n] * v).mean()) for n, v in evaluation.terms.items()}
    total = sum(magnitude.values()) or 1.0
    return {name: TermStats(weight=evaluation.weights[name], mean=float(v.mean()), min=float(v.min()),
                            max=float(v.max()), std=float(v.std()), share=magnitude[name] / total)
            for name, v in evaluation.terms.items()}


def _scale_warnings(stats: dict[str, TermStats]) -> list[str]:
    warnings = []
    for name, s in stats.items():
        if s.max - s.min <= 1e-9 * max(1.0, abs(s.mean)):
            warnings.append(f"term {name!r} is constant ({s.mean:.4g}) on random rollouts: it cannot guide the "
                            "optimizer; make it depend on the motion or remove it")
        elif len(stats) > 1 and s.share > DOMINANT_SHARE:
            warnings.append(f"term {name!r} makes up {s.share:.0%} of the weighted reward and drowns the others; "
                            f"lower its weight (now {s.weight:g}) or raise theirs")
        elif s.share < TINY_SHARE:
            warnings.append(f"term {name!r} makes up only {s.share:.1%} of the weighted reward; raise its weight "
                            f"(now {s.weight:g}) if it matters, or remove it")
        if s.weight == 0:
            warnings.append(f"term {name!r} has weight 0; remove it or give it a weight")
    return warnings
