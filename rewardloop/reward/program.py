"""RewardProgram: plain Python source of named term functions over Features plus a WEIGHTS dict.

A program is validated before anything runs (see `rewardloop.reward.validate`), has a stable content hash, a
readable diff and a compact form, and is edited by producing new validated source (never by splicing text
into code that is already running). `format_reference()` is the how-to pasted into a designer's prompt.
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from rewardloop.errors import UserError
from rewardloop.reward.base import RewardEval
from rewardloop.reward.library import TERMS, library_reference
from rewardloop.reward.runtime import (
    NUMPY_NAMES,
    SAFE_BUILTINS,
    FeatureView,
    RewardError,
    compile_program,
    evaluate_terms,
)
from rewardloop.reward.validate import Problem, ProgramError, parse, weights_of
from rewardloop.sim.features import FEATURES, SCALARS, Features

__all__ = ["Problem", "ProgramError", "RewardError", "RewardProgram", "format_reference"]


@dataclass(frozen=True)
class RewardProgram:
    """A validated reward program. Build it with `RewardProgram.from_source`."""

    source: str
    """The program text (normalised: stripped, one trailing newline)."""
    weights: dict[str, float]
    """Term name -> weight, in WEIGHTS order."""
    reads: tuple[str, ...]
    """Array feature names the program may read (the sandbox ships only these)."""

    @classmethod
    def from_source(cls, source: str) -> RewardProgram:
        """Parse and validate; a ProgramError whose `.problems` say what to fix."""
        if isinstance(source, str):
            source = textwrap.dedent(source).strip() + "\n"
        tree = parse(source)
        reads = _features_read(tree)
        return cls(source=source, weights=weights_of(tree), reads=reads)

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(self.weights)

    @property
    def hash(self) -> str:
        """Stable 16-hex-digit content hash of the source (whitespace at line ends ignored)."""
        text = "\n".join(line.rstrip() for line in self.source.strip().splitlines())
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def diff(self, other: RewardProgram) -> str:
        """Unified diff from this program to `other` ('' when the same)."""
        lines = difflib.unified_diff(self.source.splitlines(), other.source.splitlines(),
                                     fromfile=f"program {self.hash}", tofile=f"program {other.hash}", lineterm="")
        return "\n".join(lines)

    def compact(self) -> str:
        """One line per term: `weight × name = expression`, for prompts and reports."""
        tree = ast.parse(self.source)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        lines = []
        for name, weight in self.weights.items():
            body = [s for s in functions[name].body
                    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # docstrings
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                expression = ast.unparse(body[0].value)
            else:
                expression = "; ".join(ast.unparse(s).replace("\n", " ") for s in body)
            lines.append(f"{weight:g} × {name} = {expression}")
        return "\n".join(lines)

    def with_weights(self, weights: dict[str, float]) -> RewardProgram:
        """A new program with some weights changed (names must be existing terms)."""
        unknown = set(weights) - set(self.weights)
        if unknown:
            raise UserError(f"no term {sorted(unknown)[0]!r} in the program; terms are: {', '.join(self.weights)}")
        return self._with_weights_dict({**self.weights, **{k: float(v) for k, v in weights.items()}})

    def with_library_term(self, term: str, weight: float, params: dict[str, Any] | None = None,
                          name: str | None = None) -> RewardProgram:
        """A new program with `def name(f): return lib.term(f, **params)` added at `weight`."""
        if term not in TERMS:
            raise UserError(f"unknown library term {term!r}; choose one of: {', '.join(TERMS)}")
        name = name or term
        if name in self.weights or not name.isidentifier():
            raise UserError(f"cannot add a term named {name!r}: the name is taken or not an identifier")
        arguments = "".join(f", {k}={v!r}" for k, v in (params or {}).items())
        function = f"def {name}(f):\n    return lib.{term}(f{arguments})\n"
        weights = {**self.weights, name: float(weight)}
        return self._replace_parts(insert=function, weights=weights)

    def without_term(self, name: str) -> RewardProgram:
        """A new program without term `name` (its function and its weight)."""
        if name not in self.weights:
            raise UserError(f"no term {name!r} in the program; terms are: {', '.join(self.weights)}")
        if len(self.weights) == 1:
            raise UserError(f"cannot remove {name!r}: it is the program's only term")
        weights = {k: v for k, v in self.weights.items() if k != name}
        return self._replace_parts(remove=name, weights=weights)

    def evaluate_trusted(self, features: Features) -> RewardEval:
        """Evaluate in this process. ONLY for vetted programs (canonical, library-only); see load_reward."""
        namespace = _compiled(self.source)
        view = FeatureView({k: features[k] for k in features}, features.scalars)
        terms = evaluate_terms(namespace, self.term_names, view, tuple(features.batch_shape))  # type: ignore[arg-type]
        return RewardEval(terms=terms, weights=dict(self.weights))

    def _with_weights_dict(self, weights: dict[str, float]) -> RewardProgram:
        return self._replace_parts(weights=weights)

    def _replace_parts(self, *, weights: dict[str, float], insert: str = "", remove: str | None = None
                       ) -> RewardProgram:
        """Rebuild the source: drop function `remove`, add `insert` before WEIGHTS, rewrite WEIGHTS."""
        tree = ast.parse(self.source)
        lines = self.source.splitlines()
        cut: list[tuple[int, int]] = []
        for node in tree.body:
            is_weights = isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "WEIGHTS"
                                                               for t in node.targets)
            if is_weights or (isinstance(node, ast.FunctionDef) and node.name == remove):
                cut.append((node.lineno - 1, node.end_lineno or node.lineno))
        for start, end in sorted(cut, reverse=True):
            del lines[start:end]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip()
        parts = [body, insert.rstrip(), format_weights(weights)]
        return RewardProgram.from_source("\n\n".join(p for p in parts if p) + "\n")


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> dict[str, Any]:
    """The namespace of a validated, trusted program, compiled once per process."""
    return compile_program(source)


def format_weights(weights: dict[str, float]) -> str:
    """`WEIGHTS = {...}` source, one term per line."""
    items = "".join(f"    {name!r}: {weight!r},\n" for name, weight in weights.items())
    return "WEIGHTS = {\n" + items.replace("'", '"') + "}"


def _features_read(tree: ast.Module) -> tuple[str, ...]:
    """Array features the program may read: `x.name` attributes and string constants naming features,
    features whose names contain a string constant (for names built from parts), and library terms' reads.
    Also checks attributes of each term's argument against the vocabulary."""
    problems: list[Problem] = []
    valid = set(FEATURES) | set(SCALARS)
    arguments = {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}
    reads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in arguments \
                and node.value.id not in ("np", "lib"):
            if node.attr in FEATURES:
                reads.add(node.attr)
            elif node.attr not in valid and node.value.id == "f":
                close = difflib.get_close_matches(node.attr, sorted(valid), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                problems.append(Problem(node.lineno, f"`f.{node.attr}` is not a feature{hint}; see the feature "
                                                     "reference for valid names"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 3:
            reads.update(name for name in FEATURES if node.value in name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "lib" and node.func.attr in TERMS:
            reads.update(TERMS[node.func.attr].reads)
    if problems:
        raise ProgramError(problems[:20])
    return tuple(name for name in FEATURES if name in reads | {"time"})


def format_reference() -> str:
    """How to write a reward program, for a designer model's prompt (Markdown)."""
    return _REFERENCE.format(numpy=", ".join(NUMPY_NAMES), builtins=", ".join(SAFE_BUILTINS),
                             library=library_reference())


_REFERENCE = """\
## How to write a reward program

A reward program is plain Python: small **term functions** and one `WEIGHTS` dict. The reward at each sample is
r = Σ WEIGHTS[name] × name(f). Every term takes exactly one argument, the features `f`, and returns a NumPy
array of shape [B, T] (B trajectories, T samples) of finite floats.

```python
def forward_progress(f):               # m/s, + is forward
    return np.clip(f.forward_vel, -1.0, 1.5)

def upright(f):                        # vetted library term, with a parameter
    return lib.upright(f, part="torso")

def low_pelvis(f):                     # a penalty: <= 0, given a positive weight
    return -np.maximum(0.0, 0.8 * f.standing_height - f.root_height)

WEIGHTS = {{"forward_progress": 1.0, "upright": 0.5, "low_pelvis": 2.0}}
```

Rules (checked before the program runs; a program that breaks one is returned to you with the line to fix):
- Read features as `f.name` (or `f["name"]`) with the names in the feature reference; [B, T, 3] vectors need
  an index or a reduction, e.g. `f.torso_up[..., 2]`, `np.linalg.norm(f.root_vel[..., :2], axis=-1)`.
  Scalars `f.dt`, `f.mass`, `f.weight`, `f.standing_height` are plain numbers.
- Available names: `np` with only {numpy}; `np.linalg.norm`; `lib` (the term library below);
  builtins {builtins}. Nothing else: no imports, no `open`, `exec`, `eval`, `getattr`, no names or attributes
  starting with `_`, no classes, `while`, `try`, `with`, `global`, generators or decorators.
- Top level: only `def` functions and constant assignments; helper functions without a weight are allowed.
- `WEIGHTS` is a literal dict of term name -> number, 1 to 32 terms. Give penalties (terms ≤ 0) positive
  weights. Keep each weighted term's typical magnitude within about 0.1–10 so no term dominates by accident.
- Literals: numbers within ±1e6, strings under 200 characters; whole program under 20,000 characters.
- Terms must be deterministic and finite: guard divisions (`np.maximum(x, 1e-6)`), clip large values.

### Term library (`lib.NAME(f, param=value)`)
Sign "+": a reward to maximise; "-": a penalty that is ≤ 0. Both take positive weights.

{library}
"""


def term_reads(program: RewardProgram) -> dict[str, tuple[set[str], set[str]]]:
    """Term name -> (array features it reads directly, library terms it calls)."""
    functions = {n.name: n for n in ast.parse(program.source).body if isinstance(n, ast.FunctionDef)}
    out: dict[str, tuple[set[str], set[str]]] = {}
    for name in program.term_names:
        reads, calls = set(), set()
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "lib" and node.attr in TERMS:
                    calls.add(node.attr)
                elif node.attr in FEATURES:
                    reads.add(node.attr)
        out[name] = (reads, calls)
    return out
