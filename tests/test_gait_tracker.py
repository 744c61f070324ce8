"""The gait tracker: people's joint curves on a phase clock, with SIMBICON balance on top.

Rollouts are short (at most 0.3 s of simulated time, batches of 2)."""

from __future__ import annotations

import numpy as np
import pytest

from rewardloop.control.controllers import Carry, make_controller, run_controller
from rewardloop.control.gait_tracker import CLOCK, PARAMETERS, STANCE, curve_at, human_curves
from rewardloop.control.humanoid import KN
from rewardloop.critic.gait import human_gait_reference
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain


@pytest.fixture(scope="module")
def humanoid_walking():
    return compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))


def test_human_curves_are_the_reference_in_radians():
    reference = human_gait_reference()
    curves = human_curves()
    assert curves.shape == (3, len(reference.phase))
    np.testing.assert_allclose(np.degrees(curves), reference.mean)
    # People's knee: nearly straight at touchdown (5.6° here), about 60° at its swing peak near 72 % of the cycle.
    assert np.degrees(curves[1, 0]) < 10 and 55 < np.degrees(curves[1].max()) < 65


@pytest.mark.parametrize("joint", [0, 1, 2])
def test_curve_at_equals_numpy_interpolation(joint):
    curves = human_curves()
    grid = np.linspace(0.0, 1.0, curves.shape[1])
    phases = np.concatenate([np.linspace(-0.1, 1.1, 97), grid])  # outside [0, 1] holds the ends
    expected = np.interp(phases, grid, curves[joint])
    np.testing.assert_allclose([curve_at(curves, joint, x) for x in phases], expected, atol=1e-12)


def test_the_step_clock_waits_for_the_touchdown(humanoid_walking):
    # The walking start holds the left foot just above the ground: its clock stays 0 until it lands (after
    # 0.05 s it has not). Default step_time 0.45 s and touch_min 0.7: no touchdown may end the step before
    # 0.315 s of clock, so after 60 steps of 5 ms (0.3 s) the left leg (0) still stands and its clock reads the
    # time since it landed: more than 0, at most 0.3 - 0.05 s.
    controller = make_controller("gait_tracker", humanoid_walking)
    carry = Carry.fresh(controller, humanoid_walking, 2)
    params = np.repeat(PARAMETERS.default[None], 2, axis=0)
    with Simulator(humanoid_walking, nthread=1) as sim:
        first = run_controller(sim, controller, params, nstep=10, carry=carry)
        np.testing.assert_array_equal(carry.memory, [[0.0, 0.0], [0.0, 0.0]])
        run_controller(sim, controller, params, nstep=50, carry=carry, initial_state=first.state[:, -1])
    np.testing.assert_array_equal(carry.memory[:, STANCE], [0.0, 0.0])
    assert np.all(carry.memory[:, CLOCK] > 0) and np.all(carry.memory[:, CLOCK] <= 0.25 + 1e-9)


def test_the_swing_knee_follows_the_curve_and_a_larger_scale_bends_it_more(humanoid_walking):
    # The right leg starts at 50 % of its cycle and swings once the left foot has landed (about 0.15 s in): over
    # the 0.25 s simulated, people's knee bends from about 37° towards its 60° peak at 72 %, so the target is
    # about 40-50° times knee_scale. A knee_scale of 1.4 instead of 0.6 must bend it at least 10° more.
    controller = make_controller("gait_tracker", humanoid_walking)
    params = np.stack([PARAMETERS.vector({"knee_scale": 0.6}), PARAMETERS.vector({"knee_scale": 1.4})])
    with Simulator(humanoid_walking, nthread=1) as sim:
        rollouts = run_controller(sim, controller, params, nstep=50)
    layout = controller.layout
    right_knee = layout.legs[1, KN, 3] * rollouts.state[:, :, 1 + int(layout.legs[1, KN, 0])]  # [2, T] rad
    assert right_knee[1].max() > right_knee[0].max() + np.radians(10)
