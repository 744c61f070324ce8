"""Task metrics of trajectories: distance walked, speed, fall, drift, heading change, steps, staying in place,
travel on a sideways or diagonal course.

Vectorized over the batch: every function takes Features [B, T] and returns [B] arrays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from rewardloop.sim.features import Features

FALL_HEIGHT_FRACTION = 0.6
"""A pelvis below this fraction of its standing height counts as a fall."""
TOUCHDOWN_GAP_S = 0.05
"""A foot must have been off the ground this long before a new contact counts as a step (s)."""
STAY_RADIUS_M = 0.25
"""A body staying in place keeps its pelvis within this horizontal distance of where it started (m)."""
STEP_RADIUS_M = 0.5
"""A body stepping in place keeps its pelvis within this horizontal distance of its start (m): less than one
step of people (0.6-0.8 m)."""


@dataclass(frozen=True)
class TaskMetrics:
    """What a trajectory achieved, in the task's terms."""

    duration: float
    """Simulated time (s)."""
    distance: float
    """Pelvis displacement along +x, the starting direction (m)."""
    speed: float
    """distance / duration (m/s)."""
    fell: bool
    """The pelvis dropped below 60 % of standing height or a non-foot part touched the ground."""
    fall_time: float | None
    """When the first fall sign appeared (s), None without a fall."""
    lateral_drift: float
    """Pelvis displacement along y, + is left (m)."""
    heading_change: float
    """Change of heading from start to end, + is a left turn (rad)."""
    steps: int
    """Foot touchdowns, both feet."""
    backward_distance: float = 0.0
    """Pelvis displacement along -x, against the starting direction (m)."""
    right_turn: float = 0.0
    """Change of heading from start to end, + is a right turn (rad)."""
    stay_fraction: float = 0.0
    """Fraction of the duration (0-1) before the pelvis first left STAY_RADIUS_M of its start or the body fell;
    1 when it did neither."""
    step_rate_in_place: float = 0.0
    """Touchdowns (both feet) before the pelvis first left STEP_RADIUS_M of its start or the body fell, per
    second of the duration (steps/s)."""
    sideways_left: float = 0.0
    """On-course travel toward the start's left (+y), facing aside: metres along it less metres across it
    (`on_course`), so wandering off the course costs metre for metre and 45° off it scores 0 (m)."""
    sideways_right: float = 0.0
    """The same toward the start's right (-y) (m)."""
    sideways: float = 0.0
    """The larger of sideways_left and sideways_right: sideways to either side (m)."""
    forward_left: float = 0.0
    """On-course travel along the diagonal forward and to the left ((+x, +y) / √2) (m)."""
    forward_right: float = 0.0
    """On-course travel along the diagonal forward and to the right ((+x, -y) / √2) (m)."""
    backward_left: float = 0.0
    """On-course travel along the diagonal backward and to the left ((-x, +y) / √2) (m)."""
    backward_right: float = 0.0
    """On-course travel along the diagonal backward and to the right ((-x, -y) / √2) (m)."""
    left_leg_stand: float = 0.0
    """Fraction of the duration (0-1) spent on the left foot alone (the right one off the ground) before the pelvis
    first left STAY_RADIUS_M of its start or the body fell (`one_leg_fraction`)."""
    right_leg_stand: float = 0.0
    """The same on the right foot alone."""
    one_leg_stand: float = 0.0
    """The larger of left_leg_stand and right_leg_stand: on one leg, either."""
    travel: float = 0.0
    """Horizontal pelvis displacement from start to end, any direction (m): how far a turn went from its spot."""
    flight_fraction: float = 0.0
    """Fraction of the duration (0-1) with both feet off the ground before the body fell: the flight phase that
    makes a run or a jog (a walk has none)."""
    hip_flexion_peak: float = 0.0
    """The lower over both legs of each leg's 90th-percentile hip flexion before the body fell (rad): how high both
    thighs come up in their swings (people walking: about 0.35-0.45; high knees: 1.0 or more)."""

    object_position_error_cm: float = 0.0
    """Manipulation: distance of the object's reference point (cube centre, bottle mouth) from its goal at the end
    (cm); 0 without an object."""
    object_orientation_error_deg: float = 0.0
    """Manipulation: rotation from the object's orientation to the goal's at the end (deg)."""
    object_tilt_deg: float = 0.0
    """Manipulation: the object's tilt from upright at the end (deg)."""
    object_turn_deg: float = 0.0
    """Manipulation: the object's rotation about the vertical from start to end, + is left (deg)."""
    dropped: bool = False
    """Manipulation: the object fell out of the hand (the `dropped` feature; also counted as a fall)."""
    time_at_goal_s: float = 0.0
    """Manipulation: time the object spent at its goal (s)."""
    goal_error: float = 0.0
    """Manipulation: the end's largest error relative to its tolerance (position / goal_radius, orientation /
    goal_angle_tolerance, tilt shortfall below min_tilt / 20°, plus 1): at most 1 at the goal."""

    def to_dict(self) -> dict[str, float | bool | int | None]:
        return asdict(self)


def fall_mask(features: Features) -> np.ndarray:
    """[B, T] True where the body shows a fall sign."""
    low = features.root_height < FALL_HEIGHT_FRACTION * features.standing_height
    return low | (features.nonfoot_contact > 0)


def touchdowns(contact: np.ndarray, dt: float) -> np.ndarray:
    """[B] number of touchdowns in a [B, T] 0/1 contact array, ignoring flickers shorter than the gap."""
    gap = max(1, round(TOUCHDOWN_GAP_S / dt))
    airborne = np.cumsum(1.0 - contact, axis=1)
    lagged = np.concatenate([np.zeros_like(airborne[:, :gap]), airborne[:, :-gap]], axis=1)
    air_before = (airborne - lagged)[:, :-1]  # samples in the air during the gap before t + 1
    rising = (contact[:, 1:] > 0) & (contact[:, :-1] == 0) & (air_before >= gap)
    return rising.sum(axis=1)


def held_steps(features: Features, radius: float) -> np.ndarray:
    """[B] time steps before the pelvis first leaves `radius` (m, horizontal) of its start or a fall sign
    appears; T when neither happens."""
    offset = features.root_pos[:, :, :2] - features.root_pos[:, :1, :2]  # [B, T, 2]
    left = (np.hypot(offset[..., 0], offset[..., 1]) > radius) | fall_mask(features)  # [B, T]
    return np.where(left.any(axis=1), np.argmax(left, axis=1), left.shape[1])


def steps_in_place(features: Features, radius: float) -> np.ndarray:
    """[B] touchdowns of both feet before the pelvis first leaves `radius` (m) of its start or the body falls."""
    held = np.arange(features.time.shape[1]) < held_steps(features, radius)[:, None]  # [B, T]
    return (touchdowns(features.left_foot_contact * held, features.dt)
            + touchdowns(features.right_foot_contact * held, features.dt))


def one_leg_fraction(features: Features, stance: str) -> np.ndarray:
    """[B] fraction of the samples with the `stance` ('left' or 'right') foot on the ground and the other off it,
    counted until the pelvis first leaves STAY_RADIUS_M of its start or the body falls: a stand on one leg, not a
    hop away from the spot."""
    other = "right" if stance == "left" else "left"
    alone = (features[f"{stance}_foot_contact"] > 0) & (features[f"{other}_foot_contact"] == 0)  # [B, T]
    held = np.arange(alone.shape[1]) < held_steps(features, STAY_RADIUS_M)[:, None]
    return (alone & held).mean(axis=1)


def stance_metrics(features: Features) -> dict[str, np.ndarray]:
    """left_leg_stand, right_leg_stand and one_leg_stand ([B] each) of a batch."""
    left, right = one_leg_fraction(features, "left"), one_leg_fraction(features, "right")
    return {"left_leg_stand": left, "right_leg_stand": right, "one_leg_stand": np.maximum(left, right)}


def before_fall(features: Features) -> np.ndarray:
    """[B, T] True at the samples before the first fall sign (all of them without a fall)."""
    falls = fall_mask(features)
    first = np.where(falls.any(axis=1), np.argmax(falls, axis=1), falls.shape[1])
    return np.arange(falls.shape[1]) < first[:, None]


def flight_fraction(features: Features) -> np.ndarray:
    """[B] fraction of the samples with neither foot on the ground, before any fall."""
    flight = (features.left_foot_contact == 0) & (features.right_foot_contact == 0) & before_fall(features)
    return flight.mean(axis=1)


def hip_flexion_peak(features: Features, percentile: float = 90.0) -> np.ndarray:
    """[B] the lower over both legs of each leg's `percentile` hip flexion before any fall (rad); 0 for a body that
    fell at once or a body without hips (a hand). A percentile, not the maximum: one kick is not a march."""
    kept = before_fall(features)
    rows = kept.any(axis=1)  # a row that fell at once has no samples to take a percentile of
    peaks = np.zeros((2, kept.shape[0]))
    if "left_hip_flexion" not in features:
        return peaks[0]
    for leg, hip in enumerate((features.left_hip_flexion, features.right_hip_flexion)):
        peaks[leg, rows] = np.nanpercentile(np.where(kept, hip, np.nan)[rows], percentile, axis=1)
    return peaks.min(axis=0)


COURSES: dict[str, tuple[float, float]] = {
    "sideways_left": (0.0, 1.0), "sideways_right": (0.0, -1.0),
    "forward_left": (np.sqrt(0.5), np.sqrt(0.5)), "forward_right": (np.sqrt(0.5), -np.sqrt(0.5)),
    "backward_left": (-np.sqrt(0.5), np.sqrt(0.5)), "backward_right": (-np.sqrt(0.5), -np.sqrt(0.5)),
}
"""Course metric -> its unit direction (x forward, y left) in the start frame."""


def on_course(displacement: np.ndarray, course: tuple[float, float]) -> np.ndarray:
    """[B] metres along a unit `course` (x, y) less metres across it, of a [B, 2] horizontal displacement (m): a
    person asked to go that way counts only the travel that went that way."""
    along = displacement[:, 0] * course[0] + displacement[:, 1] * course[1]
    across = displacement[:, 0] * course[1] - displacement[:, 1] * course[0]
    return along - np.abs(across)


def course_metrics(displacement: np.ndarray) -> dict[str, np.ndarray]:
    """Every COURSES metric, and `sideways` (either side), of a [B, 2] displacement (m): name -> [B]."""
    courses = {name: on_course(displacement, unit) for name, unit in COURSES.items()}
    return {**courses, "sideways": np.maximum(courses["sideways_left"], courses["sideways_right"])}


def object_metrics(features: Features) -> list[dict[str, float | bool]]:
    """The manipulation fields of TaskMetrics for every trajectory in the batch (empty dicts without an object)."""
    if "goal_distance" not in features:
        return [{} for _ in range(features.batch_shape[0])]
    distance, angle = features.goal_distance[:, -1], features.goal_angle[:, -1]
    tilt = features.object_tilt[:, -1]
    shortfall = np.maximum(0.0, features.min_tilt - tilt) / np.radians(20.0) + (features.min_tilt > 0)
    error = np.maximum.reduce([distance / features.goal_radius, angle / features.goal_angle_tolerance, shortfall])
    at_goal = features.at_goal.sum(axis=1) * features.dt
    return [{"object_position_error_cm": float(100 * distance[b]), "object_orientation_error_deg":
             float(np.degrees(angle[b])), "object_tilt_deg": float(np.degrees(tilt[b])),
             "object_turn_deg": float(np.degrees(features.object_turn[b, -1])),
             "dropped": bool(features.dropped[b, -1] > 0), "time_at_goal_s": float(at_goal[b]),
             "goal_error": float(error[b])} for b in range(len(distance))]


def batch_metrics(features: Features) -> list[TaskMetrics]:
    """TaskMetrics of every trajectory in the batch; a dropped object counts as a fall."""
    time = features.time
    duration = time[:, -1] - time[:, 0] + features.dt
    displacement = features.root_pos[:, -1] - features.root_pos[:, 0]
    falls = fall_mask(features)
    fell: np.ndarray = np.asarray(falls.any(axis=1))
    first = np.argmax(falls, axis=1)
    steps = touchdowns(features.left_foot_contact, features.dt) + touchdowns(features.right_foot_contact, features.dt)
    turn = features.heading[:, -1] - features.heading[:, 0]
    stay = held_steps(features, STAY_RADIUS_M) / time.shape[1]
    step_rate = steps_in_place(features, STEP_RADIUS_M) / duration
    objects = object_metrics(features)
    courses = {**course_metrics(displacement[:, :2]), **stance_metrics(features),
               "flight_fraction": flight_fraction(features), "hip_flexion_peak": hip_flexion_peak(features),
               "travel": np.hypot(displacement[:, 0], displacement[:, 1])}
    return [
        TaskMetrics(duration=float(duration[b]), distance=float(displacement[b, 0]),
                    speed=float(displacement[b, 0] / duration[b]),
                    fell=bool(fell[b]) or bool(objects[b].get("dropped", False)),
                    fall_time=float(time[b, first[b]] - time[b, 0]) if fell[b] else None,
                    lateral_drift=float(displacement[b, 1]), heading_change=float(turn[b]), steps=int(steps[b]),
                    backward_distance=float(-displacement[b, 0]), right_turn=float(-turn[b]),
                    stay_fraction=float(stay[b]), step_rate_in_place=float(step_rate[b]),
                    **{name: float(value[b]) for name, value in courses.items()}, **objects[b])  # type: ignore[arg-type]
        for b in range(time.shape[0])
    ]
