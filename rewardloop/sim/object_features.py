"""Hand and object features of hand scenes, from their sensors (documented in `rewardloop.sim.features`).

Every function takes a sensor reader over [B, T, nsensor] sensordata and returns [B, T, ...] arrays.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rewardloop.sim.hand import FINGERS, Manipulation

Sense = Callable[[str], np.ndarray]
"""Sensor name (without the 'rl_' prefix) -> [B, T] or [B, T, dim] values."""
DROP_M = 0.10
"""An object this far below the lower of its start and its goal point has fallen out of the hand (m): a poured
bottle's middle sinks about 9 cm as the forearm rolls it over, held all the while."""


def hand_features(sense: Sense) -> dict[str, np.ndarray]:
    """Fingertip [B, T, 5, 3], palm and wrist [B, T, 3] positions (m)."""
    return {"fingertip_pos": np.stack([sense(f"{finger}_tip_pos") for finger in FINGERS], axis=-2),
            "palm_pos": sense("palm_pos"), "wrist_pos": sense("wrist_pos")}


def rotation_angle(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """[..., 4] unit quaternions q, r (w, x, y, z) -> [...] angle (rad, in [0, π]) of the rotation between them."""
    dot = np.abs(np.sum(q * r, axis=-1))
    return 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))


def yaw_of(q: np.ndarray) -> np.ndarray:
    """[..., 4] unit quaternions (w, x, y, z) -> [...] yaw (rad): heading of the rotated x axis about world z."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _found(sense: Sense, name: str) -> np.ndarray:
    """[B, T] number of contacts a contact sensor found."""
    return sense(f"{name}_contact")[..., 0]


def object_features(sense: Sense, manipulation: Manipulation) -> dict[str, np.ndarray]:
    """The object's pose, motion, goal errors and contacts."""
    pos, quat, up = sense("object_pos"), sense("object_quat"), sense("object_zaxis")
    mouth, goal, goal_quat = sense("mouth_pos"), sense("goal_pos"), sense("goal_quat")
    tips = np.stack([sense(f"{finger}_tip_pos") for finger in FINGERS], axis=-2)
    out = {"object_pos": pos, "object_quat": quat, "object_vel": sense("object_linvel"),
           "object_angvel": sense("object_angvel"), "object_up": up,
           "object_tilt": np.arccos(np.clip(up[..., 2], -1.0, 1.0)),
           "object_turn": _turn(quat),
           "mouth_pos": mouth, "goal_pos": goal, "goal_quat": goal_quat,
           "goal_distance": np.linalg.norm(mouth - goal, axis=-1),
           "goal_angle": rotation_angle(quat, goal_quat),
           "fingertip_distance": np.linalg.norm(tips - pos[..., None, :], axis=-1),
           "fingertip_contact": (np.stack([_found(sense, f"{finger}_tip") for finger in FINGERS], axis=-1)
                                 > 0).astype(float),
           "palm_contact": (np.sum([_found(sense, f"palm{k}") for k in range(4)], axis=0) > 0).astype(float),
           "hand_contact": _found(sense, "hand"),
           "grip_force": np.linalg.norm(sense("hand_contact")[..., 1:4], axis=-1),
           "object_table_contact": (_found(sense, "object_table") > 0).astype(float),
           "object_floor_contact": (_found(sense, "object_floor") > 0).astype(float)}
    table = (out["object_table_contact"] > 0) & manipulation.starts_clear_of_table
    fallen = ((out["object_floor_contact"] > 0) | table
              | (pos[..., 2] < np.minimum(pos[:, :1, 2], goal[..., 2]) - DROP_M))
    out["dropped"] = np.maximum.accumulate(fallen, axis=1).astype(float)
    out["at_goal"] = ((out["goal_distance"] <= manipulation.goal_radius_m)
                      & (out["goal_angle"] <= manipulation.goal_angle_rad)
                      & (out["object_tilt"] >= manipulation.min_tilt_rad) & (out["dropped"] == 0)).astype(float)
    return out


def _turn(quat: np.ndarray) -> np.ndarray:
    """[B, T, 4] orientations -> [B, T] rotation about world z since the first sample (rad), unwrapped."""
    yaw = np.unwrap(yaw_of(quat), axis=1)
    return yaw - yaw[:, :1]
