"""Is a gait human-like? Targets on the gait analysis that the benchmark reports and a policy search can aim at.

The targets follow normative walking (see `human_gait.json`): hip and knee curves over a stride shaped like
people's, a nearly straight knee in mid-stance and a well-bent one in swing, a moderate hip swing, a low swing
foot, a walking cadence, a steady pelvis and a nearly upright trunk. `shortfall` turns misses into one
non-negative number per trajectory (0 when every target is met), each miss scaled by a tolerance in its own units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rewardloop.critic.gait import JOINTS, GaitAnalysis


@dataclass(frozen=True)
class HumanLikeTargets:
    """Bounds a human-like walk stays within (issue targets for the humanoid and myolegs)."""

    min_correlation: float = 0.85
    """Least Pearson correlation of the hip and of the knee flexion curve with the human curve."""
    max_knee_midstance_deg: float = 25.0
    """Most knee flexion in mid-stance (deg)."""
    knee_swing_deg: tuple[float, float] = (45.0, 70.0)
    """Peak knee flexion in swing (deg)."""
    max_hip_flexion_deg: float = 40.0
    """Most hip flexion (deg)."""
    max_clearance_m: float = 0.2
    """Most swing foot clearance (m)."""
    min_clearance_m: float = 0.0
    """Least swing foot clearance (m): none among the issue's targets; a gait search may aim higher to step over
    uneven ground."""
    cadence: tuple[float, float] = (90.0, 130.0)
    """Steps per minute."""
    max_pelvis_yaw_deg: float = 20.0
    """Most pelvis yaw oscillation within a stride, peak to peak (deg)."""
    max_trunk_lean_deg: float = 10.0
    """Most mean trunk pitch from vertical, forward or backward (deg). People walking at their own speed keep the
    trunk within a few degrees of vertical, leaning slightly forward (more when walking fast or uphill)."""


_TOLERANCE = {"hip_shape": 0.15, "knee_shape": 0.15, "knee_midstance": 10.0, "knee_swing": 10.0, "hip_peak": 10.0,
              "clearance": 0.05, "cadence": 15.0, "pelvis_yaw": 10.0, "trunk_lean": 5.0}
"""How far past each target counts as one unit of shortfall, in the target's units."""


def misses(analysis: GaitAnalysis, targets: HumanLikeTargets = HumanLikeTargets()) -> dict[str, np.ndarray]:
    """Target name -> [B] how far past it each trajectory is (0 when met; NaN when the gait has no strides)."""
    m, t = analysis.measures, targets
    hip, knee = analysis.correlation[:, JOINTS.index("hip_flexion")], analysis.correlation[:, JOINTS.index(
        "knee_flexion")]
    return {
        "hip_shape": np.maximum(t.min_correlation - hip, 0.0),
        "knee_shape": np.maximum(t.min_correlation - knee, 0.0),
        "knee_midstance": np.maximum(m.knee_midstance - t.max_knee_midstance_deg, 0.0),
        "knee_swing": _outside(m.peak_knee_swing, t.knee_swing_deg),
        "hip_peak": np.maximum(m.peak_hip_flexion - t.max_hip_flexion_deg, 0.0),
        "clearance": _outside(m.swing_clearance, (t.min_clearance_m, t.max_clearance_m)),
        "cadence": _outside(m.cadence, t.cadence),
        "pelvis_yaw": np.maximum(m.pelvis_yaw_range - t.max_pelvis_yaw_deg, 0.0),
        "trunk_lean": np.maximum(np.abs(m.trunk_pitch_mean) - t.max_trunk_lean_deg, 0.0),
    }


def met(analysis: GaitAnalysis, targets: HumanLikeTargets = HumanLikeTargets()) -> dict[str, np.ndarray]:
    """Target name -> [B] bool, whether each trajectory meets it (a gait without strides meets none)."""
    return {name: np.nan_to_num(miss, nan=1.0) == 0.0 for name, miss in misses(analysis, targets).items()}


NO_GAIT = 20.0
"""The shortfall of a trajectory without strides (each of the nine targets missed by about twice its tolerance)."""


def shortfall(analysis: GaitAnalysis, targets: HumanLikeTargets = HumanLikeTargets(), *,
              no_gait: float = NO_GAIT) -> np.ndarray:
    """[B] Σ miss / tolerance over the targets (0 when all are met); `no_gait` for a trajectory without strides."""
    total = sum(np.nan_to_num(miss / _TOLERANCE[name], nan=no_gait / len(_TOLERANCE))
                for name, miss in misses(analysis, targets).items())
    return np.asarray(total, dtype=float)


def _outside(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """[B] distance of each value outside [low, high] (0 inside; NaN stays NaN)."""
    return np.maximum(bounds[0] - values, 0.0) + np.maximum(values - bounds[1], 0.0)
