"""The reflex controller of the muscle legs: its muscle groups, its stance/swing switching on ground load, its
batch rows independent of each other, and a short closed-loop rollout."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from rewardloop.control.config import OptimizerConfig, SearchConfig
from rewardloop.control.controllers import reflex
from rewardloop.control.controllers.base import CONTROLLERS, WALKERS, make_controller, run_controller
from rewardloop.control.controllers.musclebody import CONTACT, GROUPS, MUSCLE_GROUPS, group_members, muscle_layout
from rewardloop.control.defaults import default_kind
from rewardloop.control.optimizer import optimize
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.sim.bodies import SIDES
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import BODY_STRIDES, WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain


@pytest.fixture(scope="module")
def legs():
    return compile_scene(Scene("myolegs", Terrain("flat"), start_speed=WALKING_START_SPEED))


def test_registered_for_the_muscle_legs_which_the_muscle_tracker_walks():
    assert CONTROLLERS["reflex"].actuator_kind == "muscle" and WALKERS["myolegs"] == "muscle_tracker"


def test_groups_cover_every_muscle_of_its_own_leg_once(legs):
    members = group_members(legs)
    names = [legs.model.actuator(a).name for a in range(legs.model.nu)]
    for side in SIDES:
        driven = [a for group in GROUPS for a in members[f"{side}_{group}"]]
        # 40 muscles a leg, each in exactly one group, all of this leg (MyoSuite names end in _l / _r).
        assert len(driven) == len(set(driven)) == 40
        assert all(names[a].endswith(f"_{side[0]}") for a in driven)
    assert sorted(a for ms in members.values() for a in ms) == list(range(80))
    # Spot checks by function: the soleus is a plantarflexor, the vasti extend the knee, iliopsoas flexes the hip.
    assert names.index("soleus_l") in members["left_SOL"] and names.index("vaslat_r") in members["right_VAS"]
    assert {names[a] for a in members["left_HFL"]} == {"iliacus_l", "psoas_l", "tfl_l"}
    assert len(MUSCLE_GROUPS) == 11


def test_layout_reads_peak_forces_and_body_weight(legs):
    layout = muscle_layout(legs)
    assert np.all(layout.peak_force > 100)  # N: every leg muscle's peak isometric force is hundreds of newtons
    assert layout.weight == pytest.approx(legs.model.body_subtreemass[0] * 9.81, rel=1e-3)  # ~75 kg -> ~735 N
    assert layout.members.shape == (2, 11, 7)  # the widest groups (hip abductors, adductors) have 7 muscles


def _loaded(legs, sensed: np.ndarray, left: float, right: float) -> np.ndarray:
    """A copy of [b, nsensor] readings with each foot's contact force set to `left`/`right` body weights (up)."""
    out, layout = sensed.copy(), muscle_layout(legs)
    for side, load in enumerate((left, right)):
        at = layout.sensors[CONTACT + side]
        out[:, at + 1 : at + 4] = (0.0, 0.0, load * layout.weight)
    return out


def test_stance_and_swing_switch_on_ground_load(legs):
    controller = make_controller("reflex", legs)
    state = legs.initial_state[None]
    with Simulator(legs, nthread=1) as sim:
        sensed = sim.sense(state)
    memory = np.zeros((1, controller.memory_size))
    params = controller.space.default[None]
    left = 1 + reflex.LEG_MEMORY * 0
    right = 1 + reflex.LEG_MEMORY * 1

    def update(left_load: float, right_load: float) -> np.ndarray:
        return controller.act(state, _loaded(legs, sensed, left_load, right_load), memory, params)

    update(0.5, 0.5)  # first update: both legs stand, both loaded
    assert memory[0, reflex.STARTED] == 1 and memory[0, left + reflex.STANCE] == memory[0, right + reflex.STANCE] == 1
    update(0.05, 0.9)  # the left foot unloads below 0.1 body weight: it lifts off and starts swinging, knee first
    assert memory[0, left + reflex.STANCE] == 0 and memory[0, left + reflex.FLEX_KNEE] == 1
    assert memory[0, right + reflex.STANCE] == 1
    update(0.15, 0.8)  # loaded again above the threshold: touchdown, stance, the swing phases cleared
    assert memory[0, left + reflex.STANCE] == 1 and memory[0, left + reflex.FLEX_KNEE] == 0


def test_stance_gluteals_answer_a_backward_lean_only_when_loaded(legs):
    # Module 3: stance hip extensors hold the trunk in proportion to the leg's load. A pelvis pitched back
    # (below trunk_lean) asks the hip flexors, not the gluteals; an unloaded stance leg gives no trunk reflex.
    controller = make_controller("reflex", legs)
    members = group_members(legs)
    state = legs.initial_state[None]
    with Simulator(legs, nthread=1) as sim:
        sensed = sim.sense(state)
    params = controller.space.vector({"trunk_lean": 0.3, "hfl_trunk_d": 0.0, "tone": 0.0})[None]
    fresh = np.zeros((1, controller.memory_size))
    loaded = controller.act(state, _loaded(legs, sensed, 1.0, 1.0), fresh.copy(), params)[0, 0]
    unloaded = controller.act(state, _loaded(legs, sensed, 0.0, 0.0), fresh.copy(), params)[0, 0]
    hfl = members["right_HFL"][0]
    # Upright pelvis, pitch ~0: error 0 - 0.3 -> hip flexors 2.0 (gain) x 0.3 x 1.0 (load) = 0.6, give or take
    # the start state's small pitch and the swing-preparation drive that the trailing leg also gets.
    assert loaded[hfl] > 0.3 and unloaded[hfl] < loaded[hfl]


def test_a_batch_gives_each_row_what_it_gets_alone(legs):
    controller = make_controller("reflex", legs)
    rng = np.random.default_rng(0)
    space = controller.space
    params = space.low + rng.uniform(0.3, 0.7, size=(3, space.size)) * (space.high - space.low)
    with Simulator(legs, nthread=1) as sim:
        together = run_controller(sim, controller, params, nstep=60)
        alone = [run_controller(sim, controller, params[i : i + 1], nstep=60) for i in range(3)]
    for i, one in enumerate(alone):
        np.testing.assert_array_equal(together.control[i], one.control[0])
    assert not np.array_equal(together.control[0], together.control[1])


def test_short_rollout_excites_muscles_within_range_every_update(legs):
    controller = make_controller("reflex", legs)
    assert controller.chunk == 5  # 10-ms updates on the 2-ms physics step
    with Simulator(legs, nthread=1) as sim:
        rollouts = run_controller(sim, controller, controller.space.default[None], nstep=150)  # 0.3 s
    control = rollouts.control[0]
    assert np.all(control >= 0.01) and np.all(control <= 1.0)
    np.testing.assert_array_equal(control[0], control[4])  # one excitation per 5-step update
    assert np.ptp(control, axis=0).max() > 0.1  # the reflexes move the excitations
    features = rollouts.features(legs)
    assert np.isfinite(features.root_height).all() and features.root_height[0, -1] > 0.7  # still up at 0.3 s


def test_the_walking_start_of_the_muscle_legs_takes_its_own_stride(legs):
    # BODY_STRIDES['myolegs']: left hip 0.436 rad (25°) flexed, right hip 0.175 rad (10°) extended, right knee
    # 0.262 rad (15°) bent; the whole body moving forward at WALKING_START_SPEED.
    state, nq = legs.initial_state, legs.model.nq
    for joint, angle in BODY_STRIDES["myolegs"].items():
        assert state[1 + legs.layout.joint_qpos[joint]] * legs.layout.joint_sign[joint] == pytest.approx(angle)
    assert state[1 + nq] == WALKING_START_SPEED


def test_policy_search_walks_the_muscle_legs_with_the_reflex(legs):
    # Policy search on myolegs with --controller reflex searches the reflex's parameters from its defaults (no
    # reflex gait is shipped; one generation of 4, 0.1 s motions: 50 steps) and returns the motion with its policy.
    assert default_kind(legs) == "plan"
    config = OptimizerConfig(kind="search", duration_s=0.1, nthread=1,
                             search=SearchConfig(population=4, generations=1, sigma=0.05, controller="reflex"))
    with load_reward(canonical("walk"), trusted=True) as reward:
        trajectory = optimize(legs, reward, config, seed=0)
    assert trajectory.policy is not None and trajectory.policy.controller == "reflex"
    assert trajectory.rollouts.control.shape == (1, 50, 80)


def test_hip_rotators_turn_the_thigh_as_the_layout_says(legs):
    # The layout's yaw sign: raising a hip's rotation angle turns that thigh left in the world (+1) or right (-1),
    # so a pelvis turning left about a planted thigh lowers (+1) or raises (-1) it. Checked on the posed body.
    layout = muscle_layout(legs)
    model, data = legs.model, mujoco.MjData(legs.model)
    for side in range(2):
        qpos, _, sign = layout.rotation[side]
        thigh = model.jnt_bodyid[model.dof_jntid[int(layout.rotation[side, 1])]]
        yaws = []
        for delta in (0.0, 0.1):
            data.qpos[:] = legs.initial_state[1 : 1 + model.nq]
            data.qpos[int(qpos)] += delta
            mujoco.mj_kinematics(model, data)
            x = data.xmat[thigh].reshape(3, 3)[:, 0]
            yaws.append(np.arctan2(x[1], x[0]))
        assert np.sign(yaws[1] - yaws[0]) == sign
        # Each leg's rotators are its own muscles, and some push each way.
        mine = np.flatnonzero(layout.rotators[side])
        assert all(a in layout.members[side] for a in mine)
        assert layout.rotators[side].max() > 0.2 and layout.rotators[side].min() < -0.2


def test_a_yawed_pelvis_excites_the_stance_rotators_that_turn_it_back(legs):
    controller = make_controller("reflex", legs)
    layout = muscle_layout(legs)
    state = legs.initial_state[None]
    with Simulator(legs, nthread=1) as sim:
        sensed = _loaded(legs, sim.sense(state), 0.5, 0.5)
    at = layout.sensors[0]  # the pelvis x axis, turned 0.3 rad left
    x, y = sensed[0, at], sensed[0, at + 1]
    sensed[0, at : at + 2] = x * np.cos(0.3) - y * np.sin(0.3), x * np.sin(0.3) + y * np.cos(0.3)

    def excitation(**gains: float) -> np.ndarray:
        params = controller.space.vector({"yaw_d": 0.0, "rot_p": 0.0, "rot_d": 0.0, **gains})[None]
        return controller.act(state, sensed, np.zeros((1, controller.memory_size)), params)[0, 0]

    added = excitation(yaw_p=2.0) - excitation(yaw_p=0.0)
    assert added.min() >= 0 and added.max() > 0.05
    for side in range(2):
        # The net push on each loaded hip's rotation turns the pelvis right, back to the heading: it raises the
        # angle where a left turn lowers it.
        assert np.sign(layout.rotators[side] @ added) == layout.rotation[side, 2]
