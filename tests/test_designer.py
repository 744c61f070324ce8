"""Designers on real critiques: the builtin's rule-based edits, CMA-ES weight tuning on a task metric, and a model
designer against a scripted local server whose failing candidates are repaired with the checker's report."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakeserver import ScriptedChatServer, chat_reply

from rewardloop.control.metrics import TaskMetrics, batch_metrics
from rewardloop.critic import BuiltinCritic
from rewardloop.critic.critique import Critique, Suggestion
from rewardloop.critic.physics import targets_from_description
from rewardloop.critic.rules import judge
from rewardloop.design_context import DesignContext, EditRecord
from rewardloop.designer import (
    BuiltinDesigner,
    Designer,
    DesignerConfig,
    Edit,
    apply_edit,
    library_program,
    make_designer,
    matching_terms,
    parse_candidates,
    reaimed,
    sped_up,
    tune_weights,
)
from rewardloop.errors import UserError
from rewardloop.models.client import RetryPolicy, make_backend
from rewardloop.reward.canonical import canonical
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.rollout import Simulator, random_controls, zero_controls


@pytest.fixture(scope="module")
def fall(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        return sim.open_loop(zero_controls(humanoid_flat, 1, 400))  # 2 s unpowered: falls


FORWARD = """
def forward_progress(f):
    return np.minimum(f.forward_vel, 1.2)

def upright(f):
    return lib.upright(f, part="torso")

WEIGHTS = {"forward_progress": 2.0, "upright": 1.0}
"""


def test_matching_terms_finds_library_equivalents():
    walk = canonical("walk")  # upright calls lib.upright, face calls lib.heading; speed reads com_vel and time
    assert matching_terms(walk, "upright") == ["upright"]
    assert matching_terms(walk, "heading") == ["face"]
    assert matching_terms(walk, "forward_velocity") == []
    assert matching_terms(RewardProgram.from_source(FORWARD), "forward_velocity") == ["forward_progress"]
    assert matching_terms(walk, "knee_extension") == []


def test_builtin_designer_turns_a_fall_critique_into_distinct_edits(humanoid_flat, fall):
    critique = BuiltinCritic().critique("walk forward", humanoid_flat, fall)
    walk = canonical("walk")
    proposals = BuiltinDesigner(seed=0).propose(DesignContext("walk forward", walk, critique), 6)
    programs = [p.program for p in proposals]
    assert len(proposals) == 6 and all(p.status == "ok" and p.program for p in proposals)
    assert len({p.hash for p in programs} | {walk.hash}) == 7  # all distinct, none the current program
    first = programs[0]
    assert "alive" in first.weights and first.weights["upright"] == 2 * walk.weights["upright"]  # add; ×2
    paced, faster, strong = programs[1:4]
    assert paced.weights == first.weights and "np.minimum(1.575 * f.standing_height" in paced.source
    assert faster.weights == first.weights and "np.minimum(1.65 * f.standing_height" in faster.source
    assert strong.weights["upright"] == 4 * walk.weights["upright"]
    assert "rule-based" in proposals[0].designer and "not a language model" in proposals[0].designer


def test_builtin_designer_edits_for_knees_and_backward_walking():
    knees = Critique(False, 5.0, suggestions=(
        Suggestion("knee_extension", "add", "straighten", {"stance_only": True}),))
    proposals = BuiltinDesigner().propose(DesignContext("walk with straight knees", canonical("walk"), knees), 3)
    assert "lib.knee_extension(f, stance_only=True)" in proposals[0].program.source
    backward = Critique(False, 2.0, suggestions=(
        Suggestion("velocity_tracking", "add", "track", {"forward": -0.5}),
        Suggestion("forward_velocity", "remove", "forward is wrong")))
    strong = BuiltinDesigner().propose(DesignContext("walk backward", RewardProgram.from_source(FORWARD), backward),
                                       2)[1].program
    assert "forward_progress" not in strong.weights and strong.weights["velocity_tracking"] == 4.0  # 2.0 × 4/2
    assert "lib.velocity_tracking(f, forward=-0.5)" in strong.source


def test_a_passing_walk_gets_its_travel_pushed_and_a_standing_task_does_not():
    walk, passed = canonical("walk"), Critique(True, 9.9)
    pushes = BuiltinDesigner().propose(DesignContext("walk forward", walk, passed), 6)
    raised, faster = pushes[:2]
    assert raised.rationale == ("the motion passes every check, raise its target speed (×1.05) with people's cadence "
                                "for it")
    rough = BuiltinDesigner().propose(DesignContext("walk forward", canonical("walk_rough"), passed), 1)[0]
    assert rough.rationale == "the motion passes every check, raise its target speed (×1.05)"  # no cadence band
    assert raised.program.weights == walk.weights
    assert "np.minimum(1.575 * f.standing_height, start + 0.6 * f.time)" in raised.program.source
    assert "(1.575 * f.standing_height / (1.5 * f.standing_height)) ** 0.58" in raised.program.source  # the pace
    assert "np.minimum(1.65 * f.standing_height, start + 0.6 * f.time)" in faster.program.source
    first = pushes[2]
    assert first.rationale.startswith("the motion passes every check, push its travel (×2): increase speed")
    assert [p.program.weights["speed"] for p in pushes[2:5]] == [f * walk.weights["speed"] for f in (2.0, 1.4, 1.2)]
    assert pushes[5].rationale.startswith("explore")
    assert {n: w for n, w in first.program.weights.items() if n != "speed"} == \
        {n: w for n, w in walk.weights.items() if n != "speed"}
    failed = BuiltinDesigner().propose(DesignContext("walk forward", walk, Critique(False, 4.0)), 1)[0]
    assert failed.rationale.startswith("explore")  # nothing passes: no push
    stand = canonical("stand")
    still = BuiltinDesigner().propose(DesignContext("stand still", stand, passed), 1)[0]
    assert still.rationale.startswith("explore")  # travel terms exist ('still') but the task does not travel


def test_a_fix_to_a_walk_that_states_no_speed_is_also_tried_with_its_travel_pushed():
    walk, arms = canonical("walk"), Critique(True, 9.87, suggestions=(
        Suggestion("hands_still", "add", "the hands flail"),))
    plain, paced, faster, strong = BuiltinDesigner().propose(DesignContext("walk forward", walk, arms), 4)
    assert paced.rationale.startswith("apply every suggestion and keep the pace (its target speed ×1.05): add "
                                      "hands_still")
    assert paced.program.weights == faster.program.weights == plain.program.weights
    assert paced.program.source == sped_up(plain.program, 1.05).source
    assert faster.program.source == sped_up(plain.program, 1.1).source
    library = RewardProgram.from_source(FORWARD)  # no speed ramp, no velocity_tracking: its travel term is pushed
    paced = BuiltinDesigner().propose(DesignContext("walk forward", library, arms), 2)[1]
    assert paced.rationale.startswith("apply every suggestion and keep the pace: add hands_still, increase "
                                      "forward_progress")
    assert paced.program.weights["forward_progress"] == 1.5 * library.weights["forward_progress"]
    assert strong.rationale.startswith("apply every suggestion strongly")
    slow = canonical("walk", speed=0.6)  # a stated speed is aimed at, not pushed
    plans = BuiltinDesigner().propose(DesignContext("walk forward slowly at 0.6 m/s", slow, arms), 2)
    assert [p.rationale.split(":")[0] for p in plans] == ["apply every suggestion",
                                                           "apply every suggestion strongly, drop conflicting terms"]
    plain, aimed, strong = BuiltinDesigner().propose(DesignContext("walk forward slowly at 0.6 m/s", slow, arms,
                                                                   metrics=_metrics(0.714)), 4)[1:]
    assert aimed.rationale == "apply every suggestion and aim its travel target 0.114 m/s lower: add hands_still"
    assert aimed.program.source == reaimed(plain.program, -0.114).source  # the fix, aimed at the stated speed
    assert strong.rationale.startswith("apply every suggestion strongly")


def _metrics(speed: float) -> TaskMetrics:
    return TaskMetrics(duration=4.0, distance=4 * speed, speed=speed, fell=False, fall_time=None, lateral_drift=0.0,
                       heading_change=0.0, steps=8)


def test_a_passing_walk_that_misses_its_stated_speed_is_aimed_the_other_way():
    slow, passed = canonical("walk", speed=0.6), Critique(True, 9.8)
    ask = "walk forward slowly at 0.6 m/s"
    fast = BuiltinDesigner().propose(DesignContext(ask, slow, passed, metrics=_metrics(0.627)), 1)[0]
    assert fast.rationale.startswith("the motion is off its stated speed at 0.627 m/s, +0.027 from the stated 0.6")
    assert "np.minimum(0.573, start" in fast.program.source and "np.minimum(0.6," not in fast.program.source
    assert fast.program.weights == slow.weights  # the target moves, the weights stay
    library = library_program(DesignContext(ask, None, None).targets())
    up = BuiltinDesigner().propose(DesignContext(ask, library, passed, metrics=_metrics(0.55)), 1)[0]
    assert "forward=0.65" in up.program.source and up.program.weights == library.weights
    near = BuiltinDesigner().propose(DesignContext(ask, slow, passed, metrics=_metrics(0.602)), 1)[0]
    assert near.rationale.startswith("explore")  # within REAIM_MIN: nothing to aim
    with pytest.raises(UserError, match="no travel target"):
        reaimed(canonical("walk"), 0.1)  # its top is the body's speed, not a stated one


def test_a_walk_at_no_stated_speed_is_sped_up_along_its_own_target():
    twice = sped_up(sped_up(canonical("walk"), 1.05), 1.1)  # each raise scales the last
    assert twice.source.count("np.minimum(1.7325 * f.standing_height, start") == 2  # the speed and balance frame
    assert "(1.7325 * f.standing_height / (1.5 * f.standing_height)) ** 0.58" in twice.source
    assert "1.7325 x standing height (m/s)" in twice.source and twice.weights == canonical("walk").weights
    library = library_program(DesignContext("walk forward", None, None).targets())
    assert "forward=1.1" in sped_up(library, 1.1).source
    for stated in (canonical("walk", speed=0.6), RewardProgram.from_source(FORWARD)):
        with pytest.raises(UserError, match="no travel target"):
            sped_up(stated, 1.1)  # a stated speed is aimed (`reaimed`); a term of its own code is not read


def test_a_walk_off_its_stated_speed_is_aimed_before_any_suggestion():
    slow, ask = canonical("walk", speed=0.6), "walk forward slowly at 0.6 m/s"
    faulted = Critique(False, 9.4, suggestions=(Suggestion("upright", "increase", "the trunk leans"),))
    first, then = BuiltinDesigner().propose(DesignContext(ask, slow, faulted, metrics=_metrics(0.726)), 2)
    assert first.rationale.startswith("the motion misses its stated speed at 0.726 m/s, +0.126 from the stated 0.6")
    assert "np.minimum(0.474, start" in first.program.source and first.program.weights == slow.weights
    assert then.rationale.startswith("apply every suggestion") and "np.minimum(0.6, start" in then.program.source
    within, then = BuiltinDesigner().propose(DesignContext(ask, slow, faulted, metrics=_metrics(0.714)), 2)
    assert within.rationale.startswith("the motion is off its stated speed at 0.714")  # within the task's 0.12 m/s
    assert "np.minimum(0.486, start" in within.program.source and then.rationale.startswith("apply every suggestion")
    near = BuiltinDesigner().propose(DesignContext(ask, slow, faulted, metrics=_metrics(0.602)), 1)[0]
    assert near.rationale.startswith("apply every suggestion")  # within REAIM_MIN: nothing to aim
    plain = BuiltinDesigner().propose(DesignContext("walk forward", canonical("walk"), faulted,
                                                    metrics=_metrics(0.726)), 1)[0]
    assert plain.rationale.startswith("apply every suggestion")  # no stated speed: nothing to aim at
    unjudged = BuiltinDesigner().propose(DesignContext(ask, slow, Critique(False, 0.0), metrics=_metrics(0.45)), 1)[0]
    assert unjudged.rationale.startswith("the motion misses its stated speed")  # no critic: aimed all the same
    assert "np.minimum(0.75, start" in unjudged.program.source


def test_builtin_designer_draws_per_seed_and_iteration_and_never_repeats_a_program():
    walk, passed = canonical("walk"), Critique(True, 9.9)

    def hashes(seed: int, history: tuple[EditRecord, ...] = ()) -> list[str]:
        context = DesignContext("walk forward", walk, passed, history=history)
        return [p.program.hash for p in BuiltinDesigner(seed=seed).propose(context, 7)]

    first = hashes(0)
    assert hashes(0) == first and hashes(1)[5:] != first[5:]  # raises and pushes the same, the draws the seed's
    tried = tuple(EditRecord(1, h, "tried") for h in first)
    assert not set(hashes(0, tried)) & set(first)  # another iteration: new draws, nothing tried again


def test_builtin_designer_starts_from_the_description_without_a_program():
    proposals = BuiltinDesigner().propose(DesignContext("walk forward on stairs with straight knees", None, None), 3)
    first = proposals[0].program
    assert proposals[0].rationale.startswith("starting program")
    assert {"velocity_tracking", "knee_extension", "foot_clearance", "alive"} <= set(first.weights)
    assert len({p.program.hash for p in proposals}) == 3


def test_tune_weights_improves_a_task_metric_with_cma(humanoid_flat):
    """The 'optimizer' here is best-of-N selection among 24 fixed random rollouts: the reward picks the
    trajectory it scores highest and the task metric is how far that one went. Tuning the weights of a program
    whose forward term starts tiny must make the reward pick a farther trajectory."""
    with Simulator(humanoid_flat, nthread=1) as sim:
        features = sim.open_loop(random_controls(humanoid_flat, 24, 80, seed=3)).features(humanoid_flat)
    distance = np.array([m.distance for m in batch_metrics(features)])
    program = RewardProgram.from_source(
        "def forward(f):\n    return lib.forward_velocity(f)\n\n"
        "def upright(f):\n    return lib.upright(f)\n\n"
        'WEIGHTS = {"forward": 0.01, "upright": 1.0}\n')

    def evaluate(candidate: RewardProgram) -> float:
        return float(distance[np.argmax(candidate.evaluate_trusted(features).returns())])

    result = tune_weights(program, evaluate, budget=25, seed=0, sigma=1.5)
    assert result.evaluations <= 25 and len(result.history) == result.evaluations
    assert result.score >= result.start_score and result.score == max(s for _, s in result.history)
    assert result.score > result.start_score  # forward weight grew relative to upright
    assert result.program.weights["forward"] / result.program.weights["upright"] > 0.01
    again = tune_weights(program, evaluate, budget=25, seed=0, sigma=1.5)
    assert again.history == result.history  # deterministic per seed


def test_parse_candidates():
    text = ("### Candidate 1: more upright\n```python\nA = 1\n```\nsome words\n"
            "### Candidate 2: faster\nbecause\n```py\nB = 2\n```")
    assert parse_candidates(text) == [("more upright", "A = 1\n"), ("faster", "B = 2\n")]
    assert parse_candidates("```python\nC = 3\n```") == [("", "C = 3\n")]


GOOD = "def upright(f):\n    return lib.upright(f)\n\nWEIGHTS = {\"upright\": 2.0}\n"
BAD = "def knees(f):\n    return f.knee_angle\n\nWEIGHTS = {\"knees\": 1.0}\n"
FIXED = "def knees(f):\n    return -f.left_knee_flexion ** 2\n\nWEIGHTS = {\"knees\": 1.0}\n"


def test_model_designer_checks_and_repairs_candidates(humanoid_flat):
    answer = f"### Candidate 1: stand up straighter\n```python\n{GOOD}```\n### Candidate 2: knees\n```python\n{BAD}```"
    script = [chat_reply(answer), chat_reply(f"### Candidate: use a real feature\n```python\n{FIXED}```")]
    critique = Critique(False, 3.0, summary="bent knees")
    context = DesignContext("walk with straight knees", canonical("walk"), critique, scene=humanoid_flat,
                            history=(EditRecord(1, "abc", "raised upright", 4.0, 0.3, True),))
    with ScriptedChatServer(script, kind="vllm", context=32768) as server:  # room for the full prompt
        designer = make_designer(f"openai:coder@{server.base_url}", retry=RetryPolicy(1))
        proposals = designer.propose(context, 2)
    assert [p.status for p in proposals] == ["ok", "ok"] and [p.repairs for p in proposals] == [0, 1]
    assert proposals[1].program.weights == {"knees": 1.0} and proposals[1].rationale == "use a real feature"
    prompt = server.requests[0]["messages"][0]["content"]
    for part in ("walk with straight knees", "| `left_knee_flexion` |", "lib.knee_extension", "feet_follow",
                 "bent knees", "iteration 1, program abc: raised upright -> score 4", "Write 2 different"):
        assert part in prompt
    assert server.requests[0]["temperature"] == 0.3
    repair = server.requests[1]["messages"][-1]["content"]
    assert "f.knee_angle` is not a feature" in repair  # the checker's message goes back to the model


def test_model_designer_gives_up_after_n_repairs(humanoid_flat):
    class Report:
        passed, problems = False, ["line 2: always wrong"]

        def to_text(self):
            return "Reward check FAILED\nproblem: line 2: always wrong"

    script = [chat_reply(f"```python\n{GOOD}```")] + [chat_reply(f"```python\n{GOOD}```")] * 2
    with ScriptedChatServer(script) as server:
        designer = Designer(make_backend(f"openai:coder@{server.base_url}"), DesignerConfig(max_repairs=2),
                            checker=lambda context: lambda source: Report())
        [proposal] = designer.propose(DesignContext("walk", canonical("walk"), None), 1)
    assert proposal.status == "failed" and proposal.program is None and proposal.repairs == 2
    assert proposal.problems == ("line 2: always wrong",) and len(server.requests) == 3
    assert json.loads(json.dumps(server.requests[2]))["messages"][-1]["content"].count("always wrong") == 1


def test_an_add_with_parameters_replaces_a_library_term_but_keeps_a_computed_argument():
    # The canonical walk's balance calls lib.capture_point(f, lead_s=0.3, speed=target): rebuilding it from the
    # suggestion's literal parameters would drop the moving frame, so the edit raises its weight instead.
    walk = canonical("walk")
    edit = Edit(Suggestion("capture_point", "add", "falls forward", {"lead_s": 0.4}), strength=2.0)
    kept = apply_edit(walk, edit)
    assert "speed=target" in kept.source and kept.weights["balance"] == 2 * walk.weights["balance"]
    # Where the call has only literal arguments (the stand task's balance), the term is rebuilt with the parameters.
    stand = canonical("stand")
    rebuilt = apply_edit(stand, edit)
    assert "lead_s=0.4" in rebuilt.source and rebuilt.weights["balance"] == stand.weights["balance"]


def _rules_critique(description: str, **descriptors: float) -> Critique:
    """The builtin critic's suggestions for measured descriptors alone (its physics checks, no gait analysis), for a
    motion that falls short of one check."""
    judgement = judge(targets_from_description(description), {"fell": False, "duration_s": 4.0, **descriptors})
    return Critique(False, judgement.score, suggestions=tuple(s for f in judgement.findings for s in f.suggestions))


def _proposals(description: str, task: str, critique: Critique, k: int = 2) -> list[RewardProgram]:
    program = canonical(task)
    return [p.program for p in BuiltinDesigner().propose(DesignContext(description, program, critique), k)]


def test_high_knees_short_of_the_height_raise_the_thigh_lift_and_keep_its_target():
    # Thighs at 45° (wanted 60°): the critic asks for lib.swing_hip_flexion toward 70° (1.22 rad); the canonical
    # asks 80° (1.4 rad) at weight 15. The fix keeps 1.4 and weighs it 15 × 2, the strong fix 15 × 4 without posture.
    ask = "march in place with high knees"
    fix, strong = _proposals(ask, "step_in_place_high_knees", _rules_critique(ask, hip_flexion_peak_deg=45.0))
    assert fix.weights["knee_lift"] == 30.0 and fix.weights["posture"] == 0.05  # joint_posture 0.1 halved
    assert "swing_hip_flexion(f, target=1.4)" in fix.source and "target=1.22" not in fix.source
    assert strong.weights["knee_lift"] == 60.0 and "posture" not in strong.weights  # it pulls the thighs down


def test_a_stand_on_one_leg_with_the_foot_down_weighs_the_stance_and_its_balance():
    ask = "stand on your right leg"
    fix, strong = _proposals(ask, "stand_right_leg", _rules_critique(ask, right_leg_stand=0.3, left_leg_stand=0.0))
    assert (fix.weights["one_leg"], fix.weights["balance"]) == (12.0, 12.0)  # 6 × 2 each
    assert (strong.weights["one_leg"], strong.weights["balance"]) == (24.0, 24.0)
    assert 'one_leg_stance(f, stance="right", lift=0.1)' in fix.source


def test_a_sideways_walk_short_of_its_course_or_turning_away_weighs_the_course_or_the_facing():
    ask = "walk sideways to the left"
    slow = _rules_critique(ask, lateral_drift_m=0.4, steps=8.0, stride_symmetry=1.0, cadence_spm=110.0)  # 0.1 m/s
    fix = _proposals(ask, "walk_sideways_left", slow, 1)[0]
    assert (fix.weights["course"], fix.weights["path"]) == (2.0, 10.0)  # 1 × 2, 5 × 2: the course, at 0.3 m/s
    turned = _rules_critique(ask, lateral_drift_m=1.6, heading_change_deg=35.0, steps=8.0, stride_symmetry=1.0,
                             cadence_spm=110.0)
    assert _proposals(ask, "walk_sideways_left", turned, 1)[0].weights["face"] == 6.0  # lib.heading_error, 3 × 2


def test_a_turn_on_the_spot_short_of_its_angle_weighs_the_turn_to_its_heading_not_a_rate():
    ask = "turn left on the spot"
    critique = _rules_critique(ask, heading_change_deg=40.0, steps=8.0)
    assert [(s.term, s.action) for s in critique.suggestions] == [("heading_error", "add"), ("yaw_rate", "remove")]
    fix = _proposals(ask, "turn_left_in_place", critique, 1)[0]
    assert fix.weights["turning"] == 4.0 and "yaw_rate" not in fix.weights  # 2 × 2, to the same end heading
    assert "heading_error(f, target=1.5708)" in fix.source


def test_an_add_never_lowers_a_height_the_program_asks_for():
    rough = canonical("walk_rough")  # lib.foot_clearance(f, target=0.08) at weight 20
    lower = Edit(Suggestion("foot_clearance", "add", "lift the swing foot clear", {"target": 0.05}), strength=2.0)
    kept = apply_edit(rough, lower)
    assert "target=0.08" in kept.source and kept.weights["foot_clearance"] == 40.0
    higher = apply_edit(rough, Edit(Suggestion("foot_clearance", "add", "lift higher", {"target": 0.1}), 2.0))
    assert "target=0.1)" in higher.source and higher.weights["foot_clearance"] == 20.0  # a new setting, same weight


@pytest.mark.parametrize(("ask", "terms"), [
    ("walk sideways to the left", {"course_velocity", "course_path", "heading_error", "feet_air_time"}),
    ("walk diagonally forward and to the right", {"course_velocity", "course_path", "heading_error"}),
    ("stand on your left leg", {"one_leg_stance", "stance_balance", "heading_error"}),
    ("march in place with high knees", {"swing_hip_flexion", "feet_air_time", "cadence"}),
    ("turn left 180 degrees on the spot", {"heading_error", "feet_air_time"}),
])
def test_the_starting_program_names_the_terms_of_the_motion_asked(ask, terms):
    program = library_program(targets_from_description(ask))
    assert terms <= set(program.weights)
    assert not {"velocity_tracking", "yaw_rate", "side_velocity"} & set(program.weights)  # they fight these motions
