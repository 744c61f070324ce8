"""Gait analysis on synthetic walks built from the human reference itself, hand-computed expectations in the
comments; batch against per-row; and one real humanoid rollout."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rewardloop.critic.gait import (
    DETECTORS,
    JOINTS,
    GaitThresholds,
    analyze_gait,
    detect_events,
    format_gait_table,
    human_gait_reference,
    normal_ranges,
)
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Simulator, zero_controls

DT = 0.01  # s per sample: a 1 s stride is 100 samples
LEG = 0.9  # m, standing pelvis height = leg length


def _walk(seconds: float = 5.0, right_offset: int = 50, stance: int = 60, speed: float = 1.2,
          knee_sign: float = 1.0, knee_shift: int = 0) -> dict[str, np.ndarray]:
    """[T] arrays of a walk whose joint curves ARE the reference means, 1 s strides (100 samples), the left foot
    landing at samples 0, 100, ..., the right one `right_offset` samples later, each in contact for the first
    `stance` samples of its stride and lifted 5 cm (a half sine) in swing."""
    ref = human_gait_reference()
    n = np.arange(round(seconds / DT))
    arrays = {"time": n * DT, "heading": np.zeros(len(n)), "torso_up": np.tile([0.0, 0.0, 1.0], (len(n), 1)),
              "root_pos": np.stack([speed * n * DT, np.zeros(len(n)), np.full(len(n), LEG)], axis=-1)}
    for side, offset in (("left", 0), ("right", right_offset)):
        sample = (n - offset) % 100
        for j, joint in enumerate(JOINTS):
            shifted = (sample + (knee_shift if joint == "knee_flexion" else 0)) % 100
            curve = np.interp(shifted / 100, ref.phase[:-1], ref.mean[j, :-1], period=1.0)
            arrays[f"{side}_{joint}"] = np.radians(curve) * (knee_sign if joint == "knee_flexion" else 1.0)
        arrays[f"{side}_foot_contact"] = (sample < stance).astype(float)
        arrays[f"{side}_foot_height"] = np.where(sample < stance, 0.0,
                                                 0.05 * np.sin(np.pi * (sample - stance) / (100 - stance)))
    return arrays


def _features(*rows: dict[str, np.ndarray]) -> Features:
    """A [B, T] batch of the given [T] trajectories."""
    return Features({k: np.stack([r[k] for r in rows]) for k in rows[0]}, {"dt": DT, "standing_height": LEG})


@pytest.fixture(scope="module")
def walk():
    return analyze_gait(_features(_walk()))


def test_reference_is_packaged_with_provenance():
    ref = human_gait_reference()
    # 51 samples at 2 % steps; the knee's mean curve peaks at 59.1 deg at 72 % (swing), hip at 36.7 deg at 90 %.
    assert ref.phase.shape == (51,) and ref.mean.shape == ref.sd.shape == (3, 51)
    assert ref.phase[36] == pytest.approx(0.72) and ref.mean[1].argmax() == 36
    assert ref.mean[1].max() == pytest.approx(59.1, abs=0.05) and ref.mean[0].max() == pytest.approx(36.7, abs=0.05)
    assert ref.values["stance_fraction"].mean == pytest.approx(0.59)
    assert "Schwartz" in ref.source and "CC-BY-SA" in ref.licence


def test_reference_walk_matches_the_reference(walk):
    m, row = walk.measures, walk.row(0)
    # Each stride is resampled at its own samples, so curves equal the reference exactly except at 100 %, where
    # the next touchdown's 0 % value stands in: r ~ 1 and RMSE ~ |ref(100 %) - ref(0 %)| / sqrt(51) < 1 deg.
    assert np.all(walk.correlation > 0.99) and np.all(walk.rmse < 1.0)
    # Strides: left touchdowns at 1, 2, 3, 4 s -> 3; right at 0.5, 1.5, ..., 4.5 s -> 4; 7 in all.
    assert row["stride_count"] == 7
    # Steps: 9 touchdowns 0.5 s apart -> 8 steps in 4 s = 120 steps/min.
    assert m.cadence[0] == pytest.approx(120.0)
    assert m.stance_fraction[0] == pytest.approx(0.6)            # 60 of 100 samples in contact
    assert m.step_length[0] == pytest.approx(1.2 / 2 / LEG)      # 1.2 m per stride, 2 steps, 0.9 m leg
    assert m.speed[0] == pytest.approx(1.2)
    assert m.step_time_asymmetry[0] == pytest.approx(0.0)
    ref = human_gait_reference()
    # Peak knee flexion while off the ground (60..99 % of the stride) is the reference's swing peak, 59.1 deg.
    assert m.peak_knee_swing[0] == pytest.approx(ref.mean[1, 30:50].max())
    assert m.knee_midstance[0] == pytest.approx(ref.mean[1, 5:16].mean())  # 10..30 % of the cycle
    assert m.peak_hip_flexion[0] == pytest.approx(ref.mean[0, :50].max())
    assert 0.045 < m.swing_clearance[0] <= 0.05                  # 95th percentile of a 5 cm half sine
    assert m.pelvis_yaw_range[0] == pytest.approx(0.0) and m.trunk_pitch_range[0] == pytest.approx(0.0)
    assert not any(walk.detections[name].detected[0] for name in DETECTORS)


def test_reference_walk_lies_within_human_normal_ranges(walk):
    ranges = normal_ranges(LEG)
    # Cadence normal for a 0.9 m leg: 0.565 +- 2 x 0.037 dimensionless x sqrt(9.81 / 0.9) x 60 = 97 .. 127.
    assert ranges["cadence"] == pytest.approx((97.1, 126.7), abs=0.2)
    for name in ("cadence", "stance_fraction", "knee_midstance", "peak_knee_swing", "peak_hip_flexion"):
        low, high = ranges[name]
        assert low <= getattr(walk.measures, name)[0] <= high, name


def test_negated_and_shifted_knee_curves_do_not_correlate():
    knee = JOINTS.index("knee_flexion")
    negated = analyze_gait(_features(_walk(knee_sign=-1.0)))
    shifted = analyze_gait(_features(_walk(knee_shift=50)))  # half a cycle late
    assert negated.correlation[0, knee] == pytest.approx(-1.0, abs=0.01)  # r(-x, y) = -r(x, y)
    assert shifted.correlation[0, knee] < 0.0
    assert shifted.rmse[0, knee] > 15.0  # stance 5..20 deg against swing 40..60 deg for half the cycle


def test_kick_is_detected_with_its_time():
    kick = _walk()
    kick["left_hip_flexion"] = np.where((kick["time"] > 2.7) & (kick["time"] < 2.9), np.radians(110.0),
                                        kick["left_hip_flexion"])
    detection = analyze_gait(_features(kick)).detections["kick"]
    assert detection.detected[0] and detection.magnitude[0] == pytest.approx(110.0)
    assert 2.7 < detection.time[0] < 2.9


def test_kick_names_the_leg():
    kick = _walk()
    kick["right_hip_flexion"] = np.where(np.abs(kick["time"] - 1.5) < 0.05, np.radians(95.0), kick["right_hip_flexion"])
    measures = analyze_gait(_features(kick)).measures
    assert measures.peak_hip_side[0] == 1.0 and measures.peak_hip_flexion[0] == pytest.approx(95.0)  # SIDES[1]


def _with_hands(walk: dict[str, np.ndarray], across: float) -> dict[str, np.ndarray]:
    """The walk with hands 0.2 m beside the torso's origin (here the pelvis), swinging 0.15 m fore-aft against the
    legs and `across` m sideways, both as 1-Hz sines (one per stride)."""
    torso = walk["root_pos"]
    walk["torso_pos"] = torso
    swing = np.sin(2 * np.pi * walk["time"])
    for side, sign in (("left", 1.0), ("right", -1.0)):
        walk[f"{side}_hand_pos"] = torso + np.stack([sign * 0.15 * swing, sign * 0.2 + across * swing,
                                                     np.zeros_like(swing)], axis=-1)
    return walk


def test_flailing_arms_from_hands_swinging_across():
    calm, flail = _with_hands(_walk(), across=0.02), _with_hands(_walk(), across=0.25)
    analysis = analyze_gait(_features(calm, flail))
    # 5-95 % range of a sine of amplitude A: 2 A sin(0.45 pi) = 1.975 A -> 0.040 m and 0.494 m sideways (within
    # 1 %: 100 samples per cycle).
    np.testing.assert_allclose(analysis.measures.arm_excursion, [0.0395, 0.4938], rtol=0.01)
    flailing = analysis.detections["flailing_arms"]
    assert flailing.detected.tolist() == [False, True]
    assert abs(np.sin(2 * np.pi * flailing.time[1])) == pytest.approx(1.0, abs=1e-3)  # furthest at a sine's peak


def test_the_worst_moments_of_trunk_and_arms_come_after_the_body_settled():
    # The start pose holds the hands 0.4 m out and the trunk tipped 20 degrees for 0.1 s: within the 5-95 % tails of
    # 5 s, so the ranges are the walk's; their worst moments are looked for from the first touchdown (0.5 s) on.
    walk = _with_hands(_walk(), across=0.25)
    walk["left_hand_pos"][:10, 1] += 0.4
    walk["torso_up"][:10] = [np.sin(np.radians(20.0)), 0.0, np.cos(np.radians(20.0))]
    m = analyze_gait(_features(walk)).measures
    assert m.arm_excursion[0] == pytest.approx(0.4938, rel=0.01) and m.trunk_pitch_range[0] == pytest.approx(0.0)
    assert m.arm_worst_time[0] >= 0.5 and abs(np.sin(2 * np.pi * m.arm_worst_time[0])) == pytest.approx(1.0, abs=1e-3)
    assert m.trunk_worst_time[0] >= 0.5


def test_arms_are_nan_without_hands_or_with_hands_at_the_torso():
    walk = _walk()
    armless = _with_hands(_walk(), across=0.0)
    for side in ("left", "right"):
        armless[f"{side}_hand_pos"] = armless["torso_pos"].copy()  # a body without arms (myolegs)
    for row in (walk, armless):
        analysis = analyze_gait(_features(row))
        assert np.isnan(analysis.measures.arm_excursion[0]) and not analysis.detections["flailing_arms"].detected[0]


def test_limp_from_unequal_step_times():
    # Right foot lands 0.3 s after the left: right steps 0.3 s, left steps 0.7 s -> |0.7 - 0.3| / 0.5 = 0.8.
    analysis = analyze_gait(_features(_walk(right_offset=30)))
    assert analysis.measures.step_time_asymmetry[0] == pytest.approx(0.8)
    assert analysis.detections["limp"].detected[0] and analysis.detections["limp"].magnitude[0] == pytest.approx(80)


def test_standing_gives_nan_similarity_and_standing_still_without_warnings():
    stand = {k: np.zeros_like(v) for k, v in _walk(seconds=1.0).items()}
    stand.update(time=np.arange(100) * DT, torso_up=np.tile([0.0, 0.0, 1.0], (100, 1)),
                 left_foot_contact=np.ones(100), right_foot_contact=np.ones(100))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        analysis = analyze_gait(_features(stand))
        table = format_gait_table(analysis, 0)
    assert analysis.measures.stride_count[0] == 0
    assert np.all(np.isnan(analysis.correlation)) and np.all(np.isnan(analysis.curves))
    assert np.isnan(analysis.measures.cadence[0]) and np.isnan(analysis.measures.swing_clearance[0])
    detected = {name for name, d in analysis.detections.items() if d.detected[0]}
    assert detected == {"standing_still"}
    assert "standing_still  YES" in table


def test_contact_flickers_are_not_touchdowns():
    walk = _walk(seconds=3.0)
    contact = walk["left_foot_contact"].copy()
    contact[120:123] = 0.0  # a 0.03 s gap in stance: shorter than the 0.05 s flicker
    contact[170:173] = 1.0  # a 0.03 s touch in swing
    contact[30:38] = 0.0    # a 0.08 s gap in stance without lifting the foot: not a swing
    walk["left_foot_contact"] = contact
    events = detect_events(_features(walk), GaitThresholds())
    left = events.touchdowns[events.touchdowns[:, 1] == 0, 2]
    assert left.tolist() == [100, 200]  # only the real touchdowns at 1 s and 2 s


def test_the_landings_that_end_the_settling_at_the_start_are_no_steps():
    # The walk seen from 0.86 s on: the left foot ends a swing at 0.14 s, the right one is in stance but starts 2 cm
    # up and settles at 0.06 s. Counted as touchdowns, those two landings 0.08 s apart would make the left's mean
    # step time (0.08 + 0.5 × 3) / 4 = 0.395 s against the right's 0.5 s, a 23 % limp, and quicken the cadence.
    walk = _walk(seconds=4.86)
    late = {name: values[86:] for name, values in walk.items()}
    late["time"] = late["time"] - late["time"][0]
    late["right_foot_contact"][:6] = 0.0
    late["right_foot_height"][:6] = 0.02
    events = detect_events(_features(late))
    assert events.touchdowns[:, 2].tolist() == [64, 114, 164, 214, 264, 314, 364]  # not 6 and 14
    analysis = analyze_gait(_features(late)).measures
    assert analysis.step_time_asymmetry[0] == pytest.approx(0.0, abs=1e-9)
    assert analysis.cadence[0] == pytest.approx(120.0)


def test_batch_matches_rows_one_at_a_time():
    kick = _walk()
    kick["left_hip_flexion"] = kick["left_hip_flexion"] + np.radians(30.0)
    rows = [_walk(), kick, _walk(right_offset=30)]
    batch = analyze_gait(_features(*rows))
    for i, row in enumerate(rows):
        alone = analyze_gait(_features(row))
        np.testing.assert_allclose(batch.curves[i], alone.curves[0])
        expected, got = alone.row(0), batch.row(i)
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, nan_ok=True), key


def test_table_shows_joints_measures_and_normal_ranges(walk):
    table = format_gait_table(walk, 0)
    assert "knee flexion" in table and "cadence (steps/min)" in table and "120.0" in table
    assert "97.1 – 126.7" in table and "Schwartz" in table


def test_runs_on_a_real_standing_humanoid(humanoid_flat):
    with Simulator(humanoid_flat, nthread=1) as sim:
        features = sim.open_loop(zero_controls(humanoid_flat, 1, 100)).features(humanoid_flat)  # 0.5 s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        analysis = analyze_gait(features)
        format_gait_table(analysis, 0)
    assert analysis.batch_size == 1 and analysis.curves.shape == (1, 2, 3, 51)
    assert analysis.measures.stride_count[0] == 0 and analysis.detections["standing_still"].detected[0]
    assert abs(analysis.measures.trunk_pitch_mean[0]) < 30.0
    assert analysis.measures.arm_excursion[0] > 0.0  # the humanoid has hands (finite: it has arms)


def test_a_least_clearance_target_is_missed_by_a_low_swing_foot(walk):
    # The reference walk lifts its swing foot 5 cm at most: met with no least clearance, missed by 5 cm when 10 cm
    # is asked for.
    from rewardloop.critic.likeness import HumanLikeTargets, misses
    assert misses(walk)["clearance"][0] == 0.0
    assert misses(walk, HumanLikeTargets(min_clearance_m=0.1))["clearance"][0] == pytest.approx(0.05, abs=0.005)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_arm_swing_is_the_hands_sine_against_its_own_thigh(sign):
    """Each hip flexing as a 1-Hz sine (the legs half a cycle apart) and each hand swinging fore-aft as a sine of
    amplitude 0.12 m: opposite its own thigh, the swing is +0.12 m (people's); with it, -0.12 m."""
    walk = _with_hands(_walk(), across=0.0)
    for side, shift in (("left", 0.0), ("right", 0.5)):
        wave = np.sin(2 * np.pi * (walk["time"] - shift))
        walk[f"{side}_hip_flexion"] = 0.3 * wave
        walk[f"{side}_hand_pos"][:, 0] = walk["torso_pos"][:, 0] - sign * 0.12 * wave
    assert analyze_gait(_features(walk)).measures.arm_swing[0] == pytest.approx(sign * 0.12, rel=0.02)
