"""Critics on real trajectories: physics descriptors (vectorized vs a plain loop), description rules, the builtin
critic's verdicts, and a model critic against a scripted local server, grounded by physics gates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fakeserver import ScriptedChatServer, chat_reply

from rewardloop.cli import main
from rewardloop.control.metrics import batch_metrics
from rewardloop.critic import BuiltinCritic, Critic, CriticConfig, Critique, make_critic, observe
from rewardloop.critic.critique import Issue
from rewardloop.critic.media import Media
from rewardloop.critic.physics import descriptor_arrays, physics_descriptors, targets_from_description
from rewardloop.critic.rules import judge
from rewardloop.errors import UserError
from rewardloop.models.base import Completion, Video
from rewardloop.models.client import RetryPolicy, make_backend
from rewardloop.sim.rollout import Rollouts, Simulator, random_controls, zero_controls

SMALL = CriticConfig(views=("side", "front"), keyframes=2, image_size=(64, 48))


@pytest.fixture(scope="module")
def motions(humanoid_flat):
    """Real humanoid motions (5 ms steps): an unpowered collapse, a short stand, and a push forward."""
    scene = humanoid_flat
    pushed = scene.initial_state.copy()
    pushed[1 + scene.model.nq] = 1.0  # pelvis x velocity 1 m/s at the start
    with Simulator(scene, nthread=1) as sim:
        return {"fall": sim.open_loop(zero_controls(scene, 1, 400)),      # 2 s: falls at about 1.6 s
                "stand": sim.open_loop(zero_controls(scene, 1, 60)),      # 0.3 s: still upright
                "push": sim.open_loop(zero_controls(scene, 1, 70), initial_state=pushed),  # 0.35 s, knees buckle
                "random": sim.open_loop(random_controls(scene, 3, 120, seed=1))}


def test_descriptors_match_a_plain_loop(humanoid_flat, motions):
    features = motions["random"].features(humanoid_flat)
    fast = descriptor_arrays(features)
    for b in range(3):
        knees, swing_top, pitch = [], [], []
        for t in range(features.batch_shape[1]):
            for side in ("left", "right"):
                if features[f"{side}_foot_contact"][b, t] > 0:
                    knees.append(features[f"{side}_knee_flexion"][b, t])
            up, h = features.torso_up[b, t], features.heading[b, t]
            pitch.append(math.degrees(math.atan2(up[0] * math.cos(h) + up[1] * math.sin(h), up[2])))
        for side in ("left", "right"):
            heights = [features[f"{side}_foot_height"][b, t] for t in range(features.batch_shape[1])
                       if features[f"{side}_foot_contact"][b, t] == 0]
            swing_top.append(max(heights) if heights else math.nan)
        assert fast["knee_stance_deg"][b] == pytest.approx(math.degrees(np.mean(knees)))
        assert fast["trunk_pitch_deg"][b] == pytest.approx(np.mean(pitch))
        np.testing.assert_allclose(fast["foot_clearance_m"][b], np.mean(swing_top))


def test_descriptors_of_a_fall(humanoid_flat, motions):
    features = motions["fall"].features(humanoid_flat)
    d = physics_descriptors(features, batch_metrics(features)[0])
    assert d["fell"] is True and 0.5 < d["fall_time_s"] < 2.0 and d["duration_s"] == 2.0  # 400 × 5 ms
    assert d["trunk_tilt_max_deg"] > 60 and d["min_height_fraction"] < 0.7  # lying down
    assert d["effort"] == 0.0  # zero controls


@pytest.mark.parametrize("description, expected", [
    ("walk forward on rough ground with an upright trunk", dict(locomotion=True, direction=1, upright=True,
                                                                 terrain="rough", high_steps=True)),
    ("walk backward slowly", dict(direction=-1, speed_mps=0.4)),
    ("run at 2.5 m/s with straight knees", dict(speed_mps=2.5, straight_knees=True)),
    ("turn left by 45 degrees while walking", dict(turn="left", turn_deg=45.0, locomotion=True)),
    ("stand still and balance", dict(locomotion=False, direction=0)),
    ("climb the stairs", dict(terrain="stairs", high_steps=True, locomotion=True)),
])
def test_targets_from_description(description, expected):
    targets = targets_from_description(description)
    assert {k: getattr(targets, k) for k in expected} == expected


def test_builtin_critic_fails_a_fall_with_an_issue_and_a_low_score(humanoid_flat, motions):
    critique = BuiltinCritic().critique("walk forward with an upright trunk", humanoid_flat, motions["fall"])
    fall_time = observe(humanoid_flat, motions["fall"]).descriptors["fall_time_s"]
    assert critique.success is False
    assert critique.score <= 3.0 * fall_time / 2.0  # fall cap: 3 × fall time / duration
    assert "fell" in critique.issues[0].problem and critique.issues[0].time_s == fall_time
    assert {("alive", "add"), ("upright", "increase")} <= {(s.term, s.action) for s in critique.suggestions}
    assert "rules over physics measurements" in critique.critic and "not a vision model" in critique.summary


def test_builtin_critic_asks_for_straight_knees_only_when_described(humanoid_flat, motions):
    knees = observe(humanoid_flat, motions["push"]).descriptors["knee_stance_deg"]
    assert knees > 25  # the push buckles the knees
    asked = BuiltinCritic().critique("walk forward with straight knees", humanoid_flat, motions["push"])
    assert any(i.part == "knees" for i in asked.issues)
    extension = [s for s in asked.suggestions if s.term == "knee_extension"]
    assert extension and extension[0].action == "add" and extension[0].params == {"stance_only": True}
    plain = BuiltinCritic().critique("walk forward", humanoid_flat, motions["push"])
    assert not any(s.term == "knee_extension" for s in plain.suggestions)


def test_the_builtin_critic_ties_motions_within_its_tie_whatever_their_faults(humanoid_flat, motions):
    class Scored(BuiltinCritic):  # the rules' verdicts stood in for, to set scores a few hundredths apart
        def critique_observation(self, description, observation, *, spec=None):
            score, success, faults = verdicts[observation.metrics.distance > 0.1]
            issues = tuple(Issue("legs", "a fault") for _ in range(faults))
            return Critique(success=success, score=score, issues=issues, summary="", critic="builtin")

    push, stand = observe(humanoid_flat, motions["push"]), observe(humanoid_flat, motions["stand"])
    assert push.metrics.distance > 0.1 > stand.metrics.distance
    verdicts = {True: (9.93, True, 0), False: (9.99, False, 1)}  # meets every check, 0.06 below
    assert Scored().compare("walk forward", push, stand) == "tie"  # the loop's metric decides
    verdicts = {True: (9.93, True, 1), False: (9.99, True, 2)}
    assert Scored().compare("walk forward", push, stand) == "tie"  # fewer faults do not decide either
    verdicts = {True: (9.6, True, 0), False: (9.88, False, 1)}
    assert Scored().compare("walk forward", push, stand) == "b"  # beyond the tie, the score decides
    assert Scored().compare("walk forward", stand, push) == "a"


def test_builtin_critic_judges_standing_and_fails_standing_for_a_walk(humanoid_flat, motions):
    stand = BuiltinCritic().critique("stand still", humanoid_flat, motions["stand"])
    # upright, in place, no step: every physics check passes; unpowered, its hands drop 0.4 m in 0.3 s, which a
    # person standing still does not do (the standing checks of composure)
    assert not stand.success and stand.score >= 8.0 and [i.part for i in stand.issues] == ["arms"]
    walk = BuiltinCritic().critique("walk forward", humanoid_flat, motions["stand"])
    assert not walk.success and walk.score <= 3.0 and "asks to move forward" in walk.issues[0].problem
    backward = BuiltinCritic().critique("walk backward at 0.5 m/s", humanoid_flat, motions["push"])
    assert ("forward_velocity", "remove") in {(s.term, s.action) for s in backward.suggestions}
    assert BuiltinCritic().compare("walk forward", observe(humanoid_flat, motions["push"]),
                                   observe(humanoid_flat, motions["stand"])) == "a"


def test_builtin_critic_judges_the_gait_of_a_walk_on_every_body(myolegs_flat):
    with Simulator(myolegs_flat, nthread=1) as sim:  # 0.4 s of a passive myolegs: sags, takes no stride
        motion = sim.open_loop(zero_controls(myolegs_flat, 1, 200))
    observation = observe(myolegs_flat, motion)
    assert observation.gait is not None and np.isnan(observation.gait.measures.arm_excursion[0])  # no arms
    walk = BuiltinCritic().critique_observation("walk forward", observation)
    assert not walk.success and any(i.part == "legs" and i.problem.startswith("no strides") for i in walk.issues)
    assert {"feet_air_time", "cadence_band"} <= {s.term for s in walk.suggestions}
    stand = BuiltinCritic().critique_observation("stand still", observation)
    assert not any(i.problem.startswith("no strides") for i in stand.issues)  # no gait asked, none judged


def test_every_gait_detector_is_a_check_graded_in_fault_units():
    from rewardloop.critic.gait import DETECTORS
    from rewardloop.critic.gait_rules import GAIT_CHECKS, GAIT_WEIGHTS, WAIVERS, _grade
    from rewardloop.critic.physics import GAIT_STYLES

    assert set(DETECTORS) - {"standing_still"} <= set(GAIT_CHECKS) == set(GAIT_WEIGHTS)  # still: the no-stride check
    assert {style for styles in WAIVERS.values() for style in styles} <= set(GAIT_STYLES)
    # Target 40, fault 50: u = (x - 40) / 10 fault units, score 2^-u; nothing for being better than the target.
    assert [_grade(x, 40.0, 50.0) for x in (30.0, 40.0, 50.0, 60.0, 1000.0)] == [1.0, 1.0, 0.5, 0.25, 2.0 ** -10]
    # A correlation r = 0.2 against a target of 0.85 with the fault at 0.5: u = 0.65 / 0.35 below the target.
    assert _grade(-0.2, -0.85, -0.5) == pytest.approx(2.0 ** -(0.65 / 0.35))
    assert _grade(float("nan"), 40.0, 50.0) == 2.0 ** -10


def test_critique_round_trips_and_rejects_bad_scores():
    data = {"success": False, "score": 4, "issues": [{"part": "torso", "problem": "leans", "time": 1.5}],
            "suggestions": [{"term": "upright", "action": "increase", "reason": "lean"}], "summary": "meh"}
    critique = Critique.from_dict(data, critic="openai:m")
    assert critique.issues[0].time_s == 1.5 and Critique.from_dict(critique.to_dict()) == critique
    with pytest.raises(UserError, match="action must be one of"):
        Critique.from_dict({**data, "suggestions": [{"term": "x", "action": "double", "reason": ""}]})


def _critique_json(success: bool, score: float) -> str:
    return json.dumps({"success": success, "score": score, "summary": "looks great",
                       "issues": [], "suggestions": [{"term": "upright", "action": "increase", "reason": "x"}]})


def test_model_critic_sees_keyframes_and_physics_and_is_overridden_by_a_fall(humanoid_flat, motions):
    with ScriptedChatServer([chat_reply(_critique_json(True, 9.0))]) as server:
        critic = make_critic(f"openai:vl@{server.base_url}", config=SMALL)
        critique = critic.critique("walk forward", humanoid_flat, motions["fall"])
    content = server.requests[0]["messages"][0]["content"]
    prompt = content[0]["text"]
    assert "- fell = True" in prompt and "walk forward" in prompt and "ground truth" in prompt
    captions = [c["text"] for c in content[1:] if c["type"] == "text"]
    assert captions == ["t = 0.00 s, side view", "t = 0.00 s, front view", "t = 2.00 s, side view",
                        "t = 2.00 s, front view"]  # 2 moments × 2 views, first and last frame
    assert sum(c["type"] == "image_url" for c in content) == 4
    # The model said 9/10 and success; physics says it fell: success withdrawn, score capped, issue added.
    assert critique.success is False and critique.score <= 3.0 and critique.critic == "openai:vl"
    assert "fell" in critique.issues[0].problem and "score 9 ->" in critique.overrides[0]


def test_model_critic_sends_video_to_a_video_backend(humanoid_flat, motions, tmp_path):
    video = tmp_path / "motion.mp4"
    video.write_bytes(b"not really a video")

    class VideoModel:
        name, accepts_video = "fake:video", True

        def __init__(self):
            self.sent = []

        def complete(self, messages, *, schema=None, temperature=0.0, max_tokens=2048):
            self.sent.extend(messages[0].parts)
            return Completion(_critique_json(True, 8.0), json.loads(_critique_json(True, 8.0)))

    model = VideoModel()
    critique = Critic(model, SMALL).critique("stand still", humanoid_flat, motions["stand"], Media(video=video))
    assert [type(p) for p in model.sent[1:]] == [Video] and critique.score == 8.0 and critique.summary == "looks great"
    assert critique.overrides == ("standing unlike people's (flailing_arms): success withdrawn",)  # limp arms drop


def test_compare_counts_only_consistent_answers(humanoid_flat, motions):
    push, stand = observe(humanoid_flat, motions["push"]), observe(humanoid_flat, motions["stand"])

    def prefers_first(request):  # a positional bias: always "1" -> inconsistent when swapped
        return chat_reply('{"better": "1", "reason": "first looks better"}')

    def prefers_faster(request):  # consistent: the motion with the larger distance
        text = request["messages"][0]["content"][0]["text"]
        first, second = (float(part.split("- distance_m = ")[1].split()[0])
                         for part in text.split("## Motion 2")[:2])
        return chat_reply(json.dumps({"better": "1" if first > second else "2", "reason": "distance"}))

    for responder, verdict in ((prefers_first, "tie"), (prefers_faster, "a")):
        with ScriptedChatServer(responder) as server:
            critic = make_critic(f"openai:vl@{server.base_url}", config=SMALL, retry=RetryPolicy(1))
            assert critic.compare("walk forward", push, stand) == verdict
        assert len(server.requests) == 2  # asked twice, order swapped


def test_compare_lets_physics_decide_a_fall_without_asking(humanoid_flat, motions):
    fall, stand = observe(humanoid_flat, motions["fall"]), observe(humanoid_flat, motions["stand"])
    with ScriptedChatServer([]) as server:
        critic = make_critic(make_backend(f"openai:vl@{server.base_url}"), config=SMALL)
        assert critic.compare("stand still", fall, stand) == "b"
    assert server.requests == []


def test_resensed_rollouts_reproduce_the_steps_own_sensors(humanoid_flat, motions, tmp_path, capsys):
    motion = motions["random"]
    np.testing.assert_allclose(motion.resensed(humanoid_flat).sensordata, motion.sensordata, rtol=1e-9, atol=1e-9)
    old = Rollouts(motion.initial_state[:1], motion.state[:1], motion.sensordata[:1, :, :-6], motion.control[:1])
    old.save(tmp_path / "old.npz")  # as saved before the scene gained its last sensors (the hands)
    command = ["critique", "--trajectory", str(tmp_path / "old.npz"), "--description", "walk forward", "--json"]
    assert main(command) == 0
    critique = json.loads(capsys.readouterr().out)
    fresh = BuiltinCritic().critique("walk forward", humanoid_flat, Rollouts(*(a[:1] for a in (
        motion.initial_state, motion.state, motion.sensordata, motion.control))))
    assert critique["score"] == fresh.score


def test_critique_command(tmp_path, capsys, motions):
    motions["fall"].save(tmp_path / "fall.npz")
    command = ["critique", "--trajectory", str(tmp_path / "fall.npz"), "--description", "walk forward"]
    assert main([*command, "--json"]) == 0
    critique = json.loads(capsys.readouterr().out)
    assert critique["success"] is False and "fell" in critique["issues"][0]["problem"]
    assert main(command) == 0  # the gait analysis against people's walking, then the critique as text
    text = capsys.readouterr().out
    for expected in ("joint (sagittal)", "hip flexion", "human normal", "cadence (steps/min)", "Schwartz",
                     "detector", "kick", "flailing_arms", "standing_still  YES",
                     "not a success, score", "  - whole body: the body fell at"):
        assert expected in text, expected
    (tmp_path / "trajectory").mkdir()  # a candidate's trajectory folder works as well as its .npz
    motions["fall"].save(tmp_path / "trajectory" / "trajectory.npz")
    assert main(["critique", "--trajectory", str(tmp_path / "trajectory"), "--description", "walk", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == critique
    assert main(["critique", "--trajectory", str(tmp_path / "fall.npz"), "--description", "walk",
                 "--model", "gpt4"]) == 2
    assert "unknown model backend 'gpt4'" in capsys.readouterr().err


@pytest.mark.parametrize(("forward", "left", "turn", "gates", "score_range"), [
    (0.0, 3.0, 2.0, [], (9.0, 10.0)),            # 3 m left in 10 s facing ahead: done
    (4.8, 0.0, 0.0, ["speed"], (0.0, 3.0)),      # the forward walk it was misread as: 4.8 m forward, none left
    (3.0, 2.0, 0.0, ["speed"], (0.0, 3.0)),      # a diagonal: 2 - 3 = -1 m on course
    (0.0, 3.0, 80.0, ["facing"], (0.0, 3.0)),    # turned to face the left and walked there
])
def test_the_critic_judges_a_sideways_walk_on_its_course_and_facing(forward, left, turn, gates, score_range):
    targets = targets_from_description("walk sideways to the left")
    descriptors = {"duration_s": 10.0, "fell": False, "distance_m": forward, "speed_mps": forward / 10.0,
                   "lateral_drift_m": left, "heading_change_deg": turn, "steps": 20, "cadence_spm": 110.0,
                   "stride_symmetry": 0.9}
    judgement = judge(targets, descriptors)
    assert [gate.check for gate in judgement.gates] == gates
    assert score_range[0] <= judgement.score <= score_range[1] and judgement.success == (not gates)
    if gates == ["facing"]:
        facing = next(f for f in judgement.findings if f.check == "facing")
        assert facing.score == 0.0 and facing.suggestions[0].term == "heading_error"


@pytest.mark.parametrize(("left_alone", "right_alone", "gated", "one_leg_score"), [
    (0.0, 0.8, False, 1.0),     # on the right foot alone 80 % of the time: done
    (0.8, 0.0, True, 0.0),      # on the other foot
    (0.0, 0.0, True, 0.0),      # both feet down: the plain stand the spec once misread it as
    (0.0, 0.3, False, 0.5),     # 30 % of the time: half marks, a suggestion naming the stance terms
])
def test_the_critic_judges_a_stand_on_the_named_leg(left_alone, right_alone, gated, one_leg_score):
    targets = targets_from_description("stand on your right leg")
    descriptors = {"duration_s": 10.0, "fell": False, "distance_m": 0.0, "speed_mps": 0.0, "lateral_drift_m": 0.05,
                   "heading_change_deg": 0.0, "steps": 1, "left_leg_stand": left_alone, "right_leg_stand": right_alone}
    judgement = judge(targets, descriptors)
    assert ("one_leg" in [gate.check for gate in judgement.gates]) == gated
    finding = next(f for f in judgement.findings if f.check == "one_leg")
    assert finding.score == pytest.approx(one_leg_score)
    assert not finding.suggestions or finding.suggestions[0].term == "one_leg_stance"
    assert judgement.score <= 3.0 or not gated


@pytest.mark.parametrize(("text", "descriptors", "check", "score"), [
    ("jog forward", {"flight_fraction": 0.0}, "flight", 0.0),               # a 1.35 m/s walk: no flight
    ("jog forward", {"flight_fraction": 0.03}, "flight", 0.6),              # 0.03 / 0.05
    ("jog forward", {"flight_fraction": 0.12}, "flight", 1.0),
    ("march in place with high knees", {"hip_flexion_peak_deg": 34.0}, "knee_height", 34.0 / 60.0),
    ("march in place with high knees", {"hip_flexion_peak_deg": 66.0}, "knee_height", 1.0),
])
def test_the_critic_needs_a_flight_phase_for_a_jog_and_high_thighs_for_high_knees(text, descriptors, check, score):
    base = {"duration_s": 10.0, "fell": False, "distance_m": 13.5, "speed_mps": 1.35, "lateral_drift_m": 0.0,
            "heading_change_deg": 0.0, "steps": 20, "cadence_spm": 120.0, "stride_symmetry": 1.0}
    if "march" in text:
        base.update(distance_m=0.0, speed_mps=0.0)
    judgement = judge(targets_from_description(text), {**base, **descriptors})
    finding = next(f for f in judgement.findings if f.check == check)
    assert finding.score == pytest.approx(score) and finding.weight > 0
    assert judgement.success is False or score == 1.0  # short of either, never a success


def test_a_diagonal_walk_is_not_judged_against_people_walking_straight_ahead():
    from rewardloop.critic.rules import is_walking

    assert is_walking(targets_from_description("walk forward"))
    assert not is_walking(targets_from_description("walk diagonally forward and to the left"))
    assert not is_walking(targets_from_description("side-step to the right"))
