"""The full-body tracker: the muscle legs' tracker with a stiff trunk and arms swinging against the legs, on
myofullbody (416 muscles), and the sparse muscle-torque solve that makes it affordable.

Kernel calls on the walking start's state, a least-squares check on a small random problem, and one short rollout
(2 s) of the shipped gait."""

from __future__ import annotations

import numpy as np
import pytest

from rewardloop.control.controllers.base import make_controller, run_controller
from rewardloop.control.controllers.fullbody_tracker import ARM_OUT, ELBOW_BEND, HAND_KP, PARAMETERS, leg_phases
from rewardloop.control.controllers.gait_tracker import CLOCK, STANCE, STEP_TIME
from rewardloop.control.controllers.muscle_tracker import FOOT_KP
from rewardloop.control.controllers.muscles import _bounded_least_squares
from rewardloop.control.metrics import fall_mask
from rewardloop.control.search.policy import shipped_gait
from rewardloop.critic.gait import analyze_gait
from rewardloop.errors import UserError
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import Scene, compile_scene, walking_start_speed


@pytest.fixture(scope="module")
def body():
    scene = compile_scene(Scene(body="myofullbody", start_speed=walking_start_speed("myofullbody")))
    return scene, make_controller("fullbody_tracker", scene)


def test_on_a_body_without_a_spine_and_arms_it_says_so():
    with pytest.raises(UserError, match=r"'fullbody_tracker' drives myofullbody \(the parts it moves\); not myolegs"):
        make_controller("fullbody_tracker", compile_scene(Scene(body="myolegs")))


def test_each_legs_phase_comes_from_the_step_clock():
    params = np.zeros((2, PARAMETERS.size))
    params[:, STEP_TIME] = 0.5
    memory = np.zeros((2, 7))
    memory[:, STANCE] = [0, 1]
    memory[:, CLOCK] = [0.25, 0.6]  # half a step, and past the step time
    np.testing.assert_allclose(leg_phases(memory, params), [[0.25, 0.75], [1.0, 0.5]])


def _targets(body, stance: int, progress: float, **values: float) -> tuple[np.ndarray, np.ndarray]:
    """[1, J] the tracker's targets at the walking start with `stance` standing `progress` of its step time, and
    the [1, P] params (defaults, with `values`)."""
    scene, tracker = body
    params = tracker.space.default[None].copy()
    for name, value in values.items():
        params[0, tracker.space.index(name)] = value
    memory = np.zeros((1, tracker.memory_size))
    memory[0, STANCE], memory[0, CLOCK] = stance, progress * params[0, STEP_TIME]
    state = scene.initial_state[None]
    with Simulator(scene, nthread=1) as sim:
        sensed = run_controller(sim, tracker, params, nstep=1).sensordata[:, 0]
    return tracker.targets(state, sensed, memory, params), params


@pytest.mark.parametrize("stance", [0, 1])
def test_the_arm_of_the_stance_side_swings_forward_as_the_other_thigh_does(body, stance):
    """Late in a step the swing thigh reaches forward: the arm on the stance side swings forward with it, the arm
    on the swing side back, as people's arms swing against their own legs; each held out arm_out from the side.
    Without a lead: the lead moves the aim earlier in the cycle, for the arm's lag behind it."""
    _, tracker = body
    targets, params = _targets(body, stance, 0.8, arm_lead=0.0)
    forward = []
    for side in range(2):
        plane, elevation, elbow = tracker.arms[side]
        forward.append(np.sin(targets[0, plane]) * targets[0, elevation])
        assert targets[0, elbow] == pytest.approx(params[0, ELBOW_BEND])
        assert np.cos(targets[0, plane]) * targets[0, elevation] == pytest.approx(params[0, ARM_OUT])
    assert forward[stance] > 0.1 and forward[1 - stance] < -0.1


def test_the_arms_aim_leads_by_arm_lead(body):
    _, tracker = body
    led, _ = _targets(body, 0, 0.05, arm_lead=0.2)
    late, _ = _targets(body, 0, 0.45, arm_lead=0.0)  # 0.4 of a step later is 0.2 of a cycle, before a touchdown
    np.testing.assert_allclose(led[0, tracker.arms.ravel()], late[0, tracker.arms.ravel()], atol=1e-9)


def test_without_arm_swing_the_arms_hold_still(body):
    _, tracker = body
    early, _ = _targets(body, 0, 0.1, arm_swing=0.0)
    late, _ = _targets(body, 0, 0.9, arm_swing=0.0)
    np.testing.assert_allclose(early[0, tracker.arms.ravel()], late[0, tracker.arms.ravel()])
    with_swing, _ = _targets(body, 0, 0.9)
    assert not np.allclose(with_swing[0, tracker.arms.ravel()], late[0, tracker.arms.ravel()])


def test_the_trunk_is_held_at_its_lean_on_the_pelvis(body):
    """myo-sim's flex_extension bends the trunk back, so a forward lean is a negative target."""
    _, tracker = body
    targets, _ = _targets(body, 0, 0.3, trunk_lean=0.2)
    assert targets[0, tracker.trunk[0]] == pytest.approx(-0.2)
    np.testing.assert_allclose(targets[0, tracker.trunk[1:]], 0.0)


def test_hands_are_held_lightly_and_feet_as_on_the_legs(body):
    _, tracker = body
    kp = tracker.stiffness(tracker.space.default[None])[0]
    legs = tracker.joints[:, :, 3].astype(int).ravel()
    others = np.setdiff1d(np.arange(len(kp)), np.concatenate([legs, tracker.trunk, tracker.arms.ravel()]))
    names = np.array(tracker.muscles.space.names)[others]
    feet = np.array([name.startswith(("subtalar", "mtp")) for name in names])
    assert feet.sum() == 4 and (kp[others][feet] == FOOT_KP).all() and (kp[others][~feet] == HAND_KP).all()
    assert (kp[tracker.trunk] == tracker.space.default[tracker.space.index("trunk_kp")]).all()


def test_the_sparse_solve_finds_the_bounded_least_squares_optimum():
    """Projected coordinate descent on a sparse gain (each muscle on at most 3 of 6 joints) reaches the optimum of
    the bounded problem, which the projected-gradient conditions check: zero gradient inside the box, pointing
    outward on its faces."""
    rng = np.random.default_rng(0)
    count, width, njoint, effort = 30, 3, 6, 0.01
    joints = np.stack([rng.choice(njoint, width, replace=False) for _ in range(count)])
    gain = rng.normal(0.0, 1.0, (count, width))
    gain[::4, 2] = 0.0  # padding slots
    wanted = rng.normal(0.0, 3.0, njoint)
    x = np.full(count, 0.5)
    _bounded_least_squares(gain, joints, wanted, effort, 2000, x)
    dense = np.zeros((njoint, count))
    for m in range(count):
        for k in range(width):
            dense[joints[m, k], m] += gain[m, k]
    grad = dense.T @ (dense @ x - wanted) + effort * x
    inside = (x > 1e-9) & (x < 1 - 1e-9)
    np.testing.assert_allclose(grad[inside], 0.0, atol=1e-6)
    assert (grad[x <= 1e-9] >= -1e-6).all() and (grad[x >= 1 - 1e-9] <= 1e-6).all()


def test_the_shipped_gait_walks_the_full_body_with_its_arms_against_its_legs(body):
    scene, tracker = body
    gait = shipped_gait("myofullbody")
    assert gait is not None and gait.controller == "fullbody_tracker"
    with Simulator(scene) as sim:
        features = run_controller(sim, tracker, gait.vector(tracker)[None], nstep=round(2.0 / scene.dt)).features(scene)
    assert not fall_mask(features).any()
    assert features.com_pos[0, -1, 0] - features.com_pos[0, 0, 0] > 1.5
    assert analyze_gait(features).measures.arm_swing[0] > 0.02
