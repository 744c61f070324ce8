"""Library terms against hand-computed values and plain per-sample loops, on synthetic features."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rewardloop.critic.gait import human_gait_reference
from rewardloop.reward import library as L
from rewardloop.reward.canonical import CADENCE_LOW, CADENCE_TOP, canonical
from rewardloop.reward.library import TERMS, library_reference
from rewardloop.reward.runtime import FeatureView, compile_program
from rewardloop.sim.features import FEATURES

SCALARS = {"dt": 0.1, "mass": 40.0, "weight": 392.4, "standing_height": 1.0}


def fake(batch=2, steps=6, seed=0, **override):
    """Random features of every vocabulary name with plausible shapes; contacts are 0/1."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, doc in FEATURES.items():
        sizes = {"nu": 4, "nm": 3}
        extra = tuple(sizes.get(d, 0) or int(d) for d in doc.shape.strip("[]").split(", ")[2:])
        arrays[name] = rng.normal(size=(batch, steps, *extra))
        if name.endswith("contact"):
            arrays[name] = (arrays[name] > 0).astype(float)
    arrays.update({k: np.asarray(v, dtype=float) for k, v in override.items()})
    return FeatureView(arrays, SCALARS)


def one(**values):
    """Features of a single sample (B = T = 1) from scalars / 3-vectors."""
    f = fake(1, 1)
    arrays = {k: f[k] for k in f}
    for k, v in values.items():
        arrays[k] = np.asarray(v, dtype=float).reshape((1, 1, *np.shape(v)))
    return FeatureView(arrays, SCALARS)


def test_every_term_returns_batch_shape_and_finite_values():
    f = fake(3, 7)
    for name, term in TERMS.items():
        values = term.function(f)
        assert values.shape == (3, 7), name
        assert np.isfinite(values).all(), name
        assert term.sign in "+-" and term.units and term.meaning, name


def test_sign_convention_penalties_are_never_positive():
    f = fake(4, 20, seed=3)
    for name, term in TERMS.items():
        if term.sign == "-":
            assert (term.function(f) <= 1e-12).all(), name


def test_height_and_base_height_by_hand():
    # root 0.9 m, standing 1.0 m: error -0.1 -> height = exp(-(0.1/0.1)^2) = e^-1; base_height = -0.01
    f = one(root_height=0.9)
    assert L.height(f)[0, 0] == pytest.approx(math.exp(-1))
    assert L.base_height(f)[0, 0] == pytest.approx(-0.01)
    assert L.alive(f)[0, 0] == 1.0 and L.alive(one(root_height=0.5))[0, 0] == 0.0


def test_upright_velocity_heading_by_hand():
    f = one(torso_up=[0.6, 0.0, 0.8], forward_vel=1.0, lateral_vel=-0.3, heading=math.pi / 3, yaw_rate=0.8)
    assert L.upright(f)[0, 0] == pytest.approx(0.8)
    assert L.forward_velocity(f, cap=0.5)[0, 0] == 0.5
    # ((1.0 - 1.2)^2 + 0.3^2) / 0.5^2 = (0.04 + 0.09) / 0.25 = 0.52
    assert L.velocity_tracking(f)[0, 0] == pytest.approx(math.exp(-0.52))
    assert L.side_velocity(f)[0, 0] == pytest.approx(-0.3)
    assert L.heading(f)[0, 0] == pytest.approx(0.5)  # cos 60°
    assert L.yaw_rate(f)[0, 0] == pytest.approx(math.exp(-1))  # (0.8 - 0.5) / 0.3 = 1


def test_balance_uses_feet_in_contact():
    # left foot at (0, 0.1) in contact, right at (0.4, -0.1) in the air: support = left foot; CoM at (0.3, 0.5)
    f = one(com_pos=[0.3, 0.5, 1.0], left_foot_pos=[0, 0.1, 0], right_foot_pos=[0.4, -0.1, 0],
            left_foot_contact=1.0, right_foot_contact=0.0)
    assert L.balance(f)[0, 0] == pytest.approx(-0.5)  # hypot(0.3, 0.4)
    # no foot in contact: midpoint (0.2, 0) -> distance hypot(0.1, 0.5)
    f = one(com_pos=[0.3, 0.5, 1.0], left_foot_pos=[0, 0.1, 0], right_foot_pos=[0.4, -0.1, 0],
            left_foot_contact=0.0, right_foot_contact=0.0)
    assert L.balance(f)[0, 0] == pytest.approx(-math.hypot(0.1, 0.5))


def test_capture_point_leads_the_com_by_its_velocity_and_is_measured_to_the_feet_segment():
    # CoM (0.1, 0) moving at (1, 0.5) m/s; lead 0.3 s -> capture point (0.4, 0.15). Feet side by side at x = 0.2,
    # y = ±0.1: the segment less its 5-cm margins runs from y = -0.05 to 0.05, so the nearest point is (0.2, 0.05).
    f = one(com_pos=[0.1, 0.0, 0.9], com_vel=[1.0, 0.5, 0.0], left_foot_pos=[0.2, 0.1, 0],
            right_foot_pos=[0.2, -0.1, 0])
    assert L.capture_point(f)[0, 0] == pytest.approx(-math.sqrt(0.2**2 + 0.1**2 + 1e-4))
    assert L.capture_point(f, lead_s=0.0)[0, 0] == pytest.approx(-math.sqrt(0.1**2 + 1e-4))
    # Mid-stride, feet at (0, 0.1) and (0.6, -0.1): the point is beside the segment, at its perpendicular distance.
    f = one(com_pos=[0.1, 0.0, 0.9], com_vel=[1.0, 0.5, 0.0], left_foot_pos=[0.0, 0.1, 0],
            right_foot_pos=[0.6, -0.1, 0])
    perpendicular = abs(0.1 * -0.2 - 0.15 * 0.6) / math.hypot(0.6, 0.2)
    assert L.capture_point(f)[0, 0] == pytest.approx(-math.sqrt(perpendicular**2 + 1e-4))


def test_capture_point_in_a_frame_moving_at_the_target_speed_charges_only_the_speed_off_the_target():
    # Feet side by side at x = 0.2 (segment y in [-0.05, 0.05]); CoM at (0.2, 0) walking 1.2 m/s along +x.
    walking = {"com_pos": [0.2, 0.0, 0.9], "left_foot_pos": [0.2, 0.1, 0], "right_foot_pos": [0.2, -0.1, 0]}
    f = one(com_vel=[1.2, 0.0, 0.0], heading=0.0, **walking)
    assert L.capture_point(f)[0, 0] == pytest.approx(-math.sqrt(0.36**2 + 1e-4))  # 0.3 s x 1.2 m/s ahead
    assert L.capture_point(f, speed=1.2)[0, 0] == pytest.approx(-0.01)  # at the target: nothing but the smoothing
    assert L.capture_point(f, speed=1.0)[0, 0] == pytest.approx(-math.sqrt(0.06**2 + 1e-4))  # 0.2 m/s too fast
    # The frame moves along the heading: facing +y (90°) and walking along +y at the target costs nothing.
    f = one(com_vel=[0.0, 1.2, 0.0], heading=math.pi / 2, **walking)
    assert L.capture_point(f, speed=1.2)[0, 0] == pytest.approx(-0.01)
    # A [B, T] target works step by step: at the walk's 1.2 m/s, then at 1.0 m/s (the walk 0.2 m/s too fast).
    steps = {k: np.tile(v, (1, 2, 1)) for k, v in walking.items()}
    f = fake(1, 2, com_vel=np.tile([1.2, 0.0, 0.0], (1, 2, 1)), heading=np.zeros((1, 2)), **steps)
    assert L.capture_point(f, speed=np.array([[1.2, 1.0]])) == pytest.approx(
        np.array([[-0.01, -math.sqrt(0.06**2 + 1e-4)]]))
    with pytest.raises(ValueError):  # a target that is neither a number nor [B, T]-shaped fails clearly
        L.capture_point(f, speed=np.array([1.2, 1.0, 0.8]))


def test_feet_follow_compares_mean_foot_speed_with_com_speed():
    # feet at 0.4 and 1.0 m/s forward (mean 0.7), CoM at 1.0 m/s: -0.3
    f = one(com_vel=[1.0, 0, 0], left_foot_vel=[0.4, 0, 0], right_foot_vel=[1.0, 0.3, 0])
    assert L.feet_follow(f)[0, 0] == pytest.approx(-0.3)


def test_feet_crossing_and_distance_in_heading_frame():
    # heading 90° (facing +y): the body's left is -x. Left foot at x=-0.2, right at x=0.1: separation 0.3 m
    f = one(heading=math.pi / 2, left_foot_pos=[-0.2, 0, 0], right_foot_pos=[0.1, 0, 0])
    assert L.feet_crossing(f)[0, 0] == 0.0
    assert L.feet_distance(f, low=0.1, high=0.25)[0, 0] == pytest.approx(-0.05)
    crossed = one(heading=math.pi / 2, left_foot_pos=[0.1, 0, 0], right_foot_pos=[-0.05, 0, 0])
    assert L.feet_crossing(crossed)[0, 0] == pytest.approx(-(0.05 + 0.15))


def test_contact_posture_and_effort_terms_by_hand():
    f = one(nonfoot_contact=2.0, left_knee_flexion=0.4, right_knee_flexion=0.2, left_foot_contact=1.0,
            right_foot_contact=0.0, left_ankle_dorsiflexion=0.3, right_ankle_dorsiflexion=0.5,
            left_hip_adduction=0.3, right_hip_adduction=0.0, muscle_activation=[0.5, 0.0, 1.0],
            actuator_force=[1.0, -2.0, 0.0, 3.0], left_foot_height=0.02, right_foot_height=0.05)
    assert L.nonfoot_contact(f)[0, 0] == -2.0
    assert L.knee_extension(f)[0, 0] == pytest.approx(-0.5 * (0.16 + 0.04))
    assert L.knee_extension(f, stance_only=True)[0, 0] == pytest.approx(-0.08)
    assert L.ankle_stance(f)[0, 0] == pytest.approx(-0.09)
    assert L.knee_distance(f)[0, 0] == pytest.approx(-0.2)
    assert L.muscle_effort(f)[0, 0] == pytest.approx(-(0.25 + 0 + 1) / 3)
    assert L.torques(f)[0, 0] == pytest.approx(-(1 + 4 + 0 + 9) / 4)
    assert L.foot_clearance(f)[0, 0] == pytest.approx(-(0.08 - 0.05) ** 2)  # only the swinging right foot


def test_joint_posture_and_limits_against_a_loop():
    f = fake(2, 5, seed=1)
    pose = {"knee_flexion": 0.3}
    expected = np.zeros((2, 5))
    limits = np.zeros((2, 5))
    for b in range(2):
        for t in range(5):
            errors = [(f[f"{s}_{j}"][b, t] - pose.get(j, 0.0)) ** 2 for s in L.SIDES for j in L.JOINTS]
            expected[b, t] = -sum(errors) / len(errors)
            for s in L.SIDES:
                for j, (low, high) in L.JOINT_RANGES.items():
                    q = f[f"{s}_{j}"][b, t]
                    limits[b, t] -= max(0.0, low + 0.1 - q) + max(0.0, q - high + 0.1)
    np.testing.assert_allclose(L.joint_posture(f, pose=pose), expected)
    np.testing.assert_allclose(L.joint_limits(f), limits)


def test_timing_terms_against_a_loop():
    contact_l = np.array([[1, 0, 0, 0, 1, 1, 0, 1]], dtype=float)
    contact_r = np.array([[0, 0, 1, 1, 0, 0, 1, 1]], dtype=float)
    f = fake(1, 8, left_foot_contact=contact_l, right_foot_contact=contact_r)
    # left touches down at t=4 after 3 samples in the air (0.3 s) and at t=7 after 1 (0.1 s);
    # right touches down at t=2 after 2 samples from the window start (0.2 s) and at t=6 after 2 (0.2 s).
    expected = np.zeros((1, 8))
    expected[0, 4], expected[0, 7], expected[0, 2], expected[0, 6] = -0.1, -0.3, -0.2, -0.2
    np.testing.assert_allclose(L.feet_air_time(f, target=0.4), expected, atol=1e-12)
    # 4 touchdowns in 0.8 s = 5 steps/s; |5 - 2| / 2 = 1.5
    np.testing.assert_allclose(L.cadence(f, target=2.0), np.full((1, 8), -1.5))
    # duty 4/8 vs 4/8 -> 0, plus |std hip_l - std hip_r|
    sym = abs(f["left_hip_flexion"][0].std() - f["right_hip_flexion"][0].std())
    np.testing.assert_allclose(L.gait_symmetry(f), np.full((1, 8), -sym))


def test_slip_smoothness_toes_and_bobbing_against_a_loop():
    f = fake(2, 4, seed=5)
    slip, smooth, toes, bob = (np.zeros((2, 4)) for _ in range(4))
    for b in range(2):
        com = f["com_height"][b]
        for t in range(4):
            for s in L.SIDES:
                v = f[f"{s}_foot_vel"][b, t]
                slip[b, t] -= f[f"{s}_foot_contact"][b, t] * (v[0] ** 2 + v[1] ** 2)
                d = f[f"{s}_toe_pos"][b, t, :2] - f[f"{s}_heel_pos"][b, t, :2]
                h = f["heading"][b, t]
                toes[b, t] += 0.5 * (d[0] * math.cos(h) + d[1] * math.sin(h)) / math.hypot(*d)
            if t:
                smooth[b, t] = -np.mean((f["ctrl"][b, t] - f["ctrl"][b, t - 1]) ** 2)
            bob[b, t] = -(com[t] - com.mean()) ** 2
    np.testing.assert_allclose(L.foot_slip(f), slip)
    np.testing.assert_allclose(L.action_smoothness(f), smooth)
    np.testing.assert_allclose(L.toe_direction(f), toes)
    np.testing.assert_allclose(L.com_height_variance(f), bob)
    assert L.com_height_variance(f).mean(axis=1) == pytest.approx(-f["com_height"].var(axis=1))


def test_library_reference_lists_every_term():
    text = library_reference()
    for name, term in TERMS.items():
        assert f"`lib.{name}(f" in text and term.units in text


# --- terms from the gait analysis: phase, human curves, swing height, cadence band, arm swing --------------------

def contacts(length, touchdowns, stance=30):
    """[1, length] 0/1 contact that is on for `stance` samples from each touchdown sample."""
    on = np.zeros((1, length))
    for start in touchdowns:
        on[0, start : start + stance] = 1.0
    return on


def gait_view(left, right, dt=0.01, **override):
    """Synthetic features with the given [B, T] foot contacts, samples dt apart."""
    f = fake(left.shape[0], left.shape[1], left_foot_contact=left, right_foot_contact=right, **override)
    return FeatureView({k: f[k] for k in f}, {**SCALARS, "dt": dt})


def plain_phase(touchdowns, length, period):
    """One leg's phase by the definition, one sample at a time: touchdown sample list -> [length]."""
    out = np.zeros(length)
    for t in range(length):
        before = [k for k in touchdowns if k <= t]
        after = [k for k in touchdowns if k > t]
        if before and after:
            out[t] = (t - before[-1]) / (after[0] - before[-1])
        else:
            anchor = before[-1] if before else (touchdowns[0] if touchdowns else 0)
            out[t] = ((t - anchor) / period) % 1.0
    return out


def test_gait_phase_by_hand():
    # dt 0.01 s. Left touches down at 20, 120, 220 (stride 100 samples); right only at 170 (so it borrows the left
    # stride of 100). Left at t=70 is half-way (0.5); before the first touchdown it runs back: t=0 -> -20/100 mod 1
    # = 0.8; after the last it runs on: t=260 -> 0.4. Right at t=200 -> 0.3, at t=100 -> -70/100 mod 1 = 0.3.
    f = gait_view(contacts(300, [20, 120, 220]), contacts(300, [170]))
    left, right = L._gait_phases(f, stride_s=1.1)
    assert [left[0, t] for t in (0, 20, 70, 220, 260)] == pytest.approx([0.8, 0.0, 0.5, 0.0, 0.4])
    assert [right[0, t] for t in (100, 170, 200)] == pytest.approx([0.3, 0.0, 0.3])
    # A foot that never touches down is half a cycle from the other; with no touchdown at all the left leg starts
    # its cycle at the window's start and runs at stride_s (0.5 s = 50 samples): t=25 -> 0.5, the right 0.0.
    left, right = L._gait_phases(gait_view(contacts(300, [20, 120, 220]), np.ones((1, 300))), stride_s=1.1)
    np.testing.assert_allclose(right, np.mod(left + 0.5, 1.0))
    left, right = L._gait_phases(gait_view(np.ones((1, 300)), np.ones((1, 300))), stride_s=0.5)
    assert (left[0, 25], right[0, 25]) == pytest.approx((0.5, 0.0))


def test_gait_phase_matches_a_plain_loop_and_ignores_contact_flicker():
    rng = np.random.default_rng(7)
    length, rows = 400, []
    for _ in range(5):  # irregular strides, sometimes a single touchdown or none
        starts = np.cumsum(rng.integers(80, 140, size=rng.integers(0, 5))).tolist()
        rows.append([s for s in starts if s < length - 60])
    left = np.concatenate([contacts(length, s, stance=40) for s in rows])
    right = np.ones_like(left)  # standing on the right foot throughout: no touchdown there
    flicker = left.copy()
    for b, starts in enumerate(rows):  # a 0.01-s lift in each stance, a 0.02-s touch in each swing
        flicker[b, [s + 20 for s in starts]] = 0.0
        flicker[b, [s + 55 for s in starts]] = flicker[b, [s + 56 for s in starts]] = 1.0
    assert (L._touchdowns(flicker).sum(axis=1) > 2 * np.array([len(s) for s in rows])).any()  # raw: too many
    phase, _ = L._gait_phases(gait_view(flicker, right), stride_s=1.1)
    for b, starts in enumerate(rows):
        period = (starts[-1] - starts[0]) / (len(starts) - 1) if len(starts) > 1 else 110.0
        np.testing.assert_allclose(phase[b], plain_phase(starts, length, period), atol=1e-12, err_msg=str(starts))


def test_human_gait_tracking_is_one_on_the_human_curves():
    # Joint angles that are exactly people's mean curves at each leg's phase score 1; 0.1 rad off on every tracked
    # joint scores exp(-0.1² / 0.3²) = exp(-1/9).
    left_c, right_c = contacts(300, [20, 120, 220]), contacts(300, [70, 170, 270])
    left, right = L._gait_phases(gait_view(left_c, right_c), stride_s=1.1)
    angles = {f"{side}_{j}": np.interp(phase, L.HUMAN_GAIT_PHASE, L.HUMAN_GAIT[j])
              for side, phase in (("left", left), ("right", right)) for j in L.TRACKED_JOINTS}
    f = gait_view(left_c, right_c, **angles)
    np.testing.assert_allclose(L.human_gait_tracking(f, joints=L.TRACKED_JOINTS), 1.0)
    off = gait_view(left_c, right_c, **{k: v + 0.1 for k, v in angles.items()})
    np.testing.assert_allclose(L.human_gait_tracking(off), math.exp(-1 / 9))
    np.testing.assert_allclose(L.human_gait_tracking(off, joints="knee_flexion", sigma=0.1), math.exp(-1))


def test_human_gait_reference_is_the_gait_analysis_reference_in_radians():
    from rewardloop.critic.gait import JOINTS, human_gait_reference

    reference = human_gait_reference()
    np.testing.assert_allclose(L.HUMAN_GAIT_PHASE, reference.phase)
    for j, joint in enumerate(JOINTS):
        np.testing.assert_allclose(np.degrees(L.HUMAN_GAIT[joint]), reference.mean[j], atol=1e-9)
    # people at heel strike: hip flexed about 36°, knee nearly straight; peak swing knee flexion about 60°
    assert np.degrees(L.HUMAN_GAIT["hip_flexion"][0]) == pytest.approx(35.8, abs=0.1)
    assert 55 < np.degrees(max(L.HUMAN_GAIT["knee_flexion"])) < 70


def test_swing_height_limit_by_hand():
    # left foot in the air 0.25 m up (0.1 over the 0.15 limit), right foot on the ground: -0.1 m
    f = one(left_foot_contact=0.0, left_foot_height=0.25, right_foot_contact=1.0, right_foot_height=0.3)
    assert L.swing_height_limit(f)[0, 0] == pytest.approx(-0.1)
    assert L.swing_height_limit(f, limit=0.3)[0, 0] == 0.0


def test_cadence_band_by_hand():
    # dt 0.1 s. Touchdowns: left at 1 and 6, right at 4 and 11 -> steps 1→4 (0.3 s, 3.33 steps/s), 4→6 (0.2 s,
    # 5 steps/s), 6→11 (0.5 s, 2 steps/s, inside [1.5, 2.2]). Before t=1 and after t=11 the window holds only
    # 0.1 s of the step under way: its rate could be anything up to 10 steps/s, so no penalty.
    left = np.array([[0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0]], dtype=float)
    right = np.array([[0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1]], dtype=float)
    expected = np.zeros((1, 12))
    expected[0, 1:4], expected[0, 4:6] = -(10 / 3 - 2.2), -(5 - 2.2)
    np.testing.assert_allclose(L.cadence_band(gait_view(left, right, dt=0.1)), expected)
    # Standing for 1.2 s without a step: the step under way lasts at least 1.2 s, at most 0.83 steps/s.
    standing = np.ones((1, 12))
    np.testing.assert_allclose(L.cadence_band(gait_view(standing, standing, dt=0.1)), -(1.5 - 1 / 1.2))


def test_canonical_walks_cadence_band_follows_the_target_speed():
    # Standing height 1 m: the canonical speed is 1.5 m/s, its band 1.5 to 0.6022 x sqrt(9.81) = 1.886 steps/s. Steps
    # every 0.5 s (2 steps/s) lie 0.11 above it; at a target of 3 m/s the band is scaled by 2 ** 0.58 = 1.49 (2.24-2.82)
    # and 2 lies 0.24 below; at 0.75 m/s the band is people's as at 1.5.
    left, right = contacts(300, [10, 110, 210], stance=60), contacts(300, [60, 160, 260], stance=60)
    f = gait_view(left, right)
    inside = slice(10, 260)  # whole steps: from the first touchdown to the last
    top = CADENCE_TOP * np.sqrt(9.81)
    plain = compile_program(canonical("walk").source)["cadence"](f)
    np.testing.assert_allclose(plain[0, inside], -(2.0 - top))
    fast = compile_program(canonical("walk", speed=3.0).source)["cadence"](f)
    np.testing.assert_allclose(fast[0, inside], -(CADENCE_LOW * 2**0.58 - 2.0))
    slow = compile_program(canonical("walk", speed=0.75).source)["cadence"](f)  # below the canonical speed: unscaled
    np.testing.assert_allclose(slow[0, inside], -(2.0 - top))


def test_canonical_cadence_band_top_is_peoples_mean_plus_sd():
    people = human_gait_reference().values["cadence_dimensionless"]
    assert people.mean + people.sd == pytest.approx(CADENCE_TOP, abs=1e-9)


def test_cadence_counts_debounced_touchdowns():
    # dt 0.01: one real touchdown per foot; a 0.01-s lift in stance and a 0.02-s touch in swing are not steps.
    left, right = contacts(100, [10], stance=40), contacts(100, [60], stance=40)
    left[0, 30], left[0, 70:72] = 0.0, 1.0
    # 2 touchdowns in 1 s = 2 steps/s; |2 - 1.8| / 1.8
    np.testing.assert_allclose(L.cadence(gait_view(left, right)), -0.2 / 1.8)


def test_arm_swing_by_hand():
    # Hip flexion 0.3 sin(ωt); the left hand 0.05 m ahead of the torso along the heading times -sin (against the
    # left hip), the right hand +sin (with it). Left: 0.05 / 0.1 = 0.5; right: -0.5; mean 0.
    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)[None]
    heading = np.full_like(t, np.pi / 2)  # facing +y
    torso = np.zeros((1, 200, 3))
    hand = lambda ahead: torso + np.stack([0 * t, ahead, 0 * t], axis=-1)  # noqa: E731
    swing = {"heading": heading, "torso_pos": torso, "left_hip_flexion": 0.3 * np.sin(t),
             "right_hip_flexion": 0.3 * np.sin(t), "time": t}
    f = fake(1, 200, left_hand_pos=hand(-0.05 * np.sin(t)), right_hand_pos=hand(-0.05 * np.sin(t)), **swing)
    np.testing.assert_allclose(L.arm_swing(f), 0.5)
    f = fake(1, 200, left_hand_pos=hand(-0.05 * np.sin(t)), right_hand_pos=hand(0.05 * np.sin(t)), **swing)
    np.testing.assert_allclose(L.arm_swing(f), 0.0, atol=1e-12)
    f = fake(1, 200, left_hand_pos=hand(-0.3 * np.sin(t)), right_hand_pos=hand(-0.05 * np.sin(t)), **swing)
    np.testing.assert_allclose(L.arm_swing(f), 0.5 * (1.0 + 0.5))  # the left arm's ratio is clipped at 1
    armless = fake(1, 200, left_hand_pos=torso, right_hand_pos=torso, **swing)
    np.testing.assert_array_equal(L.arm_swing(armless), 0.0)


@pytest.mark.parametrize("call, message", [
    (lambda f: L.human_gait_tracking(f, joints=("elbow",)), "joints must be a non-empty tuple"),
    (lambda f: L.human_gait_tracking(f, sigma=0.0), "must be > 0"),
    (lambda f: L.swing_height_limit(f, limit=-0.1), "limit"),
    (lambda f: L.cadence_band(f, low=2.0, high=1.5), "low < high"),
    (lambda f: L.arm_swing(f, amplitude=0.0), "amplitude"),
])
def test_gait_terms_reject_bad_parameters(call, message):
    with pytest.raises(ValueError, match=message):
        call(fake(1, 5))


def test_validator_checks_tuple_parameters_against_their_choices():
    from rewardloop.reward.program import RewardProgram
    from rewardloop.reward.validate import ProgramError

    source = "def g(f):\n    return lib.human_gait_tracking(f, joints={})\n\nWEIGHTS = {{'g': 1.0}}\n"
    RewardProgram.from_source(source.format('("knee_flexion", "ankle_dorsiflexion")'))
    with pytest.raises(ProgramError, match="joints must be one of"):
        RewardProgram.from_source(source.format('("knee_flexion", "elbow")'))


# --- the gait terms on real motions ------------------------------------------------------------------------------

GAIT_PROGRAM = """
def tracking(f):
    return lib.human_gait_tracking(f, joints=("hip_flexion", "knee_flexion", "ankle_dorsiflexion"))

def swing_height(f):
    return lib.swing_height_limit(f, limit=0.05)

def cadence(f):
    return lib.cadence_band(f)

def arms(f):
    return lib.arm_swing(f, amplitude=0.02)

WEIGHTS = {"tracking": 1.0, "swing_height": 1.0, "cadence": 0.5, "arms": 0.5}
"""


@pytest.fixture(scope="module")
def motions():
    """2 s of the humanoid from the walking start: the gait machine's stage-4 gait (a robust walk with quick steps,
    shipped until the gait tracker's), the same gait with its arm swing 0.4 larger, zero torques (it collapses)
    and random torques; and 0.4 s of myolegs."""
    from rewardloop.control.controllers.base import make_controller, run_controller
    from rewardloop.control.search.policy import Policy
    from rewardloop.sim.rollout import Simulator, random_controls
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
    from rewardloop.sim.terrain import Terrain

    gait = Policy.load(Path(__file__).parents[1] / "rewardloop/control/gaits/humanoid-gait_machine.json")
    scene = compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))
    controller = make_controller(gait.controller, scene)
    params = np.repeat(gait.vector(controller)[None], 2, axis=0)
    params[1, controller.space.index("arm_swing")] += 0.4
    nstep = int(2.0 / scene.dt)
    others = np.concatenate([np.zeros((1, nstep, scene.model.nu)), random_controls(scene, 1, nstep, seed=1)])
    myolegs = compile_scene(Scene("myolegs", Terrain("flat")))
    with Simulator(scene, nthread=1) as sim:
        walking = run_controller(sim, controller, params, nstep=nstep).features(scene)
        other = sim.open_loop(others).features(scene)
    with Simulator(myolegs, nthread=1) as sim:
        legs = sim.open_loop(random_controls(myolegs, 2, 200, seed=0)).features(myolegs)
    return {"walking": walking, "other": other, "myolegs": legs}


def test_touchdowns_are_the_gait_analysis_touchdowns_and_the_landings_that_end_a_gap_open_from_the_start(motions):
    # The analysis judges a whole motion, where a foot off the ground at the first sample is the body settling onto
    # it; the terms also score the planner's look-ahead windows, which begin mid-stride, where that landing ends a
    # swing. They keep it.
    from rewardloop.critic.gait import detect_events

    f = motions["walking"]
    events = detect_events(f).touchdowns
    for side, (mine, contact) in enumerate(zip(L._gait_touchdowns(f), L._both(f, "foot_contact"), strict=True)):
        rows, samples = np.nonzero(mine)
        theirs = events[events[:, 1] == side][:, [0, 2]]
        airborne = L._clean_contact(np.asarray(contact), f.dt)[:, 0] < 0.5  # [B] off the ground at the first sample
        first = np.concatenate([[True], rows[1:] != rows[:-1]])
        start_landings = first & airborne[rows]
        assert start_landings.any()  # both walks start with a foot in the air
        np.testing.assert_array_equal(np.stack([rows, samples], axis=1)[~start_landings], theirs)
        assert len(theirs) >= 4  # two strides or more per foot in 2 s, both motions


def test_human_gait_tracking_scores_the_gait_above_collapse_and_flailing(motions):
    gait = L.human_gait_tracking(motions["walking"]).mean(axis=1)
    other = L.human_gait_tracking(motions["other"]).mean(axis=1)
    assert gait.min() > 2 * other.max()


def test_gait_terms_on_a_walk_with_quick_steps(motions):
    f = motions["walking"]
    cadence = L.cadence_band(f)
    assert (cadence <= 0).all() and cadence.mean() < 0  # the humanoid steps faster than people (~2.9 steps/s)
    assert L.swing_height_limit(f).max() == 0.0 and L.swing_height_limit(f, limit=0.02).min() < 0
    arms = L.arm_swing(f)[:, 0]
    assert arms[1] > arms[0] > 0  # the gait machine's arm swing moves the hands against the legs


def test_gait_terms_work_on_myolegs_without_arms(motions):
    f = motions["myolegs"]
    for name in ("human_gait_tracking", "swing_height_limit", "cadence_band", "arm_swing"):
        values = L.TERMS[name].function(f)
        assert values.shape == (2, 200) and np.isfinite(values).all(), name
    np.testing.assert_array_equal(f["left_hand_pos"], f["torso_pos"])
    np.testing.assert_array_equal(L.arm_swing(f), 0.0)


def test_gait_terms_run_in_the_sandbox_and_in_exports(motions):
    from rewardloop.reward.export import module_source
    from rewardloop.reward.program import RewardProgram
    from rewardloop.reward.sandbox import SandboxedReward

    program = RewardProgram.from_source(GAIT_PROGRAM)
    f = motions["walking"]
    assert {"left_foot_contact", "right_ankle_dorsiflexion", "left_hand_pos"} <= set(program.reads)
    with SandboxedReward(program) as reward:
        isolated = reward(f)
    expected = program.evaluate_trusted(f)
    for name in program.term_names:  # the same up to the order of float sums over copied arrays
        np.testing.assert_allclose(isolated.terms[name], expected.terms[name], rtol=1e-12, atol=1e-12)
    namespace: dict = {}
    exec(compile(module_source(program), "exported", "exec"), namespace)
    total, _ = namespace["reward"]({**{k: f[k] for k in f}, **f.scalars})
    np.testing.assert_allclose(total, expected.total)


def test_standing_composure_terms_by_hand():
    # feet_down: both feet 1, one 0.5, none 0
    f = gait_view(np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 0.0]]))
    np.testing.assert_allclose(L.feet_down(f), [[1.0, 0.5, 0.0]])
    # hands_still: the left hand moves 0.01 m per 0.01-s sample relative to the torso (1 m/s), the right one rests:
    # -0.5 × 1² after the first sample
    T = 4
    torso = np.zeros((1, T, 3))
    left = np.zeros((1, T, 3))
    left[0, :, 0] = 0.01 * np.arange(T)
    f = gait_view(np.ones((1, T)), np.ones((1, T)), torso_pos=torso, left_hand_pos=left, right_hand_pos=torso.copy())
    np.testing.assert_allclose(L.hands_still(f), [[0.0, -0.5, -0.5, -0.5]])
    # a body without arms has its hands at the torso: nothing to keep still
    f = gait_view(np.ones((1, T)), np.ones((1, T)), torso_pos=left, left_hand_pos=left, right_hand_pos=left)
    np.testing.assert_allclose(L.hands_still(f), 0.0)


def test_yaw_rate_over_a_stride_tells_a_turning_walk_from_a_straight_one():
    """A walking pelvis yaws to and fro with each step. Instantaneously that swamps a slow turn; over a window of one
    stride (1 s here) the rate is the turn's own, and early in the window the rate so far."""
    time = np.arange(0.0, 5.0, 0.01)[None]
    sway = 0.2 * np.sin(2 * math.pi * time)  # rad, one stride a second

    def walk(turn):
        rate = turn + 0.4 * math.pi * np.cos(2 * math.pi * time)  # the heading's derivative
        return FeatureView({"heading": turn * time + sway, "time": time, "yaw_rate": rate}, {**SCALARS, "dt": 0.01})

    turning, straight = walk(-0.15), walk(0.0)
    windowed = {name: L.yaw_rate(f, target=-0.15, sigma=0.3, window_s=1.0) for name, f in
                (("turning", turning), ("straight", straight))}
    np.testing.assert_allclose(windowed["turning"][0, 100:], 1.0, atol=1e-9)  # a whole stride: the turn exactly
    np.testing.assert_allclose(windowed["straight"][0, 100:], math.exp(-0.25), atol=1e-9)
    early = (turning["heading"][0, 50] - turning["heading"][0, 0]) / 0.5
    assert windowed["turning"][0, 50] == pytest.approx(math.exp(-np.square((early + 0.15) / 0.3)))
    assert windowed["turning"][0, 0] == L.yaw_rate(turning, target=-0.15, sigma=0.3)[0, 0]  # no time yet: as it is
    instantaneous = [L.yaw_rate(f, target=-0.15, sigma=0.3).mean() for f in (turning, straight)]
    assert abs(instantaneous[0] - instantaneous[1]) < 0.1 < windowed["turning"].mean() - windowed["straight"].mean()


def test_heading_error_is_the_wrapped_absolute_angle():
    # Facing 0.5 rad left of a target 0 costs 0.5; 3.0 rad off target -3.0 is 6.0 rad round, wrapped to 2π - 6 =
    # 0.283 rad; facing the target costs nothing.
    f = fake(1, 3, heading=[[0.5, 3.0, 0.0]])
    np.testing.assert_allclose(L.heading_error(f, target=0.0), [[-0.5, -3.0, 0.0]])
    np.testing.assert_allclose(L.heading_error(f, target=-3.0)[0, 1], -(2 * np.pi - 6.0))


def test_course_velocity_and_path_by_hand():
    # Course 90° (left), 0.3 m/s reached at 0.3 m/s²: at t = 0.5 s the target is 0.15 m/s, at 2 s 0.3 m/s.
    # Sample 0 moves left at exactly the target: 1. Sample 1 moves left at 0.3 and forward at 0.2 m/s (across the
    # course): exp(-0.04 / 0.04) = e^-1. Sample 2 walks forward at 0.3 m/s: exp(-(0.09 + 0.09) / 0.04) = e^-4.5.
    velocity = [[[0.0, 0.15, 0.0], [0.2, 0.3, 0.0], [0.3, 0.0, 0.0]]]
    f = fake(1, 3, time=[[0.5, 2.0, 2.0]], com_vel=velocity, com_pos=[[[0, 0.0375, 0], [0, 0.45, 0], [0.45, 0, 0]]])
    np.testing.assert_allclose(L.course_velocity(f, course_deg=90.0), [[1.0, np.exp(-1.0), np.exp(-4.5)]],
                               atol=1e-12)
    # The point: 0.5 × 0.3 × 0.5² = 0.0375 m along at 0.5 s; 0.15 + 0.3 × 1 = 0.45 m at 2 s. Sample 2 is 0.45 m
    # forward instead: √(0.45² + 0.45²) = 0.636 m from it.
    np.testing.assert_allclose(L.course_path(f, course_deg=90.0), [[0.0, 0.0, -0.45 * np.sqrt(2)]], atol=1e-12)
    # Diagonally forward-left (45°) the walk forward at 0.3 m/s is 0.212 along and 0.212 across:
    # exp(-((0.212 - 0.3)² + 0.212²) / 0.04) = exp(-(0.0077 + 0.045) / 0.04).
    along = 0.3 * np.sqrt(0.5)
    expected = np.exp(-((along - 0.3) ** 2 + along**2) / 0.04)
    np.testing.assert_allclose(L.course_velocity(f, course_deg=45.0)[0, 2], expected)


def test_course_terms_match_a_plain_loop():
    f = fake(2, 5, seed=4, time=np.tile(np.linspace(0.0, 2.0, 5), (2, 1)))
    got = L.course_path(f, course_deg=-135.0, speed=0.4, accel=0.5)
    for b in range(2):
        for t in range(5):
            time = float(f["time"][b, t])
            ramp = min(time, 0.8)
            travelled = 0.25 * ramp**2 + 0.4 * (time - ramp)
            point = travelled * np.array([math.cos(math.radians(-135)), math.sin(math.radians(-135))])
            assert got[b, t] == pytest.approx(-np.linalg.norm(f["com_pos"][b, t, :2] - point))


def test_one_leg_stance_and_stance_balance_by_hand():
    # On the right foot alone with the left one 5 cm up: 1 × 1 × 0.05 / 0.1 = 0.5; 20 cm up: 1 (capped); both
    # feet down: 0. The capture point 0.3 s ahead of a CoM at (0.1, 0) moving at (0, 0.5) m/s is (0.1, 0.15), 0.15 m
    # from a right foot at (0.1, 0).
    f = fake(1, 3, left_foot_contact=[[0, 0, 1]], right_foot_contact=[[1, 1, 1]], left_foot_height=[[0.05, 0.2, 0]],
             com_pos=[[[0.1, 0, 0.9]] * 3], com_vel=[[[0, 0.5, 0]] * 3], right_foot_pos=[[[0.1, 0, 0]] * 3])
    np.testing.assert_allclose(L.one_leg_stance(f, stance="right", lift=0.1), [[0.5, 1.0, 0.0]])
    np.testing.assert_allclose(L.stance_balance(f, stance="right", lead_s=0.3), [[-0.15] * 3])
    with pytest.raises(ValueError, match="stance must be one of left, right"):
        L.one_leg_stance(f, stance="both")


def test_swing_hip_flexion_by_hand():
    # Left foot in the air with the thigh at 0.6 rad: 0.6 / 1.2 = 0.5; right foot down: 0. Then both in the air,
    # the left thigh at 1.5 rad (capped at 1.2: 1) and the right at -0.3 (behind: -0.25).
    f = fake(1, 2, left_foot_contact=[[0, 0]], right_foot_contact=[[1, 0]], left_hip_flexion=[[0.6, 1.5]],
             right_hip_flexion=[[0.9, -0.3]])
    np.testing.assert_allclose(L.swing_hip_flexion(f, target=1.2), [[0.5, 0.75]])
    with pytest.raises(ValueError, match="target must be > 0"):
        L.swing_hip_flexion(f, target=0.0)
