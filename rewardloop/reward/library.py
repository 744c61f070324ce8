"""The vetted term library: reward terms a program calls as `lib.NAME(f, param=value)`.

Every term reads only the semantic feature vocabulary (`rewardloop.sim.features.FEATURES`), so it works on
every body, and returns a [B, T] float array. Each `LibraryTerm` documents its units and its sign: "+" terms
are rewards to be maximised (give them a positive weight), "-" terms are penalties that are ≤ 0 (also give
them a positive weight; the sign is already inside). Sources: MoVLR (height, upright, balance, feet crossing,
forward and side velocity, heading, non-foot contact, joint posture), MotionVL (velocity tracking, feet air
time, base height, torques, foot slip, knee and feet distance, action smoothness, knee extension, toe
direction, ankle stance), gait measures (symmetry, cadence, clearance, effort, joint limits, CoM height
variance, yaw rate) and the gait analysis (`rewardloop.critic.gait`): tracking people's joint curves at the gait
phase estimated from foot contacts, a swing-height limit, a cadence band and arm swing. Touchdowns are debounced
the way the gait analysis does it (`_clean_contact`), so contact flicker is not stepping.

This module imports only NumPy and the standard library: it also runs inside the sandbox worker. It reads the
human reference curves (`HUMAN_GAIT`, the gait analysis's file) once, at import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SIDES = ("left", "right")
JOINTS = ("hip_flexion", "hip_adduction", "hip_rotation", "knee_flexion", "ankle_dorsiflexion")
PARTS = ("pelvis", "torso", "head")

JOINT_RANGES: dict[str, tuple[float, float]] = {
    "hip_flexion": (-0.5, 1.6),
    "hip_adduction": (-0.5, 0.4),
    "hip_rotation": (-0.6, 0.6),
    "knee_flexion": (0.0, 2.3),
    "ankle_dorsiflexion": (-0.8, 0.5),
}
"""Typical human range of each semantic joint (rad, low, high), the default for `joint_limits`."""

HUMAN_GAIT_FILE = Path(__file__).resolve().parents[1] / "critic" / "human_gait.json"
"""Normative human walking, the gait analysis's reference (Schwartz et al. 2008; critic/README_DATA.md)."""
TRACKED_JOINTS = ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")
"""Semantic joints with a human reference curve, for `human_gait_tracking`."""


def _read_human_gait() -> tuple[tuple[float, ...], dict[str, tuple[float, ...]]]:
    """(gait phases [P] from 0 = touchdown to 1 = the same foot's next, joint -> mean human angle [P] in rad)."""
    data = json.loads(HUMAN_GAIT_FILE.read_text(encoding="utf-8"))
    curves = data["curves_deg"]
    phase = tuple(float(p) / 100.0 for p in data["phase_percent"])
    return phase, {joint: tuple(float(np.deg2rad(a)) for a in curves[joint]["mean"]) for joint in TRACKED_JOINTS}


HUMAN_GAIT_PHASE, HUMAN_GAIT = _read_human_gait()
"""People's mean sagittal joint angles over the gait cycle (rad; sign conventions as the features')."""

FeatureLike = Any
"""Features or the sandbox's feature view: `f.name` / `f["name"]` give [B, T(, k)] arrays and scalars."""


@dataclass(frozen=True)
class LibraryTerm:
    """One vetted term."""

    name: str
    """Registry name, called as `lib.<name>(f, ...)`."""
    function: Callable[..., np.ndarray]
    """(f, **params) -> [B, T] values."""
    params: dict[str, Any]
    """Parameter name -> default value (all keyword-only)."""
    units: str
    """Units of the returned values."""
    sign: str
    """'+' a reward to maximise, '-' a penalty ≤ 0 (both take positive weights)."""
    meaning: str
    """What it measures, in a sentence."""
    reads: tuple[str, ...]
    """Feature names it may read (the sandbox ships only these)."""
    choices: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Parameter name -> allowed values, for parameters with a fixed set."""


def _both(f: FeatureLike, suffix: str) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(f[f"left_{suffix}"]), np.asarray(f[f"right_{suffix}"])


def _heading_axes(f: FeatureLike) -> tuple[np.ndarray, np.ndarray]:
    """[B, T, 2] forward and left unit vectors of the pelvis heading in the ground plane."""
    heading = np.asarray(f["heading"])
    cos, sin = np.cos(heading), np.sin(heading)
    return np.stack([cos, sin], axis=-1), np.stack([-sin, cos], axis=-1)


def _lateral_separation(f: FeatureLike, point: str = "foot_pos") -> np.ndarray:
    """[B, T] left minus right foot position along the body's left axis (m); > 0 when not crossed."""
    left, right = _both(f, point)
    _, leftward = _heading_axes(f)
    return np.sum((left[..., :2] - right[..., :2]) * leftward, axis=-1)


def _touchdowns(contact: np.ndarray) -> np.ndarray:
    """[B, T] 1 where a [B, T] 0/1 contact series goes from 0 to 1, else 0."""
    before = np.concatenate([contact[:, :1], contact[:, :-1]], axis=1)
    return ((contact > 0.5) & (before < 0.5)).astype(float)


def height(f: FeatureLike, *, fraction: float = 1.0, width: float = 0.1) -> np.ndarray:
    """exp(-((root_height - fraction × standing_height) / width)²): 1 at the target pelvis height."""
    error = np.asarray(f["root_height"]) - fraction * f.standing_height
    return np.exp(-np.square(error / width))


def base_height(f: FeatureLike, *, fraction: float = 1.0) -> np.ndarray:
    """-(root_height - fraction × standing_height)² (m²)."""
    return -np.square(np.asarray(f["root_height"]) - fraction * f.standing_height)


def alive(f: FeatureLike, *, fraction: float = 0.6) -> np.ndarray:
    """1 while the pelvis is above fraction × standing_height, else 0."""
    return (np.asarray(f["root_height"]) > fraction * f.standing_height).astype(float)


def upright(f: FeatureLike, *, part: str = "torso") -> np.ndarray:
    """z component of the part's up axis: 1 upright, 0 horizontal, -1 upside down."""
    return np.asarray(f[f"{part}_up"])[..., 2]


def balance(f: FeatureLike) -> np.ndarray:
    """-horizontal distance (m) from the centre of mass to the centre of the feet in contact (both if none)."""
    left, right = _both(f, "foot_pos")
    c_left, c_right = _both(f, "foot_contact")
    w_left = np.where(c_left + c_right > 0, c_left, 1.0)[..., None]
    w_right = np.where(c_left + c_right > 0, c_right, 1.0)[..., None]
    support = (w_left * left + w_right * right) / (w_left + w_right)
    return -np.linalg.norm(np.asarray(f["com_pos"])[..., :2] - support[..., :2], axis=-1)


def capture_point(f: FeatureLike, *, lead_s: float = 0.3, margin: float = 0.05,
                  speed: float | np.ndarray = 0.0) -> np.ndarray:
    """-horizontal distance (m) from the capture point (CoM + lead_s × CoM velocity) to the segment between the
    feet, shortened by margin at each end; about 0 (-0.01, smoothed) while steps keep it between the feet; with
    speed (m/s) the velocity is taken relative to a frame moving at that speed along the heading.

    A walk at its target `speed` (a number or [B, T]) is then not charged for the capture point running ahead of
    the feet, as it does in every step of people's walking; running off the target, or sideways, is."""
    left, right = _both(f, "foot_pos")
    velocity = np.asarray(f["com_vel"])[..., :2]
    if np.any(speed):
        forward = _heading_axes(f)[0]  # [B, T, 2]
        velocity = velocity - np.broadcast_to(np.asarray(speed, dtype=float), forward.shape[:-1])[..., None] * forward
    point = np.asarray(f["com_pos"])[..., :2] + lead_s * velocity
    middle = 0.5 * (left[..., :2] + right[..., :2])
    axis = right[..., :2] - left[..., :2]
    length = np.sqrt(np.sum(np.square(axis), axis=-1, keepdims=True) + 1e-12)
    half = np.maximum(0.5 * length - margin, 0.0)
    along = np.clip(np.sum((point - middle) * axis / length, axis=-1, keepdims=True), -half, half)
    nearest = middle + along * axis / length
    return -np.sqrt(np.sum(np.square(point - nearest), axis=-1) + 1e-4)


def _other(stance: str) -> str:
    _check(stance in SIDES, f"stance must be one of {', '.join(SIDES)}, got {stance!r}")
    return "right" if stance == "left" else "left"


def one_leg_stance(f: FeatureLike, *, stance: str = "left", lift: float = 0.1) -> np.ndarray:
    """contact(stance foot) × (1 - contact(other foot)) × min(1, other foot height / lift): 1 standing on the
    `stance` foot alone with the other foot at least `lift` m up, less with it lower, 0 with both feet down (0-1)."""
    other = _other(stance)
    raised = np.clip(np.asarray(f[f"{other}_foot_height"]) / lift, 0.0, 1.0)
    return np.asarray(f[f"{stance}_foot_contact"]) * (1.0 - np.asarray(f[f"{other}_foot_contact"])) * raised


def stance_balance(f: FeatureLike, *, stance: str = "left", lead_s: float = 0.3) -> np.ndarray:
    """-horizontal distance (m) from the capture point (CoM + lead_s × CoM velocity) to the `stance` foot: balance
    over one foot, where `capture_point` would accept the CoM anywhere between the feet."""
    _other(stance)
    point = np.asarray(f["com_pos"])[..., :2] + lead_s * np.asarray(f["com_vel"])[..., :2]
    return -np.linalg.norm(point - np.asarray(f[f"{stance}_foot_pos"])[..., :2], axis=-1)


def swing_hip_flexion(f: FeatureLike, *, target: float = 1.2) -> np.ndarray:
    """Σ over legs of (1 - foot contact) × min(hip_flexion, target) / target (0-2): each swinging thigh lifted
    toward `target` rad (high knees, a march: 1.0-1.4; a walk's swing peaks near 0.4-0.6)."""
    _check(target > 0, f"target must be > 0 rad, got {target}")
    total = np.zeros(np.shape(f["left_foot_contact"]))
    for side in SIDES:
        lifted = np.minimum(np.asarray(f[f"{side}_hip_flexion"]), target) / target
        total += (1.0 - np.asarray(f[f"{side}_foot_contact"])) * lifted
    return total


def feet_follow(f: FeatureLike) -> np.ndarray:
    """-|mean forward speed of the feet - forward speed of the CoM| (m/s), along x: the feet keep up by stepping."""
    left, right = _both(f, "foot_vel")
    return -np.abs(0.5 * (left[..., 0] + right[..., 0]) - np.asarray(f["com_vel"])[..., 0])


def feet_crossing(f: FeatureLike, *, min_gap: float = 0.05) -> np.ndarray:
    """-max(0, min_gap - lateral foot separation) (m): the left foot should stay left of the right one."""
    return -np.maximum(0.0, min_gap - _lateral_separation(f))


def forward_velocity(f: FeatureLike, *, cap: float = 10.0) -> np.ndarray:
    """min(forward_vel, cap) (m/s): forward speed along the heading, capped."""
    return np.minimum(np.asarray(f["forward_vel"]), cap)


def velocity_tracking(f: FeatureLike, *, forward: float = 1.2, lateral: float = 0.0, sigma: float = 0.5) -> np.ndarray:
    """exp(-((forward_vel - forward)² + (lateral_vel - lateral)²) / sigma²): 1 at the commanded velocity."""
    error = np.square(np.asarray(f["forward_vel"]) - forward) + np.square(np.asarray(f["lateral_vel"]) - lateral)
    return np.exp(-error / sigma**2)


def side_velocity(f: FeatureLike) -> np.ndarray:
    """-|lateral_vel| (m/s): sideways drift."""
    return -np.abs(np.asarray(f["lateral_vel"]))


def heading(f: FeatureLike, *, target: float = 0.0) -> np.ndarray:
    """cos(heading - target): 1 when facing the target yaw (rad, 0 = +x, + = left)."""
    return np.cos(np.asarray(f["heading"]) - target)


def yaw_rate(f: FeatureLike, *, target: float = 0.5, sigma: float = 0.3, window_s: float = 0.0) -> np.ndarray:
    """exp(-((yaw_rate - target) / sigma)²): 1 when turning at target rad/s (+ = left). With `window_s` > 0 the
    rate is the heading's change over the last `window_s` seconds (over the time so far, early in the window):
    a walking pelvis yaws to and fro with each step (the muscle legs: ±1 rad/s), so the instantaneous rate scores
    a walk turning at 0.15 rad/s no better than a straight one, and a stride's window (1 s) tells them apart."""
    rate = np.asarray(f["yaw_rate"]) if window_s <= 0 else _heading_rate(f, window_s)
    return np.exp(-np.square((rate - target) / sigma))


def heading_error(f: FeatureLike, *, target: float = 0.0) -> np.ndarray:
    """-|heading - target| wrapped to [0, π] (rad): keep facing the target yaw (0 = +x, + = left). Unlike
    `heading`'s cosine it is steep near the target, so facing 30° off costs as much per degree as 5° off."""
    error = np.angle(np.exp(1j * (np.asarray(f["heading"]) - target)))
    return -np.abs(error)


def _course_speed(f: FeatureLike, speed: float, accel: float) -> np.ndarray:
    """[B, T] the course's target speed (m/s): `speed` reached from rest at `accel` m/s²."""
    return np.minimum(speed, accel * np.asarray(f["time"]))


def _course_axes(course_deg: float) -> tuple[float, float]:
    """(x, y) of a unit vector `course_deg` from +x, + to the left."""
    return float(np.cos(np.radians(course_deg))), float(np.sin(np.radians(course_deg)))


def course_velocity(f: FeatureLike, *, course_deg: float = 90.0, speed: float = 0.3, accel: float = 0.3,
                    sigma: float = 0.2) -> np.ndarray:
    """exp(-((v_along - target)² + v_across²) / sigma²): 1 moving at the target speed (`speed` m/s, reached from rest
    at `accel` m/s²) along a course `course_deg` from the start's forward axis (+ left: 90 sideways to the left,
    -90 to the right, 45 diagonally forward-left), whatever the body faces. CoM velocity in the world frame."""
    cx, cy = _course_axes(course_deg)
    velocity = np.asarray(f["com_vel"])
    along = velocity[..., 0] * cx + velocity[..., 1] * cy
    across = velocity[..., 0] * cy - velocity[..., 1] * cx
    return np.exp(-(np.square(along - _course_speed(f, speed, accel)) + np.square(across)) / sigma**2)


def course_path(f: FeatureLike, *, course_deg: float = 90.0, speed: float = 0.3, accel: float = 0.3) -> np.ndarray:
    """-horizontal distance (m) of the CoM from a point leaving the origin along the course (`course_velocity`'s
    course and target speed): on the path at its pace costs nothing, falling behind or wandering off costs."""
    cx, cy = _course_axes(course_deg)
    time = np.asarray(f["time"])
    ramp = np.minimum(time, speed / accel)
    travelled = 0.5 * accel * ramp**2 + speed * (time - ramp)
    com = np.asarray(f["com_pos"])
    return -np.hypot(com[..., 0] - cx * travelled, com[..., 1] - cy * travelled)


def _heading_rate(f: FeatureLike, window_s: float) -> np.ndarray:
    """[B, T] rate (rad/s) of the heading's change over the trailing `window_s` seconds, over the time so far where
    less has passed; the instantaneous yaw rate at the first sample."""
    heading = np.asarray(f["heading"])
    now = np.arange(heading.shape[-1])
    lag = np.minimum(now, max(1, round(window_s / f.dt)))  # [T] samples back
    rate = (heading - heading[..., now - lag]) / (np.maximum(lag, 1) * f.dt)
    return np.where(lag > 0, rate, np.asarray(f["yaw_rate"]))


def nonfoot_contact(f: FeatureLike) -> np.ndarray:
    """-number of non-foot contacts with the ground (falls, knees, hands)."""
    return -np.asarray(f["nonfoot_contact"], dtype=float)


def _pose_error(f: FeatureLike, pose: Mapping[str, float] | None, joints: tuple[str, ...]) -> np.ndarray:
    pose = pose or {}
    errors = [np.square(np.asarray(f[f"{side}_{j}"]) - pose.get(j, 0.0)) for side in SIDES for j in joints]
    return np.mean(errors, axis=0)


def joint_posture(f: FeatureLike, *, pose: dict[str, float] | None = None) -> np.ndarray:
    """-mean over both legs' semantic joints of (angle - pose[joint])² (rad²); pose defaults to 0 for each."""
    return -_pose_error(f, pose, JOINTS)


def feet_air_time(f: FeatureLike, *, target: float = 0.4) -> np.ndarray:
    """At each touchdown, (time the foot was in the air - target) (s), summed over feet; 0 elsewhere.

    Air time before a foot's first contact in the window counts from the window's start. Contact is debounced
    as in human_gait_tracking, so brief flickers neither end nor start an air phase.
    """
    out = np.zeros_like(np.asarray(f["time"]), dtype=float)
    steps = np.arange(out.shape[1])
    for raw in _both(f, "foot_contact"):
        contact = _clean_contact(raw, f.dt).astype(float)
        last = np.maximum.accumulate(np.where(contact > 0.5, steps, -1), axis=1)
        previous = np.concatenate([np.full((out.shape[0], 1), -1), last[:, :-1]], axis=1)
        air = (steps - previous - 1) * f.dt
        out += _touchdowns(contact) * (air - target)
    return out


def torques(f: FeatureLike) -> np.ndarray:
    """-mean over actuators of actuator_force² (N² or N²·m²); 0 for a body with no actuators."""
    force = np.asarray(f["actuator_force"])
    return -np.mean(np.square(force), axis=-1) if force.shape[-1] else np.zeros(force.shape[:2])


def foot_slip(f: FeatureLike) -> np.ndarray:
    """-Σ over feet of contact × horizontal foot speed² (m²/s²): feet sliding while on the ground."""
    slip = [c * np.sum(np.square(v[..., :2]), axis=-1) for c, v in zip(_both(f, "foot_contact"),
                                                                       _both(f, "foot_vel"), strict=True)]
    return -(slip[0] + slip[1])


def knee_distance(f: FeatureLike, *, limit: float = 0.1) -> np.ndarray:
    """-Σ over legs of max(0, hip_adduction - limit) (rad): knees drawn together (knock-knee proxy)."""
    left, right = _both(f, "hip_adduction")
    return -(np.maximum(0.0, left - limit) + np.maximum(0.0, right - limit))


def feet_distance(f: FeatureLike, *, low: float = 0.1, high: float = 0.4) -> np.ndarray:
    """-distance (m) of the lateral foot separation outside [low, high]."""
    gap = _lateral_separation(f)
    return -(np.maximum(0.0, low - gap) + np.maximum(0.0, gap - high))


def action_smoothness(f: FeatureLike) -> np.ndarray:
    """-mean over actuators of (ctrl[t] - ctrl[t-1])² (control units²); 0 at the first sample."""
    ctrl = np.asarray(f["ctrl"])
    change = np.diff(ctrl, axis=1, prepend=ctrl[:, :1])
    return -np.mean(np.square(change), axis=-1) if ctrl.shape[-1] else np.zeros(ctrl.shape[:2])


def knee_extension(f: FeatureLike, *, stance_only: bool = False) -> np.ndarray:
    """-mean over legs of knee_flexion² (rad²), optionally only while that foot is on the ground."""
    knees = _both(f, "knee_flexion")
    gates = _both(f, "foot_contact") if stance_only else (1.0, 1.0)
    return -0.5 * (gates[0] * np.square(knees[0]) + gates[1] * np.square(knees[1]))


def toe_direction(f: FeatureLike) -> np.ndarray:
    """Mean over feet of the cosine between the heel→toe direction and the heading (1 = toes forward)."""
    forward, _ = _heading_axes(f)
    cosines = []
    for side in SIDES:
        foot = np.asarray(f[f"{side}_toe_pos"])[..., :2] - np.asarray(f[f"{side}_heel_pos"])[..., :2]
        norm = np.maximum(np.linalg.norm(foot, axis=-1), 1e-9)
        cosines.append(np.sum(foot * forward, axis=-1) / norm)
    return 0.5 * (cosines[0] + cosines[1])


def ankle_stance(f: FeatureLike) -> np.ndarray:
    """-Σ over feet of contact × ankle_dorsiflexion² (rad²): a neutral ankle while standing on the foot."""
    ankles, contacts = _both(f, "ankle_dorsiflexion"), _both(f, "foot_contact")
    return -(contacts[0] * np.square(ankles[0]) + contacts[1] * np.square(ankles[1]))


def gait_symmetry(f: FeatureLike) -> np.ndarray:
    """-(|duty_left - duty_right| + |std hip_left - std hip_right| in rad) over the window, same at every t.

    duty is the fraction of samples the foot is on the ground; std is the hip flexion's spread over time.
    """
    contact_l, contact_r = _both(f, "foot_contact")
    hip_l, hip_r = _both(f, "hip_flexion")
    value = np.abs(contact_l.mean(axis=1) - contact_r.mean(axis=1)) + np.abs(hip_l.std(axis=1) - hip_r.std(axis=1))
    return -np.broadcast_to(value[:, None], contact_l.shape).copy()


def cadence(f: FeatureLike, *, target: float = 1.8) -> np.ndarray:
    """-|touchdowns per second over the window - target| / target (-); same at every t. Humans: 1.6–2.0.

    Touchdowns are debounced as in human_gait_tracking. See cadence_band for a band per step, in steps/s.
    """
    touchdowns = _gait_touchdowns(f)
    rate = (touchdowns[0].sum(axis=1) + touchdowns[1].sum(axis=1)) / (touchdowns[0].shape[1] * f.dt)
    return -np.broadcast_to((np.abs(rate - target) / target)[:, None], touchdowns[0].shape).copy()


def foot_clearance(f: FeatureLike, *, target: float = 0.08) -> np.ndarray:
    """-Σ over swinging feet of max(0, target - foot_height)² (m²): lift the swing foot at least target."""
    out: Any = 0.0
    for contact, clearance in zip(_both(f, "foot_contact"), _both(f, "foot_height"), strict=True):
        out = out + (1.0 - contact) * np.square(np.maximum(0.0, target - clearance))
    return -np.asarray(out)


def muscle_effort(f: FeatureLike, *, exponent: float = 2.0) -> np.ndarray:
    """-mean |activation|^exponent over muscles (metabolic proxy, -); motors and servos use |actuator_effort|
    instead (a servo's control is a joint target, not an effort)."""
    source = np.asarray(f["muscle_activation"])
    if source.shape[-1] == 0:
        source = np.asarray(f["actuator_effort"])
    if source.shape[-1] == 0:
        return np.zeros(source.shape[:2])
    return -np.mean(np.abs(source) ** exponent, axis=-1)


def joint_limits(f: FeatureLike, *, margin: float = 0.1, limits: dict[str, list[float]] | None = None) -> np.ndarray:
    """-Σ over legs and joints of the distance (rad) beyond [low + margin, high - margin].

    limits maps a semantic joint (e.g. "knee_flexion") to [low, high] in rad; JOINT_RANGES fills the rest.
    """
    ranges = {**JOINT_RANGES, **{k: tuple(v) for k, v in (limits or {}).items()}}
    out: Any = 0.0
    for side in SIDES:
        for joint, (low, high) in ranges.items():
            angle = np.asarray(f[f"{side}_{joint}"])
            out = out + np.maximum(0.0, low + margin - angle) + np.maximum(0.0, angle - (high - margin))
    return -np.asarray(out)


def com_height_variance(f: FeatureLike) -> np.ndarray:
    """-(com_height - its mean over the window)² (m²): bobbing; its time mean is minus the variance."""
    com = np.asarray(f["com_height"])
    return -np.square(com - com.mean(axis=1, keepdims=True))


# --- gait-analysis terms: debounced touchdowns, gait phase, the human reference curves ---------------------------

def _last_index(mask: np.ndarray) -> np.ndarray:
    """[B, T] index of the latest sample ≤ t where the [B, T] bool mask holds; -1 before the first."""
    return np.maximum.accumulate(np.where(mask, np.arange(mask.shape[1]), -1), axis=1)


def _next_index(mask: np.ndarray) -> np.ndarray:
    """[B, T] index of the earliest sample ≥ t where the [B, T] bool mask holds; T after the last."""
    later = np.where(mask, np.arange(mask.shape[1]), mask.shape[1])
    return np.minimum.accumulate(later[:, ::-1], axis=1)[:, ::-1]


def _next_after(mask: np.ndarray) -> np.ndarray:
    """[B, T] index of the earliest sample > t where the mask holds; T after the last."""
    following = _next_index(mask)
    return np.concatenate([following[:, 1:], np.full((len(mask), 1), mask.shape[1])], axis=1)


def _clean_contact(contact: np.ndarray, dt: float, flicker_s: float = 0.05, swing_s: float = 0.1) -> np.ndarray:
    """[B, T] 0/1 foot contact -> [B, T] bool contact without touches shorter than flicker_s and with gaps shorter
    than swing_s between two contacts filled: the gait analysis's debouncing without its foot-rise test (so the
    two can differ at the start of a motion)."""
    on, length = contact > 0.5, contact.shape[1]
    before, after = _last_index(~on), _next_index(~on)
    on &= (after - before - 1) * dt >= flicker_s
    before, after = _last_index(on), _next_index(on)
    return on | ((before >= 0) & (after < length) & ((after - before - 1) * dt < swing_s))


def _gait_touchdowns(f: FeatureLike) -> tuple[np.ndarray, np.ndarray]:
    """[B, T] bool touchdowns of the left and right foot: rising edges of the debounced contact (never at t = 0).
    Unlike the critic's gait analysis, a foot off the ground from the first sample keeps its first landing: terms
    also score the planner's look-ahead windows, which begin mid-stride, where that landing ends a real swing."""
    left, right = (_touchdowns(_clean_contact(np.asarray(c), f.dt).astype(float)) > 0.5
                   for c in _both(f, "foot_contact"))
    return left, right


def _stride_samples(touchdown: np.ndarray) -> np.ndarray:
    """[B, T] bool touchdowns of one foot -> [B] mean samples from one to the next; NaN with fewer than two."""
    count, length = touchdown.sum(axis=1), touchdown.shape[1]
    first = np.argmax(touchdown, axis=1)
    last = length - 1 - np.argmax(touchdown[:, ::-1], axis=1)
    return np.where(count >= 2, (last - first) / np.maximum(count - 1, 1), np.nan)


def _leg_phase(touchdown: np.ndarray, period: np.ndarray) -> np.ndarray:
    """[B, T] bool touchdowns of one foot and [B] stride (samples) -> [B, T] gait phase in [0, 1), 0 = touchdown.

    Between two touchdowns the phase rises linearly; before the first and after the last it runs on at `period`
    (from sample 0 when the foot never touches down)."""
    steps, length = np.arange(touchdown.shape[1]), touchdown.shape[1]
    previous, following = _last_index(touchdown), _next_after(touchdown)
    inside = (previous >= 0) & (following < length)
    anchor = np.where(previous >= 0, previous, np.argmax(touchdown, axis=1)[:, None])
    between = (steps - previous) / np.maximum(following - previous, 1)
    return np.where(inside, between, np.mod((steps - anchor) / period[:, None], 1.0))


def _gait_phases(f: FeatureLike, stride_s: float) -> tuple[np.ndarray, np.ndarray]:
    """[B, T] gait phase of the left and right leg in [0, 1) from debounced foot contact (see human_gait_tracking)."""
    touchdowns = _gait_touchdowns(f)
    strides = [_stride_samples(t) for t in touchdowns]
    fallback = stride_s / f.dt
    periods = [np.where(np.isfinite(own), own, np.where(np.isfinite(other), other, fallback))
               for own, other in ((strides[0], strides[1]), (strides[1], strides[0]))]
    left, right = (_leg_phase(t, p) for t, p in zip(touchdowns, periods, strict=True))
    has = [np.any(t, axis=1, keepdims=True) for t in touchdowns]
    left = np.where(has[0] | ~has[1], left, np.mod(right + 0.5, 1.0))
    return left, np.where(has[1], right, np.mod(left + 0.5, 1.0))


def _check(ok: bool, message: str) -> None:
    """Raise ValueError(message) unless ok: a bad parameter, reported to the program's author."""
    if not ok:
        raise ValueError(message)


def human_gait_tracking(f: FeatureLike, *, joints: tuple[str, ...] = ("hip_flexion", "knee_flexion"),
                        sigma: float = 0.3, stride_s: float = 1.1) -> np.ndarray:
    """exp(-mean over legs and joints of (angle - people's mean angle at that leg's gait phase)² / sigma²), sigma
    in rad: 1 on people's walking curves; a leg's phase runs 0 → 1 from a touchdown of its foot to the next (stride_s,
    in s, stands in for the stride time when the window has too few touchdowns); joints: hip_flexion, knee_flexion,
    ankle_dorsiflexion.

    Each leg's gait phase runs linearly from 0 at a touchdown of its foot to 1 at the next (contact debounced as
    the gait analysis does: touches under 0.05 s dropped, gaps under 0.1 s filled). Before the first and after the
    last touchdown in the window it runs on at the leg's mean stride time there (the other leg's, then stride_s s,
    with fewer than two touchdowns); a leg that never touches down is half a cycle from the other, and with no
    touchdown at all the left leg is at its touchdown at the window's start (the walking start). The human angle is
    the mean curve of Schwartz et al. 2008 at free speed (HUMAN_GAIT, rad; the gait analysis's reference), for
    joints among TRACKED_JOINTS; sigma in rad.
    """
    joints = (joints,) if isinstance(joints, str) else tuple(joints)
    _check(bool(joints) and set(joints) <= set(TRACKED_JOINTS), f"human_gait_tracking: joints must be a non-empty "
           f"tuple of {list(TRACKED_JOINTS)}, got {list(joints)}")
    _check(sigma > 0 and stride_s > 0, f"human_gait_tracking: sigma (rad) and stride_s (s) must be > 0, got "
           f"{sigma} and {stride_s}")
    error: Any = 0.0
    for side, phase in zip(SIDES, _gait_phases(f, stride_s), strict=True):
        for joint in joints:
            human = np.interp(phase, HUMAN_GAIT_PHASE, HUMAN_GAIT[joint])
            error = error + np.square(np.asarray(f[f"{side}_{joint}"]) - human)
    return np.exp(-error / (2 * len(joints) * sigma**2))


def swing_height_limit(f: FeatureLike, *, limit: float = 0.15) -> np.ndarray:
    """-Σ over swinging feet of max(0, foot_height - limit) (m; limit in m): no swing foot higher than limit above
    the ground under it (kicking, high stepping)."""
    _check(limit >= 0, f"swing_height_limit: limit (m) must be ≥ 0, got {limit}")
    out: Any = 0.0
    for contact, clearance in zip(_both(f, "foot_contact"), _both(f, "foot_height"), strict=True):
        out = out + (1.0 - contact) * np.maximum(0.0, clearance - limit)
    return -np.asarray(out)


def cadence_band(f: FeatureLike, *, low: float = 1.5, high: float = 2.2) -> np.ndarray:
    """-distance (steps/s) of the step rate outside [low, high] steps/s, per sample, where a step's rate is 1 / the
    time from a touchdown of either foot to the next (`cadence` instead scores the whole window's step count against
    one target); people walk at 1.5–2.2 steps/s (90–130 steps/min).

    A step runs from a touchdown of either foot to the next (debounced as in human_gait_tracking); its rate is
    1 / its duration, the same at each of its samples. Where the window holds no whole step (before the first
    touchdown, after the last, or none), the step lasts at least that stretch of the window, so only a rate below
    low can be known and penalised. Unlike `cadence` (touchdowns per second over the whole window against one
    target, as a relative error), this judges each step against a band, in steps/s.
    """
    _check(0 < low < high, f"cadence_band: need 0 < low < high (steps/s), got low={low}, high={high}")
    left, right = _gait_touchdowns(f)
    touchdown = left | right
    length = touchdown.shape[1]
    previous, following = _last_index(touchdown), _next_after(touchdown)
    whole = (previous >= 0) & (following < length)
    stretch = np.where(following < length, following, length) - np.maximum(previous, 0)
    rate = 1.0 / (np.maximum(stretch, 1) * f.dt)
    too_fast = np.where(whole, np.maximum(0.0, rate - high), 0.0)
    return -(np.maximum(0.0, low - rate) + too_fast)


def arm_swing(f: FeatureLike, *, amplitude: float = 0.1) -> np.ndarray:
    """Mean over arms of the hand's fore-aft swing against the same-side thigh / amplitude (m), each clipped to
    [-1, 1]: 1 when both hands swing at least amplitude opposite their legs, 0 without arms; the same at every t.

    Per side, the hand's offset from the torso along the heading (m) and the hip flexion (rad), each less its mean
    over the window; the swing against the thigh is -√2 × mean(hand × hip) / rms(hip) (m): a hand moving as a sine
    of amplitude A (half its fore-aft excursion) exactly opposite to the hip gives A, one moving with the hip -A.
    A body without arms has its hands at the torso: 0. Hands settling from the start pose count too, so judge it
    over a few strides.
    """
    _check(amplitude > 0, f"arm_swing: amplitude (m) must be > 0, got {amplitude}")
    forward, _ = _heading_axes(f)
    torso = np.asarray(f["torso_pos"])[..., :2]
    total: Any = 0.0
    for side in SIDES:
        hand = np.sum((np.asarray(f[f"{side}_hand_pos"])[..., :2] - torso) * forward, axis=-1)
        hip = np.asarray(f[f"{side}_hip_flexion"])
        hand, hip = hand - hand.mean(axis=1, keepdims=True), hip - hip.mean(axis=1, keepdims=True)
        rms = np.sqrt(np.mean(np.square(hip), axis=1))
        against = -np.sqrt(2.0) * np.mean(hand * hip, axis=1) / np.maximum(rms, 1e-6)
        total = total + 0.5 * np.clip(against / amplitude, -1.0, 1.0)
    return np.broadcast_to(np.asarray(total)[:, None], np.shape(f["time"])).copy()


def feet_down(f: FeatureLike) -> np.ndarray:
    """Mean of the two feet's ground contacts (0/1): 1 with both feet down, as a person standing still keeps them."""
    left, right = _both(f, "foot_contact")
    return 0.5 * (np.asarray(left, dtype=float) + np.asarray(right, dtype=float))


def hands_still(f: FeatureLike) -> np.ndarray:
    """-mean over hands of the squared speed of the hand relative to the torso (m²/s²), by finite differences over
    samples (0 at the first): quiet arms; 0 for a body without arms (its hands are at the torso)."""
    torso = np.asarray(f["torso_pos"])
    total: Any = 0.0
    for side in SIDES:
        offset = np.asarray(f[f"{side}_hand_pos"]) - torso
        velocity = np.diff(offset, axis=1, prepend=offset[:, :1]) / f.dt
        total = total + 0.5 * np.sum(np.square(velocity), axis=-1)
    return -total


def object_reach(f: FeatureLike, *, reach: float = 0.045, sigma: float = 0.03) -> np.ndarray:
    """exp(-mean over fingertips of max(0, fingertip_distance - reach) / sigma), reach and sigma in m: 1 with every
    fingertip within reach of the object's centre (on a 5 cm cube's faces, around a bottle); manipulation only."""
    _check(reach >= 0 and sigma > 0, f"object_reach: reach (m) must be >= 0 and sigma (m) > 0, got {reach}, {sigma}")
    beyond = np.maximum(0.0, np.asarray(f["fingertip_distance"]) - reach)
    return np.exp(-beyond.mean(axis=-1) / sigma)


def grasp(f: FeatureLike, *, parts: int = 3) -> np.ndarray:
    """min(1, (fingertips touching + palm touching) / parts): 1 when at least `parts` of the five fingertips and the
    palm touch the object; manipulation only."""
    _check(1 <= parts <= 6, f"grasp: parts must be within [1, 6], got {parts}")
    touching = np.asarray(f["fingertip_contact"]).sum(axis=-1) + np.asarray(f["palm_contact"])
    return np.minimum(1.0, touching / parts)


def position_error(f: FeatureLike) -> np.ndarray:
    """-goal_distance (m): how far the object's reference point (the cube's centre, the bottle's mouth) is from its
    goal; manipulation only."""
    return -np.abs(np.asarray(f["goal_distance"]))


def orientation_error(f: FeatureLike) -> np.ndarray:
    """-goal_angle (rad): the rotation still needed to reach the goal orientation; manipulation only."""
    return -np.abs(np.asarray(f["goal_angle"]))


def object_turn(f: FeatureLike, *, target: float = 1.5708) -> np.ndarray:
    """-|object_turn - target| (rad; target in rad, + is left): turn the object about the vertical by target;
    manipulation only."""
    return -np.abs(np.asarray(f["object_turn"]) - target)


def object_spin(f: FeatureLike, *, limit: float = 1.0) -> np.ndarray:
    """-max(0, |object_angvel| - limit) (rad/s; limit in rad/s): turn the object steadily, not fling it; a quarter
    turn in 2 s is 0.8 rad/s; manipulation only."""
    _check(limit >= 0, f"object_spin: limit (rad/s) must be >= 0, got {limit}")
    return -np.maximum(0.0, np.linalg.norm(np.asarray(f["object_angvel"]), axis=-1) - limit)


def drop_penalty(f: FeatureLike) -> np.ndarray:
    """-1 from the moment the object dropped (the `dropped` feature: it touched the floor, or its table when it
    started clear of it, or fell 10 cm below the lower of its start and its goal point), else 0; manipulation
    only."""
    return -np.clip(np.asarray(f["dropped"], dtype=float), 0.0, 1.0)


def spill_angle(f: FeatureLike, *, target: float = 1.9199) -> np.ndarray:
    """-max(0, target - object_tilt) (rad; target in rad, 1.92 = 110°): tip the bottle at least target from
    upright, past horizontal (π/2) to pour; manipulation only."""
    _check(0 < target <= np.pi, f"spill_angle: target (rad) must be within (0, π], got {target}")
    return -np.maximum(0.0, target - np.asarray(f["object_tilt"]))


def wrist_posture(f: FeatureLike) -> np.ndarray:
    """-(wrist_flexion² + wrist_deviation²) (rad²): keep the wrist near neutral; hand bodies only."""
    return -(np.square(np.asarray(f["wrist_flexion"])) + np.square(np.asarray(f["wrist_deviation"])))


_FOOT = tuple(f"{s}_{k}" for s in SIDES for k in ("foot_pos", "foot_vel", "foot_contact", "foot_height",
                                                  "heel_pos", "toe_pos"))
_JOINT = tuple(f"{s}_{j}" for s in SIDES for j in JOINTS)
_CONTACT = tuple(f"{s}_foot_contact" for s in SIDES)


def _term(function: Callable[..., np.ndarray], units: str, sign: str, reads: tuple[str, ...],
          choices: dict[str, tuple[Any, ...]] | None = None) -> LibraryTerm:
    defaults = {k: v for k, v in (function.__kwdefaults__ or {}).items()}
    meaning = " ".join(line.strip() for line in (function.__doc__ or "").strip().split("\n\n")[0].splitlines())
    return LibraryTerm(function.__name__, function, defaults, units, sign, meaning, reads, choices or {})


TERMS: dict[str, LibraryTerm] = {
    t.name: t for t in [
        _term(height, "-", "+", ("root_height",)),
        _term(base_height, "m²", "-", ("root_height",)),
        _term(alive, "0/1", "+", ("root_height",)),
        _term(upright, "-", "+", tuple(f"{p}_up" for p in PARTS), {"part": PARTS}),
        _term(balance, "m", "-", ("com_pos", *_FOOT)),
        _term(capture_point, "m", "-", ("com_pos", "com_vel", "heading", *_FOOT)),
        _term(one_leg_stance, "-", "+", _FOOT, {"stance": SIDES}),
        _term(stance_balance, "m", "-", ("com_pos", "com_vel", *_FOOT), {"stance": SIDES}),
        _term(swing_hip_flexion, "-", "+", (*_JOINT, *_CONTACT)),
        _term(feet_follow, "m/s", "-", ("com_vel", *_FOOT)),
        _term(feet_crossing, "m", "-", ("heading", *_FOOT)),
        _term(forward_velocity, "m/s", "+", ("forward_vel",)),
        _term(velocity_tracking, "-", "+", ("forward_vel", "lateral_vel")),
        _term(side_velocity, "m/s", "-", ("lateral_vel",)),
        _term(heading, "-", "+", ("heading",)),
        _term(yaw_rate, "-", "+", ("yaw_rate",)),
        _term(heading_error, "rad", "-", ("heading",)),
        _term(course_velocity, "-", "+", ("time", "com_vel")),
        _term(course_path, "m", "-", ("time", "com_pos")),
        _term(nonfoot_contact, "count", "-", ("nonfoot_contact",)),
        _term(joint_posture, "rad²", "-", _JOINT),
        _term(feet_air_time, "s", "+", ("time", *_FOOT)),
        _term(torques, "N² or N²·m²", "-", ("actuator_force",)),
        _term(foot_slip, "m²/s²", "-", _FOOT),
        _term(knee_distance, "rad", "-", _JOINT),
        _term(feet_distance, "m", "-", ("heading", *_FOOT)),
        _term(action_smoothness, "ctrl²", "-", ("ctrl",)),
        _term(knee_extension, "rad²", "-", (*_JOINT, *_FOOT)),
        _term(toe_direction, "-", "+", ("heading", *_FOOT)),
        _term(ankle_stance, "rad²", "-", (*_JOINT, *_FOOT)),
        _term(gait_symmetry, "-", "-", (*_JOINT, *_FOOT)),
        _term(cadence, "-", "-", _FOOT),
        _term(foot_clearance, "m²", "-", _FOOT),
        _term(muscle_effort, "-", "-", ("muscle_activation", "actuator_effort")),
        _term(joint_limits, "rad", "-", _JOINT),
        _term(com_height_variance, "m²", "-", ("com_height",)),
        _term(human_gait_tracking, "-", "+", (*_CONTACT, *(f"{s}_{j}" for s in SIDES for j in TRACKED_JOINTS)),
              {"joints": TRACKED_JOINTS}),
        _term(swing_height_limit, "m", "-", _FOOT),
        _term(cadence_band, "steps/s", "-", _CONTACT),
        _term(arm_swing, "-", "+", ("heading", "torso_pos", "left_hand_pos", "right_hand_pos",
                                    "left_hip_flexion", "right_hip_flexion")),
        _term(feet_down, "0/1", "+", _CONTACT),
        _term(hands_still, "m²/s²", "-", ("torso_pos", "left_hand_pos", "right_hand_pos")),
        _term(object_reach, "-", "+", ("fingertip_distance",)),
        _term(grasp, "-", "+", ("fingertip_contact", "palm_contact")),
        _term(position_error, "m", "-", ("goal_distance",)),
        _term(orientation_error, "rad", "-", ("goal_angle",)),
        _term(object_turn, "rad", "-", ("object_turn",)),
        _term(object_spin, "rad/s", "-", ("object_angvel",)),
        _term(drop_penalty, "0/1", "-", ("dropped",)),
        _term(spill_angle, "rad", "-", ("object_tilt",)),
        _term(wrist_posture, "rad²", "-", ("wrist_flexion", "wrist_deviation")),
    ]
}
"""The library, by name."""


def library_reference() -> str:
    """The library as a Markdown table (name | parameters | units | sign | meaning) for prompts and docs."""
    rows = ["| term | parameters (defaults) | units | sign | meaning |", "|---|---|---|---|---|"]
    for term in TERMS.values():
        params = ", ".join(f"{k}={v!r}" for k, v in term.params.items()) or "-"
        rows.append(f"| `lib.{term.name}(f{', ...' if term.params else ''})` | {params} | {term.units} | "
                    f"{term.sign} | {term.meaning} |")
    return "\n".join(rows)


class TermNamespace:
    """The `lib` object programs see: one attribute per library term, nothing else."""

    def __init__(self) -> None:
        for name, term in TERMS.items():
            object.__setattr__(self, name, term.function)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("lib is read-only")
