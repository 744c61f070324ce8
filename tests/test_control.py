"""Controller optimization: planner, low-level controllers, trajectories and configs."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

from rewardloop.control.config import RecedingConfig, SearchConfig
from rewardloop.control.controllers.lowlevel import PDController, PDGains, pd_model, posture_space
from rewardloop.control.controllers.muscles import (
    LengthMap,
    MuscleController,
    MuscleGains,
    MuscleParams,
    MuscleTorques,
    _muscle_length,
    active_curve,
    measure_lengths,
    normalised,
    passive_curve,
)
from rewardloop.control.defaults import BODY_PLANNERS, default_config, planner_for
from rewardloop.control.metrics import fall_mask
from rewardloop.control.optimizer import OptimizerConfig, PlannerConfig, optimize
from rewardloop.control.planners.mpc import RecedingHorizon, interpolate, mppi_update, shift
from rewardloop.control.planners.plants import PostureMuscle, PosturePD
from rewardloop.control.trajectory import Trajectory
from rewardloop.errors import UserError
from rewardloop.reward.base import RewardEval
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import STATE_SPEC, Scene, compile_scene
from rewardloop.sim.terrain import Terrain

TINY = PlannerConfig(samples=8, horizon_s=0.1, replan_every=4, planning_dt=0.01, knots=3, iterations=1)


class StandTall:
    """A real two-term reward: pelvis at standing height, torso upright."""

    def __call__(self, features: Features) -> RewardEval:
        height = np.exp(-(((features.root_height - features.standing_height) / 0.1) ** 2))
        return RewardEval({"height": height, "upright": features.torso_up[..., 2]}, {"height": 1.0, "upright": 0.5})


def test_interpolate_and_shift():
    knots = np.array([[[0.0], [1.0], [4.0]]])  # knots at 0, 0.5 and 1 s
    # t = 0.25 s is half way between knots 0 and 1 -> 0.5; t = 0.75 -> (1 + 4) / 2 = 2.5; t = 2 clamps -> 4
    assert np.allclose(interpolate(knots, 1.0, np.array([0.25, 0.75, 2.0]))[0, :, 0], [0.5, 2.5, 4.0])
    # shifted by 0.5 s the knots read the old plan at 0.5, 1.0 and 1.5 (held) -> 1, 4, 4
    assert np.allclose(shift(knots[0], 1.0, 0.5)[:, 0], [1.0, 4.0, 4.0])


def test_pd_inside_mujoco_matches_numpy_law_on_own_motors(humanoid_flat):
    # the planner's converted motors and the executed NumPy law give the same motion at the body's own step
    gains = PDGains()
    space = posture_space(humanoid_flat)
    target = np.clip(humanoid_flat.initial_state[1 + space.qpos_adr] + 0.3, space.low, space.high)
    targets = np.broadcast_to(target, (1, 40, space.size))
    inside = dataclasses.replace(humanoid_flat, model=pd_model(humanoid_flat, gains))
    with Simulator(inside, nthread=1) as sim:
        a = sim.open_loop(targets)
    controller = PDController(humanoid_flat, gains)
    with Simulator(humanoid_flat, nthread=1) as sim:
        b = sim.closed_loop(lambda s, sensed, t, rows: controller(s, targets[rows, t])[:, None], batch=1, nstep=40,
                            chunk=1)
    assert np.allclose(a.state, b.state, atol=1e-6)
    # motor commands stay within the body's own control range [-1, 1]
    assert np.abs(b.control).max() <= 1.0


def test_pd_reaches_target_posture(humanoid_flat):
    plant = PosturePD(humanoid_flat, PDGains(), planning_dt=None)
    space = plant.space
    start = humanoid_flat.initial_state[1 + space.qpos_adr]
    elbow = space.names.index("right_elbow")
    target = start.copy()
    target[elbow] = np.clip(start[elbow] + 0.6, space.low[elbow], space.high[elbow])
    with Simulator(humanoid_flat, nthread=1) as sim:
        motion = plant.execute(sim, humanoid_flat.initial_state, np.broadcast_to(target, (1, 200, space.size)))
    # 1 s later the elbow is within 0.1 rad of a 0.6 rad move (PD settles in a few tenths of a second)
    assert abs(motion.state[0, -1, 1 + space.qpos_adr[elbow]] - target[elbow]) < 0.1


def test_muscle_curves_match_mujoco(myolegs_flat):
    import mujoco

    model, params = myolegs_flat.model, MuscleParams.of(myolegs_flat)
    table = params.table()
    count = 41  # lengths and velocities on both sides of every piece of the curves, and beyond their ends
    for i in (0, 17, 55):
        norm = np.linspace(0.2, 2.2, count)
        length = params.length_low[i] + (norm - params.range_low[i]) * params.optimal[i]
        velocity = np.linspace(-1.5, 1.5, count) * params.optimal[i] * params.vmax[i]
        for k in range(count):  # the controller's compiled curves vs MuJoCo's own
            nl, nv = normalised(length[k], velocity[k], table, i)
            active = active_curve(nl, nv, params.lmin[i], params.lmax[i], params.fvmax[i])
            passive = passive_curve(nl, params.lmax[i], params.fpmax[i])
            gain = mujoco.mju_muscleGain(length[k], velocity[k], model.actuator_lengthrange[i],
                                         model.actuator_acc0[i], model.actuator_gainprm[i, :9])
            bias = mujoco.mju_muscleBias(length[k], model.actuator_lengthrange[i], model.actuator_acc0[i],
                                         model.actuator_biasprm[i, :9])
            assert np.isclose(-params.peak[i] * active, gain, rtol=1e-9, atol=1e-9)
            assert np.isclose(-params.peak[i] * passive, bias, rtol=1e-9, atol=1e-9)


def test_length_map_matches_posed_body(myolegs_flat):
    space = posture_space(myolegs_flat)
    lengths = LengthMap(myolegs_flat, space, samples=1500)
    postures = np.random.default_rng(7).uniform(space.low, space.high, size=(300, space.size))
    measured, crosses = measure_lengths(myolegs_flat, space, postures)
    error = lengths.lengths(postures) - measured
    # a cubic in the <= 4 joints each muscle crosses: RMS 2.7 mm over the whole joint range (muscles are 5-50 cm)
    assert np.sqrt(np.mean(error**2)) < 0.004
    assert crosses.sum(axis=1).min() >= 1 and lengths.joints.shape == (crosses.shape[0], crosses.sum(axis=1).max())
    # the soleus crosses the ankle and subtalar joints of its own leg only
    soleus = [myolegs_flat.model.actuator(int(a)).name for a in myolegs_flat.layout.muscles].index("soleus_r")
    assert {space.names[j] for j in np.flatnonzero(crosses[soleus])} == {"ankle_angle_r", "subtalar_angle_r"}
    # the controller's moment arms (the polynomial's own slope) equal central differences of its lengths
    width = lengths.joints.shape[1]  # 4 on myolegs
    z, slope, h = np.linspace(-0.3, 0.5, width), np.empty(width), 1e-6
    for m in (0, 6, 33):  # adductor brevis, biceps femoris long head (hip and knee), soleus
        _muscle_length(lengths.coef[m], z, slope)
        for k in range(width):
            step = np.eye(width)[k] * h
            up, down = (_muscle_length(lengths.coef[m], z + d, np.empty(width)) for d in (step, -step))
            assert np.isclose(slope[k], (up - down) / (2 * h), atol=1e-7)


def test_muscle_torques_give_the_wanted_torques(myolegs_flat):
    # 30 N·m of right hip flexion and 40 N·m of right ankle plantarflexion at the standing posture: the activations
    # the least squares pick, set on the body, give those torques within 1.5 N·m; the other joints get at most
    # 8 N·m (the effort term and the muscles crossing two joints), and no muscle works harder than it must.
    torques = MuscleTorques(myolegs_flat, interval_s=0.004, fit_samples=1500)
    space, model = torques.space, myolegs_flat.model
    wanted = np.zeros(space.size)
    hip, ankle = space.names.index("hip_flexion_r"), space.names.index("ankle_angle_r")
    wanted[hip], wanted[ankle] = 30.0, -40.0
    activations = torques.activations(myolegs_flat.initial_state[None], wanted[None])[0]
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, myolegs_flat.initial_state, STATE_SPEC)
    data.act[myolegs_flat.layout.act_of_muscle] = activations
    mujoco.mj_forward(model, data)
    got = data.qfrc_actuator[space.dof_adr]
    assert abs(got[hip] - 30.0) < 1.5 and abs(got[ankle] + 40.0) < 1.5
    assert np.abs(np.delete(got, [hip, ankle])).max() < 8.0
    assert activations.min() >= 0.0 and activations.max() < 0.5


def test_muscle_torques_hold_the_legs_standing_with_ankle_feedback(myolegs_flat):
    # A PD law on the standing posture through muscle torques, the ankles also answering the centre of mass's
    # lead over the feet (5 rad per m), stands 4 s; the same PD alone tips backwards within 2.5 s.
    torques = MuscleTorques(myolegs_flat, interval_s=0.004, fit_samples=1500)
    space, layout = torques.space, myolegs_flat.layout
    kinds = [name.split("_")[0] for name in space.names]
    kp = np.array([{"hip": 400.0, "knee": 300.0, "ankle": 300.0}.get(kind, 50.0) for kind in kinds])
    ankles = np.array([kind == "ankle" for kind in kinds])
    rest = myolegs_flat.initial_state[1 + space.qpos_adr]
    com, heels = layout.sensors["com_pos"][0], [layout.sensors[f"{side}_heel_pos"][0] for side in ("left", "right")]

    def standing(feedback: float):
        def policy(state, sensed, step, rows):
            lead = sensed[:, com] - 0.5 * (sensed[:, heels[0]] + sensed[:, heels[1]]) - 0.05  # [b] m, along x
            target = rest + np.outer(-feedback * lead, ankles)
            q, rate = state[:, 1 + space.qpos_adr], state[:, 1 + model.nq + space.dof_adr]
            return np.repeat(torques(state, kp * (target - q) - 0.1 * kp * rate)[:, None], 2, axis=1)
        return policy

    model = myolegs_flat.model
    with Simulator(myolegs_flat, nthread=1) as sim:
        held = sim.closed_loop(standing(5.0), batch=1, nstep=2000, chunk=2)
        alone = sim.closed_loop(standing(0.0), batch=1, nstep=1250, chunk=2)
    assert held.state[0, :, 3].min() > 0.85  # pelvis height (m) all along
    assert alone.state[0, -1, 3] < 0.7 and alone.state[0, -1, 1] < -0.3  # fallen, backwards


def test_muscle_controller_drives_knee_to_target(myolegs_flat):
    controller = MuscleController(myolegs_flat, MuscleGains(), fit_samples=1500)
    space = controller.space
    knee = space.names.index("knee_angle_r")
    target = myolegs_flat.initial_state[1 + space.qpos_adr].copy()
    target[knee] += 0.8  # bend the right knee by 0.8 rad (46°)
    chunk = 2  # 4 ms updates at the 2 ms step

    def policy(state, sensed, step, rows):
        return np.repeat(controller(state, target[None])[:, None], chunk, axis=1)

    with Simulator(myolegs_flat, nthread=1) as sim:
        driven = sim.closed_loop(policy, batch=1, nstep=250, chunk=chunk)
        passive = sim.open_loop(np.zeros((1, 250, myolegs_flat.model.nu)))
    angle = driven.state[0, -1, 1 + space.qpos_adr[knee]]
    slack = passive.state[0, -1, 1 + space.qpos_adr[knee]]
    # after 0.5 s the knee is within 0.1 rad of 0.8; without excitation it folds far past it (> 1.2 rad)
    assert abs(angle - target[knee]) < 0.1
    assert slack > 1.2
    assert driven.control.min() >= 0.0 and driven.control.max() <= 1.0


def test_planner_improves_reward_over_initial_plan(humanoid_flat):
    plant = PosturePD(humanoid_flat, PDGains(), planning_dt=0.01)
    planner = RecedingHorizon(plant, StandTall(), mppi_update, dataclasses.replace(TINY, samples=16), seed=0)
    state = humanoid_flat.initial_state.copy()
    state[1 + humanoid_flat.model.nq + 0] = 0.8  # pushed forward at 0.8 m/s: holding still tips over
    plan = np.repeat(plant.start(state)[None], TINY.knots, axis=0)
    first = None
    with Simulator(plant.planner_scene, nthread=1) as sim:
        for _ in range(4):
            plan, samples = planner.improve(sim, state, plan)
            first = samples.returns[0] if first is None else first
        _, final = planner.improve(sim, state, plan)
    # sample 0 is the unperturbed plan: its return after 4 updates beats the initial plan's
    assert final.returns[0] > first


def test_optimize_is_deterministic_and_saves(humanoid_flat, tmp_path):
    config = OptimizerConfig(kind="mppi", planner=TINY, duration_s=0.1, nthread=1)
    a = optimize(humanoid_flat, StandTall(), config, seed=3)
    b = optimize(humanoid_flat, StandTall(), config, seed=3)
    assert np.array_equal(a.rollouts.state, b.rollouts.state)
    assert a.rollouts.state.shape[:2] == (1, 20)  # 0.1 s at 5 ms
    # 20 steps replanned every 4 -> 5 plans × 8 samples × 10 planning steps (0.1 s at 10 ms)
    assert a.planner_steps == 5 * 8 * 10
    a.save(tmp_path)
    loaded = Trajectory.load(tmp_path)
    assert np.array_equal(loaded.rollouts.control, a.rollouts.control)
    assert loaded.metrics == a.metrics and loaded.term_stats == a.term_stats


def test_muscle_planner_is_deterministic_with_pipelined_threads(myolegs_flat):
    """The muscle plant's sampled rollouts are split across threads; the result does not depend on how."""
    planner = dataclasses.replace(TINY, planning_dt=0.004)
    runs = [optimize(myolegs_flat, StandTall(), OptimizerConfig(planner=planner, duration_s=0.016, nthread=n),
                     seed=1).rollouts.state for n in (2, 2, 1)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])


def test_muscle_controller_interval_must_be_whole_physics_steps(myolegs_flat):
    """Planner rollouts and the executed motion must update the muscle controller at the same rate."""
    PostureMuscle(myolegs_flat, MuscleGains(interval_s=0.008), planning_dt=0.004)  # 2 and 4 steps per update
    for interval, planning_dt in [(0.006, 0.004), (0.004, 0.01), (0.003, None)]:
        with pytest.raises(UserError, match="whole number of physics steps"):
            PostureMuscle(myolegs_flat, MuscleGains(interval_s=interval), planning_dt=planning_dt)


def test_the_ankle_strategy_keeps_the_muscle_legs_standing_where_their_start_posture_topples():
    """Held at their start posture the muscle legs fall backwards in about 1.4 s on rough ground; the ankle strategy
    under the same plan keeps them up for 3 s, the ankles turned by a few hundredths of a radian."""
    scene = compile_scene(Scene("myolegs", Terrain("rough")))
    state = np.asarray(scene.initial_state, dtype=float)
    fall, lean = [], []
    for balance in (0.0, 4.0):
        plant = PostureMuscle(scene, MuscleGains(interval_s=0.008, balance=balance), planning_dt=None)
        hold = np.repeat(plant.start(state)[None, None], round(3.0 / scene.dt), axis=1)
        with Simulator(scene) as sim:
            features = plant.execute(sim, state[None], hold).features(scene)
        fall.append(bool(fall_mask(features).any()))
        lean.append(float(features.com_pos[0, -1, 0] - features.com_pos[0, 0, 0]))
    assert fall == [True, False]
    assert lean[0] < -0.3 and abs(lean[1]) < 0.1
    assert PostureMuscle(scene, MuscleGains(), planning_dt=None).balance is None  # none unless asked (a hand)


class KneesUp:
    """A reward for bending the left knee 1 rad: the plan must leave the start posture to earn it."""

    def __call__(self, features: Features) -> RewardEval:
        return RewardEval({"knee": -((features.left_knee_flexion - 1.0) ** 2)}, {"knee": 1.0})


def test_a_leaking_plan_leaves_the_start_posture_less(humanoid_flat):
    """With the plan pulled half way back to the start at each replan, the knee the reward asks to bend bends less."""
    bend = []
    for leak in (0.0, 0.5):
        planner = dataclasses.replace(TINY, leak=leak)
        motion = optimize(humanoid_flat, KneesUp(), OptimizerConfig(planner=planner, duration_s=0.2, nthread=1), seed=0)
        bend.append(float(motion.rollouts.features(humanoid_flat).left_knee_flexion[0, -1]))
    assert bend[0] > bend[1] + 0.4  # 1.04 against 0.17 rad (2026-12-06)


def test_predictive_sampling_baseline_runs(humanoid_flat):
    seen = []
    config = OptimizerConfig(kind="predictive", planner=TINY, duration_s=0.05, nthread=1)
    trajectory = optimize(humanoid_flat, StandTall(), config, seed=0, progress=seen.append)
    assert trajectory.rollouts.control.shape == (1, 10, humanoid_flat.model.nu)
    assert seen[-1].fraction == 1.0 and len(seen) == 3  # 10 steps in plans of 4, 4, 2


@pytest.mark.parametrize("changes", [dict(samples=1), dict(horizon_s=0), dict(elite_fraction=1.5),
                                     dict(noise=0.01, min_noise=0.1), dict(replan_every=0), dict(leak=1.0),
                                     dict(leak=-0.1)])
def test_bad_planner_config(changes):
    with pytest.raises(UserError):
        PlannerConfig(**changes)


def test_bad_optimizer_config():
    with pytest.raises(UserError, match="mppi"):
        OptimizerConfig(kind="ilqg")  # type: ignore[arg-type]
    with pytest.raises(UserError):
        OptimizerConfig(duration_s=-1)


def test_humanoid_replans_less_often_on_rough_ground(humanoid_flat):
    rough = compile_scene(Scene("humanoid", Terrain("rough")))
    flat_config, rough_config = default_config(humanoid_flat), default_config(rough, samples=16)
    assert flat_config.planner == BODY_PLANNERS["torque"]
    assert rough_config.planner.replan_every == 3 and rough_config.planner.samples == 16
    assert planner_for("muscle", "rough") == BODY_PLANNERS["muscle"]


def test_the_muscle_legs_climb_stairs_with_the_receding_horizon_planner_by_default():
    # The stairs gait of the muscle legs falls under ±0.1 % parameter noise; on stairs their searches' motions run
    # with the planner looking 2 s ahead (defaults.TERRAIN_SEARCHES), in optimize, the loop and replay --receding.
    from rewardloop.control.defaults import receding_for, search_for
    from rewardloop.control.planners.gait_planning import STEERING_PLANNER, planner_settings
    from rewardloop.loop.config import RunConfig
    from rewardloop.loop.run import body_optimizer
    from rewardloop.tasks import get_task

    stairs = RecedingConfig(horizon_s=2.0)
    legs_on_stairs = compile_scene(Scene("myolegs", Terrain("stairs")))
    assert default_config(legs_on_stairs).search.receding == stairs == receding_for("muscle", "stairs")
    searching = RunConfig(locomotion="search")
    assert body_optimizer(get_task("walk-stairs", body="myolegs"), searching).search.receding == stairs
    # the loop's default, the gait planner, looks as far ahead there
    planned = body_optimizer(get_task("walk-stairs", body="myolegs"), RunConfig())
    assert planned.kind == "plan" and planner_settings(planned, legs_on_stairs).horizon_s == 2.0
    assert planner_settings(planned, legs_on_stairs).samples == 16  # the humanoid's gait planner looks at 32, 2 s ahead
    humanoid_flat = compile_scene(Scene("humanoid", Terrain("flat")))
    humanoid = planner_settings(default_config(humanoid_flat, kind="plan"), humanoid_flat)
    assert (humanoid.samples, humanoid.stay_weight, humanoid.horizon_s) == (32, 2.0, 2.0)
    assert planner_settings(planned, legs_on_stairs).stay_weight == STEERING_PLANNER.stay_weight == 3.0
    for body, kind, ground in (("myolegs", "muscle", "flat"), ("humanoid", "torque", "stairs")):  # elsewhere off
        assert default_config(compile_scene(Scene(body, Terrain(ground)))).search.receding is None
        assert receding_for(kind, ground) == RecedingConfig()
        assert body_optimizer(get_task(f"walk-{ground}", body=body), searching).search.receding is None
    # what a search asks for itself stays; the plain planner (--receding) takes the ground's settings
    own = RecedingConfig(samples=8)
    assert default_config(legs_on_stairs, search={"receding": own, "hold": 0.0}).search.receding == own
    assert search_for("muscle", "stairs", SearchConfig(receding=RecedingConfig())).receding == stairs
    assert search_for("muscle", "stairs", SearchConfig(hold=0.0)) == SearchConfig(hold=0.0, receding=stairs)


def test_the_loop_plans_steps_for_every_motion_made_of_them():
    # Stepping on the spot and walking backward go to the gait planner like forward walks and turns where the body's
    # gaits start from rest; standing still stays with posture-space MPPI; policy search (locomotion 'search') keeps
    # forward walks and turns only.
    from rewardloop.loop.config import RunConfig
    from rewardloop.loop.run import body_optimizer
    from rewardloop.tasks import task_from_description

    kinds = {text: body_optimizer(task_from_description(text, "humanoid"), RunConfig()).kind
             for text in ("walk forward", "turn left", "step in place", "walk backward", "stand still")}
    assert kinds == {"walk forward": "plan", "turn left": "plan", "step in place": "plan", "walk backward": "plan",
                     "stand still": "mppi"}
    searching = RunConfig(locomotion="search")
    assert body_optimizer(task_from_description("walk forward", "myolegs"), searching).kind == "search"
    assert body_optimizer(task_from_description("step in place", "myolegs"), searching).kind == "mppi"
    # the muscle legs' gaits cannot start from rest: their steps from rest go to MPPI with the stepping settings
    for text in ("step in place", "walk backward"):
        legs = body_optimizer(task_from_description(text, "myolegs"), RunConfig())
        assert legs.kind == "mppi" and legs.planner == planner_for("muscle", "flat", stepping=True)
        assert legs.planner.horizon_s == 1.0 and legs.planner.muscle.balance == 4.0 and legs.planner.leak == 0.01
    assert body_optimizer(task_from_description("walk forward", "myolegs"), RunConfig()).kind == "plan"


def test_standing_still_plans_further_ahead_than_walking():
    # Standing is balance: the humanoid's MPPI looks 1.2 s ahead (a 0.6-s horizon stepped about and fell at 5 s on
    # rough ground); the muscle legs stand under the ankle strategy with 16 samples. The settings apply to standing
    # only.
    from rewardloop.control.defaults import STANDING_PLANNERS
    from rewardloop.loop.config import RunConfig
    from rewardloop.loop.run import body_optimizer
    from rewardloop.sim.terrain import Terrain as Ground
    from rewardloop.tasks import task_from_description

    standing = body_optimizer(task_from_description("stand still", "humanoid", Ground("rough")), RunConfig())
    assert standing.kind == "mppi" and standing.planner.horizon_s == STANDING_PLANNERS["torque"]["horizon_s"] == 1.2
    assert standing.planner.replan_every == 6 and planner_for("torque", "rough").horizon_s == 0.6
    legs = body_optimizer(task_from_description("stand still", "myolegs"), RunConfig())
    assert legs.planner == planner_for("muscle", "flat", standing=True)
    assert legs.planner.muscle.balance == 4.0 and legs.planner.samples == 16
    assert planner_for("muscle", "flat") == BODY_PLANNERS["muscle"] and BODY_PLANNERS["muscle"].muscle.balance == 0
