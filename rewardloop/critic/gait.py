"""Gait analysis: gait events, phase-normalised joint curves, similarity to normative human walking, scalar gait
measures and detectors of common gait faults, for a batch of trajectories.

Pure NumPy, arrays in and frozen dataclasses out; the only I/O is reading the packaged reference once
(`human_gait_reference`, see README_DATA.md beside this file). Features are [B, T] (B trajectories, T samples);
their angles are radians, every angle returned here is in degrees, the unit of the gait literature.

Definitions:
- cleaned contact: foot contact with touches shorter than `flicker_s` removed, and with off-contact gaps filled
  unless they are a swing (at least `flicker_s` long, and `min_swing_s` long or the foot rose `min_rise_m`).
- touchdown: a rising edge of the cleaned contact that ends a gap begun within the trajectory (a foot off the
  ground from the first sample lands without a swing seen whole: the body settling onto its feet at the start, whose
  first landings are hundredths of a second apart, is no step); stride: two consecutive touchdowns of the same foot
  at most `max_stride_s` apart; step: two consecutive touchdowns of either foot at most `max_stride_s` apart.
- phase: each stride resampled (linearly) onto the reference's 0..100 % grid, 0 = touchdown.
- mid-stance: 10-30 % of the cycle (Perry's mid-stance phase), `GaitThresholds.midstance`.

Trajectories without strides get NaN stride-based measures and are flagged `standing_still`, without warnings.
Arm measures read the `{side}_hand_pos` features; they are NaN for a body without arms (hands at the torso) or
features without hands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from rewardloop.sim.bodies import SIDES
from rewardloop.sim.features import Features

JOINTS = ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")
"""Sagittal joints compared with the reference, in the order of the joint axis of curves."""

GRAVITY = 9.81
"""m/s², for the leg-length (Hof) scaling of the reference's dimensionless cadence, speed and step length."""


@dataclass(frozen=True)
class NormalRange:
    """A normative value: mean ± SD of healthy walking, in the units of the measure it belongs to."""

    mean: float
    sd: float
    source: str
    """Where in the reference file the value comes from."""

    def bounds(self, k: float = 2.0) -> tuple[float, float]:
        """(mean - k SD, mean + k SD)."""
        return self.mean - k * self.sd, self.mean + k * self.sd


@dataclass(frozen=True)
class GaitReference:
    """Normative human walking (free speed), read from the packaged `human_gait.json`."""

    phase: np.ndarray
    """[P] fraction of the gait cycle, 0 = touchdown, 1 = next touchdown of the same foot."""
    mean: np.ndarray
    """[3, P] mean joint angle (deg), joints in JOINTS order."""
    sd: np.ndarray
    """[3, P] inter-subject SD of the joint angle (deg)."""
    values: dict[str, NormalRange]
    """Scalar norms: 'stance_fraction', 'cadence_dimensionless', 'speed_dimensionless',
    'step_length_leg_lengths', 'peak_knee_swing_deg', 'pelvis_rotation_range_deg', 'step_width_leg_lengths',
    'min_toe_clearance_m'."""
    trunk_pitch_curve_range: float
    """Range of the group-mean trunk tilt curve (deg); individuals' ranges are larger."""
    citation: str
    """Short citation of the main source."""
    source: str
    """The file's full statement of where its numbers come from."""
    licence: str


@cache
def human_gait_reference() -> GaitReference:
    """The packaged normative reference, read once."""
    text = resources.files("rewardloop.critic").joinpath("human_gait.json").read_text(encoding="utf-8")
    data = json.loads(text)
    curves = data["curves_deg"]
    return GaitReference(
        phase=np.asarray(data["phase_percent"], float) / 100.0,
        mean=np.array([curves[j]["mean"] for j in JOINTS], float),
        sd=np.array([curves[j]["sd"] for j in JOINTS], float),
        values=_reference_values(data),
        trunk_pitch_curve_range=float(np.ptp(curves["trunk_pitch"]["mean"])),
        citation="Schwartz, Rozumalski & Trost 2008 (J Biomech 41:1639), free speed",
        source=data["source"], licence=data["licence"])


def _reference_values(data: dict[str, Any]) -> dict[str, NormalRange]:
    def norm(entry: dict[str, Any], where: str) -> NormalRange:
        return NormalRange(float(entry["mean"]), float(entry["sd"]), where)
    dimless, measures, extra = data["dimensionless"], data["measures"], data["supplements"]
    return {
        "stance_fraction": norm(data["cycle_events_fraction"]["foot_off"], "cycle_events_fraction.foot_off"),
        "cadence_dimensionless": norm(dimless["cadence"], "dimensionless.cadence"),
        "speed_dimensionless": norm(dimless["speed"], "dimensionless.speed"),
        "step_length_leg_lengths": norm(dimless["step_length"], "dimensionless.step_length"),
        "peak_knee_swing_deg": norm(measures["peak_knee_flexion_swing_deg"], "measures.peak_knee_flexion_swing_deg"),
        "pelvis_rotation_range_deg": norm(measures["pelvis_rotation_range_deg"],
                                          "measures.pelvis_rotation_range_deg"),
        "step_width_leg_lengths": norm(extra["step_width_leg_lengths"], "supplements.step_width_leg_lengths"),
        "min_toe_clearance_m": norm(extra["minimum_toe_clearance_m"], "supplements.minimum_toe_clearance_m"),
    }


@dataclass(frozen=True)
class GaitThresholds:
    """Event debouncing and the physical thresholds of the detectors."""

    flicker_s: float = 0.05
    """Contact changes shorter than this are noise (s)."""
    min_swing_s: float = 0.1
    """An off-contact gap this long makes the next contact a touchdown (s) ..."""
    min_rise_m: float = 0.01
    """... and so does a shorter gap in which the foot rose this high (m)."""
    max_stride_s: float = 3.0
    """Touchdowns further apart than this are a pause, not a stride or step (s)."""
    midstance: tuple[float, float] = (0.10, 0.30)
    """Mid-stance window as fractions of the gait cycle (Perry's mid-stance phase)."""
    kick_hip_deg: float = 50.0
    """Kick: peak hip flexion above this (deg) ..."""
    kick_foot_m: float = 0.25
    """... or a swing foot higher than this above the ground (m)."""
    shuffle_cadence: float = 160.0
    """Shuffling: cadence above this (steps/min) ..."""
    shuffle_step: float = 0.3
    """... or steps shorter than this (leg lengths)."""
    crouch_knee_deg: float = 30.0
    """Crouch: mean knee flexion in mid-stance above this (deg)."""
    stiff_knee_deg: float = 35.0
    """Stiff-legged: peak knee flexion in swing below this (deg)."""
    limp_asymmetry: float = 0.2
    """Limp: left/right step-time difference above this fraction of the mean step time."""
    wobble_deg: float = 20.0
    """Trunk wobble: 5-95 % range of trunk pitch or roll above this (deg)."""
    lean_deg: float = 20.0
    """Trunk lean: mean trunk pitch further than this from vertical, forward (bent over) or backward (deg)."""
    scuff_clearance_m: float = 0.01
    """Scuffing: the body travels but its swing feet rise less than this (m, 95th percentile)."""
    still_speed: float = 0.1
    """Standing still: net horizontal speed below this (m/s), or no strides at all."""
    flail_m: float = 0.3
    """Flailing arms: a hand's 5-95 % range relative to the torso, sideways or up-down, above this (m). People's
    hands swing mostly fore-aft (a few cm sideways and up-down at walking speeds)."""


@dataclass(frozen=True)
class GaitEvents:
    """Touchdowns and strides of a batch; sides in SIDES order."""

    contact: np.ndarray
    """[B, 2, T] bool cleaned foot contact."""
    touchdowns: np.ndarray
    """[K, 3] int (trajectory, side, sample index) of every touchdown, sorted by trajectory then sample; a foot off
    the ground from the first sample has its first landing left out (the module docstring)."""
    strides: np.ndarray
    """[N, 4] int (trajectory, side, start sample, end sample) of every stride; the end is the next touchdown."""


@dataclass(frozen=True)
class GaitMeasures:
    """Scalar gait measures, each [B]; NaN where a trajectory has nothing to measure (no strides or steps)."""

    stride_count: np.ndarray
    """Strides of both feet (int)."""
    cadence: np.ndarray
    """Steps per minute, touchdowns of both feet, pauses longer than max_stride_s left out."""
    speed: np.ndarray
    """Net horizontal pelvis displacement over the whole trajectory / its duration (m/s)."""
    step_length: np.ndarray
    """Pelvis travel per stride / 2 / leg length (leg lengths), mean over strides."""
    stance_fraction: np.ndarray
    """Fraction of each stride the foot is in contact, mean over strides."""
    step_time_asymmetry: np.ndarray
    """|left - right| mean step time / their mean; a left step ends with a left touchdown."""
    knee_midstance: np.ndarray
    """Mean knee flexion over the mid-stance window of the stride-averaged curve, mean of both sides (deg)."""
    peak_knee_swing: np.ndarray
    """Peak knee flexion while that foot is off the ground, mean over strides (deg)."""
    peak_hip_flexion: np.ndarray
    """Largest hip flexion of either leg anywhere in the trajectory (deg)."""
    peak_hip_time: np.ndarray
    """Time of peak_hip_flexion (s)."""
    peak_hip_side: np.ndarray
    """Leg of peak_hip_flexion: 0 left, 1 right (index in SIDES)."""
    swing_clearance: np.ndarray
    """95th percentile of foot height while off contact, both feet pooled (m)."""
    peak_swing_foot: np.ndarray
    """Highest foot while off contact (m)."""
    peak_swing_foot_time: np.ndarray
    """Time of peak_swing_foot (s)."""
    peak_swing_foot_side: np.ndarray
    """Foot of peak_swing_foot: 0 left, 1 right (index in SIDES); NaN when no foot left the ground."""
    pelvis_yaw_range: np.ndarray
    """Range of pelvis yaw within a stride after removing the stride's net turn, mean over strides (deg)."""
    trunk_pitch_mean: np.ndarray
    """Mean forward lean of the torso's up axis in the heading frame (deg, + = forward)."""
    trunk_pitch_range: np.ndarray
    """5-95 % range of trunk pitch (deg)."""
    trunk_roll_range: np.ndarray
    """5-95 % range of trunk roll (deg, + = leaning left)."""
    trunk_worst_time: np.ndarray
    """Time of the largest trunk pitch or roll deviation from its median (s), from the first touchdown on."""
    arm_excursion: np.ndarray
    """Largest 5-95 % range of a hand's position relative to the torso, sideways or up-down in the heading frame
    (m); NaN without arms."""
    arm_worst_time: np.ndarray
    """Time a hand is furthest, sideways or up-down, from its median position relative to the torso (s), from the
    first touchdown on."""
    arm_swing: np.ndarray
    """Fore-aft swing of the hands against their own thighs, mean over arms (m, half the excursion; + opposite the
    same-side leg as people's, - with it), from the first touchdown on; NaN without arms."""


@dataclass(frozen=True)
class Detection:
    """One detector's verdict over a batch."""

    detected: np.ndarray
    """[B] bool."""
    magnitude: np.ndarray
    """[B] the measured quantity the rule tests, in `units`."""
    time: np.ndarray
    """[B] time of the worst instance (s); NaN where the fault is not an instant."""
    units: str
    rule: str
    """The rule in words, thresholds included."""


@dataclass(frozen=True)
class GaitAnalysis:
    """Gait of a batch of trajectories: curves, similarity to the human reference, measures and detections."""

    phase: np.ndarray
    """[P] fraction of the gait cycle of the curves."""
    curves: np.ndarray
    """[B, 2, 3, P] stride-averaged joint angles (deg): sides in SIDES, joints in JOINTS order; NaN without
    strides."""
    correlation: np.ndarray
    """[B, 3] Pearson r of each joint's curve with the reference mean, averaged over sides with strides."""
    rmse: np.ndarray
    """[B, 3] RMS difference from the reference mean curve (deg), averaged over sides with strides."""
    measures: GaitMeasures
    detections: dict[str, Detection]
    """Detector name -> verdict, in DETECTORS order."""
    leg_length: float
    """Leg length used for normalisation: the standing pelvis height (m)."""
    events: GaitEvents

    @property
    def batch_size(self) -> int:
        return int(self.curves.shape[0])

    def row(self, index: int) -> dict[str, float | int | bool]:
        """One trajectory's similarity, measures and detections as plain Python values, for display."""
        out: dict[str, float | int | bool] = {}
        for j, joint in enumerate(JOINTS):
            out[f"{joint}_r"] = float(self.correlation[index, j])
            out[f"{joint}_rmse_deg"] = float(self.rmse[index, j])
        for field in fields(GaitMeasures):
            value = getattr(self.measures, field.name)[index]
            out[field.name] = int(value) if field.name == "stride_count" else float(value)
        for name, detection in self.detections.items():
            out[name] = bool(detection.detected[index])
            out[f"{name}_magnitude"] = float(detection.magnitude[index])
            out[f"{name}_time"] = float(detection.time[index])
        return out


def analyze_gait(features: Features, thresholds: GaitThresholds | None = None,
                 reference: GaitReference | None = None) -> GaitAnalysis:
    """Gait of every trajectory in `features` ([B, T] arrays, see module docstring for the ones read)."""
    th = thresholds or GaitThresholds()
    ref = reference or human_gait_reference()
    events = detect_events(features, th)
    curves = _mean_curves(features, events, ref.phase)
    measures = _measures(features, events, curves, ref.phase, th)
    return GaitAnalysis(
        phase=ref.phase, curves=curves,
        correlation=_mean_finite(_pearson(curves, ref.mean), axis=1),
        rmse=_mean_finite(np.sqrt(np.mean((curves - ref.mean) ** 2, axis=-1)), axis=1),
        measures=measures, detections={name: detect(measures, th) for name, detect in DETECTORS.items()},
        leg_length=float(features.standing_height), events=events)


# --- events -------------------------------------------------------------------------------------------------

def detect_events(features: Features, thresholds: GaitThresholds | None = None) -> GaitEvents:
    """Cleaned contact, touchdowns and strides. Loops over B x 2 feet: runs of contact differ per trajectory."""
    th = thresholds or GaitThresholds()
    dt = float(features.dt)
    contact = np.stack([features[f"{side}_foot_contact"] > 0.5 for side in SIDES], axis=1)
    height = np.stack([features[f"{side}_foot_height"] for side in SIDES], axis=1)
    cleaned = np.empty_like(contact)
    found = []
    for b in range(contact.shape[0]):
        for s in range(len(SIDES)):
            cleaned[b, s] = _clean_contact(contact[b, s], height[b, s], dt, th)
            rising = np.flatnonzero(cleaned[b, s, 1:] & ~cleaned[b, s, :-1]) + 1
            if not cleaned[b, s, 0]:
                rising = rising[1:]  # the landing that ends the gap open since the start (see the module docstring)
            found.append(np.stack([np.full_like(rising, b), np.full_like(rising, s), rising], axis=1))
    touchdowns = np.concatenate(found).reshape(-1, 3)
    return GaitEvents(cleaned, touchdowns[np.lexsort((touchdowns[:, 2], touchdowns[:, 0]))],
                      _strides(touchdowns, round(th.max_stride_s / dt)))


def _runs(on: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[T] bool -> starts [R], lengths [R] and values [R] of its runs of equal values."""
    starts = np.concatenate([[0], np.flatnonzero(on[1:] != on[:-1]) + 1])
    lengths = np.diff(np.append(starts, len(on)))
    return starts, lengths, on[starts]


def _clean_contact(on: np.ndarray, height: np.ndarray, dt: float, th: GaitThresholds) -> np.ndarray:
    """[T] bool contact and [T] foot height (m) -> [T] bool contact without flickers and non-swing gaps."""
    if on.size == 0:
        return on
    starts, lengths, values = _runs(on)
    values = values & (lengths * dt >= th.flicker_s)  # drop touches shorter than a flicker
    on = np.repeat(values, lengths)
    starts, lengths, values = _runs(on)
    duration, rise = lengths * dt, np.maximum.reduceat(height, starts)
    swing = (duration >= th.flicker_s) & ((duration >= th.min_swing_s) | (rise >= th.min_rise_m))
    return np.repeat(values | ~swing, lengths)


def _strides(touchdowns: np.ndarray, max_samples: int) -> np.ndarray:
    """[K, 3] (trajectory, side, sample) touchdowns -> [N, 4] (trajectory, side, start, end) strides."""
    td = touchdowns[np.lexsort((touchdowns[:, 2], touchdowns[:, 1], touchdowns[:, 0]))]
    same_foot = (td[1:, 0] == td[:-1, 0]) & (td[1:, 1] == td[:-1, 1])
    keep = same_foot & (td[1:, 2] - td[:-1, 2] <= max_samples)
    return np.concatenate([td[:-1][keep], td[1:, 2:][keep]], axis=1).reshape(-1, 4)


# --- phase-normalised curves --------------------------------------------------------------------------------

def _resample(signal: np.ndarray, strides: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """[B, 2, T] per-side (or [B, T] whole-body) signal -> [N, P] values of each stride at each phase."""
    rows, sides, start, end = strides.T
    x = start[:, None] + phase[None, :] * (end - start)[:, None]
    i0 = np.minimum(np.floor(x).astype(int), signal.shape[-1] - 2)
    w = x - i0
    index = (rows[:, None], sides[:, None]) if signal.ndim == 3 else (rows[:, None],)
    return signal[(*index, i0)] * (1 - w) + signal[(*index, i0 + 1)] * w


def _joint_signals(features: Features) -> np.ndarray:
    """[3, B, 2, T] sagittal joint angles (deg), joints in JOINTS and sides in SIDES order."""
    return np.degrees(np.stack([np.stack([features[f"{side}_{joint}"] for side in SIDES], axis=1)
                                for joint in JOINTS]))


def _mean_curves(features: Features, events: GaitEvents, phase: np.ndarray) -> np.ndarray:
    """[B, 2, 3, P] stride-averaged joint curves (deg); NaN for a side without strides."""
    batch = events.contact.shape[0]
    per_stride = np.stack([_resample(signal, events.strides, phase) for signal in _joint_signals(features)],
                          axis=1)  # [N, 3, P]
    groups = events.strides[:, 0] * 2 + events.strides[:, 1]
    return _group_mean(per_stride, groups, 2 * batch).reshape(batch, 2, len(JOINTS), len(phase))


def _pearson(curves: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """[..., P] curves and [..., P] reference -> [...] Pearson r; NaN for a flat or missing curve."""
    a = curves - curves.mean(axis=-1, keepdims=True)
    b = ref - ref.mean(axis=-1, keepdims=True)
    num = np.sum(a * b, axis=-1)
    den = np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))
    return np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 1e-12)


# --- measures -----------------------------------------------------------------------------------------------

def _measures(features: Features, events: GaitEvents, curves: np.ndarray, phase: np.ndarray,
              th: GaitThresholds) -> GaitMeasures:
    batch, dt = events.contact.shape[0], float(features.dt)
    per_row = _stride_measures(features, events, phase, batch)
    window = (phase >= th.midstance[0]) & (phase <= th.midstance[1])
    knee, settled = curves[:, :, JOINTS.index("knee_flexion")], _settled(events)
    return GaitMeasures(
        stride_count=np.bincount(events.strides[:, 0], minlength=batch),
        cadence=_cadence(events.touchdowns, batch, dt, round(th.max_stride_s / dt)),
        speed=_net_speed(features),
        step_length=per_row["travel"] / 2.0 / float(features.standing_height),
        stance_fraction=per_row["stance"],
        step_time_asymmetry=_step_time_asymmetry(events.touchdowns, batch, dt, round(th.max_stride_s / dt)),
        knee_midstance=_mean_finite(knee[..., window].mean(axis=-1), axis=1),
        peak_knee_swing=per_row["swing_knee"], pelvis_yaw_range=per_row["yaw_range"],
        **_peak_hip(features), **_swing_feet(features, events.contact),
        **_trunk(features, settled), **_arms(features, settled))


def _settled(events: GaitEvents) -> np.ndarray:
    """[B, T] bool: the samples from each trajectory's first touchdown on (every sample without one), where the
    trunk's and the hands' worst moments are looked for: before it the body is still settling from its start pose,
    which no reward changes."""
    batch, length = events.contact.shape[0], events.contact.shape[-1]
    first = np.full(batch, length)
    np.minimum.at(first, events.touchdowns[:, 0], events.touchdowns[:, 2])
    return np.arange(length)[None, :] >= np.where(first == length, 0, first)[:, None]


def _stride_measures(features: Features, events: GaitEvents, phase: np.ndarray,
                     batch: int) -> dict[str, np.ndarray]:
    """Per-stride quantities averaged per trajectory: 'travel' (m), 'stance' (fraction), 'swing_knee' (deg),
    'yaw_range' (deg), each [B]."""
    strides, contact = events.strides, events.contact
    rows, sides, start, end = strides.T
    reached = np.concatenate([np.zeros((*contact.shape[:2], 1)), np.cumsum(contact, axis=-1)], axis=-1)
    heading = _resample(features.heading, strides, phase)
    heading = heading - (heading[:, :1] + phase * (heading[:, -1:] - heading[:, :1]))  # net turn removed
    knee = _joint_signals(features)[JOINTS.index("knee_flexion")]
    per_stride = {
        "travel": np.linalg.norm(features.root_pos[rows, end, :2] - features.root_pos[rows, start, :2], axis=-1),
        "stance": (reached[rows, sides, end] - reached[rows, sides, start]) / np.maximum(end - start, 1),
        "swing_knee": _segment_max(np.where(contact, -np.inf, knee), strides),
        "yaw_range": np.degrees(np.ptp(heading, axis=-1)) if len(strides) else np.zeros(0),
    }
    return {name: _group_mean(values, rows, batch) for name, values in per_stride.items()}


def _segment_max(signal: np.ndarray, strides: np.ndarray) -> np.ndarray:
    """[B, 2, T] signal (-inf where excluded) -> [N] max over each stride's samples [start, end); NaN if none."""
    if len(strides) == 0:
        return np.zeros(0)
    length = signal.shape[-1]
    offset = (strides[:, 0] * 2 + strides[:, 1]) * length
    bounds = np.stack([offset + strides[:, 2], offset + strides[:, 3]], axis=1).ravel()
    peak = np.maximum.reduceat(signal.ravel(), bounds)[::2]
    return np.where(np.isfinite(peak), peak, np.nan)


def _steps(touchdowns: np.ndarray, max_samples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Consecutive touchdowns of either foot in one trajectory: (trajectory [S], landing side [S], samples [S]),
    without pauses longer than max_samples; `alternate` steps change foot."""
    same_row = touchdowns[1:, 0] == touchdowns[:-1, 0]
    samples = touchdowns[1:, 2] - touchdowns[:-1, 2]
    keep = same_row & (samples <= max_samples)
    alternate = touchdowns[1:, 1] != touchdowns[:-1, 1]
    return touchdowns[1:, 0][keep], np.where(alternate[keep], touchdowns[1:, 1][keep], -1), samples[keep]


def _cadence(touchdowns: np.ndarray, batch: int, dt: float, max_samples: int) -> np.ndarray:
    """[B] steps per minute; NaN without a step."""
    rows, _, samples = _steps(touchdowns, max_samples)
    count = np.bincount(rows, minlength=batch).astype(float)
    duration = np.bincount(rows, weights=samples * dt, minlength=batch)
    return np.divide(60.0 * count, duration, out=np.full(batch, np.nan), where=duration > 0)


def _step_time_asymmetry(touchdowns: np.ndarray, batch: int, dt: float, max_samples: int) -> np.ndarray:
    """[B] |left - right| mean step time / their mean; NaN unless both feet have a step from the other foot."""
    rows, side, samples = _steps(touchdowns, max_samples)
    alternate = side >= 0
    step_time = _group_mean(samples[alternate] * dt, rows[alternate] * 2 + side[alternate], 2 * batch)
    left, right = step_time.reshape(batch, 2).T
    mean = (left + right) / 2
    return np.divide(np.abs(left - right), mean, out=np.full(batch, np.nan), where=mean > 0)


def _net_speed(features: Features) -> np.ndarray:
    """[B] net horizontal pelvis displacement / duration (m/s); 0 for a single sample."""
    root, time = features.root_pos, features.time
    distance = np.linalg.norm(root[:, -1, :2] - root[:, 0, :2], axis=-1)
    duration = time[:, -1] - time[:, 0]
    return np.divide(distance, duration, out=np.zeros(len(distance)), where=duration > 0)


def _peak_hip(features: Features) -> dict[str, np.ndarray]:
    hip = np.degrees(np.stack([features[f"{side}_hip_flexion"] for side in SIDES], axis=1))  # [B, 2, T]
    flat = hip.reshape(len(hip), -1)
    worst = np.argmax(flat, axis=1)
    time = np.take_along_axis(features.time, (worst % hip.shape[-1])[:, None], axis=1)[:, 0]
    return {"peak_hip_flexion": flat.max(axis=1), "peak_hip_time": time,
            "peak_hip_side": (worst // hip.shape[-1]).astype(float)}


def _swing_feet(features: Features, contact: np.ndarray) -> dict[str, np.ndarray]:
    """Clearance of the feet while off contact ([B, 2, T] cleaned contact): 95th percentile, peak and its time."""
    height = np.stack([features[f"{side}_foot_height"] for side in SIDES], axis=1)
    batch, length = height.shape[0], height.shape[-1]
    swing = ~contact.reshape(batch, -1)
    flat = np.where(swing, height.reshape(batch, -1), -np.inf)
    worst = np.argmax(flat, axis=1)
    peak = flat[np.arange(batch), worst]
    time = np.take_along_axis(features.time, (worst % length)[:, None], axis=1)[:, 0]
    return {"swing_clearance": _masked_percentile(height.reshape(batch, -1), swing, 95.0),
            "peak_swing_foot": np.where(np.isfinite(peak), peak, np.nan),
            "peak_swing_foot_time": np.where(np.isfinite(peak), time, np.nan),
            "peak_swing_foot_side": np.where(np.isfinite(peak), worst // length, np.nan)}


def _trunk(features: Features, settled: np.ndarray) -> dict[str, np.ndarray]:
    """Trunk pitch and roll of the torso's up axis in the heading frame (deg); the worst moment among the `settled`
    samples ([B, T] bool)."""
    up, heading = features.torso_up, features.heading
    cos, sin = np.cos(heading), np.sin(heading)
    pitch = np.degrees(np.arctan2(up[..., 0] * cos + up[..., 1] * sin, up[..., 2]))
    roll = np.degrees(np.arctan2(-up[..., 0] * sin + up[..., 1] * cos, up[..., 2]))
    deviation = np.maximum(np.abs(pitch - np.median(pitch, axis=1, keepdims=True)),
                           np.abs(roll - np.median(roll, axis=1, keepdims=True)))
    worst = np.argmax(np.where(settled, deviation, -1.0), axis=1)[:, None]
    return {"trunk_pitch_mean": pitch.mean(axis=1), "trunk_pitch_range": _spread(pitch),
            "trunk_roll_range": _spread(roll),
            "trunk_worst_time": np.take_along_axis(features.time, worst, axis=1)[:, 0]}


def _spread(x: np.ndarray, axis: int = 1) -> np.ndarray:
    """[B, T] -> [B] 5-95 % range (along `axis` of any array)."""
    low, high = np.percentile(x, [5.0, 95.0], axis=axis)
    return high - low


def _arms(features: Features, settled: np.ndarray) -> dict[str, np.ndarray]:
    """Hands relative to the torso in the heading frame: the largest sideways or up-down 5-95 % range (m) and the
    time of the largest deviation from the median among the `settled` samples ([B, T] bool); NaN for a body without
    arms or features without hands."""
    batch = features.batch_shape[0]
    if not all(f"{side}_hand_pos" in features for side in SIDES):
        return {name: np.full(batch, np.nan) for name in ("arm_excursion", "arm_worst_time", "arm_swing")}
    cos, sin = np.cos(features.heading), np.sin(features.heading)
    offset = np.stack([features[f"{side}_hand_pos"] - features.torso_pos for side in SIDES], axis=1)  # [B, 2, T, 3]
    across = np.stack([-offset[..., 0] * sin[:, None] + offset[..., 1] * cos[:, None], offset[..., 2]], axis=1)
    flat = across.reshape(batch, 4, -1)  # [B, sideways/up-down × side, T]
    excursion = _spread(flat, axis=-1).max(axis=1)
    deviation = np.abs(flat - np.median(flat, axis=-1, keepdims=True)).max(axis=1)  # [B, T]
    worst = np.take_along_axis(features.time, np.argmax(np.where(settled, deviation, -1.0), axis=1)[:, None],
                               axis=1)[:, 0]
    armless = np.abs(offset).max(axis=(1, 2, 3)) == 0.0
    ahead = offset[..., 0] * cos[:, None] + offset[..., 1] * sin[:, None]  # [B, 2, T]
    swing = np.mean([_swing_against(ahead[:, k], features[f"{side}_hip_flexion"], settled)
                     for k, side in enumerate(SIDES)], axis=0)
    return {"arm_excursion": np.where(armless, np.nan, excursion), "arm_worst_time": np.where(armless, np.nan, worst),
            "arm_swing": np.where(armless, np.nan, swing)}


def _swing_against(hand: np.ndarray, hip: np.ndarray, settled: np.ndarray) -> np.ndarray:
    """[B, T] a hand's offset ahead of the torso (m) and its side's hip flexion (rad) -> [B] the hand's swing
    against the thigh over the `settled` samples: -√2 × mean(hand × hip) / rms(hip), each less its mean, which is
    the amplitude of a sine exactly opposite the hip (the reward library's `arm_swing` reads it so)."""
    weight = settled / np.maximum(settled.sum(axis=1, keepdims=True), 1)
    hand = hand - (hand * weight).sum(axis=1, keepdims=True)
    hip = hip - (hip * weight).sum(axis=1, keepdims=True)
    rms = np.sqrt((hip**2 * weight).sum(axis=1))
    return -np.sqrt(2.0) * (hand * hip * weight).sum(axis=1) / np.maximum(rms, 1e-6)


# --- detectors ----------------------------------------------------------------------------------------------

def _no_time(m: GaitMeasures) -> np.ndarray:
    return np.full(len(m.stride_count), np.nan)


def _detect_kick(m: GaitMeasures, th: GaitThresholds) -> Detection:
    hip = m.peak_hip_flexion > th.kick_hip_deg
    foot = np.nan_to_num(m.peak_swing_foot, nan=0.0) > th.kick_foot_m
    return Detection(hip | foot, m.peak_hip_flexion, np.where(hip | ~foot, m.peak_hip_time, m.peak_swing_foot_time),
                     "deg", f"peak hip flexion > {th.kick_hip_deg:g} deg or swing foot > {th.kick_foot_m:g} m")


def _detect_shuffling(m: GaitMeasures, th: GaitThresholds) -> Detection:
    fast = np.nan_to_num(m.cadence, nan=0.0) > th.shuffle_cadence
    short = np.nan_to_num(m.step_length, nan=np.inf) < th.shuffle_step
    return Detection(fast | short, m.cadence, _no_time(m), "steps/min",
                     f"cadence > {th.shuffle_cadence:g} steps/min or steps < {th.shuffle_step:g} leg lengths")


def _detect_crouch(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection(np.nan_to_num(m.knee_midstance, nan=0.0) > th.crouch_knee_deg, m.knee_midstance, _no_time(m),
                     "deg", f"mid-stance knee flexion > {th.crouch_knee_deg:g} deg")


def _detect_stiff_legged(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection(np.nan_to_num(m.peak_knee_swing, nan=np.inf) < th.stiff_knee_deg, m.peak_knee_swing,
                     _no_time(m), "deg", f"peak swing knee flexion < {th.stiff_knee_deg:g} deg")


def _detect_limp(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection(np.nan_to_num(m.step_time_asymmetry, nan=0.0) > th.limp_asymmetry,
                     100.0 * m.step_time_asymmetry, _no_time(m), "%",
                     f"left/right step-time asymmetry > {100 * th.limp_asymmetry:g} %")


def _detect_trunk_wobble(m: GaitMeasures, th: GaitThresholds) -> Detection:
    spread = np.maximum(m.trunk_pitch_range, m.trunk_roll_range)
    return Detection(spread > th.wobble_deg, spread, m.trunk_worst_time, "deg",
                     f"5-95 % range of trunk pitch or roll > {th.wobble_deg:g} deg")


def _detect_trunk_lean(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection(np.abs(m.trunk_pitch_mean) > th.lean_deg, m.trunk_pitch_mean, _no_time(m), "deg",
                     f"mean trunk pitch beyond {th.lean_deg:g} deg forward or backward")


def _detect_scuffing(m: GaitMeasures, th: GaitThresholds) -> Detection:
    clearance = np.nan_to_num(m.swing_clearance, nan=0.0)  # never off the ground: no clearance at all
    moving = m.speed >= th.still_speed
    return Detection(moving & (clearance < th.scuff_clearance_m), clearance, _no_time(m), "m",
                     f"travelling >= {th.still_speed:g} m/s with swing clearance < {th.scuff_clearance_m:g} m")


def _detect_flailing_arms(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection(np.nan_to_num(m.arm_excursion, nan=0.0) > th.flail_m, m.arm_excursion, m.arm_worst_time, "m",
                     f"a hand's 5-95 % range relative to the torso, sideways or up-down > {th.flail_m:g} m")


def _detect_standing_still(m: GaitMeasures, th: GaitThresholds) -> Detection:
    return Detection((m.stride_count == 0) | (m.speed < th.still_speed), m.speed, _no_time(m), "m/s",
                     f"no strides or net speed < {th.still_speed:g} m/s")


DETECTORS: dict[str, Callable[[GaitMeasures, GaitThresholds], Detection]] = {
    "kick": _detect_kick,
    "shuffling": _detect_shuffling,
    "crouch": _detect_crouch,
    "stiff_legged": _detect_stiff_legged,
    "limp": _detect_limp,
    "trunk_wobble": _detect_trunk_wobble,
    "trunk_lean": _detect_trunk_lean,
    "scuffing": _detect_scuffing,
    "flailing_arms": _detect_flailing_arms,
    "standing_still": _detect_standing_still,
}
"""Detector name -> rule over the measures."""


# --- normal ranges and the table ----------------------------------------------------------------------------

def normal_ranges(leg_length: float, reference: GaitReference | None = None,
                  thresholds: GaitThresholds | None = None) -> dict[str, tuple[float, float]]:
    """GaitMeasures field -> human normal (mean - 2 SD, mean + 2 SD) in the measure's units, for a body whose leg
    (standing pelvis height) is `leg_length` m. Curve-derived ranges use the mean curve ± 2 × its SD there."""
    ref, th = reference or human_gait_reference(), thresholds or GaitThresholds()
    v = ref.values
    rate, velocity = np.sqrt(GRAVITY / leg_length), np.sqrt(GRAVITY * leg_length)
    window = (ref.phase >= th.midstance[0]) & (ref.phase <= th.midstance[1])
    knee, hip = ref.mean[JOINTS.index("knee_flexion")], ref.mean[JOINTS.index("hip_flexion")]
    knee_sd, hip_sd = ref.sd[JOINTS.index("knee_flexion")], ref.sd[JOINTS.index("hip_flexion")]
    peak = int(np.argmax(hip))
    return {
        "cadence": _scaled(v["cadence_dimensionless"], 60.0 * rate),
        "speed": _scaled(v["speed_dimensionless"], velocity),
        "step_length": v["step_length_leg_lengths"].bounds(),
        "stance_fraction": v["stance_fraction"].bounds(),
        "knee_midstance": NormalRange(float(knee[window].mean()), float(knee_sd[window].mean()), "curve").bounds(),
        "peak_knee_swing": v["peak_knee_swing_deg"].bounds(),
        "peak_hip_flexion": NormalRange(float(hip[peak]), float(hip_sd[peak]), "curve").bounds(),
        "pelvis_yaw_range": v["pelvis_rotation_range_deg"].bounds(),
    }


def _scaled(value: NormalRange, factor: float) -> tuple[float, float]:
    low, high = value.bounds()
    return low * factor, high * factor


_MEASURE_ROWS = (  # field, label, format
    ("cadence", "cadence (steps/min)", "{:.1f}"),
    ("speed", "speed (m/s)", "{:.2f}"),
    ("step_length", "step length (leg lengths)", "{:.2f}"),
    ("stance_fraction", "stance (fraction of cycle)", "{:.2f}"),
    ("step_time_asymmetry", "step-time asymmetry (fraction)", "{:.2f}"),
    ("knee_midstance", "knee flexion, mid-stance (deg)", "{:.1f}"),
    ("peak_knee_swing", "peak knee flexion, swing (deg)", "{:.1f}"),
    ("peak_hip_flexion", "peak hip flexion (deg)", "{:.1f}"),
    ("swing_clearance", "swing foot clearance p95 (m)", "{:.3f}"),
    ("pelvis_yaw_range", "pelvis yaw range / stride (deg)", "{:.1f}"),
    ("trunk_pitch_mean", "trunk pitch mean (deg)", "{:.1f}"),
    ("trunk_pitch_range", "trunk pitch range p5-p95 (deg)", "{:.1f}"),
    ("trunk_roll_range", "trunk roll range p5-p95 (deg)", "{:.1f}"),
    ("arm_excursion", "hand range across/up-down (m)", "{:.2f}"),
    ("arm_swing", "hand swing against the thigh (m)", "{:.2f}"),
)


def format_gait_table(analysis: GaitAnalysis, index: int = 0, reference: GaitReference | None = None) -> str:
    """Trajectory `index` as text: per joint r and RMSE, measures beside human normal ranges, detectors."""
    ref = reference or human_gait_reference()
    row = analysis.row(index)
    strides = np.bincount(analysis.events.strides[analysis.events.strides[:, 0] == index, 1], minlength=2)
    lines = [f"Gait of trajectory {index}: {row['stride_count']} strides (left {strides[0]}, right {strides[1]}), "
             f"leg length {analysis.leg_length:.2f} m",
             f"Reference: {ref.citation}; normal = mean ± 2 SD", "",
             f"{'joint (sagittal)':<22}{'r':>8}{'RMSE (deg)':>12}"]
    for joint in JOINTS:
        lines.append(f"{joint.replace('_', ' '):<22}{_fmt(row[f'{joint}_r'], '{:.2f}'):>8}"
                     f"{_fmt(row[f'{joint}_rmse_deg'], '{:.1f}'):>12}")
    lines += ["", f"{'measure':<34}{'value':>9}   human normal"]
    ranges, notes = normal_ranges(analysis.leg_length, ref), _normal_notes(ref)
    for name, label, fmt in _MEASURE_ROWS:
        normal = ranges.get(name)
        text = f"{fmt.format(normal[0])} – {fmt.format(normal[1])}" if normal else notes.get(name, "—")
        lines.append(f"{label:<34}{_fmt(row[name], fmt):>9}   {text}")
    lines += ["", f"{'detector':<16}{'result':<8}rule"]
    for name, detection in analysis.detections.items():
        verdict = "YES" if detection.detected[index] else "no"
        when = detection.time[index]
        at = f" at {when:.2f} s" if detection.detected[index] and np.isfinite(when) else ""
        lines.append(f"{name:<16}{verdict:<8}{_fmt(float(detection.magnitude[index]), '{:.3g}')} "
                     f"{detection.units}{at}  ({detection.rule})")
    return "\n".join(lines)


def _normal_notes(ref: GaitReference) -> dict[str, str]:
    """Human values shown where the reference has no range for the measure itself."""
    toe = ref.values["min_toe_clearance_m"]
    return {"swing_clearance": f"— (minimum toe clearance {toe.mean:.3f} ± {toe.sd:.3f})",
            "trunk_pitch_range": f"— (range of the group-mean curve {ref.trunk_pitch_curve_range:.1f})"}


def _fmt(value: float, fmt: str) -> str:
    return fmt.format(value) if np.isfinite(value) else "—"


# --- helpers without warnings -------------------------------------------------------------------------------

def _group_mean(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """[N, ...] values and [N] group ids in [0, count) -> [count, ...] mean of the finite values; NaN if none."""
    values = np.asarray(values, float)
    ok = np.isfinite(values)
    total = np.zeros((count, *values.shape[1:]))
    seen = np.zeros((count, *values.shape[1:]))
    np.add.at(total, groups, np.where(ok, values, 0.0))
    np.add.at(seen, groups, ok)
    return np.divide(total, seen, out=np.full(total.shape, np.nan), where=seen > 0)


def _mean_finite(x: np.ndarray, axis: int) -> np.ndarray:
    """Mean of the finite entries along `axis`; NaN where there are none."""
    ok = np.isfinite(x)
    total, count = np.where(ok, x, 0.0).sum(axis=axis), ok.sum(axis=axis)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def _masked_percentile(x: np.ndarray, mask: np.ndarray, q: float) -> np.ndarray:
    """[B, N] values and [B, N] bool mask -> [B] q-th percentile (linear) of the masked values; NaN if none."""
    ordered = np.sort(np.where(mask, x, np.inf), axis=1)
    n = mask.sum(axis=1)
    position = q / 100.0 * np.maximum(n - 1, 0)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, np.maximum(n - 1, 0))
    a = np.take_along_axis(ordered, low[:, None], axis=1)[:, 0]
    b = np.take_along_axis(ordered, high[:, None], axis=1)[:, 0]
    a, b = np.where(n > 0, a, 0.0), np.where(n > 0, b, 0.0)
    return np.where(n > 0, a + (b - a) * (position - low), np.nan)


GAIT_FACTS: tuple[tuple[str, str, str, float], ...] = (
    ("cadence", "cadence", "steps/min", 1.0), ("step_time_asymmetry", "limp", "%", 100.0),
    ("step_length", "step", "leg lengths", 1.0), ("knee_midstance", "mid-stance knee", "°", 1.0),
    ("peak_hip_flexion", "peak hip", "°", 1.0), ("swing_clearance", "clearance", "cm", 100.0),
    ("trunk_pitch_mean", "trunk lean", "°", 1.0), ("trunk_pitch_range", "trunk pitch range", "°", 1.0))
"""Gait measures a candidate's record keeps and its report shows: (GaitMeasures field, label, unit, factor from
the field's unit to the shown one)."""


def gait_facts(features: Features) -> dict[str, float]:
    """GAIT_FACTS field -> value of the first trajectory in `features`, in the fields' own units; the ones it has
    nothing to measure for (no strides) left out."""
    measures = analyze_gait(features).measures
    values = {name: float(getattr(measures, name)[0]) for name, *_ in GAIT_FACTS}
    return {name: value for name, value in values.items() if np.isfinite(value)}
