"""One reading of a description: the task spec that the metric, success rule, canonical reward and critic share.

A table of descriptions in many phrasings; each row checks the task's metric, its success rule on a synthetic
TaskMetrics that does the task and on one that does not, the canonical reward, and that the critic's Targets
agree with the task. Then the new metrics on hand-computed and real trajectories, the model reader against a
scripted local server, and the spec print of `rewardloop run`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import socket

import numpy as np
import pytest
from fakeserver import ScriptedChatServer, chat_reply, error_reply

from rewardloop.cli import build_parser, main
from rewardloop.control.metrics import STAY_RADIUS_M, TaskMetrics, batch_metrics, touchdowns
from rewardloop.critic.physics import targets_from_description, targets_from_spec
from rewardloop.errors import UserError
from rewardloop.loop.commands import preflight, understand
from rewardloop.loop.config import ModelSettings, RunConfig
from rewardloop.models.client import RetryPolicy
from rewardloop.reward.canonical import CANONICAL, canonical
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Simulator, zero_controls
from rewardloop.sim.scene import WALKING_START_SPEED
from rewardloop.spec import SPEC_SCHEMA, TaskSpec, read_spec, spec_from_description
from rewardloop.tasks import TASKS, Task, task_from_description

STILL = dict(distance=0.02, speed=0.002, heading_change=0.01, steps=0, backward_distance=-0.02, right_turn=-0.01,
             stay_fraction=1.0, step_rate_in_place=0.0)
"""A body that stood still for 10 s."""
FORWARD = dict(distance=5.0, speed=0.5, steps=16, backward_distance=-5.0, stay_fraction=0.05, step_rate_in_place=0.1)
BACKWARD = dict(distance=-3.0, speed=-0.3, steps=14, backward_distance=3.0, stay_fraction=0.08, step_rate_in_place=0.1)
LEFT = dict(distance=3.0, speed=0.3, heading_change=1.8, right_turn=-1.8, steps=15, backward_distance=-3.0,
            travel=3.0)
RIGHT = dict(distance=3.0, speed=0.3, heading_change=-1.8, right_turn=1.8, steps=15, backward_distance=-3.0,
             travel=3.0)
SPIN_LEFT = dict(LEFT, distance=0.1, speed=0.01, backward_distance=-0.1, travel=0.2)
"""A turn on the spot: 103° left, ending 0.2 m from where it began."""
SPIN_RIGHT = dict(RIGHT, distance=0.1, speed=0.01, backward_distance=-0.1, travel=0.2)
MARCH = dict(distance=0.1, speed=0.01, steps=18, backward_distance=-0.1, stay_fraction=0.9, step_rate_in_place=1.8)
"""Stepping on the spot: 18 touchdowns in 10 s while the pelvis stays within 0.5 m."""
JOG = dict(MARCH, flight_fraction=0.1)
"""Jogging on the spot: the march with both feet off the ground 10 % of the time."""
HIGH_JOG = dict(JOG, hip_flexion_peak=1.2)
"""The jog with both thighs up to 69° (1.2 rad)."""
HIGH_MARCH = dict(MARCH, hip_flexion_peak=1.1)
"""The march with both thighs up to 63° (1.1 rad): a march lifts the knees (the spec reads it as high knees)."""


def metrics(values: dict, **changes) -> TaskMetrics:
    """A 10-s TaskMetrics with the given values (others zero), no fall unless changed."""
    base = dict(duration=10.0, distance=0.0, speed=0.0, fell=False, fall_time=None, lateral_drift=0.0,
                heading_change=0.0, steps=0)
    return TaskMetrics(**{**base, **values, **changes})


# text, metric, success, target, canonical, a motion that does it, one that does not, critic's direction, turn
ROWS = [
    ("step backward for a few metres", "backward_distance", 2.0, None, "walk_backward", BACKWARD, FORWARD, -1, None),
    ("walk backwards", "backward_distance", 2.0, None, "walk_backward", BACKWARD, STILL, -1, None),
    ("move in reverse", "backward_distance", 2.0, None, "walk_backward", BACKWARD, FORWARD, -1, None),
    ("back up 2.5 metres", "backward_distance", 2.5, None, "walk_backward", BACKWARD, dict(BACKWARD, distance=-2.0,
                                                                                          backward_distance=2.0), -1,
     None),
    ("walk backward slowly with an upright trunk", "backward_distance", 2.0, None, "walk_backward", BACKWARD, FORWARD,
     -1, None),
    ("hold your balance without moving", "stay_fraction", 1.0, None, "stand", STILL, FORWARD, 0, None),
    ("stand still", "stay_fraction", 1.0, None, "stand", STILL, dict(STILL, stay_fraction=0.6), 0, None),
    ("balance in place", "stay_fraction", 1.0, None, "stand", STILL, MARCH, 0, None),
    ("stay where you are and do not walk", "stay_fraction", 1.0, None, "stand", STILL, FORWARD, 0, None),
    ("remain standing on the spot", "stay_fraction", 1.0, None, "stand", STILL, BACKWARD, 0, None),
    ("turn right 45 degrees", "right_turn", math.radians(30), None, "turn_right_in_place",
     dict(SPIN_RIGHT, heading_change=-0.8, right_turn=0.8), SPIN_RIGHT, 0, "right"),  # 46°, not 103°: within 15°
    ("make a right turn while walking", "right_turn", math.pi / 2, None, "turn_right", RIGHT, FORWARD, 1, "right"),
    ("walk and turn 90° to the right", "right_turn", math.pi / 2, None, "turn_right", RIGHT, LEFT, 1, "right"),
    ("rotate clockwise a quarter turn", "right_turn", math.radians(75), None, "turn_right_in_place", SPIN_RIGHT,
     STILL, 0, "right"),
    ("make a left turn", "heading_change", math.radians(75), None, "turn_left_in_place", SPIN_LEFT, SPIN_RIGHT, 0,
     "left"),
    ("turn left by 30 degrees while walking", "heading_change", math.radians(30), None, "turn_left", LEFT, STILL, 1,
     "left"),
    ("curve gently to the left", "heading_change", math.radians(75), None, "turn_left_in_place", SPIN_LEFT, RIGHT, 0,
     "left"),
    ("turn left on the spot", "heading_change", math.radians(75), None, "turn_left_in_place", SPIN_LEFT, LEFT, 0,
     "left"),  # a walking turn is not one on the spot
    ("turn left on the spot", "heading_change", math.radians(75), None, "turn_left_in_place", SPIN_LEFT,
     dict(SPIN_LEFT, heading_change=4.2), 0, "left"),  # 241°: turning on and on is not a quarter turn
    ("turn around in place", "heading_change", math.radians(165), None, "turn_left_in_place",
     dict(SPIN_LEFT, heading_change=3.2), SPIN_LEFT, 0, "left"),  # a half turn (183°) on the picked side; 103° is not
    ("walk in a counterclockwise circle", "heading_change", math.pi / 2, None, "turn_left", LEFT, RIGHT, 1, "left"),
    ("jog on the spot", "step_rate_in_place", 1.0, None, "step_in_place", JOG, MARCH, 0, None),  # a march: no flight
    ("march in place", "step_rate_in_place", 1.0, None, "step_in_place_high_knees", HIGH_MARCH, MARCH, 0, None),
    ("step in place", "step_rate_in_place", 1.0, None, "step_in_place", MARCH, STILL, 0, None),
    ("run on the spot with high knees", "step_rate_in_place", 1.0, None, "step_in_place_high_knees", HIGH_JOG, JOG, 0,
     None),
    ("march in place with high knees", "step_rate_in_place", 1.0, None, "step_in_place_high_knees", HIGH_MARCH,
     dict(MARCH, hip_flexion_peak=0.6), 0, None),  # the knees of a walk (34°) are not high knees
    ("walk at 0.6 m/s", "speed", -0.12, 0.6, "walk", dict(FORWARD, speed=0.55), dict(FORWARD, speed=1.2), 1, None),
    ("walk slowly at 0.8 metres per second", "speed", -0.16, 0.8, "walk", dict(FORWARD, speed=0.9), FORWARD, 1, None),
    ("walk at 3 km/h", "speed", -0.167, 0.833, "walk", dict(FORWARD, speed=0.8), dict(FORWARD, speed=0.3), 1, None),
    ("move backwards at 0.3 m/s", "speed", -0.1, -0.3, "walk_backward", BACKWARD, dict(FORWARD, speed=0.3), -1, None),
    ("walk 5 metres forward", "distance", 5.0, None, "walk", FORWARD, dict(FORWARD, distance=4.0), 1, None),
    ("walk forward without limping", "distance", 2.0, None, "walk", FORWARD, BACKWARD, 1, None),
    ("walk with stiff knees", "distance", 2.0, None, "walk_straight_knees", FORWARD, STILL, 1, None),
]


@pytest.mark.parametrize(("text", "metric", "success", "target", "reward", "does", "does_not", "direction", "turn"),
                         ROWS, ids=[row[0] for row in ROWS])
def test_every_phrasing_gets_a_metric_success_rule_reward_and_critic_that_fit(
        text, metric, success, target, reward, does, does_not, direction, turn):
    task = task_from_description(text, "humanoid")
    assert (task.metric, task.canonical, task.target) == (metric, reward, target)
    assert task.success == pytest.approx(success, abs=1e-3)
    assert task.achieved(metrics(does)) and not task.achieved(metrics(does_not))
    assert not task.achieved(metrics(does, fell=True, fall_time=9.0))  # a fall is never a success
    targets = targets_from_description(text)  # the critic reads the same spec
    assert (targets.direction, targets.turn, targets.locomotion) == (direction, turn, direction != 0)
    assert targets.stay_in_place == (reward == "stand") and targets.step_in_place == reward.startswith("step_in")
    assert targets == targets_from_spec(task.understood)
    assert reward in CANONICAL and canonical(reward).weights  # the canonical program validates


@pytest.mark.parametrize("name", list(TASKS))
def test_built_in_descriptions_keep_their_metric_and_canonical_reward(name):
    builtin = TASKS[name]
    task = task_from_description(builtin.description, builtin.scene.body, builtin.scene.terrain)
    assert (task.metric, task.success, task.canonical, task.target) == (builtin.metric, builtin.success,
                                                                        builtin.canonical, builtin.target)
    assert task.scene == builtin.scene  # injury and the walking start too


def test_targets_keep_what_the_critic_reads():
    t = targets_from_description("run fast uphill with straight knees in a straight line, limping")
    assert (t.speed_mps, t.terrain, t.straight_knees, t.straight_line, t.styles) == (
        2.0, "slope", True, True, ("limp", "stiff-knee"))
    assert "injured" in t.understood
    assert targets_from_description("jog on the spot").speed_mps is None  # no travel, no speed to judge
    assert targets_from_description("walk slowly").speed_mps == 0.4  # a pace without a number
    assert targets_from_description("turn the head to the left").turn is None  # a head turn, not a body turn
    assert targets_from_description("turn left on a 5 degree slope").turn_deg == 90.0  # 5° is the slope's


@pytest.mark.parametrize(("text", "fields"), [
    ("stand still and do not lean forward", dict(stay_in_place=True, direction="none", upright=True)),
    ("move both arms", dict(direction="none", stay_in_place=False)),  # no travel word: not travel, not "stay"
    ("climb the stairs with 0.08 m steps", dict(direction="forward", distance_m=None, terrain="stairs")),
    ("walk 4 metres along a 1 m wide path", dict(distance_m=4.0)),
    ("walk at 2 mph", dict(speed_mps=0.894)),
    ("walk without limping", dict(injured=False, styles=(), symmetric=True)),
    ("walk back and forth", dict(direction="forward")),
    ("jump forward", dict(direction="forward")),
    ("limp forward", dict(direction="forward", styles=("limp",))),  # a gait verb with a direction travels
    ("shuffle along the corridor", dict(direction="forward", styles=("shuffle",))),
    ("hobble to the door", dict(direction="forward", styles=("limp",))),
    ("crouch down", dict(direction="none", styles=("crouch",))),
    ("walk forward without moving the arms", dict(direction="forward", stay_in_place=False, step_in_place=False)),
    ("walk forward without moving your arms much", dict(direction="forward", stay_in_place=False)),
    ("stand still and do not move your head", dict(direction="none", stay_in_place=True)),
])
def test_rule_reader_edge_cases(text, fields):
    spec = spec_from_description(text)
    assert {k: getattr(spec, k) for k in fields} == fields


@pytest.mark.parametrize(("text", "start"), [
    ("walk forward", WALKING_START_SPEED), ("walk and turn right", WALKING_START_SPEED), ("turn right", 0.0),
    ("walk backwards", 0.0), ("stand still", 0.0), ("jog on the spot", 0.0), ("wave both arms", 0.0)])
def test_only_forward_walks_and_walking_turns_start_walking(text, start):
    assert task_from_description(text, "humanoid").scene.start_speed == start


def _features(x: np.ndarray, height: np.ndarray, left: np.ndarray, right: np.ndarray, dt: float = 0.1) -> Features:
    """A [B, T] batch from [B, T] pelvis x (m), pelvis height (m) and foot contacts (0/1); standing height 1 m."""
    b, t = x.shape
    zeros = np.zeros((b, t))
    arrays = {"time": np.broadcast_to(np.arange(t) * dt, (b, t)).copy(), "heading": zeros.copy(),
              "root_pos": np.stack([x, zeros, height], axis=-1), "root_height": height.copy(),
              "nonfoot_contact": zeros.copy(), "left_foot_contact": left, "right_foot_contact": right,
              "left_hip_flexion": zeros.copy(), "right_hip_flexion": zeros.copy()}
    return Features(arrays, {"dt": dt, "standing_height": 1.0})


def test_in_place_metrics_match_hand_computation_and_a_plain_loop():
    t = np.arange(20)  # 2 s at 0.1 s
    x = np.stack([-0.5 * t * 0.1,                   # backward at 0.5 m/s: leaves 0.25 m after 0.6 s (sample 6)
                  np.where(t < 10, 0.0, 0.1 * (t - 9)),  # still for 1 s, then drifts: 0.3 m at sample 12
                  np.zeros(20)])                    # still, but falls at sample 15
    height = np.ones((3, 20))
    height[2, 15:] = 0.5
    tap = (t % 4 < 2).astype(float)  # down 0.2 s, up 0.2 s: touchdowns at samples 4, 8, 12, 16
    feet = np.stack([tap, tap, tap])
    m = batch_metrics(_features(x, height, feet, np.zeros((3, 20))))
    # the first sample beyond 0.25 m or fallen: 6 (0.30 m), 12 (0.3 m), 15 (pelvis at half height)
    assert [r.stay_fraction for r in m] == [6 / 20, 12 / 20, 15 / 20]
    assert m[0].backward_distance == pytest.approx(0.95) and m[0].speed == pytest.approx(-0.475)  # 0.95 m in 2 s
    # within 0.5 m: row 0 leaves at sample 11 (0.55 m), touchdowns at 4, 8 -> 2 in 2 s = 1 step/s; row 1 leaves at
    # sample 15 (0.6 m) and row 2 falls at 15, touchdowns at 4, 8, 12 -> 1.5 steps/s
    assert [r.step_rate_in_place for r in m] == pytest.approx([1.0, 1.5, 1.5])
    for b in range(3):  # the same by a plain loop over time
        held = next((i for i in range(20) if abs(x[b, i] - x[b, 0]) > STAY_RADIUS_M or height[b, i] < 0.6), 20)
        assert m[b].stay_fraction == held / 20
        assert m[b].steps == int(touchdowns(feet[b:b + 1], 0.1)[0])


@pytest.fixture(scope="module")
def pushed(humanoid_flat):
    """Real humanoid motions of 0.3 s (5-ms steps, no control): at rest, pushed forward at 2 m/s, backward at
    1.5 m/s (the pelvis' initial x velocity)."""
    scene, nq = humanoid_flat, humanoid_flat.model.nq
    out = {}
    with Simulator(scene, nthread=1) as sim:
        for name, speed in (("rest", 0.0), ("forward", 2.0), ("backward", -1.5)):
            state = scene.initial_state.copy()
            state[1 + nq] = speed
            out[name] = batch_metrics(sim.open_loop(zero_controls(scene, 1, 60), initial_state=state)
                                      .features(scene))[0]
    return out


@pytest.mark.parametrize(("text", "achieved_by"), [
    ("stand still", {"rest"}), ("walk forward at 2 m/s", {"forward"}), ("move in reverse at 1.5 m/s", {"backward"}),
    ("step backward", set())])  # 0.46 m of 2 m
def test_success_rules_on_real_motions(pushed, text, achieved_by):
    task = task_from_description(text, "humanoid")
    assert {name for name, m in pushed.items() if task.achieved(m)} == achieved_by


def test_tasks_with_specs_round_trip_and_old_records_still_load():
    task = task_from_description("move backwards at 0.3 m/s on rough ground", "myolegs", "rough")
    assert task.spec is not None and task.spec.terrain == "rough" and task.spec.reader == "rules"
    assert Task.from_dict(json.loads(json.dumps(task.to_dict()))) == task  # task.json, read back on resume
    old = {k: v for k, v in TASKS["walk-flat"].to_dict().items() if k not in ("target", "spec")}
    assert Task.from_dict(old) == TASKS["walk-flat"]  # a run directory from before the spec
    stored = metrics(FORWARD).to_dict()
    for name in ("backward_distance", "right_turn", "stay_fraction", "step_rate_in_place"):
        stored.pop(name)
    assert TaskMetrics(**stored).stay_fraction == 0.0  # a trajectory.json from before the new metrics


def test_bad_specs_and_tasks_say_what_is_wrong():
    with pytest.raises(UserError, match="stay_in_place and step_in_place exclude each other"):
        TaskSpec(direction="none", stay_in_place=True, step_in_place=True)
    with pytest.raises(UserError, match="direction must be one of forward, backward, none, got 'up'"):
        TaskSpec(direction="up")
    with pytest.raises(UserError, match="unknown fields: speed"):
        TaskSpec.from_dict({"speed": 1.0})
    with pytest.raises(UserError, match="success must be <= 0"):
        dataclasses.replace(task_from_description("walk at 1 m/s", "humanoid"), success=0.5)
    with pytest.raises(UserError, match="description is empty"):
        spec_from_description("  ")


def _answer(**changes) -> str:
    spec = {"direction": "none", "speed_mps": None, "pace": "run", "distance_m": None, "turn": None, "turn_deg": 90,
            "stay_in_place": False, "step_in_place": True, "styles": ["high-knees"], "posture": ["upright"],
            "injured": False, "terrain": None, "unread": []}
    return json.dumps({**spec, **changes})


NO_WAIT = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0)


def test_a_model_designer_writes_the_spec_against_the_schema():
    with ScriptedChatServer([chat_reply(_answer())]) as server:
        spec, note = read_spec("do the running man dance", f"openai:tiny@{server.base_url}", retry=NO_WAIT)
    assert note is None and spec.reader == "openai:tiny" and spec.step_in_place and spec.upright
    assert "do the running man dance" in json.dumps(server.requests[0])
    task = task_from_description("do the running man dance", "humanoid", spec=spec)
    assert (task.metric, task.canonical) == ("step_rate_in_place", "step_in_place_high_knees")
    assert set(SPEC_SCHEMA["required"]) == set(json.loads(_answer()))


@pytest.mark.parametrize("reply", [
    "I think the body should jog.",                     # no JSON
    _answer(direction="sideways"),                      # not in the schema
    _answer(stay_in_place=True),                        # both in place: inconsistent
])
def test_an_unusable_model_answer_falls_back_to_the_rules(reply):
    with ScriptedChatServer(lambda request: chat_reply(reply)) as server:
        spec, note = read_spec("walk backwards", f"openai:tiny@{server.base_url}", retry=NO_WAIT)
    assert spec == dataclasses.replace(spec_from_description("walk backwards"), model_failure=spec.model_failure)
    assert spec.direction == "backward" and spec.model_failure and spec.model_failure in note
    assert note.startswith("openai:tiny gave no usable task spec")
    assert spec.describe().startswith("travel backward (read by rules: the model's reading failed: ")


def test_a_failed_model_call_falls_back_to_the_rules_and_understood_says_why(capsys):
    # A server that takes the request and cuts its answer (llama-cpp-python past its context), and one that errs.
    for reply, why in ((chat_reply("{}", cut_after=0), "openai:tiny: the server ended its answer early"),
                       (error_reply(500, "model crashed"), "openai:tiny answered HTTP 500: model crashed")):
        with ScriptedChatServer(lambda request, reply=reply: reply) as server:
            config = RunConfig(designer=f"openai:tiny@{server.base_url}", models=ModelSettings(retry=NO_WAIT))
            args = build_parser().parse_args(["run", "walk backwards at 0.5 m/s"])
            task = understand(args, task_from_description(args.description, "humanoid"), config)
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith(f"understood: travel backward at 0.5 m/s (read by rules: the model's reading failed: "
                                f"{why}") and task.target == -0.5


def test_a_server_that_cuts_its_first_answer_passes_preflight_but_an_unreachable_one_does_not(tmp_path, capsys):
    # The first answer (the preflight's) is cut after the 200 and so is the next (the spec's): the server is
    # reachable, so the run may start, and the rules read the description.
    with ScriptedChatServer(lambda request: chat_reply("OK", cut_after=0)) as server:
        config = RunConfig(designer=f"openai:tiny@{server.base_url}", models=ModelSettings(retry=NO_WAIT))
        args = build_parser().parse_args(["run", "walk backwards at 0.5 m/s"])
        task = task_from_description(args.description, "humanoid")
        preflight(config, task)
        understand(args, task, config)
    assert len(server.requests) == 2
    out = capsys.readouterr().out
    assert "(read by rules: the model's reading failed: openai:tiny: the server ended its answer early" in out
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the socket closes
    code = main(["run", "walk forward", "--designer", f"openai:tiny@http://127.0.0.1:{port}/v1",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot reach" in err and list(tmp_path.iterdir()) == []


def test_run_prints_the_spec_it_understood_before_any_compute(capsys):
    args = argparse.Namespace(task=None, description="walk backwards at 0.5 m/s", body="humanoid", terrain="flat")
    task = understand(args, task_from_description(args.description, "humanoid"), RunConfig())
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["understood: travel backward at 0.5 m/s (read by rules)",
                     "judged by: speed within 0.1 m/s of -0.5 m/s without a fall; "
                     "starts from the canonical reward 'walk_backward'"]
    assert task.target == -0.5
    with ScriptedChatServer([chat_reply(_answer())]) as server:  # a model designer reads it, with the run's settings
        config = RunConfig(designer=f"openai:tiny@{server.base_url}", models=ModelSettings(retry=NO_WAIT))
        dance = build_parser().parse_args(["run", "do the running man dance"])
        task = understand(dance, task_from_description(dance.description, "humanoid"), config)
    assert task.understood.reader == "openai:tiny" and task.metric == "step_rate_in_place"
    assert "(read by openai:tiny)" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "unread"), [
    ("walk to the left", ("left",)),                            # read as forward travel: the side is not
    ("kick with your right leg", ("kick with your right leg",)),  # no field holds a kick
    ("hop on your right leg", ("hop on your right leg",)),      # a hop travels: a one-leg pose is a stand's
    ("hop forward", ("hop",)),                                  # travels, but nothing checks a hop
    ("walk, then stop and stand still", ("stop and stand still",)),  # "stand" overruled by "walk"
    ("walk in a counterclockwise circle", ("circle",)),        # a 90° turn, not a circle
    ("walk forward without moving the arms", ("without moving the arms",)),  # a negation not read stays whole
    ("step backward for a few metres", ("few metres",)),        # no number: the default distance
    ("walk in a circle to the left", ("circle",)),             # its side is read, the circle is not
    ("turn around and walk back", ("walk back",)),              # a sequence: the half turn read, the return not
    ("squat down and stand back up", ("squat down",)),          # no field holds a squat; "stand back up" stays
    ("do ten squats", ("ten squats",)),
    ("walk 4 metres along a 1 m wide path", ("1 m wide path",)),
    ("turn the cube 45 degrees to the right, then toss it", ("toss",)),
    ("walk forward, then walk backward", ("forward", "then walk backward")),  # overruled by "backward"; one motion
    ("walk 3 metres forward and then turn left", ("then turn left",)),  # read as a turn throughout: the order is not
    ("stand still, then turn to the right", ("then turn to the right",)),
])
def test_the_rules_list_what_they_did_not_read(text, unread):
    spec = spec_from_description(text)
    assert spec.unread == unread
    verb = "was" if len(unread) == 1 else "were"
    assert spec.not_checked() == f"not checked: {', '.join(repr(p) for p in unread)} {verb} not understood"
    assert spec.describe().endswith(f"; not understood: {', '.join(repr(p) for p in unread)}")


@pytest.mark.parametrize("text", [
    "please walk forward.", "walk forward on flat ground despite a weakened leg, without falling",
    "march with high knees", "jog on the spot", "walk at 0.6 m/s for 5 metres", "stay where you are and do not walk",
    "walk forward without limping", "hold your balance without moving", "walk and turn 90° to the right",
    "climb the stairs with 0.08 m steps", "rotate clockwise a quarter turn", "crouch down",
    "take side steps to the left", "do high knees", "turn around", "face the other way", "strafe right",
    "the robot should walk naturally, like a person, keeping its trunk upright",
    *[task.description for task in TASKS.values()]])
def test_filler_and_every_word_the_rules_read_leave_nothing_unread(text):
    spec = spec_from_description(text)
    assert spec.unread == () and spec.not_checked() == ""
    assert "not understood" not in spec.describe()


def test_a_model_reader_lists_its_unread_phrases_and_they_round_trip():
    answer = _answer(direction="forward", step_in_place=False, styles=[], posture=[], pace=None,
                     unread=["Sideways  to the LEFT", "the", "sideways to the left"])
    with ScriptedChatServer([chat_reply(answer)]) as server:
        spec, note = read_spec("walk sideways to the left", f"openai:tiny@{server.base_url}", retry=NO_WAIT)
    assert note is None and spec.reader == "openai:tiny"
    assert spec.unread == ("sideways to the left",)  # spaces and case folded, filler alone and repeats dropped
    assert "unread" in SPEC_SCHEMA["required"] and "the phrases of the description" in json.dumps(server.requests[0])
    assert TaskSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    old = {k: v for k, v in spec.to_dict().items() if k != "unread"}  # a task.json from before `unread`
    assert TaskSpec.from_dict(old).unread == ()


def test_the_understood_line_says_what_was_not_understood(capsys):
    args = argparse.Namespace(task=None, description="stand on your right leg and kick", body="humanoid",
                              terrain="flat")
    understand(args, task_from_description(args.description, "humanoid"), RunConfig())
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "understood: stand on the right leg (read by rules); not understood: 'kick'"


@pytest.mark.parametrize(("text", "direction", "lateral"), [
    ("walk sideways to the left", "none", "left"),
    ("side-step to the right", "none", "right"),
    ("sidestep left for 3 metres", "none", "left"),
    ("shuffle sideways towards your right", "none", "right"),
    ("crab walk to the left", "none", "left"),
    ("move laterally, slowly, to the right", "none", "right"),
    ("walk sideways", "none", "either"),
    ("walk diagonally forward and to the left", "forward", "left"),
    ("walk diagonally to the right", "forward", "right"),
    ("walk forward and to the left", "forward", "left"),
    ("step backward and to the right", "backward", "right"),
    ("go forward-right", "forward", "right"),
    ("strafe left", "none", "left"),
    ("move to your left without turning", "none", "left"),    # the facing kept: sideways, not a turn
    ("walk to your right while facing forward", "none", "right"),
])
def test_the_rules_read_sideways_and_diagonal_travel(text, direction, lateral):
    spec = spec_from_description(text)
    assert (spec.direction, spec.lateral, spec.unread) == (direction, lateral, ())
    assert spec.locomotion and not (spec.stay_in_place or spec.step_in_place)
    assert ("sideways" if direction == "none" else "diagonally") in spec.describe()


@pytest.mark.parametrize(("text", "fields"), [
    # each was read as another motion: "strafe right" as no travel, "move to your left without turning" as a
    # forward walk, "turn around" as a stay in place, the "back" of "stand back up" as a backward walk
    ("strafe right", dict(direction="none", lateral="right", turn=None)),
    ("move to your left without turning", dict(direction="none", lateral="left", turn=None)),
    ("turn around in place", dict(direction="none", turn="left", turn_deg=180.0, turn_side_picked=True,
                                  stay_in_place=False)),
    ("face the other way", dict(direction="none", turn="left", turn_deg=180.0, turn_side_picked=True)),
    ("turn to face backward", dict(direction="none", turn="left", turn_deg=180.0)),
    ("turn around to the right", dict(direction="none", turn="right", turn_deg=180.0, turn_side_picked=False)),
    ("squat down and stand back up", dict(direction="none", lateral=None, stay_in_place=True, styles=())),
    ("get back up", dict(direction="none", stay_in_place=True)),
    ("turn around and walk back", dict(direction="none", turn="left", turn_deg=180.0)),  # the first phase
    # and what must keep its reading
    ("step back", dict(direction="backward", lateral=None, turn=None)),
    ("walk backward", dict(direction="backward", lateral=None, turn=None)),
    ("back up slowly", dict(direction="backward", pace="slow")),
    ("turn left 90 degrees", dict(direction="none", turn="left", turn_deg=90.0, turn_side_picked=False)),
    ("turn right while walking", dict(direction="forward", turn="right", turn_deg=90.0, turn_side_picked=False)),
    ("turn 90 degrees", dict(turn=None)),                     # a quarter turn names no end facing: no side picked
    ("turn around the corner", dict(turn=None)),              # round a thing, not a half turn
    ("walk in a squat", dict(direction="forward", styles=("crouch",))),  # a squat as a way of walking
    ("walk to the left", dict(direction="forward", lateral=None)),  # the facing not kept: it may be a turn
    ("lean to your left without turning", dict(direction="none", lateral=None)),  # no travel word: no travel
    ("walk forward without turning left", dict(direction="forward", lateral=None)),  # a turn not made
    ("walk forward, to your left, without turning", dict(direction="forward", lateral=None)),  # its side unread
])
def test_the_rules_do_not_read_words_as_a_motion_they_do_not_ask(text, fields):
    spec = spec_from_description(text)
    assert {k: getattr(spec, k) for k in fields} == fields


def test_a_picked_turn_side_is_said_and_needs_a_turn():
    assert spec_from_description("turn around").describe() == (
        "no travel, turn left 180° (no side stated: left picked) (read by rules)")
    assert "picked" not in spec_from_description("turn around to the right").describe()
    with pytest.raises(UserError, match="a turn side is picked only for a turn"):
        TaskSpec(direction="none", turn_side_picked=True)


@pytest.mark.parametrize(("text", "lateral", "unread"), [
    ("walk forward and turn left", None, ()),             # a turn: no sideways part
    ("walk to the left", None, ("left",)),                # neither a side-step nor a turn is said
    ("walk diagonally", None, ("diagonally",)),           # no side: which diagonal is not said
    ("side-step to the left at 0.3 m/s", "left", ("0.3 m/s",)),  # judged by distance: a sideways speed is unread
    ("walk forward with the left arm up", None, ("left arm",)),
])
def test_sideways_words_that_say_too_little_stay_unread(text, lateral, unread):
    spec = spec_from_description(text)
    assert (spec.lateral, spec.unread, spec.speed_mps) == (lateral, unread, None)


def test_a_lateral_spec_is_consistent():
    with pytest.raises(UserError, match="lateral must be one of left, right, either"):
        TaskSpec(direction="none", lateral="up")
    with pytest.raises(UserError, match="a sideways travel neither stays in place"):
        TaskSpec(direction="none", lateral="left", stay_in_place=True)
    spec = TaskSpec(direction="forward", lateral="right")
    assert TaskSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.describe().startswith("travel diagonally forward and to the right")


@pytest.mark.parametrize(("text", "leg"), [
    ("stand on your right leg", "right"), ("balance on the left foot", "left"), ("balance on one leg", "either"),
    ("stand like a flamingo", "either"), ("lift your left foot and hold your balance", "right"),
    ("raise the right knee and balance", "left"), ("hold a single-leg stance", "either"),
    ("one-legged stand on the right leg", "right"),
])
def test_the_rules_read_a_stand_on_one_named_leg(text, leg):
    spec = spec_from_description(text)
    assert (spec.stance_leg, spec.stay_in_place, spec.direction, spec.unread) == (leg, True, "none", ())
    task = task_from_description(text, "myolegs")
    metric = "one_leg_stand" if leg == "either" else f"{leg}_leg_stand"
    assert (task.metric, task.success, task.scene.start_speed) == (metric, 0.6, 0.0)
    assert task.canonical == ("stand_right_leg" if leg == "right" else "stand_left_leg")


def test_a_stand_on_one_leg_counts_time_on_that_foot_alone_near_the_start():
    t = np.arange(20)  # 2 s at 0.1 s
    up = (t >= 5).astype(float)  # the lifted foot leaves the ground at sample 5
    left = np.stack([1.0 - up, 1.0 - up, ((t < 2) | (t >= 12)).astype(float)])
    right = np.stack([np.ones(20), np.ones(20), np.ones(20)])
    x = np.stack([np.zeros(20), np.zeros(20), np.where(t >= 8, 0.3, 0.0)])  # row 2 leaves 0.25 m at sample 8
    height = np.ones((3, 20))
    height[1, 10:] = 0.5  # row 1 falls at sample 10
    m = batch_metrics(_features(x, height, left, right))
    # Row 0: on the right foot alone from sample 5 to the end, 15 of 20. Row 1: samples 5-9 before the fall, 5 of
    # 20. Row 2: the left foot is up at samples 2-11, but the pelvis left the spot at 8: samples 2-7, 6 of 20.
    assert [r.right_leg_stand for r in m] == [0.75, 0.25, 0.3]
    assert [r.left_leg_stand for r in m] == [0.0, 0.0, 0.0] and [r.one_leg_stand for r in m] == [0.75, 0.25, 0.3]
    swapped = batch_metrics(_features(x, height, right, left))  # the same on the other foot
    assert [r.left_leg_stand for r in swapped] == [0.75, 0.25, 0.3]


def test_flight_and_hip_flexion_peak_by_hand():
    t = np.arange(20)  # 2 s at 0.1 s
    left = np.stack([(t % 4 < 2).astype(float), np.ones(20)])   # row 0 runs: down 2 samples, up 2
    right = np.stack([((t + 1) % 4 < 2).astype(float), np.ones(20)])
    height = np.ones((2, 20))
    height[0, 10:] = 0.5  # row 0 falls at sample 10
    features = _features(np.zeros((2, 20)), height, left, right)
    hips = {"left_hip_flexion": np.tile(np.linspace(0.0, 1.9, 20), (2, 1)),  # 0.1 rad a sample
            "right_hip_flexion": np.full((2, 20), 0.5)}
    features = Features({**{k: features[k] for k in features}, **hips}, features.scalars)
    m = batch_metrics(features)
    # Row 0: both feet up where t % 4 == 2 (left up at 2, 3; right up at 1, 2): samples 2 and 6 before the fall at
    # 10, 2 of 20. Row 1 never leaves the ground.
    assert [r.flight_fraction for r in m] == [0.1, 0.0]
    # Row 0: the left hip over samples 0-9 (0-0.9 rad), 90th percentile 0.81, the right 0.5: the lower is 0.5.
    # Row 1: the left over all 20 samples, 90th percentile 1.71; the right 0.5 again.
    assert [r.hip_flexion_peak for r in m] == pytest.approx([0.5, 0.5])
    hips["right_hip_flexion"] = np.full((2, 20), 1.8)
    m = batch_metrics(Features({**{k: features[k] for k in features}, **hips}, features.scalars))
    assert [r.hip_flexion_peak for r in m] == pytest.approx([0.81, 1.71])


@pytest.mark.parametrize(("text", "fields", "unread"), [
    # a turn not made, or a head turned, keeps no facing: a straight walk with the words left unread, never sideways
    ("walk without turning towards the left", dict(direction="forward", lateral=None, turn=None),
     ("without turning towards the left",)),
    ("walk without turning toward the right", dict(direction="forward", lateral=None, turn=None),
     ("without turning toward the right",)),
    ("walk without turning your head to the left", dict(direction="forward", lateral=None, turn=None),
     ("without turning your head to the left",)),
    # a side passed on the way is no side travelled to
    ("walk past the left wall without turning", dict(direction="forward", lateral=None),
     ("left wall without turning",)),
    ("walk along the right edge without turning", dict(direction="forward", lateral=None),
     ("right edge without turning",)),
    # the facing-kept words are read with the sideways part they keep the facing of
    ("strafe left while facing forward", dict(direction="none", lateral="left"), ()),
    ("walk sideways without turning", dict(direction="none", lateral="either"), ()),
    ("move to your left without turning around", dict(direction="none", lateral="left", turn=None), ()),
    ("step left without turning", dict(direction="none", lateral="left"), ()),
])
def test_the_rules_read_facing_kept_words_as_sideways_only_toward_the_side_travelled(text, fields, unread):
    spec = spec_from_description(text)
    assert {k: getattr(spec, k) for k in fields} == fields
    assert spec.unread == unread


@pytest.mark.parametrize(("text", "fields", "unread"), [
    # a half turn joined to a travel or another turn is a sequence: its first phase is read, the later one left
    # unread, and no backward travel is read with a half turn (no metric checks it)
    ("turn around and walk forward", dict(direction="none", turn="left", turn_deg=180.0), ("walk forward",)),
    ("walk forward and turn around", dict(direction="forward", turn=None), ("turn around",)),
    ("turn around and walk backward", dict(direction="none", turn="left", turn_deg=180.0), ("walk backward",)),
    ("face backward and walk backward", dict(direction="none", turn="left", turn_deg=180.0), ("walk backward",)),
    ("turn around to the right and walk back", dict(direction="none", turn="right", turn_deg=180.0),
     ("walk back",)),
    ("do an about-face and walk forward", dict(direction="none", turn="left", turn_deg=180.0), ("walk forward",)),
    ("turn around, then walk back", dict(direction="none", turn="left", turn_deg=180.0), ("walk back",)),
    ("turn around while walking backward", dict(direction="none", turn="left", turn_deg=180.0),
     ("walking backward",)),
    ("turn left and turn around", dict(direction="none", turn="left", turn_deg=90.0), ("turn around",)),
    ("turn left and face the other way", dict(direction="none", turn="left", turn_deg=90.0), ("face the other",)),
    # "turn around" goes round a thing unless what follows may follow a half turn
    ("turn around it", dict(turn=None), ("turn around",)),
    ("turn around this corner", dict(turn=None), ("turn around this corner",)),
    ("turn around obstacles", dict(turn=None), ("turn around obstacles",)),
    ("turn around each cone", dict(turn=None), ("turn around each cone",)),
    ("turn around slowly", dict(turn="left", turn_deg=180.0, turn_side_picked=True), ()),
    ("turn around 180 degrees", dict(turn="left", turn_deg=180.0, turn_side_picked=True), ()),
    # turns counted multiply the angle; only a half turn may have its side picked
    ("turn around twice to the right", dict(turn="right", turn_deg=360.0, turn_side_picked=False), ()),
    ("turn left twice", dict(turn="left", turn_deg=180.0), ()),
    ("turn around twice", dict(turn=None), ("turn around twice",)),
    ("turn around 90 degrees", dict(turn=None), ("turn around 90 degrees",)),
    ("rotate clockwise a quarter turn", dict(turn="right", turn_deg=90.0), ()),  # a named angle next to its turn
])
def test_a_half_turn_is_read_alone_and_only_where_one_is_said(text, fields, unread):
    spec = spec_from_description(text)
    assert {k: getattr(spec, k) for k in fields} == fields
    assert spec.unread == unread


@pytest.mark.parametrize(("text", "fields", "unread"), [
    # a 'get up' that climbs is a travel, not a stand-up
    ("get up the stairs", dict(direction="forward", stay_in_place=False, terrain="stairs"), ()),
    ("get up the hill", dict(direction="forward", stay_in_place=False, terrain="slope"), ()),
    ("get up", dict(direction="none", stay_in_place=True), ()),
    ("get back up again", dict(direction="none", stay_in_place=True), ()),
    # 'go' is no part of 'good': a squat alone is the exercise, no crouching walk
    ("do a good squat", dict(direction="none", styles=()), ("squat",)),
    ("go in a low squat", dict(direction="forward", styles=("crouch",)), ()),
    # 'and then' joins a return to a half turn as 'and' does: never a backward travel
    ("turn around and then walk back", dict(direction="none", turn="left", turn_deg=180.0), ("walk back",)),
    ("turn around to walk back", dict(direction="none", turn="left", turn_deg=180.0), ("walk back",)),
])
def test_climbs_squats_and_returns_are_not_read_as_another_motion(text, fields, unread):
    spec = spec_from_description(text)
    assert {k: getattr(spec, k) for k in fields} == fields
    assert spec.unread == unread


def test_the_rules_read_the_back_of_a_return_after_a_half_turn_as_no_backward_word():
    from rewardloop.spec import _NOT_BACKWARD

    for joined in ("turn around and go back", "turn around then go back", "turn around and then go back"):
        assert _NOT_BACKWARD.search(joined).group("returning") == "back"
