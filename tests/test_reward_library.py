"""Library terms against hand-computed values and plain per-sample loops, on synthetic features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rewardloop.reward import library as L
from rewardloop.reward.library import TERMS, library_reference
from rewardloop.reward.runtime import FeatureView
from rewardloop.sim.features import FEATURES

SCALARS = {"dt": 0.1, "mass": 40.0, "weight": 392.4, "standing_height": 1.0}


def fake(batch=2, steps=6, seed=0, **override):
    """Random features of every vocabulary name with plausible shapes; contacts are 0/1."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, doc in FEATURES.items():
        extra = {"[B, T]": (), "[B, T, 3]": (3,), "[B, T, nu]": (4,), "[B, T, nm]": (3,)}[doc.shape]
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
