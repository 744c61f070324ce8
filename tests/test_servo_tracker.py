"""The servo tracker: people's joint curves on a phase clock as joint-position servo targets, for the robots.

Rollouts are short (at most 2 s of simulated time, one row)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rewardloop.control.controllers.base import controller_for, make_controller, run_controller
from rewardloop.control.controllers.servo_tracker import (
    GRAVITY,
    HA,
    HR,
    KN,
    SERVO_GAIT,
    foot_yaw,
    froude_scale,
    froude_space,
    leg_targets,
)
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.search.policy import shipped_gait
from rewardloop.errors import UserError
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import Scene, compile_scene

ROBOTS = ("berkeley_humanoid", "unitree_g1")


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return compile_scene(Scene(request.param))


def _run(scene, seconds, **changes):
    controller = make_controller("servo_tracker", scene)
    params = controller.space.vector(changes)[None]
    with Simulator(scene, nthread=1) as sim:
        return controller, run_controller(sim, controller, params, nstep=round(seconds / scene.dt))


def test_the_robots_walk_with_the_servo_tracker(robot):
    assert controller_for(robot) == "servo_tracker"


def test_the_servo_tracker_drives_servo_bodies_only():
    with pytest.raises(UserError, match="servo"):
        make_controller("servo_tracker", compile_scene(Scene("humanoid")))


def test_targets_stay_within_the_servos_control_ranges(robot):
    _, rollouts = _run(robot, 0.6)
    low, high = robot.ctrl_bounds()
    assert np.isfinite(rollouts.control).all()
    assert (rollouts.control >= low - 1e-12).all() and (rollouts.control <= high + 1e-12).all()
    assert rollouts.control.shape[-1] == robot.model.nu


def test_froude_scaling_of_the_step_time_and_speed():
    # A leg of 0.5 m: time unit sqrt(0.5 / 9.81) = 0.2258 s, speed unit sqrt(9.81 * 0.5) = 2.2147 m/s.
    space = froude_space(0.5)
    named = space.named(space.default)
    assert named["step_time"] == pytest.approx(SERVO_GAIT["step_time"][2] * 0.22576, rel=1e-4)
    assert named["speed"] == pytest.approx(SERVO_GAIT["speed"][2] * 2.21472, rel=1e-4)
    assert froude_scale("per_length", 0.5) == 2.0  # a leg length of offset per leg length: 1 / 0.5 m
    # A leg four times as long steps twice as slowly.
    assert froude_space(2.0).named(froude_space(2.0).default)["step_time"] == pytest.approx(2 * named["step_time"])


def test_the_leg_length_comes_from_the_keyframe():
    # Berkeley stands crouched (hip joints about 0.41 m up); the G1 straight-legged (about 0.69 m).
    berkeley = make_controller("servo_tracker", compile_scene(Scene("berkeley_humanoid")))
    g1 = make_controller("servo_tracker", compile_scene(Scene("unitree_g1")))
    assert 0.38 < berkeley.leg < 0.45 and 0.65 < g1.leg < 0.72
    ratio = g1.space.named(g1.space.default)["step_time"] / berkeley.space.named(berkeley.space.default)["step_time"]
    assert ratio == pytest.approx(math.sqrt(g1.leg / berkeley.leg))
    assert GRAVITY == 9.81


def test_the_bearing_knee_is_aimed_straighter_than_the_swinging_one():
    # Berkeley's knee servo (35 N·m/rad) sags about 0.3 rad under the whole weight in its crouch: the target leads.
    controller = make_controller("servo_tracker", compile_scene(Scene("berkeley_humanoid")))
    sag = controller.layout.sag
    assert sag[0, 1, KN] < -0.1 and abs(sag[0, 0, KN]) < 0.05
    assert sag[0, 1, HA] == 0.0  # sideways balance is the feedback's job
    np.testing.assert_allclose(sag[0], sag[1], atol=0.01)  # a symmetric robot


def test_the_weight_shift_moves_the_body_towards_the_first_stance_foot():
    scene = compile_scene(Scene("berkeley_humanoid"))
    _, rollouts = _run(scene, 0.4, shift=0.4, shift_time=0.4)
    com_y = scene.layout.sensors["com_pos"][0] + 1
    assert rollouts.sensordata[0, -1, com_y] > rollouts.sensordata[0, 0, com_y] + 0.005  # + is left


def test_the_tracker_steps_with_each_foot(robot):
    _, rollouts = _run(robot, 1.5)
    contact = {side: robot.layout.sensors[f"{side}_foot_contact"][0] for side in ("left", "right")}
    lifted = {side: (rollouts.sensordata[0, :, address] == 0).any() for side, address in contact.items()}
    assert lifted == {"left": True, "right": True}


def test_the_stance_hip_turns_the_pelvis_onto_the_heading_over_the_planted_foot():
    # Right leg in stance (stance=1), its foot yawed 0.1 rad left of the wanted heading: with yaw_gain 1.5 the right
    # hip's rotation target is the keyframe's + 0.15 rad (internal rotation: toes in, so over a planted foot the
    # pelvis turns right, onto the heading); the left leg in stance turns the other way (- 0.15).
    controller = make_controller("servo_tracker", compile_scene(Scene("berkeley_humanoid")))
    p = controller.space.vector({"yaw_gain": 1.5, "yaw_damping": 0.0})
    rest, sag = controller.layout.rest, np.zeros((2, 2, 5))
    for stance, turn in ((1, 0.15), (0, -0.15)):
        target = np.zeros((2, 5))
        leg_targets(p, controller.curves, rest, sag, rest.copy(), stance, np.array([0.25, 0.75]),
                    controller.curves[1].min(), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, target)
        assert target[stance, HR] == pytest.approx(rest[stance, HR] + turn)


def test_the_standing_feet_point_along_the_heading(robot):
    with Simulator(robot, nthread=1) as sim:
        sensed = sim.sense(robot.initial_state[None])[0]
    sensors = make_controller("servo_tracker", robot).layout.sensors
    assert abs(foot_yaw(sensed, sensors, 0)) < 0.05 and abs(foot_yaw(sensed, sensors, 1)) < 0.05


def test_the_shipped_berkeley_gait_walks_off_from_rest_on_its_heading():
    # The gait alone, without the planner, walks off and holds its heading for the first 2 s.
    scene = compile_scene(Scene("berkeley_humanoid", start_speed=0.0))
    controller = make_controller("servo_tracker", scene)
    gait = shipped_gait("berkeley_humanoid")
    assert gait is not None
    with Simulator(scene, nthread=1) as sim:
        rollouts = run_controller(sim, controller, gait.vector(controller)[None], nstep=round(2.0 / scene.dt))
    metrics = batch_metrics(rollouts.features(scene))[0]
    assert not metrics.fell and metrics.distance > 0.4 and abs(metrics.heading_change) < 0.3
