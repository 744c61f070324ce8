"""One battery over every registered body and terrain, plus the semantic map and injuries."""

from __future__ import annotations

import subprocess
import sys

import mujoco
import numpy as np
import pytest

from rewardloop.errors import UserError
from rewardloop.sim.bodies import BODIES, get_body
from rewardloop.sim.rollout import Simulator, random_controls
from rewardloop.sim.scene import Scene, compile_scene
from rewardloop.sim.terrain import TERRAINS, Terrain


@pytest.mark.parametrize("terrain", sorted(TERRAINS))
@pytest.mark.parametrize("body", sorted(name for name, body in BODIES.items() if body.feet))  # hands: test_manipulation
def test_every_body_on_every_terrain_steps_without_nan(body, terrain):
    scene = compile_scene(Scene(body, Terrain(terrain, slope_deg=8.0, roughness=0.05, step_height=0.1)))
    with Simulator(scene, nthread=2) as sim:
        rollouts = sim.open_loop(random_controls(scene, 2, 40, seed=1))
    assert np.isfinite(rollouts.state).all() and np.isfinite(rollouts.sensordata).all()
    features = rollouts.features(scene)
    # The standing pose starts just above the terrain: 2 mm gap, so the pelvis is at its standing height.
    assert features.root_height[0, 0] == pytest.approx(scene.standing_height, abs=1e-6)
    assert 0.45 < scene.standing_height < 1.1  # from the 0.5-m Berkeley Humanoid to a person
    assert np.allclose(features.pelvis_forward[:, 0], [1, 0, 0], atol=0.05)
    assert np.allclose(features.pelvis_up[:, 0], [0, 0, 1], atol=0.05)


@pytest.mark.parametrize("body", ["humanoid", "myolegs"])
def test_semantic_map_standing_pose(body):
    scene = compile_scene(Scene(body))
    with Simulator(scene, nthread=1) as sim:
        f = sim.open_loop(np.zeros((1, 30, scene.model.nu))).features(scene)
    assert (f.left_foot_pos[0, 0, 1] > f.right_foot_pos[0, 0, 1]), "left foot must be on +y when facing +x"
    assert (f.left_toe_pos[0, 0, 0] > f.left_heel_pos[0, 0, 0]), "toes point forward (+x)"
    assert abs(f.left_knee_flexion[0, 0]) < 0.3 and abs(f.right_knee_flexion[0, 0]) < 0.3
    assert np.all(np.abs(f.left_foot_height[0, 0]) < 0.01)
    assert f.left_foot_contact[0, -1] == 1 and f.right_foot_contact[0, -1] == 1
    assert f.nonfoot_contact[0, -1] == 0
    # The feet carry the body; with muscles unexcited myolegs starts to buckle, so only a share of it.
    share = 0.5 if body == "humanoid" else 0.1
    assert share * f.weight < f.left_foot_force[0, -1] + f.right_foot_force[0, -1] < 2.0 * f.weight


def test_knee_flexion_sign_means_bent_on_every_body():
    for name in ["humanoid", "myolegs"]:
        scene = compile_scene(Scene(name))
        body, model = get_body(name), scene.model
        data = mujoco.MjData(model)
        ref = body.joints["right_knee_flexion"]
        data.qpos[:] = scene.initial_state[1 : 1 + model.nq]
        mujoco.mj_kinematics(model, data)
        straight = np.linalg.norm(data.site("rl_right_heel").xpos - data.body(body.pelvis).xpos)
        data.qpos[model.joint(ref.mjcf).qposadr[0]] = ref.sign * 1.0  # 1 rad of semantic flexion
        mujoco.mj_kinematics(model, data)
        bent = np.linalg.norm(data.site("rl_right_heel").xpos - data.body(body.pelvis).xpos)
        assert bent < straight - 0.05, name


def test_injury_weakens_named_muscles():
    healthy = compile_scene(Scene("myolegs"))
    injured = compile_scene(Scene("myolegs", injury=(("left_plantarflexors", 0.25),)))
    soleus = healthy.model.actuator("soleus_l").id
    assert injured.model.actuator_gainprm[soleus, 2] == pytest.approx(0.25 * healthy.model.actuator_gainprm[soleus, 2])
    right = healthy.model.actuator("soleus_r").id
    assert injured.model.actuator_gainprm[right, 2] == healthy.model.actuator_gainprm[right, 2]


def test_injury_on_torque_body_scales_gear():
    injured = compile_scene(Scene("humanoid", injury=(("right_knee", 0.5),)))
    assert injured.model.actuator("right_knee").gear[0] == pytest.approx(40.0)  # 80 N·m gear halved


@pytest.mark.parametrize("bad", [
    dict(body="robot"),
    dict(injury=(("spleen", 0.5),)),
    dict(injury=(("left_knee", 1.5),)),
])
def test_bad_scene_names_list_valid_choices(bad):
    with pytest.raises(UserError) as error:
        Scene(**bad)
    assert "choose one of" in str(error.value) or "within" in str(error.value)


@pytest.mark.parametrize("bad", [dict(kind="lava"), dict(kind="slope", slope_deg=80), dict(kind="rough", roughness=-1)])
def test_bad_terrain_parameters(bad):
    with pytest.raises(UserError):
        Terrain(**bad)


@pytest.mark.parametrize("terrain", [Terrain("slope", slope_deg=10), Terrain("rough", roughness=0.08, seed=3),
                                     Terrain("stairs", step_height=0.12)])
def test_terrain_height_matches_the_physics_ground(terrain):
    scene = compile_scene(Scene("humanoid", terrain))
    model, data = scene.model, mujoco.MjData(scene.model)
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-1, 12, 40), rng.uniform(-2, 2, 40)
    geomid = np.zeros(1, dtype=np.int32)
    for x, y in zip(xs, ys, strict=True):
        # Cast a ray down from 5 m; only world geoms (the terrain) are considered: bodyexclude = the root.
        distance = mujoco.mj_ray(model, data, np.array([x, y, 5.0]), np.array([0, 0, -1.0]), None, 1,
                                 model.body(scene.body.root).id, geomid)
        ground = 5.0 - distance
        expected = float(terrain.height(np.array(x), np.array(y)))
        tolerance = 0.02 if terrain.kind == "rough" else 1e-6
        if terrain.kind == "stairs" and abs(((x - 1.5) / terrain.step_depth) % 1) < 0.02:
            continue  # exactly on a step edge
        assert ground == pytest.approx(expected, abs=tolerance), (x, y)


def test_building_a_myo_body_leaves_no_mujoco_log_in_the_working_directory(tmp_path):
    code = "from rewardloop.sim.scene import Scene, compile_scene; compile_scene(Scene('myolegs'))"
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, timeout=120)
    assert list(tmp_path.iterdir()) == []


def test_scene_caches_are_bounded():
    # A policy search on rough grounds drawn afresh every generation compiles thousands of scenes (~15 MB each):
    # an unbounded cache held them all and ran a 45-minute search out of memory.
    from rewardloop.sim.terrain import rough_heights

    for cached in (compile_scene, rough_heights):
        cached.cache_clear()
    for seed in range(40):
        rough_heights(0.04, 5000 + seed)
    assert rough_heights.cache_info().currsize <= 32
    assert compile_scene.cache_info().maxsize == 32
