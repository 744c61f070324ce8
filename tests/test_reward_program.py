"""Program validation (messages a model can act on), hashing, diff, edits and the canonical programs."""

from __future__ import annotations

import numpy as np
import pytest

from rewardloop.reward.canonical import CANONICAL, MANIPULATION_CANONICALS, canonical
from rewardloop.reward.program import ProgramError, RewardProgram, format_reference
from rewardloop.sim.rollout import Simulator, random_controls

GOOD = '''
def forward_progress(f):
    return np.clip(f.forward_vel, -1.0, 1.5)

def upright(f):
    return lib.upright(f, part="torso")

WEIGHTS = {"forward_progress": 1.0, "upright": 0.5}
'''


def problems(source):
    with pytest.raises(ProgramError) as caught:
        RewardProgram.from_source(source)
    return "\n".join(str(p) for p in caught.value.problems)


def test_a_good_program_parses_with_weights_and_reads():
    program = RewardProgram.from_source(GOOD)
    assert program.weights == {"forward_progress": 1.0, "upright": 0.5}
    assert program.term_names == ("forward_progress", "upright")
    assert {"forward_vel", "torso_up"} <= set(program.reads)
    assert len(program.hash) == 16 and program.hash == RewardProgram.from_source(GOOD + "\n\n").hash


@pytest.mark.parametrize(("source", "expected"), [
    ("import os\nWEIGHTS = {}", "line 1: imports are not allowed; use only `np`"),
    ("def a(f):\n    return open('x')\nWEIGHTS = {'a': 1}", "line 2: `open` is not allowed"),
    ("def a(f):\n    return f.forward_velocity\nWEIGHTS = {'a': 1}", "did you mean forward_vel"),
    ("def a(f):\n    return np.load('x')\nWEIGHTS = {'a': 1}", "`np.load` is not available"),
    ("def a(f):\n    return lib.uprite(f)\nWEIGHTS = {'a': 1}", "did you mean upright"),
    ("def a(f):\n    return lib.upright(f, part='foot')\nWEIGHTS = {'a': 1}", "part must be one of"),
    ("def a(f):\n    return lib.upright(f, size=2)\nWEIGHTS = {'a': 1}", "has no parameter 'size'"),
    ("def a(f):\n    return f.forward_vel\n", "no WEIGHTS assignment"),
    ("def a(f):\n    return f.forward_vel\nWEIGHTS = {'b': 1}", "no `def b(f):`"),
    ("def a(f, g):\n    return f.forward_vel\nWEIGHTS = {'a': 1}", "exactly one argument"),
    ("def a(f):\n    return f.__class__\nWEIGHTS = {'a': 1}", "starting with '_'"),
    ("def a(f):\n    return ().__class__.__subclasses__()\nWEIGHTS = {'a': 1}", "starting with '_'"),
    ("def a(f):\n    g = (x for x in [1])\n    return g.gi_frame\nWEIGHTS = {'a': 1}", "`.gi_frame` is not allowed"),
    ("def a(f):\n    return '{0.__class__}'.format(f)\nWEIGHTS = {'a': 1}", "`.format` is not allowed"),
    ("def a(f):\n    return getattr(f, 'x')\nWEIGHTS = {'a': 1}", "`getattr` is not allowed"),
    ("def a(f):\n    while True:\n        pass\nWEIGHTS = {'a': 1}", "`while` loops are not allowed"),
    ("class A:\n    pass\nWEIGHTS = {'a': 1}", "class definitions are not allowed"),
    ("def a(f):\n    return os.system('x')\nWEIGHTS = {'a': 1}", "`os` is not defined"),
    ("def a(f):\n    return f.forward_vel * 1e300\nWEIGHTS = {'a': 1}", "numbers must be within"),
    ("def a(f):\n    return f.forward_vel\nWEIGHTS = {'a': 'big'}", "literal dict of term name -> number"),
    ("def a(f)\n    return 1", "line 1: syntax error"),
    ("x" * 30_000, "keep it under 20000"),
    ("def a(f):\n    return f.forward_vel.ctypes\nWEIGHTS = {'a': 1}", "`.ctypes` is not allowed"),
    ("def a(f):\n    return f.forward_vel.tofile('/tmp/x')\nWEIGHTS = {'a': 1}", "`.tofile` is not allowed"),
    ("def a(f):\n    return __import__('os')\nWEIGHTS = {'a': 1}", "starting with '_'"),
    ("def a(f):\n    return eval('1')\nWEIGHTS = {'a': 1}", "`eval` is not allowed"),
])
def test_hostile_or_broken_sources_are_rejected_with_instructions(source, expected):
    assert expected in problems(source)


def test_edits_return_validated_programs():
    program = RewardProgram.from_source(GOOD)
    added = program.with_library_term("balance", 0.3).with_library_term("height", 1.0, {"fraction": 0.9}, "tall")
    assert added.weights == {"forward_progress": 1.0, "upright": 0.5, "balance": 0.3, "tall": 1.0}
    assert "lib.height(f, fraction=0.9)" in added.source
    removed = added.without_term("upright").with_weights({"balance": 2})
    assert removed.weights == {"forward_progress": 1.0, "balance": 2.0, "tall": 1.0}
    assert "def upright" not in removed.source
    diff = program.diff(removed)
    assert "-def upright(f):" in diff and '+    "balance": 2.0,' in diff and program.diff(program) == ""
    assert removed.compact().splitlines()[1] == "2 × balance = lib.balance(f)"
    with pytest.raises(ValueError, match="terms are"):
        program.with_weights({"nope": 1.0})


def test_canonical_programs_evaluate_on_both_bodies(humanoid_flat, myolegs_flat):
    for scene in (humanoid_flat, myolegs_flat):
        with Simulator(scene, nthread=1) as sim:
            features = sim.open_loop(random_controls(scene, 2, 30, seed=1)).features(scene)
        for name in set(CANONICAL) - set(MANIPULATION_CANONICALS):  # object rewards: test_manipulation
            evaluation = canonical(name).evaluate_trusted(features)
            assert evaluation.total.shape == (2, 30) and np.isfinite(evaluation.total).all(), name
    with pytest.raises(ValueError, match="choose one of"):
        canonical("fly")


def test_a_turning_walk_bends_the_line_and_keeps_the_terms(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        features = sim.open_loop(random_controls(humanoid_flat, 1, 30, seed=2)).features(humanoid_flat)
    walk, turning = canonical("walk"), canonical("walk", turn=0.3)
    assert turning.weights == walk.weights and "0.3 rad/s" in turning.source
    face = turning.evaluate_trusted(features).terms["face"]
    rate = (features.heading[:, 1:] - features.heading[:, :1]) / (features.time[:, 1:] - features.time[:, :1])
    rate = np.concatenate([features.yaw_rate[:, :1], rate], axis=1)  # 30 steps: less than the 1-s window
    np.testing.assert_allclose(face, np.exp(-np.square((rate - 0.3) / 0.3)))
    np.testing.assert_allclose(turning.evaluate_trusted(features).terms["side"], -np.abs(features.lateral_vel))
    with pytest.raises(ValueError, match="no canonical straight-line walk to turn"):
        canonical("stand", turn=0.3)


def test_format_reference_documents_the_format():
    text = format_reference()
    assert "WEIGHTS" in text and "lib.upright" in text and "np.clip" not in text.split("```")[0]
    RewardProgram.from_source(text.split("```python")[1].split("```")[0])  # its example is valid
