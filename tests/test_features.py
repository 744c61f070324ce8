"""Each feature against a plain per-step loop of mj_step with named MuJoCo accessors; determinism."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from rewardloop.errors import UserError
from rewardloop.sim.bodies import SIDES
from rewardloop.sim.features import FEATURES, HAND_FEATURES, reference_table
from rewardloop.sim.rollout import Rollouts, Simulator, random_controls
from rewardloop.sim.scene import STATE_SPEC, Scene, compile_scene
from rewardloop.sim.terrain import Terrain


def _plain_loop(scene, control):
    """Step one trajectory with mj_step, reading features by name before each step. [T, ...] per name."""
    model, data = scene.model, mujoco.MjData(scene.model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    body, rows = scene.body, []
    root = model.body(body.root).id
    for ctrl in control:
        data.ctrl[:] = ctrl
        mujoco.mj_forward(model, data)
        row = {"time": data.time, "root_pos": data.site("rl_pelvis").xpos.copy(),
               "com_pos": data.subtree_com[root].copy(),
               "pelvis_up": data.site("rl_pelvis").xmat.reshape(3, 3)[:, 2].copy(),
               "ctrl": data.ctrl.copy(), "actuator_force": data.actuator_force.copy()}
        for name, ref in body.joints.items():
            row[name] = ref.sign * data.qpos[model.joint(ref.mjcf).qposadr[0]]
        for side in SIDES:
            row[f"{side}_heel_pos"] = data.site(f"rl_{side}_heel").xpos.copy()
            hand = data.body(body.hands[side]) if body.hands else data.site("rl_torso")  # armless: the torso
            row[f"{side}_hand_pos"] = hand.xpos.copy()
            foot = model.body(body.feet[side]).id
            b1, b2 = model.geom_bodyid[data.contact.geom1], model.geom_bodyid[data.contact.geom2]
            touching = (_under(model, b1, foot) & (b2 == 0)) | (_under(model, b2, foot) & (b1 == 0))
            row[f"{side}_foot_contact"] = float(touching.any())
        rows.append(row)
        mujoco.mj_step(model, data)
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}


def _under(model, bodies, ancestor):
    """[n] bool: is each body in the subtree of `ancestor`?"""
    out = []
    for b in np.atleast_1d(bodies):
        while b != ancestor and b != 0:
            b = model.body_parentid[b]
        out.append(b == ancestor)
    return np.array(out, dtype=bool)


@pytest.mark.parametrize("body", ["humanoid", "myolegs"])
def test_features_match_a_plain_loop(body):
    scene = compile_scene(Scene(body, Terrain("rough", roughness=0.05)))
    control = random_controls(scene, 2, 150, seed=4)
    with Simulator(scene, nthread=2) as sim:
        features = sim.open_loop(control).features(scene)
    expected = _plain_loop(scene, control[1])
    for name, values in expected.items():
        np.testing.assert_allclose(features[name][1], values, atol=1e-6, err_msg=name)
    # The random controls make both feet touch down and lift off at some point.
    assert 0 < features.left_foot_contact.mean() < 1


def test_derived_features_agree_with_their_definitions(humanoid_flat):
    control = random_controls(humanoid_flat, 3, 120, seed=2)
    with Simulator(humanoid_flat, nthread=2) as sim:
        f = sim.open_loop(control).features(humanoid_flat)
    # heading: the angle of the forward axis in the ground plane.
    planar = np.linalg.norm(f.pelvis_forward[..., :2], axis=-1)
    np.testing.assert_allclose(np.cos(f.heading), f.pelvis_forward[..., 0] / planar, atol=1e-9)
    # forward and lateral velocity: the root velocity rotated into the heading frame; flat ground: height = z.
    speed2 = f.forward_vel ** 2 + f.lateral_vel ** 2
    np.testing.assert_allclose(speed2, f.root_vel[..., 0] ** 2 + f.root_vel[..., 1] ** 2, atol=1e-9)
    np.testing.assert_allclose(f.root_height, f.root_pos[..., 2])
    # While the body is still upright (first 0.2 s), the yaw rate integrates to the heading change
    # (trapezoid rule, dt = 5 ms); once it tumbles, world-z rotation and heading part ways.
    rate = f.yaw_rate[:, :40]
    integrated = np.sum((rate[:, 1:] + rate[:, :-1]) / 2, axis=1) * f.dt
    np.testing.assert_allclose(integrated, f.heading[:, 39] - f.heading[:, 0], atol=0.01)
    np.testing.assert_allclose(np.diff(f.time, axis=1), f.dt)
    assert f.muscle_activation.shape == (3, 120, 0)


def test_muscle_activation_follows_excitation(myolegs_flat):
    control = np.zeros((1, 200, myolegs_flat.model.nu))
    control[:, :, 0] = 1.0  # full excitation of the first muscle
    with Simulator(myolegs_flat, nthread=1) as sim:
        f = sim.open_loop(control).features(myolegs_flat)
    assert f.muscle_activation.shape == (1, 200, 80)
    assert f.muscle_activation[0, -1, 0] > 0.9 and f.muscle_activation[0, -1, 1:].max() < 0.05


def test_rollouts_are_deterministic_across_threads_and_calls(humanoid_flat):
    control = random_controls(humanoid_flat, 4, 80, seed=9)
    with Simulator(humanoid_flat, nthread=1) as one, Simulator(humanoid_flat, nthread=2) as two:
        a, b, c = one.open_loop(control), two.open_loop(control), two.open_loop(control)
    np.testing.assert_array_equal(a.state, b.state)
    np.testing.assert_array_equal(b.state, c.state)
    np.testing.assert_array_equal(random_controls(humanoid_flat, 2, 10, seed=1),
                                  random_controls(humanoid_flat, 2, 10, seed=1))


def test_closed_loop_in_chunks_matches_open_loop(humanoid_flat):
    control = random_controls(humanoid_flat, 4, 60, seed=3)
    with Simulator(humanoid_flat, nthread=2) as sim:
        whole = sim.open_loop(control)
        seen, sensors = {}, {}

        def policy(state, sensed, t, rows):
            seen[rows.start, t] = state.copy()
            sensors[rows.start, t] = sensed.copy()
            return control[rows, t : t + 7]

        pipelined = sim.closed_loop(policy, batch=4, nstep=60, chunk=7)  # two groups of two rows, one per thread
        single = sim.closed_loop(lambda state, sensed, t, rows: control[rows, t : t + 7], batch=1, nstep=60, chunk=7)
    assert sorted(seen) == [(start, t) for start in (0, 2) for t in range(0, 60, 7)]  # ceil(60 / 7) chunks each
    for chunked in (pipelined.state, single.state):  # only the solver warm start differs from open loop
        np.testing.assert_allclose(chunked, whole.state[: len(chunked)], atol=1e-6)
    np.testing.assert_allclose(seen[2, 7], whole.state[2:, 6])
    np.testing.assert_allclose(sensors[2, 7], whole.sensordata[2:, 6])  # sensed during the chunk's last step
    adr, dim = humanoid_flat.layout.sensors["com_pos"]  # positions do not depend on the controls being applied
    np.testing.assert_allclose(sensors[0, 0][:, adr : adr + dim], whole.sensordata[:2, 0, adr : adr + dim])


def test_closed_loop_refuses_a_policy_giving_too_few_steps(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim, pytest.raises(UserError, match="chunk of 5 steps"):
        sim.closed_loop(lambda state, sensed, t, rows: np.zeros((len(state), 2, humanoid_flat.model.nu)),
                        batch=1, nstep=10, chunk=5)


def test_saved_rollouts_round_trip(tmp_path, humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        rollouts = sim.open_loop(random_controls(humanoid_flat, 1, 20, seed=0))
    rollouts.save(tmp_path / "t.npz")
    again = Rollouts.load(tmp_path / "t.npz")
    np.testing.assert_array_equal(again.state, rollouts.state)
    (tmp_path / "folder").mkdir()  # a trajectory folder (replay --out, a candidate's) holds trajectory.npz
    rollouts.save(tmp_path / "folder" / "trajectory.npz")
    np.testing.assert_array_equal(Rollouts.load(tmp_path / "folder").state, rollouts.state)


def test_reference_table_documents_every_feature(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        f = sim.open_loop(np.zeros((1, 5, humanoid_flat.model.nu))).features(humanoid_flat)
    assert set(f) == set(FEATURES) - set(HAND_FEATURES)  # a body with legs: no hand or object features
    table = reference_table()
    for name, doc in FEATURES.items():
        assert f"`{name}`" in table
        if name in HAND_FEATURES:
            continue
        rank = doc.shape.count(",") + 1
        assert f[name].ndim == rank, name
