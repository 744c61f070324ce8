"""Physics descriptors of trajectories and the targets a description asks for, found by rules.

This is what grounds every critic: the measured descriptors are stated to a model as ground truth, and the
builtin critic judges them against `Targets`, derived from the task spec that `rewardloop.spec` reads from the
description (the same reading the task's metric follows). It is a set of rules over physics measurements, not a
learned model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from rewardloop.control.metrics import TaskMetrics, touchdowns
from rewardloop.sim.features import Features
from rewardloop.spec import GAIT_STYLES as GAIT_STYLES  # the critic's rules read the styles from here
from rewardloop.spec import TaskSpec, spec_from_description


def descriptor_arrays(features: Features) -> dict[str, np.ndarray]:
    """Gait and posture descriptors of a batch, each a [B] array (NaN where undefined, e.g. no swing phase).

    trunk_pitch_deg: mean torso lean, + forward; trunk_roll_deg: mean lean, + to the left;
    trunk_tilt_max_deg: largest angle of the torso from vertical; knee_stance_deg / knee_swing_deg: mean knee
    flexion (0 straight) while that foot is on / off the ground; steps_left/right: touchdowns; cadence_spm:
    steps per minute; stride_symmetry: min/max of left and right touchdowns (1 = even); foot_clearance_m:
    highest sole height in swing, mean of both feet; effort: mean squared control; min_height_fraction:
    lowest pelvis height / standing height; mean_forward_vel: mean speed along the heading (m/s).
    """
    up, heading = features.torso_up, features.heading  # [B, T, 3], [B, T]
    forward = up[..., 0] * np.cos(heading) + up[..., 1] * np.sin(heading)
    left = -up[..., 0] * np.sin(heading) + up[..., 1] * np.cos(heading)
    knees = np.stack([features.left_knee_flexion, features.right_knee_flexion], axis=-1)  # [B, T, 2]
    contact = np.stack([features.left_foot_contact, features.right_foot_contact], axis=-1)  # [B, T, 2]
    clearance = np.stack([features.left_foot_height, features.right_foot_height], axis=-1)
    duration = features.time[:, -1] - features.time[:, 0] + features.dt
    steps_left = touchdowns(features.left_foot_contact, features.dt).astype(float)
    steps_right = touchdowns(features.right_foot_contact, features.dt).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        swing_peak = np.where(contact == 0, clearance, -np.inf).max(axis=1)  # [B, 2]
        return {
            "trunk_pitch_deg": np.degrees(np.arctan2(forward, up[..., 2])).mean(axis=1),
            "trunk_roll_deg": np.degrees(np.arctan2(left, up[..., 2])).mean(axis=1),
            "trunk_tilt_max_deg": np.degrees(np.arccos(np.clip(up[..., 2], -1.0, 1.0))).max(axis=1),
            "knee_stance_deg": np.degrees((knees * contact).sum(axis=(1, 2)) / contact.sum(axis=(1, 2))),
            "knee_swing_deg": np.degrees((knees * (1 - contact)).sum(axis=(1, 2)) / (1 - contact).sum(axis=(1, 2))),
            "steps_left": steps_left,
            "steps_right": steps_right,
            "cadence_spm": (steps_left + steps_right) / duration * 60.0,
            "stride_symmetry": np.minimum(steps_left, steps_right) / np.maximum(steps_left, steps_right),
            "foot_clearance_m": np.where(np.isfinite(swing_peak), swing_peak, np.nan).mean(axis=1),
            "effort": np.square(features.ctrl).mean(axis=(1, 2)) if features.ctrl.shape[-1] else 0.0 * duration,
            "min_height_fraction": features.root_height.min(axis=1) / features.standing_height,
            "mean_forward_vel": features.forward_vel.mean(axis=1),
        }


def object_descriptors(features: Features, metrics: TaskMetrics) -> dict[str, float | bool | None]:
    """The object's errors at the end and how the hand held it, rounded, for trajectory 0."""
    contacts = features.fingertip_contact[0]  # [T, 5]
    duration = metrics.duration
    touchdowns = np.sum((contacts[1:] > 0) & (contacts[:-1] == 0))
    dropped = features.dropped[0]
    return {
        "object_position_error_cm": round(metrics.object_position_error_cm, 2),
        "object_orientation_error_deg": round(metrics.object_orientation_error_deg, 1),
        "object_tilt_deg": round(metrics.object_tilt_deg, 1),
        "object_turn_deg": round(metrics.object_turn_deg, 1),
        "dropped": metrics.dropped,
        "drop_time_s": round(float(np.argmax(dropped > 0) * features.dt), 3) if metrics.dropped else None,
        "time_at_goal_s": round(metrics.time_at_goal_s, 2),
        "grip_fraction": round(float(np.mean(features.hand_contact[0] >= 2)), 3),
        "regrips_per_s": round(float(touchdowns / duration), 2),
        "wrist_flexion_max_deg": round(float(np.degrees(np.abs(features.wrist_flexion[0]).max())), 1),
        "wrist_deviation_max_deg": round(float(np.degrees(np.abs(features.wrist_deviation[0]).max())), 1),
        "forearm_rotation_deg": round(float(np.degrees(features.forearm_rotation[0, -1]
                                                       - features.forearm_rotation[0, 0])), 1),
    }



def physics_descriptors(features: Features, metrics: TaskMetrics, *, index: int = 0) -> dict[str, float | bool | None]:
    """Task metrics and gait descriptors of trajectory `index` (for a hand holding an object, the object's
    descriptors instead of the gait's), rounded, with None where undefined."""
    out: dict[str, float | bool | None] = {
        "duration_s": round(metrics.duration, 3), "fell": metrics.fell,
        "fall_time_s": None if metrics.fall_time is None else round(metrics.fall_time, 3),
        "distance_m": round(metrics.distance, 3), "speed_mps": round(metrics.speed, 3),
        "lateral_drift_m": round(metrics.lateral_drift, 3),
        "heading_change_deg": round(float(np.degrees(metrics.heading_change)), 1), "steps": metrics.steps,
        "left_leg_stand": round(metrics.left_leg_stand, 3), "right_leg_stand": round(metrics.right_leg_stand, 3),
        "flight_fraction": round(metrics.flight_fraction, 3),
        "hip_flexion_peak_deg": round(float(np.degrees(metrics.hip_flexion_peak)), 1),
    }
    if "goal_distance" in features:
        objects = object_descriptors(features.slice(slice(index, index + 1)), metrics)
        return {**out, "fall_time_s": objects["drop_time_s"], **objects}
    for name, values in descriptor_arrays(features).items():
        value = float(values[index])
        out[name] = round(value, 3) if np.isfinite(value) else None
    return out


DESCRIPTOR_MEANINGS: dict[str, str] = {
    "duration_s": "simulated time (s)",
    "fell": "the pelvis dropped below 60 % of standing height or a non-foot part touched the ground",
    "fall_time_s": "when the fall began (s)",
    "distance_m": "pelvis displacement along +x, the starting direction (m)",
    "speed_mps": "distance / duration (m/s)",
    "lateral_drift_m": "pelvis displacement to the left (m)",
    "heading_change_deg": "turn from start to end, + = left (degrees)",
    "steps": "foot touchdowns, both feet",
    "left_leg_stand": "fraction of the motion on the left foot alone, near the start, before any fall",
    "right_leg_stand": "fraction of the motion on the right foot alone, near the start, before any fall",
    "flight_fraction": "fraction of the motion with both feet off the ground (a run's flight phase), before any fall",
    "hip_flexion_peak_deg": "how high both thighs come up: the lower leg's 90th-percentile hip flexion (degrees)",
    "trunk_pitch_deg": "mean torso lean, + = forward (degrees)",
    "trunk_roll_deg": "mean torso lean sideways, + = left (degrees)",
    "trunk_tilt_max_deg": "largest torso angle from vertical (degrees)",
    "knee_stance_deg": "mean knee flexion while the foot is on the ground, 0 = straight (degrees)",
    "knee_swing_deg": "mean knee flexion while the foot is in the air (degrees)",
    "steps_left": "left foot touchdowns",
    "steps_right": "right foot touchdowns",
    "cadence_spm": "steps per minute (humans walk at 100-120)",
    "stride_symmetry": "min/max of left and right touchdowns, 1 = even",
    "foot_clearance_m": "highest sole height while swinging, mean of both feet (m)",
    "effort": "mean squared control (0 = none, 1 = full)",
    "min_height_fraction": "lowest pelvis height / standing height",
    "mean_forward_vel": "mean pelvis speed along its own heading (m/s)",
}
"""What each descriptor means, for prompts and reports."""

OBJECT_MEANINGS: dict[str, str] = {
    "object_position_error_cm": "distance of the cube's centre / the bottle's mouth from its goal at the end (cm)",
    "object_orientation_error_deg": "rotation from the object's orientation to the goal's at the end (degrees)",
    "object_tilt_deg": "the object's tilt from upright at the end (degrees)",
    "object_turn_deg": "the object's rotation about the vertical from start to end, + = left (degrees)",
    "dropped": "the object fell out of the hand: it touched the floor or its table, or fell 10 cm",
    "drop_time_s": "when the object dropped (s)",
    "time_at_goal_s": "time the object spent at its goal (s)",
    "grip_fraction": "fraction of the motion with two or more parts of the hand on the object",
    "regrips_per_s": "fingertip touch-downs on the object per second (finger gaiting)",
    "wrist_flexion_max_deg": "largest wrist flexion or extension (degrees)",
    "wrist_deviation_max_deg": "largest wrist radial or ulnar deviation (degrees)",
    "forearm_rotation_deg": "forearm rotation from start to end (degrees)",
}
"""What each object descriptor means, for prompts and reports."""


def descriptor_table(descriptors: dict[str, float | bool | None]) -> str:
    """Descriptors as '- name = value  (meaning)' lines for a prompt."""
    meanings = DESCRIPTOR_MEANINGS | OBJECT_MEANINGS
    return "\n".join(f"- {name} = {value}  ({meanings.get(name, '')})" for name, value in descriptors.items())


WALK_SPEED_MPS = 0.8
"""Speed that counts as full progress when a description asks to walk without naming a speed (m/s)."""


@dataclass(frozen=True)
class Targets:
    """What a description asks the critic to judge: the task spec (`rewardloop.spec`) in the critic's terms."""

    locomotion: bool
    """The body should travel (walk, run, move, climb...)."""
    direction: int
    """+1 forward, -1 backward, 0 stay in place."""
    speed_mps: float | None
    """Wanted speed (m/s) when the description names one or says fast/slow/run; None otherwise."""
    turn: str | None
    """'left' or 'right' when asked to turn."""
    turn_deg: float
    """How far to turn (degrees); 90 unless stated."""
    upright: bool
    straight_knees: bool
    high_steps: bool
    """Lift the feet: asked for, or implied by rough ground or stairs."""
    terrain: str | None
    """'rough', 'stairs' or 'slope' when the description mentions it."""
    straight_line: bool
    efficient: bool
    symmetric: bool
    styles: tuple[str, ...]
    """Gait styles the description asks for (names in GAIT_STYLES); each waives the checks it contradicts."""
    understood: tuple[str, ...]
    """The phrases the rules recognised, for the critique's summary."""
    stay_in_place: bool = False
    """Stand or balance without travelling."""
    step_in_place: bool = False
    """Step without travelling ("jog on the spot"): judge the stepping, not the progress."""
    run: bool = False
    """A run or a jog: a flight phase asked for (both feet off the ground between steps)."""
    stance_leg: str | None = None
    """A balance pose on one leg: the leg stood on ('left', 'right' or 'either'); None on both feet."""
    lateral: str | None = None
    """The travel's sideways part ('left', 'right' or 'either'), facing kept: a sideways walk with direction 0, a
    diagonal one with direction ±1; None for travel along the heading."""

    @property
    def course(self) -> str | None:
        """The course metric (`control.metrics.course_metrics`) a sideways or diagonal travel is judged on, e.g.
        'sideways_left', 'sideways' (either side), 'forward_right'; None for other tasks."""
        if self.lateral is None:
            return None
        if self.direction == 0:
            return "sideways" if self.lateral == "either" else f"sideways_{self.lateral}"
        return f"{'forward' if self.direction > 0 else 'backward'}_{self.lateral}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def targets_from_spec(spec: TaskSpec) -> Targets:
    """The critic's targets of a task spec: the same reading the task's metric and canonical reward follow."""
    return Targets(
        locomotion=spec.locomotion, direction=spec.sign, speed_mps=spec.pace_mps if spec.locomotion else None,
        turn=spec.turn, turn_deg=spec.turn_deg, upright=spec.upright, straight_knees=spec.straight_knees,
        high_steps=spec.high_steps, terrain=spec.terrain,
        straight_line=spec.straight_line or (spec.locomotion and spec.turn is None and spec.lateral is None),
        efficient=spec.efficient, symmetric=spec.symmetric, styles=spec.styles, understood=spec.understood,
        stay_in_place=spec.stay_in_place, step_in_place=spec.step_in_place, lateral=spec.lateral,
        stance_leg=spec.stance_leg, run=spec.pace == "run")


def targets_from_description(description: str) -> Targets:
    """Targets of a description read by the task-spec rules (`rewardloop.spec.spec_from_description`)."""
    return targets_from_spec(spec_from_description(description))
