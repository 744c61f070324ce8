"""Built-in tasks: one battery over every task and body, free-text tasks, and the `tasks` listing."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rewardloop.cli import main
from rewardloop.control.metrics import TaskMetrics, course_metrics
from rewardloop.errors import UserError
from rewardloop.loop.design import trusted_source
from rewardloop.reward.canonical import (
    BACKWARD_SPEED,
    CANONICAL,
    COURSES_DEG,
    FROM_REST,
    SPEED_CANONICALS,
    canonical,
)
from rewardloop.reward.check import check_program
from rewardloop.sim.terrain import Terrain
from rewardloop.tasks import HAND_BODIES, INJURIES, TASK_BODIES, TASKS, Task, get_task, task_from_description


@pytest.mark.parametrize(("name", "body"), [(name, body) for name, task in TASKS.items()
                                            for body in (HAND_BODIES if task.manipulation else TASK_BODIES)])
def test_every_task_on_every_body(name, body):
    task = get_task(name, body=body)
    assert task.scene.body == body and task.canonical in CANONICAL
    assert task.scene.injury == (INJURIES[body] if name == "walk-injured" else ())
    assert Task.from_dict(task.to_dict()) == task  # stored in task.json and read back on resume


def test_the_papers_task_set_is_there():
    terrains = {t.scene.terrain.kind for t in TASKS.values()}
    assert terrains == {"flat", "slope", "rough", "stairs"}
    assert {"turn-left", "walk-straight-knees", "walk-injured"} <= set(TASKS)
    assert get_task("turn-left").metric == "heading_change" and get_task("walk-flat").metric == "distance"


def test_score_reads_the_task_metric():
    metrics = TaskMetrics(duration=10.0, distance=2.76, speed=0.276, fell=False, fall_time=None,
                          lateral_drift=0.1, heading_change=0.5, steps=14)
    assert get_task("walk-rough").score(metrics) == 2.76  # MoVLR's headline: 2.76 m in 10 s on rough ground
    assert get_task("turn-left").score(metrics) == 0.5


@pytest.mark.parametrize(("text", "terrain", "canonical", "metric"), [
    ("walk forward on rough ground with an upright posture", "rough", "walk_rough", "distance"),
    ("climb the stairs", "stairs", "walk_stairs", "distance"),
    ("turn to the left while walking", "flat", "turn_left", "heading_change"),
    ("walk with straight knees", "flat", "walk_straight_knees", "distance"),
    ("walk despite an injured ankle", "flat", "walk_injured", "distance"),
    ("wave both arms", "flat", None, "stay_fraction"),  # no travel word: stay near the start, the designer writes
])                                                     # the first program
def test_task_from_description_follows_words_and_terrain(text, terrain, canonical, metric):
    task = task_from_description(text, "myolegs", terrain)
    assert (task.canonical, task.metric, task.scene.terrain.kind) == (canonical, metric, terrain)
    assert task.success == {"heading_change": math.pi / 2, "distance": 2.0, "stay_fraction": 1.0}[metric]


def test_free_text_keeps_terrain_parameters_and_injury():
    task = task_from_description("walk despite a weak leg", "humanoid", Terrain("slope", slope_deg=8.0))
    assert task.scene.terrain.slope_deg == 8.0 and task.scene.injury == INJURIES["humanoid"]


def test_bad_tasks_name_the_choices():
    with pytest.raises(UserError, match="unknown task 'fly'; choose one of: bottle-pour, cube-rotate, turn-left"):
        get_task("fly")
    with pytest.raises(UserError, match="unknown body 'robot'"):
        get_task("walk-flat", body="robot")
    with pytest.raises(UserError, match="description is empty"):
        task_from_description("   ", "humanoid")


def test_tasks_command_lists_each_task_per_body(capsys):
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[:2] for line in lines[1:-1]]
    # 7 locomotion tasks x 2 bodies = 14 rows, then the 2 object tasks on the hand
    assert rows == [[name, body] for name, task in TASKS.items()
                    for body in (HAND_BODIES if task.manipulation else TASK_BODIES)]
    assert any("injured: left_plantarflexors at 30%" in line for line in lines)


def test_a_stated_speed_sets_the_canonical_walks_target_speed_forward_or_backward():
    slow = task_from_description("walk forward slowly at 0.6 m/s", "humanoid")
    program = slow.canonical_program()
    assert slow.canonical == "walk" and program is not None and slow.score_name == "-|speed - 0.6|"
    assert "np.minimum(0.6, start + 0.6 * f.time)" in program.source and "np.minimum(1.5" not in program.source
    # people's step rate follows the speed above the canonical speed (below it, people's band stays)
    assert "pace = np.maximum(1.0, (0.6 / (1.5 * f.standing_height)) ** 0.58)" in program.source
    assert program.hash == canonical("walk", speed=0.6).hash != canonical("walk").hash
    assert not trusted_source(program.source)  # not a stock canonical source: it runs in the sandbox
    plain = task_from_description("walk forward", "humanoid").canonical_program()
    assert plain is not None and plain.hash == canonical("walk").hash and trusted_source(plain.source)
    backward = task_from_description("walk backward at 0.3 m/s", "humanoid").canonical_program()
    assert backward is not None and backward.hash == canonical("walk_backward", speed=-0.3).hash
    assert "np.minimum(0.3, 0.3 * f.time)" in backward.source and "0.3 * (f.time - ramp)" in backward.source
    assert canonical("walk_backward", speed=-BACKWARD_SPEED).hash == canonical("walk_backward").hash
    plain_back = task_from_description("walk backward", "humanoid").canonical_program()
    assert plain_back is not None and plain_back.hash == canonical("walk_backward").hash
    with pytest.raises(UserError, match="must be backward"):
        canonical("walk_backward", speed=0.3)
    assert set(SPEED_CANONICALS) >= {"walk", "walk_rough", "walk_injured"} and "turn_left" not in SPEED_CANONICALS
    with pytest.raises(UserError, match="no canonical speed ramp"):
        canonical("turn_left", speed=0.5)


@pytest.mark.parametrize(("text", "speed"), [("walk fast", 1.8), ("walk forward slowly", 0.4), ("walk briskly", 1.8)])
def test_a_pace_in_words_sets_the_canonical_walks_target_speed(text, speed):
    # "walk fast" aims at people's brisk walk, not at the plain canonical walk's target (which "walk" gets).
    task = task_from_description(text, "myolegs")
    assert task.canonical == "walk" and task.metric == "distance" and task.forward_speed == speed
    assert task.canonical_program().hash == canonical("walk", speed=speed).hash != canonical("walk").hash
    assert task_from_description("turn left quickly", "myolegs").forward_speed is None


def test_the_canonical_rewards_from_rest_are_those_of_the_tasks_that_start_there():
    """`rewardloop optimize` starts FROM_REST's rewards from rest because the loop's tasks asking for them do."""
    rest = ("stand still", "step in place", "walk backward", "side-step to the left", "side-step to the right",
            "walk diagonally forward and to the left", "walk diagonally forward and to the right",
            "walk diagonally backward and to the left", "walk diagonally backward and to the right",
            "stand on your left leg", "stand on your right leg", "march in place with high knees",
            "turn left on the spot", "turn right")
    for text in (*rest, "walk forward", "walk while turning left"):
        task = task_from_description(text, "myolegs")
        assert (task.canonical in FROM_REST) == (task.scene.start_speed == 0.0), text
    assert {task_from_description(t, "humanoid").canonical for t in rest} == set(FROM_REST)


def test_course_metrics_count_travel_its_way_less_travel_off_it():
    # Displacements (forward x, left y) in m. 2 m left: sideways_left 2, sideways_right -2. 2 m left and 0.5 m
    # forward: 2 - 0.5 = 1.5. 3 m forward, 0.4 m left (a forward walk drifting): 0.4 - 3 = -2.6. Diagonal: 1 m
    # forward and 1 m left is √2 along (1, 1) / √2 and nothing across: forward_left √2; forward_right 0 - √2.
    displacement = np.array([[0.0, 2.0], [0.5, 2.0], [3.0, 0.4], [1.0, 1.0]])
    courses = course_metrics(displacement)
    np.testing.assert_allclose(courses["sideways_left"], [2.0, 1.5, -2.6, 0.0])
    np.testing.assert_allclose(courses["sideways_right"], [-2.0, -2.5, -3.4, -2.0])
    np.testing.assert_allclose(courses["sideways"], [2.0, 1.5, -2.6, 0.0])
    np.testing.assert_allclose(courses["forward_left"], [0.0, 2.5 / math.sqrt(2) - 1.5 / math.sqrt(2),
                                                         3.4 / math.sqrt(2) - 2.6 / math.sqrt(2), math.sqrt(2)])
    np.testing.assert_allclose(courses["forward_right"][3], -math.sqrt(2))
    np.testing.assert_allclose(courses["backward_right"][3], -math.sqrt(2) - 0.0)


@pytest.mark.parametrize(("text", "metric", "canonical_name"), [
    ("walk sideways to the left", "sideways_left", "walk_sideways_left"),
    ("side-step to the right", "sideways_right", "walk_sideways_right"),
    ("walk sideways", "sideways", "walk_sideways_left"),
    ("walk diagonally forward and to the left", "forward_left", "walk_forward_left"),
    ("walk backward and to the right", "backward_right", "walk_backward_right"),
])
def test_a_sideways_task_is_judged_on_its_course_facing_ahead(text, metric, canonical_name):
    task = task_from_description(text, "humanoid")
    assert (task.metric, task.success, task.canonical, task.scene.start_speed) == (metric, 1.5, canonical_name, 0.0)
    assert task.success_rule() == f"{metric} >= 1.5 m, heading_change within ±30° without a fall"
    on_course = {metric: 1.6}
    assert task.achieved(TaskMetrics(0, 0, 0, False, None, 0, 0.2, 0, **on_course))
    assert not task.achieved(TaskMetrics(0, 0, 0, False, None, 0, 0.6, 0, **on_course))  # turned 34° to face it
    assert not task.achieved(TaskMetrics(0, 0, 0, True, 5.0, 0, 0.0, 0, **on_course))  # fell
    assert not task.achieved(TaskMetrics(0, 0, 0, False, None, 0, 0.0, 0, **{metric: 1.4}))  # short of 1.5 m
    assert Task.from_dict(task.to_dict()) == task
    assert task_from_description("sidestep left for 3 metres", "myolegs").success == 3.0


def test_a_limit_names_a_metric_and_a_range():
    base = task_from_description("walk sideways to the left", "humanoid")
    with pytest.raises(UserError, match="unknown limit metric 'tilt'"):
        dataclasses.replace(base, limits=(("tilt", 0.0, 1.0),))
    with pytest.raises(UserError, match="is empty"):
        dataclasses.replace(base, limits=(("heading_change", 1.0, 0.0),))


@pytest.mark.parametrize("name", [f"walk_{course}" for course in COURSES_DEG])
def test_the_course_canonicals_pass_the_checker(name, humanoid_flat):
    report = check_program(canonical(name), humanoid_flat)
    assert report.passed, report.to_text()
    assert {"course", "path", "face"} <= set(report.terms)


@pytest.mark.parametrize(("name", "terms"), [("stand_left_leg", {"one_leg", "balance", "still"}),
                                             ("stand_right_leg", {"one_leg", "balance", "still"}),
                                             ("step_in_place_high_knees", {"knee_lift", "stepping", "stay"})])
def test_the_one_leg_and_high_knee_canonicals_pass_the_checker(name, terms, humanoid_flat):
    report = check_program(canonical(name), humanoid_flat)
    assert report.passed, report.to_text()
    assert terms <= set(report.terms)


def test_a_turn_on_the_spot_turns_to_the_angle_asked_and_passes_the_checker(humanoid_flat):
    task = task_from_description("turn right 45 degrees on the spot", "humanoid")
    assert "lib.heading_error(f, target=-0.7854)" in task.canonical_program().source  # -45° in rad
    assert "lib.heading_error(f, target=1.5708)" in canonical("turn_left_in_place").source  # 90° unless stated
    with pytest.raises(UserError, match="no canonical turn on the spot to set"):
        canonical("walk", heading=0.5)
    report = check_program(canonical("turn_left_in_place"), humanoid_flat)
    assert report.passed, report.to_text()


def test_the_ground_the_words_name_is_the_scene_unless_another_is_given_and_then_it_is_refused(tmp_path, capsys):
    from rewardloop.cli import build_parser
    from rewardloop.loop.commands import task_from_args

    def scene(*argv: str) -> Terrain:
        return task_from_args(build_parser().parse_args(["run", *argv])).scene.terrain

    rough = scene("walk forward on rough ground", "--roughness", "0.03")
    assert (rough.kind, rough.roughness) == ("rough", 0.03)  # no --terrain: the words' ground, with its flags
    assert scene("walk up the stairs").kind == "stairs" and scene("walk forward").kind == "flat"
    assert scene("walk forward", "--terrain", "slope").kind == "slope"  # the words name none: the user's scene
    assert scene("walk up the stairs", "--terrain", "stairs").kind == "stairs"
    assert task_from_description("climb the stairs", "humanoid").canonical == "walk_stairs"
    for words, given in (("walk up the stairs", "rough"), ("walk forward on rough ground", "flat")):
        assert main(["run", words, "--terrain", given, "--out", str(tmp_path)]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and f"the scene given is {given}" in error
        assert "--terrain" in error and not list(tmp_path.iterdir())  # refused before any run exists
    with pytest.raises(UserError, match="asks for slope ground"):
        task_from_description("walk up a gentle slope", "myolegs", "flat")
