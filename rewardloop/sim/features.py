"""Features: the named, documented arrays that reward code reads, computed from a batch of rollouts.

Every array feature has shape [B, T] or [B, T, k]: B trajectories, T samples, one per physics step.
Sample t describes the state *before* step t and the control applied during it, so `time[:, 0]` is the
initial time. World frame: z up, the body starts at the origin facing +x. Semantic names are the same on
every body (see `rewardloop.sim.bodies`), so a reward written against them transfers across bodies.
`reference_table()` renders FEATURES as the API reference pasted into a designer model's prompt.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardloop.errors import UserError
from rewardloop.sim.bodies import SEMANTIC_JOINTS, SIDES
from rewardloop.sim.scene import CompiledScene, actuator_strength


@dataclass(frozen=True)
class FeatureDoc:
    """One entry of the vocabulary."""

    shape: str
    """Shape, e.g. '[B, T, 3]'."""
    units: str
    """SI units, or '-' for unitless."""
    meaning: str
    """What it measures, in a sentence."""


def _vocabulary() -> dict[str, FeatureDoc]:
    v = {
        "time": FeatureDoc("[B, T]", "s", "simulation time of each sample"),
        "root_pos": FeatureDoc("[B, T, 3]", "m", "pelvis position (the root of locomotion)"),
        "root_vel": FeatureDoc("[B, T, 3]", "m/s", "pelvis linear velocity"),
        "root_height": FeatureDoc("[B, T]", "m", "pelvis height above the ground below it"),
        "forward_vel": FeatureDoc("[B, T]", "m/s", "pelvis velocity along the current heading (+ is forward)"),
        "lateral_vel": FeatureDoc("[B, T]", "m/s", "pelvis velocity to the body's left of the heading"),
        "com_pos": FeatureDoc("[B, T, 3]", "m", "whole-body centre of mass"),
        "com_vel": FeatureDoc("[B, T, 3]", "m/s", "whole-body centre-of-mass velocity"),
        "com_height": FeatureDoc("[B, T]", "m", "centre-of-mass height above the ground below it"),
        "heading": FeatureDoc("[B, T]", "rad",
                              "yaw of the pelvis forward axis, 0 = +x, + = turned left; unwrapped"),
        "yaw_rate": FeatureDoc("[B, T]", "rad/s", "pelvis angular velocity about world z (+ = turning left)"),
        "torso_pos": FeatureDoc("[B, T, 3]", "m", "torso (chest) position"),
        "head_pos": FeatureDoc("[B, T, 3]", "m", "head position"),
        "head_height": FeatureDoc("[B, T]", "m", "head height above the ground below it"),
        "ctrl": FeatureDoc("[B, T, nu]", "-",
                           "actuator controls (muscle excitations in [0, 1] or motor commands)"),
        "actuator_force": FeatureDoc("[B, T, nu]", "N or N·m", "force or torque each actuator produces"),
        "actuator_effort": FeatureDoc("[B, T, nu]", "-", "each actuator's force as a fraction of its strength, in "
                                      "[-1, 1] (motors: their command; robots' servos: torque over the torque "
                                      "limit; muscles: force over peak force, negative when pulling)"),
        "muscle_activation": FeatureDoc("[B, T, nm]", "-", "muscle activations in [0, 1]; nm = 0 on torque bodies"),
        "nonfoot_contact": FeatureDoc("[B, T]", "count",
                                      "contacts between non-foot parts and the ground (falls, knees, hands)"),
    }
    for part in ("pelvis", "torso", "head"):
        v[f"{part}_up"] = FeatureDoc("[B, T, 3]", "-", f"unit vector of the {part}'s up axis; (0, 0, 1) when upright")
        v[f"{part}_forward"] = FeatureDoc("[B, T, 3]", "-", f"unit vector the {part} faces; (1, 0, 0) at the start")
    for side in SIDES:
        for joint in SEMANTIC_JOINTS:
            meaning = f"{side} {joint.replace('_', ' ')} angle ({_SIGN_NOTE[joint]})"
            v[f"{side}_{joint}"] = FeatureDoc("[B, T]", "rad", meaning)
            v[f"{side}_{joint}_vel"] = FeatureDoc("[B, T]", "rad/s", f"rate of {side}_{joint}")
        v[f"{side}_heel_pos"] = FeatureDoc("[B, T, 3]", "m", f"{side} heel position")
        v[f"{side}_toe_pos"] = FeatureDoc("[B, T, 3]", "m", f"{side} toe position")
        v[f"{side}_foot_pos"] = FeatureDoc("[B, T, 3]", "m", f"{side} foot position (midpoint of heel and toe)")
        v[f"{side}_foot_vel"] = FeatureDoc("[B, T, 3]", "m/s", f"{side} foot velocity (mean of heel and toe)")
        v[f"{side}_foot_height"] = FeatureDoc("[B, T]", "m",
                                              f"{side} sole clearance above the ground (0 when standing)")
        v[f"{side}_foot_contact"] = FeatureDoc("[B, T]", "0/1", f"1 when the {side} foot touches the ground")
        v[f"{side}_foot_force"] = FeatureDoc("[B, T]", "N",
                                             f"magnitude of the ground reaction force on the {side} foot")
        v[f"{side}_hand_pos"] = FeatureDoc("[B, T, 3]", "m", f"{side} hand position; torso_pos on a body "
                                           "without arms (myolegs)")
    hand = _hand_vocabulary()
    for joint in HAND_JOINTS:
        hand[f"{joint}_vel"] = FeatureDoc("[B, T]", "rad/s", f"rate of {joint}; hand bodies only")
    return v | hand


def _hand_vocabulary() -> dict[str, FeatureDoc]:
    """Features of a hand and the object it holds: present on hand bodies (myohand) and, for the object, in a
    scene with one (cube-rotate, bottle-pour); a reward reading them is for manipulation tasks only."""
    hand = "; hand bodies only"
    obj = "; scenes with an object only"
    return {
        "fingertip_pos": FeatureDoc("[B, T, 5, 3]", "m", "fingertip positions, thumb, index, middle, ring, little"
                                    + hand),
        "palm_pos": FeatureDoc("[B, T, 3]", "m", "centre of the palm" + hand),
        "wrist_pos": FeatureDoc("[B, T, 3]", "m", "wrist position" + hand),
        "forearm_rotation": FeatureDoc("[B, T]", "rad", "forearm pronation/supination angle, + turns the thumb "
                                       "towards the palm's side (MJCF pro_sup)" + hand),
        "wrist_flexion": FeatureDoc("[B, T]", "rad", "wrist flexion, + bends the palm towards the forearm" + hand),
        "wrist_deviation": FeatureDoc("[B, T]", "rad", "wrist radial (+) / ulnar (-) deviation" + hand),
        "thumb_flexion": FeatureDoc("[B, T]", "rad", "thumb carpometacarpal flexion" + hand),
        "thumb_abduction": FeatureDoc("[B, T]", "rad", "thumb carpometacarpal abduction" + hand),
        **{f"{finger}_flexion": FeatureDoc("[B, T]", "rad", f"{finger} finger knuckle (MCP) flexion, 0 straight"
                                           + hand) for finger in ("index", "middle", "ring", "little")},
        "object_pos": FeatureDoc("[B, T, 3]", "m", "centre of the object (cube or bottle)" + obj),
        "object_quat": FeatureDoc("[B, T, 4]", "-", "object orientation as a unit quaternion (w, x, y, z)" + obj),
        "object_vel": FeatureDoc("[B, T, 3]", "m/s", "object linear velocity" + obj),
        "object_angvel": FeatureDoc("[B, T, 3]", "rad/s", "object angular velocity (world frame)" + obj),
        "object_up": FeatureDoc("[B, T, 3]", "-", "unit vector of the object's own up axis; (0, 0, 1) upright" + obj),
        "object_tilt": FeatureDoc("[B, T]", "rad", "angle of the object's up axis from vertical (π/2 lying, π "
                                  "upside down)" + obj),
        "object_turn": FeatureDoc("[B, T]", "rad", "rotation of the object about the vertical since the start, "
                                  "+ is to the left (counter-clockwise from above); unwrapped" + obj),
        "mouth_pos": FeatureDoc("[B, T, 3]", "m", "the object's reference point: the bottle's mouth, the cube's "
                                "centre" + obj),
        "goal_pos": FeatureDoc("[B, T, 3]", "m", "where mouth_pos should be: the cube's goal centre, the pour "
                               "target above the cup" + obj),
        "goal_quat": FeatureDoc("[B, T, 4]", "-", "the goal orientation (w, x, y, z)" + obj),
        "goal_distance": FeatureDoc("[B, T]", "m", "distance from mouth_pos to goal_pos" + obj),
        "goal_angle": FeatureDoc("[B, T]", "rad", "rotation angle from the object's orientation to the goal's, in "
                                 "[0, π]" + obj),
        "fingertip_distance": FeatureDoc("[B, T, 5]", "m", "distance of each fingertip from the object's centre"
                                         + obj),
        "fingertip_contact": FeatureDoc("[B, T, 5]", "0/1", "1 where each fingertip touches the object" + obj),
        "palm_contact": FeatureDoc("[B, T]", "0/1", "1 when the palm touches the object" + obj),
        "hand_contact": FeatureDoc("[B, T]", "count", "contacts between any part of the hand and the object" + obj),
        "grip_force": FeatureDoc("[B, T]", "N", "magnitude of the net contact force of the hand on the object"
                                 + obj),
        "object_table_contact": FeatureDoc("[B, T]", "0/1", "1 when the object touches its table" + obj),
        "object_floor_contact": FeatureDoc("[B, T]", "0/1", "1 when the object touches the floor (dropped)" + obj),
        "dropped": FeatureDoc("[B, T]", "0/1", "1 from the first sample at which the object touched the floor, "
                              "touched its table when it started clear of it (the bottle), or fell 10 cm below the "
                              "lower of its start and its goal point" + obj),
        "at_goal": FeatureDoc("[B, T]", "0/1", "1 where the object is at its goal: within goal_radius of goal_pos, "
                              "within goal_angle_tolerance of the goal orientation, tilted at least min_tilt" + obj),
    }


HAND_JOINTS = ("forearm_rotation", "wrist_flexion", "wrist_deviation", "thumb_flexion", "thumb_abduction",
               "index_flexion", "middle_flexion", "ring_flexion", "little_flexion")
"""Semantic joints of a hand body (its `joints` map)."""

_SIGN_NOTE = {
    "hip_flexion": "+ swings the thigh forward",
    "hip_adduction": "+ moves the thigh towards the midline",
    "hip_rotation": "+ rotates the thigh inwards",
    "knee_flexion": "0 is straight, + is bent",
    "ankle_dorsiflexion": "+ lifts the toes",
}

FEATURES: dict[str, FeatureDoc] = _vocabulary()
"""The whole vocabulary: name -> shape, units, meaning."""
HAND_FEATURES: tuple[str, ...] = tuple(name for name, doc in FEATURES.items() if "only" in doc.meaning
                                       and ("hand bodies" in doc.meaning or "object" in doc.meaning))
"""The features only hand bodies (and, for the object's, scenes with an object) have."""

SCALARS: dict[str, FeatureDoc] = {
    "dt": FeatureDoc("scalar", "s", "time between samples (the physics timestep)"),
    "mass": FeatureDoc("scalar", "kg", "total body mass"),
    "weight": FeatureDoc("scalar", "N", "body weight, mass × 9.81; divide forces by it to normalise"),
    "standing_height": FeatureDoc("scalar", "m", "root_height of the standing pose at the start"),
    "goal_radius": FeatureDoc("scalar", "m", "manipulation: goal_distance within which the object is at its goal"),
    "goal_angle_tolerance": FeatureDoc("scalar", "rad", "manipulation: goal_angle within which the orientation is "
                                       "at its goal (π: any)"),
    "min_tilt": FeatureDoc("scalar", "rad", "manipulation: object_tilt the goal needs at least (0: any)"),
}
"""Per-body constants available as attributes beside the arrays."""
HAND_SCALARS: tuple[str, ...] = tuple(name for name, doc in SCALARS.items() if doc.meaning.startswith("manipulation"))
"""The constants only scenes with an object have."""


def reference_table() -> str:
    """The vocabulary as a Markdown table (name | shape | units | meaning) for prompts and docs."""
    rows = ["| name | shape | units | meaning |", "|---|---|---|---|"]
    for name, doc in {**FEATURES, **SCALARS}.items():
        rows.append(f"| `{name}` | {doc.shape} | {doc.units} | {doc.meaning} |")
    return "\n".join(rows)


class Features(Mapping[str, np.ndarray]):
    """Read-only named arrays, by attribute (`f.root_pos`) or key (`f["root_pos"]`)."""

    def __init__(self, arrays: dict[str, np.ndarray], scalars: dict[str, float]):
        for array in arrays.values():
            array.setflags(write=False)
        self._arrays = arrays
        self._scalars = scalars

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._arrays[name]
        except KeyError:
            raise KeyError(f"no feature {name!r}; features are: {', '.join(self._arrays)}") from None

    def __getattr__(self, name: str) -> Any:  # an array feature or a scalar
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._scalars:
            return self._scalars[name]
        try:
            return self._arrays[name]
        except KeyError:
            raise AttributeError(f"no feature {name!r}; see the feature reference for valid names") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    @property
    def scalars(self) -> dict[str, float]:
        return dict(self._scalars)

    @property
    def batch_shape(self) -> tuple[int, int]:
        """(B, T)."""
        return self._arrays["time"].shape  # type: ignore[return-value]

    def slice(self, index: slice | np.ndarray) -> Features:
        """Features of a subset of the batch (index along B)."""
        return Features({k: a[index] for k, a in self._arrays.items()}, self._scalars)


def compute_features(scene: CompiledScene, initial_state: np.ndarray, state: np.ndarray,
                     sensordata: np.ndarray, control: np.ndarray) -> Features:
    """Features of a batch of rollouts.

    Args:
      scene: the compiled scene the rollouts ran in.
      initial_state: [B, nstate] state each rollout started from.
      state: [B, T, nstate] state after each step.
      sensordata: [B, T, nsensor] sensors computed during each step (of the state before it).
      control: [B, T, nu] controls applied at each step.
    """
    if state.ndim != 3 or sensordata.shape[:2] != state.shape[:2] or control.shape[:2] != state.shape[:2]:
        raise UserError("state, sensordata and control must share their leading [B, T] shape")
    before = np.concatenate([initial_state[:, None, :], state[:, :-1, :]], axis=1)
    sense = _SensorReader(scene, sensordata)
    arrays: dict[str, np.ndarray] = {"time": before[..., 0].copy()}
    arrays.update(_body_features(scene, sense))
    arrays.update(_joint_features(scene, before))
    arrays.update(_foot_features(scene, sense) if scene.body.feet else _no_feet(sense, arrays["root_pos"]))
    arrays.update(_actuator_features(scene, sense, before, control))
    if scene.body.fingertips:
        from rewardloop.sim.object_features import hand_features, object_features

        arrays.update(hand_features(sense))
        if scene.scene.manipulation is not None:
            arrays.update(object_features(sense, scene.scene.manipulation))
    return Features(arrays, _scalars(scene))


def _no_feet(sense: _SensorReader, root_pos: np.ndarray) -> dict[str, np.ndarray]:
    """Foot features of a body without feet (a hand): at the root, never in contact, no force; any contact of the
    body with the ground is non-foot contact."""
    zeros = np.zeros(root_pos.shape[:2])
    out = {"nonfoot_contact": sense("all_contact")[..., 0].copy()}
    for side in SIDES:
        for name in ("heel_pos", "toe_pos", "foot_pos"):
            out[f"{side}_{name}"] = root_pos.copy()
        out[f"{side}_foot_vel"] = np.zeros_like(root_pos)
        for name in ("foot_height", "foot_contact", "foot_force"):
            out[f"{side}_{name}"] = zeros.copy()
    return out


class _SensorReader:
    def __init__(self, scene: CompiledScene, sensordata: np.ndarray):
        self.layout, self.data = scene.layout.sensors, sensordata

    def __call__(self, name: str) -> np.ndarray:
        adr, dim = self.layout[name]
        out = self.data[..., adr : adr + dim]
        return out[..., 0] if dim == 1 else out


def _height_above_ground(scene: CompiledScene, pos: np.ndarray) -> np.ndarray:
    """[..., 3] positions -> [...] height above the terrain below them (m)."""
    return pos[..., 2] - scene.scene.terrain.height(pos[..., 0], pos[..., 1])


def _body_features(scene: CompiledScene, sense: _SensorReader) -> dict[str, np.ndarray]:
    out = {"root_pos": sense("pelvis_pos"), "root_vel": sense("pelvis_linvel"),
           "com_pos": sense("com_pos"), "com_vel": sense("com_vel"),
           "torso_pos": sense("torso_pos"), "head_pos": sense("head_pos")}
    for part in ("pelvis", "torso", "head"):
        out[f"{part}_up"] = sense(f"{part}_zaxis")
        out[f"{part}_forward"] = sense(f"{part}_xaxis")
    forward = out["pelvis_forward"]
    out["heading"] = np.unwrap(np.arctan2(forward[..., 1], forward[..., 0]), axis=-1)
    out["yaw_rate"] = sense("pelvis_angvel")[..., 2]
    cos, sin = np.cos(out["heading"]), np.sin(out["heading"])
    vel = out["root_vel"]
    out["forward_vel"] = vel[..., 0] * cos + vel[..., 1] * sin
    out["lateral_vel"] = -vel[..., 0] * sin + vel[..., 1] * cos
    out["root_height"] = _height_above_ground(scene, out["root_pos"])
    out["com_height"] = _height_above_ground(scene, out["com_pos"])
    out["head_height"] = _height_above_ground(scene, out["head_pos"])
    for side in SIDES:
        out[f"{side}_hand_pos"] = sense(f"{side}_hand_pos") if scene.body.hands else out["torso_pos"].copy()
    return out


def _joint_features(scene: CompiledScene, before: np.ndarray) -> dict[str, np.ndarray]:
    layout, model = scene.layout, scene.model
    qpos0, qvel0 = 1, 1 + model.nq  # state layout: time, qpos, qvel, ...
    out = {}
    for name, adr in layout.joint_qpos.items():
        sign = layout.joint_sign[name]
        out[name] = sign * before[..., qpos0 + adr]
        out[f"{name}_vel"] = sign * before[..., qvel0 + layout.joint_qvel[name]]
    return out


def _foot_features(scene: CompiledScene, sense: _SensorReader) -> dict[str, np.ndarray]:
    out = {}
    sole = scene.body.sole_offset
    for side in SIDES:
        heel, toe = sense(f"{side}_heel_pos"), sense(f"{side}_toe_pos")
        contact = sense(f"{side}_foot_contact")
        out[f"{side}_heel_pos"], out[f"{side}_toe_pos"] = heel, toe
        out[f"{side}_foot_pos"] = 0.5 * (heel + toe)
        out[f"{side}_foot_vel"] = 0.5 * (sense(f"{side}_heel_vel") + sense(f"{side}_toe_vel"))
        lowest = np.minimum(_height_above_ground(scene, heel), _height_above_ground(scene, toe))
        out[f"{side}_foot_height"] = lowest - sole
        out[f"{side}_foot_contact"] = (contact[..., 0] > 0).astype(float)
        out[f"{side}_foot_force"] = np.linalg.norm(contact[..., 1:4], axis=-1)
    found = sense("all_contact")[..., 0] - sense("left_foot_contact")[..., 0] - sense("right_foot_contact")[..., 0]
    out["nonfoot_contact"] = np.maximum(found, 0.0)
    return out


def _actuator_features(scene: CompiledScene, sense: _SensorReader, before: np.ndarray,
                       control: np.ndarray) -> dict[str, np.ndarray]:
    model, layout = scene.model, scene.layout
    act0 = 1 + model.nq + model.nv
    if model.nu:  # actuator force sensors are added consecutively, in actuator order
        first = layout.sensors[f"force_{model.actuator(0).name}"][0]
        forces = sense.data[..., first : first + model.nu]
    else:
        forces = control[..., :0]
    return {
        "ctrl": control,
        "actuator_force": forces,
        "actuator_effort": np.clip(forces / actuator_strength(model), -1.0, 1.0),  # a joint's limit clamps it
        "muscle_activation": before[..., act0 + layout.act_of_muscle],
    }


def _scalars(scene: CompiledScene) -> dict[str, float]:
    model = scene.model
    mass = float(model.body_subtreemass[model.body(scene.body.root).id])
    out = {"dt": scene.dt, "mass": mass, "weight": mass * 9.81, "standing_height": scene.standing_height}
    manipulation = scene.scene.manipulation
    if manipulation is not None:
        out |= {"goal_radius": manipulation.goal_radius_m, "goal_angle_tolerance": manipulation.goal_angle_rad,
                "min_tilt": manipulation.min_tilt_rad}
    return out
