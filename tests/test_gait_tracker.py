"""The gait tracker: people's joint curves on a phase clock, with SIMBICON balance on top.

Rollouts are short (at most 0.3 s of simulated time, batches of 2)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from rewardloop.control.controllers.base import Carry, make_controller, run_controller
from rewardloop.control.controllers.gait_tracker import (
    CLOCK,
    PARAMETERS,
    SLOPE,
    STAIR_EXTEND,
    STANCE,
    TRIPPED,
    curve_at,
    ground_at,
    human_curves,
    landing_reach,
    landing_waiver,
    rise_ahead,
    stair_bend,
    step_clock,
    step_rise,
    swing_lift,
)
from rewardloop.control.controllers.humanoid import AI, CONTACT, KN, follow_heading, wrap
from rewardloop.critic.gait import human_gait_reference
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import STAIRS_START, Terrain, ground_map, unevenness_map


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
        np.testing.assert_array_equal(carry.memory, np.zeros((2, 7)))
        run_controller(sim, controller, params, nstep=50, carry=carry, initial_state=first.state[:, -1])
    np.testing.assert_array_equal(carry.memory[:, STANCE], [0.0, 0.0])
    assert np.all(carry.memory[:, CLOCK] > 0) and np.all(carry.memory[:, CLOCK] <= 0.25 + 1e-9)


def test_a_turn_rate_changed_mid_motion_turns_the_wanted_heading_on_from_where_it_is():
    """A planner that changes turn_rate after 1 s walking straight gets a heading error that grows from 0 at the
    new rate, not a jump to rate × 1 s; a rate held from the start gives rate × time exactly."""
    memory = np.zeros(2)
    straight = [follow_heading(memory, 0, 0.0, 0.01 * k, 0.0) for k in range(100)]
    turning = [follow_heading(memory, 0, 0.3, 0.01 * k, 0.0) for k in range(100, 103)]
    assert straight == [0.0] * 100 and turning == pytest.approx([0.0, 0.003, 0.006])
    held, times = np.zeros(2), (0.0, 2.5, 7.3)
    assert [follow_heading(held, 0, 0.3, t, 0.1) for t in times] == [wrap(0.3 * t - 0.1) for t in times]


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


def test_lift_bends_the_swing_knee_in_mid_swing_only():
    p, memory = PARAMETERS.vector({}), np.zeros(3)
    lifts = [swing_lift(memory, p, 0.4, 0.0, 0.0, False, phase, False, True) for phase in (0.3, 0.5, 0.625, 0.75, 1.0)]
    np.testing.assert_allclose(lifts, [0.0, 0.0, 0.2, 0.4, 0.0], atol=1e-12)


def test_a_stumble_in_mid_swing_adds_trip_lift_until_the_next_step():
    # touch_min 0.7: a touchdown may end the step from 85 % of the swing leg's cycle; a contact at 60 % is a stumble.
    p, memory = PARAMETERS.vector({"touch_min": 0.7}), np.zeros(3)
    lift = functools.partial(swing_lift, memory, p, 0.0, 0.5, 0.0)  # trip_lift 0.5
    assert lift(True, 0.52, False, True) == 0.0 and memory[TRIPPED] == 0.0  # toe-off, not a stumble
    assert lift(True, 0.6, False, True) == pytest.approx(0.5) and memory[TRIPPED] == 1.0
    assert lift(False, 0.7, False, True) == pytest.approx(0.5)  # off the ground again: still lifting
    assert lift(False, 0.9, False, True) == pytest.approx(0.2)  # fading over the last quarter
    assert lift(True, 0.9, False, True) == pytest.approx(0.2)  # a touchdown now is a landing
    assert lift(False, 0.55, True, True) == 0.0 and memory[TRIPPED] == 0.0  # a new step clears it
    assert lift(True, 0.9, False, False) == pytest.approx(0.2) and memory[TRIPPED] == 1.0  # too far back: a stumble


@pytest.mark.parametrize("terrain", [Terrain("flat"), Terrain("slope", slope_deg=10.0),
                                     Terrain("rough", roughness=0.08, seed=3), Terrain("stairs", step_height=0.12)])
def test_the_ground_map_reads_the_terrains_height(terrain):
    # The map is what the tracker sees; Terrain.height is the physics' ground (test_scenes checks it by ray casts).
    # Nearest samples 2 cm apart: within the ground's change over 1.4 cm; stair edges themselves are skipped.
    ground, rng = ground_map(terrain), np.random.default_rng(1)
    xs, ys = rng.uniform(-1.0, 12.0, 300), rng.uniform(-2.0, 2.0, 300)
    if terrain.kind == "stairs":
        keep = np.abs((xs - STAIRS_START) / terrain.step_depth - np.round((xs - STAIRS_START) / terrain.step_depth))
        xs, ys = xs[keep * terrain.step_depth > 0.015], ys[keep * terrain.step_depth > 0.015]
    seen = np.array([ground_at(ground, x, y) for x, y in zip(xs, ys, strict=True)])
    tolerance = {"flat": 0.0, "slope": 0.003, "rough": 0.01, "stairs": 1e-6}[terrain.kind]
    np.testing.assert_allclose(seen, terrain.height(xs, ys), atol=tolerance)


def test_the_unevenness_map_is_the_rms_of_the_heights_about_their_local_mean():
    # At a few samples of a rough ground, brute force over the UNEVEN_WINDOW squares; zero on flat ground and on a
    # slope (a plane is its own local mean) away from the map's ends; bigger bumps, more unevenness.
    rough = Terrain("rough", seed=3)
    ground, uneven, half = ground_map(rough).astype(np.float64), unevenness_map(rough), 25
    for i, j in [(300, 300), (500, 280), (800, 330)]:
        detail = [[ground[a, b] - ground[a - half:a + half + 1, b - half:b + half + 1].mean()
                   for b in range(j - half, j + half + 1)] for a in range(i - half, i + half + 1)]
        assert uneven[i, j] == pytest.approx(np.sqrt(np.mean(np.square(detail))), rel=1e-4)
    assert unevenness_map(Terrain("flat")).max() == 0.0
    assert np.abs(unevenness_map(Terrain("slope", slope_deg=10.0))[100:-100]).max() < 1e-6
    doubled = unevenness_map(Terrain("rough", roughness=0.08, seed=3))
    np.testing.assert_allclose(doubled[100:-100, 100:-100], 2 * uneven[100:-100, 100:-100], rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize(("stance_x", "swing_toe_x", "rise"), [
    (1.0, 1.0, 0.0),  # the first stair 0.5 m ahead of the toe: out of sight
    (1.0, 1.3, 0.08),  # 0.2 m ahead: one stair up
    (1.7, 1.65, 0.08),  # standing on the first stair, the second within sight
    (1.7, 2.2, 0.16),  # the swing toe above the second stair, the third 0.1 m ahead: two up from the stance foot
    (2.5, 1.0, 0.0),  # the ground ahead of the swing toe lower than the stance foot's: no rise
])
def test_rise_ahead_is_the_highest_ground_in_sight_above_the_stance_foot(stance_x, swing_toe_x, rise):
    # Sensors: 11 three-number slots; the left foot (0) stands, its heel and toe 0.1 m either side of stance_x;
    # the heading is +x. Stairs of 8 cm rise and 40 cm run from x = 1.5.
    sensors, s = np.arange(0, 33, 3), np.zeros(33)
    s[sensors[5]], s[sensors[6]], s[sensors[8]] = stance_x - 0.1, stance_x + 0.1, swing_toe_x
    ground = ground_map(Terrain("stairs", step_height=0.08))
    assert rise_ahead(s, sensors, ground, 0, 1.0, 0.0) == pytest.approx(rise, abs=1e-6)


@pytest.mark.parametrize(("stance_x", "swing_x", "rise"), [(1.7, 1.2, 0.08), (2.1, 1.7, 0.08), (1.2, 1.7, 0.0),
                                                          (0.5, 1.0, 0.0)])
def test_step_rise_is_how_far_the_stance_foots_ground_is_above_the_swing_foots(stance_x, swing_x, rise):
    # Feet 0.2 m long (heel 0.1 m behind the middle); the left foot (0) stands. Stairs of 8 cm from x = 1.5.
    sensors, s = np.arange(0, 33, 3), np.zeros(33)
    s[sensors[5]], s[sensors[6]] = stance_x - 0.1, stance_x + 0.1
    s[sensors[7]], s[sensors[8]] = swing_x - 0.1, swing_x + 0.1
    ground = ground_map(Terrain("stairs", step_height=0.08))
    assert step_rise(s, sensors, ground, 0) == pytest.approx(rise, abs=1e-6)


@pytest.mark.parametrize(("swing_x", "look_land", "ends"), [(1.7, 0.5, True), (1.7, 0.0, False), (1.2, 0.5, False)])
def test_a_touchdown_on_higher_ground_may_end_the_step_early_by_look_land(swing_x, look_land, ends):
    # The left foot (0) stands on flat ground at x = 1.0, 0.2 s into a 0.45-s step (progress 0.44 < touch_min 0.7);
    # the right foot touches down, on the first 8-cm stair (x = 1.7) or before it (1.2). With look_land 0.5 a
    # touchdown on the stair may end the step from progress 0.35: it does; on level ground, or without look_land,
    # it is too early.
    sensors, s = np.arange(0, 33, 3), np.zeros(33)
    s[sensors[5]], s[sensors[6]] = 0.9, 1.1
    s[sensors[7]], s[sensors[8]] = swing_x - 0.1, swing_x + 0.1
    s[sensors[CONTACT + 1]] = 1.0  # the right foot touches
    memory, p = np.array([0.0, 0.2, 0.0, 0.0]), PARAMETERS.vector({"step_time": 0.45, "touch_min": 0.7})
    early = landing_waiver(look_land, s, sensors, ground_map(Terrain("stairs", step_height=0.08)), memory)
    assert early == (look_land if swing_x > 1.5 else 0.0)
    stance = step_clock(memory, p, s, sensors, 0.005, np.empty(2), early, True)
    assert (stance == 1) == ends and (memory[CLOCK] < 0.01) == ends  # a new step: its clock restarts


@pytest.mark.parametrize(("swing_x", "land_ahead", "ends"), [(1.3, 0.0, True), (0.6, 0.0, True), (1.3, 0.4, True),
                                                            (0.6, 0.4, False), (0.95, 0.4, True), (0.85, 0.4, False)])
def test_a_touchdown_behind_the_centre_of_mass_is_a_stumble_with_land_ahead(swing_x, land_ahead, ends):
    # The left foot (0) stands at x = 1.0, the centre of mass above x = 1.0; late in the step (progress 0.9 >
    # touch_min) the right foot touches down, its middle at swing_x. land_ahead 0.4 (REACH_BEHIND 0.5): the step
    # ends only with the foot at most 0.1 m behind the centre of mass; 0 (off): anywhere.
    sensors, s = np.arange(0, 33, 3), np.zeros(33)
    s[sensors[3]] = 1.0  # the centre of mass
    s[sensors[5]], s[sensors[6]] = 0.9, 1.1
    s[sensors[7]], s[sensors[8]] = swing_x - 0.1, swing_x + 0.1
    s[sensors[CONTACT + 1]] = 1.0
    memory, p = np.array([0.0, 0.405, 0.0, 0.0]), PARAMETERS.vector({"step_time": 0.45, "touch_min": 0.7})
    reach_ok = landing_reach(land_ahead, s, sensors, memory, 1.0, 0.0)
    assert reach_ok == ends
    assert (step_clock(memory, p, s, sensors, 0.005, np.empty(2), 0.0, reach_ok) == 1) == ends


@pytest.mark.parametrize("stairs", [False, True])
def test_a_stair_seen_ahead_bends_the_swing_knee_more_and_nothing_on_flat_ground(stairs):
    # Right leg in stance at mid-step, the body moved so the left (swing) toe is 0.2 m before the first 8-cm stair:
    # look_lift 2 rad/m flexes the left knee's command (soft knees, joint_kp 1: not at the motor's limit); on flat
    # ground no command changes.
    scene = compile_scene(Scene("humanoid", Terrain("stairs") if stairs else Terrain("flat"),
                                start_speed=WALKING_START_SPEED))
    controller = make_controller("gait_tracker", scene)
    toe = scene.layout.sensors["left_toe_pos"][0]
    params = np.stack([PARAMETERS.vector({"joint_kp": 1.0}), PARAMETERS.vector({"joint_kp": 1.0, "look_lift": 2.0})])
    with Simulator(scene, nthread=1) as sim:
        toe_x = run_controller(sim, controller, params[:1], nstep=1).sensordata[0, 0, toe]
        state = np.repeat(scene.initial_state[None], 2, axis=0)
        state[:, 1] += STAIRS_START - 0.2 - toe_x  # the root's x
        carry = Carry.fresh(controller, scene, 2)
        carry.memory[:, STANCE], carry.memory[:, CLOCK] = 1.0, PARAMETERS.default[PARAMETERS.index("step_time")] / 2
        controls = run_controller(sim, controller, params, nstep=1, carry=carry, initial_state=state).control[:, 0]
    knee, sign = int(controller.layout.legs[0, KN, 2]), controller.layout.legs[0, KN, 3]
    if stairs:
        assert sign * (controls[1, knee] - controls[0, knee]) > 0.05
    else:
        np.testing.assert_array_equal(controls[1], controls[0])


@pytest.mark.parametrize(("stance_x", "swing_x", "phases", "stepped", "bends"), [
    (1.7, 1.2, (0.0, 0.5), True, (0.0, 0.4)),  # just stepped up onto the first stair: the stance knee bent 5 × 8 cm
    (1.7, 1.2, (0.5 * STAIR_EXTEND, 0.65), False, (0.0, 0.2)),  # half way through straightening it
    (1.7, 1.2, (STAIR_EXTEND, 0.8), False, (0.0, 0.0)),  # straight again
    (1.2, 1.7, (0.4, 0.875), False, (0.2, 0.0)),  # the swing foot above the stair, half way into the landing bend
    (1.2, 1.7, (0.3, 0.6), False, (0.0, 0.0)),  # ... before the swing's last quarter: no bend
    (1.2, 0.7, (0.3, 0.95), False, (0.0, 0.0)),  # level ground: no bend
])
def test_stair_knee_bends_the_knee_onto_a_step_and_straightens_it_through_stance(stance_x, swing_x, phases,
                                                                                 stepped, bends):
    # The left foot (0) stands at stance_x, the right swings at swing_x (feet 0.2 m long); 8-cm stairs from x = 1.5;
    # stair_knee 5 rad/m. Mid-step, the memory holds the 8-cm rise the left foot stepped up; a new step (`stepped`)
    # latches it from the feet (from 0 here).
    sensors, s = np.arange(0, 33, 3), np.zeros(33)
    s[sensors[5]], s[sensors[6]] = stance_x - 0.1, stance_x + 0.1
    s[sensors[7]], s[sensors[8]] = swing_x - 0.1, swing_x + 0.1
    memory = np.array([0.0, 0.1, 0.0, 0.0, 0.0 if stepped else 0.08])
    ground = ground_map(Terrain("stairs", step_height=0.08))
    bent = stair_bend(5.0, s, sensors, ground, memory, 0, np.array(phases), stepped)
    np.testing.assert_allclose(bent, bends, atol=1e-9)


def test_the_reactions_are_off_by_default():
    defaults = PARAMETERS.named(PARAMETERS.default)
    reactions = ("lift", "trip_lift", "ankle_lat", "slope_hip", "slope_trunk", "slope_ankle", "look_lift", "look_hip",
                 "look_push", "look_land", "land_ahead", "stair_knee")
    assert [defaults[name] for name in reactions] == [0.0] * len(reactions)


@pytest.mark.parametrize(("terrain", "degrees"), [(Terrain("flat"), 0.0), (Terrain("slope", slope_deg=5.0), 5.0)])
def test_the_tracker_measures_the_slope_at_a_touchdown(terrain, degrees):
    # The shipped gait's first touchdown after the start comes within 0.75 s; the slope between the feet's lowest
    # points then reads the ground's within half a degree.
    from rewardloop.control.search.policy import shipped_gait
    scene = compile_scene(Scene("humanoid", terrain, start_speed=WALKING_START_SPEED))
    controller, gait = make_controller("gait_tracker", scene), shipped_gait("humanoid")
    carry = Carry.fresh(controller, scene, 1)
    with Simulator(scene, nthread=1) as sim:
        run_controller(sim, controller, gait.vector(controller)[None], nstep=150, carry=carry)
    assert carry.memory[0, STANCE] == 1.0  # the right foot has landed
    assert np.degrees(carry.memory[0, SLOPE]) == pytest.approx(degrees, abs=0.5)


def test_ankle_lat_rolls_the_stance_foot_one_way_or_the_other_by_its_sign(humanoid_walking):
    # Pushed left (+y) at the start, the CoM moves sideways; ankle_lat -0.8 and 0.8 must roll the left (stance)
    # ankle to opposite sides of where it is with 0.
    controller = make_controller("gait_tracker", humanoid_walking)
    params = np.stack([PARAMETERS.vector({"ankle_lat": a}) for a in (-0.8, 0.0, 0.8)])
    carry = Carry.fresh(controller, humanoid_walking, 3)
    state = np.repeat(humanoid_walking.initial_state[None], 3, axis=0)
    state[:, 1 + humanoid_walking.model.nq + 1] += 0.5  # root's sideways velocity
    with Simulator(humanoid_walking, nthread=1) as sim:
        rollouts = run_controller(sim, controller, params, nstep=20, carry=carry, initial_state=state)
    layout = controller.layout
    left_inversion = rollouts.state[:, -1, 1 + int(layout.legs[0, AI, 0])]  # [3] rad
    below, above = left_inversion[0] - left_inversion[1], left_inversion[2] - left_inversion[1]
    assert below * above < 0 and min(abs(below), abs(above)) > 0.02
