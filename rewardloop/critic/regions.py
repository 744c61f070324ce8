"""The gait analysis as measured facts for a model's prompt: region by region, and the faults that fired.

A vision-language critic is told, for each body region (MotionVL's hip, knee, ankle and torso descriptors,
plus the feet and stepping), how the motion's joint curves compare with normative human walking, each
measure beside its human normal range, and each detector's verdict with its time; a designer is told the
faults that fired, where and when. Everything comes from `rewardloop.critic.gait.analyze_gait`; this module
only chooses and words it. Detectors it does not place go under 'whole body'; measures it has no words for
are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rewardloop.critic.gait import JOINTS, GaitAnalysis, human_gait_reference, normal_ranges


@dataclass(frozen=True)
class Region:
    """A body region and what the gait analysis measures of it."""

    joints: tuple[str, ...] = ()
    """Joints (names in gait.JOINTS) whose phase-normalised curves are compared with the human reference."""
    measures: tuple[str, ...] = ()
    """GaitMeasures fields."""
    detectors: tuple[str, ...] = ()
    """Detector names (gait.DETECTORS)."""


REGIONS: dict[str, Region] = {
    "hips": Region(("hip_flexion",), ("peak_hip_flexion",), ("kick",)),
    "knees": Region(("knee_flexion",), ("knee_midstance", "peak_knee_swing"), ("crouch", "stiff_legged")),
    "ankles": Region(("ankle_dorsiflexion",)),
    "trunk and pelvis": Region((), ("trunk_pitch_mean", "trunk_pitch_range", "trunk_roll_range",
                                    "pelvis_yaw_range"), ("trunk_wobble", "trunk_lean")),
    "feet and stepping": Region((), ("speed", "cadence", "step_length", "stance_fraction", "step_time_asymmetry",
                                     "swing_clearance", "peak_swing_foot"),
                                ("shuffling", "limp", "scuffing", "standing_still")),
    "arms": Region((), (), ("flailing_arms",)),
}
"""Region name -> what it shows, in prompt order; 'whole body' collects detectors placed nowhere else."""

MEASURES: dict[str, tuple[str, str]] = {
    "peak_hip_flexion": ("peak hip flexion", "{:.0f} deg"),
    "knee_midstance": ("knee flexion in mid-stance", "{:.0f} deg"),
    "peak_knee_swing": ("peak knee flexion in swing", "{:.0f} deg"),
    "trunk_pitch_mean": ("mean trunk lean forward", "{:.0f} deg"),
    "trunk_pitch_range": ("trunk pitch sway (p5-p95)", "{:.0f} deg"),
    "trunk_roll_range": ("trunk roll sway (p5-p95)", "{:.0f} deg"),
    "pelvis_yaw_range": ("pelvis yaw per stride", "{:.0f} deg"),
    "speed": ("net speed", "{:.2f} m/s"),
    "cadence": ("cadence", "{:.0f} steps/min"),
    "step_length": ("step length", "{:.2f} leg lengths"),
    "stance_fraction": ("stance", "{:.2f} of the cycle"),
    "step_time_asymmetry": ("left/right step-time asymmetry", "{:.2f}"),
    "swing_clearance": ("swing foot clearance (p95)", "{:.3f} m"),
    "peak_swing_foot": ("highest swing foot", "{:.2f} m"),
}
"""GaitMeasures field -> (label, value format with units)."""


@dataclass(frozen=True)
class Fault:
    """A gait fault a detector found in one trajectory."""

    detector: str
    region: str
    time_s: float | None
    """When it is worst (s); None when it is not an instant."""
    magnitude: float
    units: str
    rule: str

    def line(self) -> str:
        """'kick (hips) at t = 2.90 s: 112 deg; rule: ...'."""
        when = "" if self.time_s is None else f" at t = {self.time_s:.2f} s"
        return f"{self.detector} ({self.region}){when}: {self.magnitude:.3g} {self.units}; rule: {self.rule}"


def region_of(detector: str) -> str:
    """The region a detector belongs to ('whole body' when none names it)."""
    return next((name for name, region in REGIONS.items() if detector in region.detectors), "whole body")


def faults(analysis: GaitAnalysis, index: int = 0) -> tuple[Fault, ...]:
    """The detectors that fired for trajectory `index`, in detector order."""
    out = []
    for name, detection in analysis.detections.items():
        if not bool(detection.detected[index]):
            continue
        when = float(detection.time[index])
        out.append(Fault(name, region_of(name), when if np.isfinite(when) else None,
                           float(detection.magnitude[index]), detection.units, detection.rule))
    return tuple(out)


@dataclass(frozen=True)
class GaitFaults:
    """What a designer is told of a motion's gait."""

    findings: tuple[Fault, ...]
    """The faults found."""
    shapes: str = ""
    """How the joint curves compare with people's ('' when the motion made no strides)."""

    def lines(self) -> tuple[str, ...]:
        return tuple(f.line() for f in self.findings) + ((self.shapes,) if self.shapes else ())


def gait_faults(analysis: GaitAnalysis, index: int = 0) -> GaitFaults:
    """The faults found in trajectory `index` and, when it made strides, how its joint curves compare with
    normative walking."""
    shapes = ""
    if int(analysis.measures.stride_count[index]) > 0:
        shapes = "joint curves vs human walking (Pearson r over a stride, 1 = same shape): " + ", ".join(
            f"{joint.split('_')[0]} r = {analysis.correlation[index, j]:.2f}" for j, joint in enumerate(JOINTS)
            if np.isfinite(analysis.correlation[index, j]))
    return GaitFaults(faults(analysis, index), shapes)


def format_regions(analysis: GaitAnalysis, index: int = 0) -> str:
    """For a critic: trajectory `index`'s gait region by region, each value beside the human normal range, every
    detector's verdict; then the faults found."""
    ranges = normal_ranges(analysis.leg_length)
    row = analysis.row(index)
    placed = {d for region in REGIONS.values() for d in region.detectors}
    regions = {**REGIONS, "whole body": Region((), (), tuple(d for d in analysis.detections if d not in placed))}
    lines = [f"{int(row['stride_count'])} strides measured; human reference: {human_gait_reference().citation}; "
             f"normal = mean ± 2 SD, scaled to this body's leg ({analysis.leg_length:.2f} m)."]
    for name, region in regions.items():
        body = _region_lines(analysis, index, region, row, ranges)
        if body:
            lines += [f"- {name}:", *(f"  - {line}" for line in body)]
    found = faults(analysis, index)
    lines.append("Faults found: " + ("; ".join(f.line() for f in found) if found else "none"))
    return "\n".join(lines)


def _region_lines(analysis: GaitAnalysis, index: int, region: Region, row: dict[str, float | int | bool],
                  ranges: dict[str, tuple[float, float]]) -> list[str]:
    lines = []
    for joint in region.joints:
        r, rmse = row.get(f"{joint}_r", np.nan), row.get(f"{joint}_rmse_deg", np.nan)
        if np.isfinite(r):
            lines.append(f"{joint.replace('_', ' ')} curve over a stride vs human: r = {r:.2f} (1 = same shape, "
                         f"< 0 = opposite), RMS difference {rmse:.0f} deg")
    for measure in region.measures:
        value = row.get(measure)
        if value is None or not np.isfinite(value) or measure not in MEASURES:
            continue
        label, fmt = MEASURES[measure]
        normal = ranges.get(measure)
        human = f" (human {fmt.format(normal[0]).split()[0]}-{fmt.format(normal[1])})" if normal else ""
        lines.append(f"{label}: {fmt.format(value)}{human}")
    for detector in region.detectors:
        detection = analysis.detections.get(detector)
        if detection is not None:
            lines.append(_verdict(detector, detection.detected[index], float(detection.time[index])))
    return lines


def _verdict(detector: str, detected: bool, time_s: float) -> str:
    if not detected:
        return f"{detector.replace('_', ' ')}: no"
    return f"{detector.replace('_', ' ')}: YES" + (f" (worst at t = {time_s:.2f} s)" if np.isfinite(time_s) else "")
