"""What a validated reward program runs against: restricted names, a NumPy subset and a feature view.

Used both in-process (vetted programs) and inside the sandbox worker, so this module imports only NumPy and
the term library. The names here are the whole world a program sees: `np` (the functions in NUMPY_NAMES),
`lib` (the term library), a few SAFE_BUILTINS, and the feature view passed to each term as `f`.
"""

from __future__ import annotations

import builtins
import re
import sys
import traceback
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np

from rewardloop.errors import UserError
from rewardloop.reward.library import TermNamespace

FILENAME = "<reward program>"

NUMPY_NAMES = (
    "abs", "absolute", "all", "any", "arange", "arccos", "arcsin", "arctan", "arctan2", "argmax", "argmin",
    "array", "asarray", "broadcast_to", "ceil", "clip", "concatenate", "cos", "cosh", "cumsum", "deg2rad",
    "diff", "e", "exp", "expm1", "float64", "floor", "full", "full_like", "hypot", "inf", "isfinite", "linalg",
    "log", "log1p", "logical_and", "logical_not", "logical_or", "max", "maximum", "mean", "median", "min",
    "minimum", "mod", "nan_to_num", "ones", "ones_like", "pi", "power", "prod", "rad2deg", "round", "sign",
    "sin", "sinh", "sqrt", "square", "stack", "std", "sum", "tan", "tanh", "var", "where", "zeros", "zeros_like",
)
"""`np.<name>` a program may use."""

LINALG_NAMES = ("norm",)
"""`np.linalg.<name>` a program may use."""

SAFE_BUILTINS = ("abs", "min", "max", "sum", "len", "range", "float", "int", "bool", "round", "enumerate", "zip",
                 "tuple", "list", "dict", "sorted", "reversed", "isinstance", "True", "False", "None")
"""Python builtins a program may use."""


class RewardError(UserError):
    """A reward program failed while running: it raised, returned a bad array, or its worker died or hung."""


def numpy_subset() -> SimpleNamespace:
    """The `np` object programs see."""
    names = {name: getattr(np, name) for name in NUMPY_NAMES if name != "linalg"}
    names["linalg"] = SimpleNamespace(**{name: getattr(np.linalg, name) for name in LINALG_NAMES})
    return SimpleNamespace(**names)


def _numpy_import(name: str, *args: Any, **kwargs: Any) -> Any:
    """`__import__` for NumPy's own C code (ndarray methods import lazily through the caller's builtins).

    Programs cannot write an import (the validator rejects it); this serves only NumPy modules already loaded.
    """
    if (name == "numpy" or name.startswith("numpy.")) and name in sys.modules:
        return builtins.__import__(name, *args, **kwargs)
    raise ImportError(f"reward programs cannot import {name!r}")


def program_globals() -> dict[str, Any]:
    """A fresh global namespace for executing a validated program."""
    safe = {name: getattr(builtins, name) for name in SAFE_BUILTINS if name not in ("True", "False", "None")}
    safe["__import__"] = _numpy_import
    return {"__builtins__": safe, "__name__": "reward_program", "np": numpy_subset(), "lib": TermNamespace()}


def compile_program(source: str) -> dict[str, Any]:
    """Execute a *validated* program's source; returns its namespace (term functions, WEIGHTS, constants)."""
    namespace = program_globals()
    exec(compile(source, FILENAME, "exec"), namespace)
    return namespace


class FeatureView(Mapping[str, np.ndarray]):
    """What a term's argument `f` is: `f.name` or `f["name"]` gives an array feature or a scalar."""

    def __init__(self, arrays: Mapping[str, np.ndarray], scalars: Mapping[str, float]):
        self._arrays = dict(arrays)
        self._scalars = dict(scalars)

    def __getitem__(self, name: str) -> Any:
        if name in self._arrays:
            return self._arrays[name]
        if name in self._scalars:
            return self._scalars[name]
        raise KeyError(f"no feature {name!r}; see the feature reference for valid names")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(error.args[0]) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)


def evaluate_terms(namespace: Mapping[str, Any], term_names: tuple[str, ...], view: FeatureView,
                   batch_shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """Term name -> [B, T] float64 values; a RewardError naming the term if one fails or returns a bad array."""
    out = {}
    for name in term_names:
        try:
            raw = namespace[name](view)
        except RecursionError:
            raise RewardError(f"term {name!r} recursed too deeply; write it without recursion") from None
        except MemoryError:
            raise RewardError(f"term {name!r} ran out of memory; work on the [B, T] feature arrays only") from None
        except Exception as error:  # the program's own bug: report it to the model, with its line
            raise RewardError(f"term {name!r} raised {_describe(error)}") from None
        out[name] = check_term_output(name, raw, batch_shape)
    return out


def check_term_output(name: str, raw: Any, batch_shape: tuple[int, int]) -> np.ndarray:
    """The [B, T] float64 array a term returned, or a RewardError that says what is wrong with it."""
    if not isinstance(raw, np.ndarray | float | int):
        raise RewardError(f"term {name!r} returned {type(raw).__name__}; return a NumPy array of shape "
                          f"[B, T] = {list(batch_shape)}")
    values = np.asarray(raw)
    if values.shape != batch_shape:
        raise RewardError(f"term {name!r} returned shape {list(values.shape)}; it must return [B, T] = "
                          f"{list(batch_shape)} (reduce vector features over their last axis, e.g. "
                          "np.sum(x, axis=-1))")
    if not np.issubdtype(values.dtype, np.number) and values.dtype != bool:
        raise RewardError(f"term {name!r} returned dtype {values.dtype}; return numbers")
    values = values.astype(np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        raise RewardError(f"term {name!r} returned {int(bad.sum())} non-finite values (NaN or inf); guard "
                          "divisions and logarithms, e.g. np.maximum(x, 1e-6), and clip large values")
    return values


def _describe(error: BaseException) -> str:
    """'ZeroDivisionError: division by zero (line 4)', the line in the program where it happened."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == FILENAME]
    where = f" (line {lines[-1]})" if lines else ""
    text = re.sub(r"\s+", " ", str(error))[:300]
    return f"{type(error).__name__}: {text}{where}"
