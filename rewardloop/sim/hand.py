"""Hand scenes: a muscle hand and forearm placed over a table, with an object built in the scene and its goal.

The hand body's forearm is held still in space (the body has no elbow or shoulder muscles); only its forearm
rotation (pronation/supination), its wrist and its fingers move. Where the forearm is held depends on the object:
- `cube`: the forearm points straight down with the wrist extended, so that a three-finger pinch holds a cube with
  coloured faces on the forearm's rotation axis, over a narrow post; rolling the forearm turns it about the
  vertical in place.
- `bottle`: the forearm points forward (+x), the knuckles standing up along a bottle (a cylinder with a neck) held
  in a power grip against the palm, over a small table; it is poured by rolling the forearm so that the bottle tips
  past horizontal over a cup.

The object is a free body on real contact physics: nothing welds or drives it. Its goal pose is drawn as a
translucent ghost (a mocap body that collides with nothing), and its position and orientation are sensed, as
are the goal's, so features read both from `sensordata`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import mujoco
import numpy as np

from rewardloop.errors import UserError, unknown_name

OBJECTS = ("cube", "bottle")
"""Objects a hand scene can hold."""
FINGERS = ("thumb", "index", "middle", "ring", "little")
"""Fingertips in the order of the fingertip features."""
CUBE_HALF_M = 0.02
"""Half the cube's side (m): a 4 cm cube, a large die."""
CUBE_MASS_KG = 0.08
"""Cube mass (kg): a 5 cm wooden cube."""
BOTTLE_RADIUS_M = 0.025
"""Radius of the bottle's body (m)."""
BOTTLE_HALF_M = 0.06
"""Half the length of the bottle's body (m)."""
NECK_RADIUS_M = 0.012
"""Radius of the bottle's neck (m)."""
NECK_HALF_M = 0.02
"""Half the length of the bottle's neck (m)."""
BOTTLE_MASS_KG = 0.15
"""Bottle mass (kg): a small bottle, part full."""
FRICTION = 1.5
"""Sliding friction of the object against the hand's skin (MuJoCo takes the larger of two geoms' coefficients, the
skin's is 1.0): a rubber-coated cube or bottle."""
SUPPORT_FRICTION = 0.3
"""Sliding friction between the object and its table or post: the support's geom has the higher priority, so this
coefficient, not the larger one, holds there (a polished support the object slides on)."""
BOTTLE_REACH_M = 0.025
"""The bottle starts this far from the palm's centre towards the fingertips (m): its axis under the knuckles, so
that the fingers wrap one side of it and the thumb reaches round the other."""
BOTTLE_RAISE_M = 0.01
"""The bottle's middle starts this far above the palm's centre (m): the thumb, above the index finger, reaches round
its body rather than its neck."""
BOTTLE_ROLL_DEG = 50.0
"""The hand around a bottle starts rolled this far (deg) from knuckles-up, away from the side it pours to: room for
the forearm's roll to tip it past horizontal within its range (±90°). The muscles roll the held bottle's forearm to
about 0.1 rad short of the range's end; from 35° that tipped it 98°, from 50° 112°."""
BOTTLE_SEAT = ((-0.0011, -0.0125, -0.0428), (0.6308, -0.4099, 0.4434, -0.4873))
"""The bottle's middle (m) and orientation (w, x, y, z) in the palm's body frame once the grip holds it poured: the
fingers' first press turns it about 20° towards the wrist and 2.8 cm into the palm within 0.1 s, and as it tips
its weight turns it about 17° further; then it stays (within 1 mm and 1° from 3 s to 5 s of a scripted pour).
Measured by `benchmarks/bottle_seat.py` (a pour with no planner: the first grip held while the forearm rolls);
a test checks that it still holds. The pour target is where this bottle's mouth lands when the forearm alone rolls
it to the goal's tilt, so the target is reachable with the bottle as held (from the unpressed start pose, or the
seat the press gives upright, it is not: the mouth passed the targets those gave 2-3 cm or more away)."""
TABLE_GAP_M = 0.12
"""The table's top lies this far below the bottom of the held bottle (m): the bottle starts in the hand's grasp, as
MyoSuite's hold tasks do, clear of the table as the hand rolls it over; a bottle on the table has dropped."""
CUP_OFFSET_M = 0.05
"""The cup's rim lies this far below the pour target point (m)."""
FACE_COLOURS = ((0.85, 0.2, 0.2), (0.2, 0.7, 0.25), (0.2, 0.35, 0.85), (0.95, 0.8, 0.15), (0.9, 0.5, 0.1),
                (0.6, 0.25, 0.7))
"""Colours of the cube's faces +x, -x, +y, -y, +z, -z, so that a video shows its orientation."""


_SOLID = {"contype": 1, "conaffinity": 1, "group": 0}
"""Collision bits of the table and the object: they touch each other, the floor and the hand (whose geoms have
contype 1, conaffinity 0, so the hand does not touch itself)."""


@dataclass(frozen=True)
class Manipulation:
    """The object in a hand scene and where it should end up."""

    object: str = "cube"
    """One of OBJECTS."""
    turn_deg: float = 90.0
    """cube: rotation about the vertical from its start to its goal (deg), + is to the left (counter-clockwise
    seen from above)."""
    side: Literal["left", "right"] = "left"
    """bottle: the side of the hand the cup stands on, the way the bottle is poured. The right hand pours to the
    left by pronation, to the right by supination, which MyoHand's muscles give only weakly (it has no supinator)
    until the tipped bottle's weight carries the roll."""
    tilt_deg: float = 110.0
    """bottle: the goal's tilt from upright (deg): past horizontal (90°) to pour."""

    def __post_init__(self) -> None:
        if self.object not in OBJECTS:
            raise unknown_name("object", self.object, OBJECTS)
        if not (math.isfinite(self.turn_deg) and 0 < abs(self.turn_deg) <= 120):
            raise UserError(f"the cube's turn must be within [-120, 120] degrees and not 0, got {self.turn_deg}")
        if self.side not in ("left", "right"):
            raise UserError(f"the cup's side must be 'left' or 'right', got {self.side!r}")
        if not (math.isfinite(self.tilt_deg) and 30 <= self.tilt_deg <= 150):
            raise UserError(f"the bottle's goal tilt must be within [30, 150] degrees, got {self.tilt_deg}")

    @property
    def goal_radius_m(self) -> float:
        """The object's reference point (cube centre, bottle mouth) is at its goal within this distance (m)."""
        return 0.02 if self.object == "cube" else 0.03

    @property
    def goal_angle_rad(self) -> float:
        """The object's orientation is at its goal within this rotation angle (rad); π: any (the bottle)."""
        return math.radians(20.0) if self.object == "cube" else math.pi

    @property
    def min_tilt_rad(self) -> float:
        """The object is at its goal tilted at least this far from upright (rad): the bottle pours past 100°."""
        return 0.0 if self.object == "cube" else math.radians(100.0)

    @property
    def starts_clear_of_table(self) -> bool:
        """The bottle starts held clear of its table, so touching the table is a drop; the cube rests on it."""
        return self.object == "bottle"

    def describe(self) -> str:
        """'a cube, to turn 90° left' or 'a bottle, to pour into a cup on the left'."""
        if self.object == "cube":
            return f"a cube, to turn {abs(self.turn_deg):g}° {'left' if self.turn_deg > 0 else 'right'}"
        return f"a bottle, to pour into a cup on the {self.side}"


@dataclass(frozen=True)
class Placement:
    """Where the forearm is held and how the hand starts."""

    elbow: tuple[float, float, float]
    """World position of the forearm rotation's anchor at the elbow (m)."""
    axis: tuple[float, float, float]
    """World direction of the forearm from the wrist to the elbow."""
    thumb: tuple[float, float, float]
    """World direction, across the forearm, of `side_body` from the forearm's axis at zero forearm rotation: which
    way the hand's thumb side faces."""
    pose: dict[str, float]
    """MJCF joint -> starting angle (rad); the others start at 0."""
    grip: dict[str, dict[str, float]]
    """Finger -> MJCF joint -> angle (rad) of the grip the finger closes towards (straight from its starting angle)
    until it rests against the object."""
    pinch: bool = False
    """The object starts at CUBE_SEAT between the thumb and the index and middle pads of the grip (a pinch), else
    in front of the palm."""
    palm_normal: tuple[float, float, float] = (0.0, 1.0, 0.0)
    """World direction the palm faces in the starting pose; a palm-held object starts there, against the palm."""
    side_body: str = "distal_thumb_r"
    """The MJCF body whose direction from the forearm's axis `thumb` sets: the thumb tip, or the index finger's
    first phalanx to stand the knuckles in a line along `thumb` (a bottle's grip)."""
    reach: float = 0.0
    """A palm-held object starts this far from the palm's centre towards the fingertips (m): across the fingers'
    first phalanges, where they wrap around it."""
    wrap: bool = False
    """Close each finger joint by joint, from the knuckle out, each until the finger rests against the object (a
    power grip that wraps it), else all of a finger's joints together (a pinch)."""
    squeeze: float = 0.05
    """How far beyond its resting contact each closing joint's first target goes (rad, towards the grip; in a pinch,
    the largest of a finger's offsets pressing its pad into the object): how hard the hand holds the object."""


def placement(manipulation: Manipulation | None) -> Placement:
    """The forearm's placement and starting hand pose for an object (the cube's when None)."""
    kind = manipulation.object if manipulation is not None else "cube"
    if kind == "cube":
        sign = 1.0 if manipulation is None or manipulation.turn_deg > 0 else -1.0
        pose = {"pro_sup_r": -0.7 * sign, **_PINCH_REST}
        pose |= {joint: angle for joints in _PINCH.values() for joint, angle in joints.items()}
        return Placement(elbow=(0.0, 0.0, 0.62), axis=(0.0, 0.0, 1.0), thumb=(0.0, 1.0, 0.0), pose=pose,
                         grip=_PINCH, pinch=True)
    roll = math.radians(BOTTLE_ROLL_DEG) * (1.0 if manipulation is None or manipulation.side == "left" else -1.0)
    return Placement(elbow=(-0.30, 0.0, 0.28), axis=(-1.0, 0.0, 0.0),
                     thumb=(0.0, math.sin(roll), math.cos(roll)), pose={"pro_sup_r": -roll, **_THUMB_CLEAR},
                     grip=_FIST, side_body="2proxph_r", reach=BOTTLE_REACH_M, wrap=True, squeeze=0.3)


_PINCH: dict[str, dict[str, float]] = {
    "thumb": {"cmc_flexion_r": -0.156, "cmc_abduction_r": 0.764, "mp_flexion_r": -0.183, "ip_flexion_r": -0.773},
    "index": {"mcp2_flexion_r": 0.488, "pm2_flexion_r": 0.755, "md2_flexion_r": 1.243},
    "middle": {"mcp3_flexion_r": 0.321, "pm3_flexion_r": 1.23, "md3_flexion_r": 0.808},
}
"""A three-finger pinch of the cube at CUBE_SEAT: the thumb's pad on one face, the index and middle pads on the
opposite face, each within 8 mm of the faces' middle height, every other part of the hand at least 5 mm clear of
the cube (a kinematic search, `benchmarks/cube_pinch.py`)."""
_PINCH_REST = {"flexion_r": -0.744, "deviation_r": -0.172, "mcp2_abduction_r": -0.25, "mcp3_abduction_r": -0.181,
               "mcp4_abduction_r": 0.26, "mcp5_abduction_r": 0.06,
               **{f"{joint}{k}_flexion_r": angle for k, angle in ((4, 0.218), (5, 0.186))
                  for joint in ("mcp", "pm", "md")}}
"""The rest of the pinching hand: the wrist extended 43° and deviated 10°, the ring and little fingers
slightly curled, clear of the cube."""
CUBE_SEAT = ((0.0034, -0.0419, -0.074), (0.7173, -0.4261, 0.1793, 0.5213))
"""The cube's centre (m) and orientation (w, x, y, z) in the palm's body frame in the pinch: its centre on the
forearm's rotation axis, so that rolling the forearm turns it in place (the same search as _PINCH)."""
_FIST: dict[str, dict[str, float]] = {
    **{finger: {f"mcp{k}_flexion_r": 1.4, f"pm{k}_flexion_r": 1.5, f"md{k}_flexion_r": 0.9}
       for finger, k in (("index", 2), ("middle", 3), ("ring", 4), ("little", 5))},
    "thumb": {"cmc_abduction_r": 0.62, "cmc_flexion_r": -0.6, "mp_flexion_r": -0.79, "ip_flexion_r": -0.87},
}
"""A power grip around a bottle: the fingers curl towards a fist, the thumb swings across and reaches round the
bottle's other side (its angles from a kinematic search: the thumb tip on the far side of the bottle's body)."""
_THUMB_CLEAR = {"cmc_abduction_r": -0.5, "cmc_flexion_r": 0.7}
"""The thumb's starting angles around a bottle: lifted clear of the palm, so that the bottle rests against the palm
before the thumb closes round it."""


def _rotation_onto(frm: np.ndarray, to: np.ndarray) -> np.ndarray:
    """[3, 3] rotation taking unit vector frm onto unit vector to (the shortest arc)."""
    cross, dot = np.cross(frm, to), float(np.dot(frm, to))
    if np.linalg.norm(cross) < 1e-9:
        if dot > 0:
            return np.eye(3)
        perpendicular = np.cross(frm, [1.0, 0.0, 0.0] if abs(frm[0]) < 0.9 else [0.0, 1.0, 0.0])
        perpendicular /= np.linalg.norm(perpendicular)
        return 2 * np.outer(perpendicular, perpendicular) - np.eye(3)
    skew = np.array([[0, -cross[2], cross[1]], [cross[2], 0, -cross[0]], [-cross[1], cross[0], 0]])
    return np.eye(3) + skew + skew @ skew / (1 + dot)


def place_hand(spec: mujoco.MjSpec, model: mujoco.MjModel, root: str, thumb_body: str,
               where: Placement) -> None:
    """Move the body's static root so that its forearm lies as `where` says.

    `model` is the compiled body before the move (its root frame must be unrotated); the forearm rotation's
    axis is taken from its joint 'pro_sup_r', the thumb side from `thumb_body` at zero joint angles."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    joint = model.joint("pro_sup_r").id
    anchor, axis = data.xanchor[joint].copy(), data.xaxis[joint].copy()
    root_pos = data.xpos[model.body(root).id].copy()
    align = _rotation_onto(axis / np.linalg.norm(axis), np.asarray(where.axis, float))
    thumb = align @ (data.xpos[model.body(thumb_body).id] - anchor)
    thumb -= np.dot(thumb, where.axis) * np.asarray(where.axis)
    wanted = np.asarray(where.thumb, float) - np.dot(where.thumb, where.axis) * np.asarray(where.axis)
    rotation = _rotation_onto(thumb / np.linalg.norm(thumb), wanted / np.linalg.norm(wanted)) @ align
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, rotation.ravel())
    body = spec.body(root)
    body.quat = list(quat)
    body.pos = list(np.asarray(where.elbow) - rotation @ (anchor - root_pos))


def hide_scaffold(spec: mujoco.MjSpec, root: str, keep: str) -> None:
    """Make every geom under body `root` but outside the subtree of body `keep` (the forearm) invisible and
    contact-free: the static torso and upper arm the hand model hangs from are not part of a manipulation scene."""
    kept = {b.name for b in _subtree(spec.body(keep))}
    hidden = {b.name for b in _subtree(spec.body(root))} - kept
    for geom in spec.geoms:
        if geom.parent.name in hidden:
            geom.contype = geom.conaffinity = 0
            geom.rgba = [0, 0, 0, 0]
            geom.group = 5


def _subtree(body: mujoco.MjsBody) -> list[mujoco.MjsBody]:
    out, stack = [], [body]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(current.bodies)
    return out


def add_table(spec: mujoco.MjSpec, top: tuple[float, float, float], half: tuple[float, float]) -> None:
    """A table body (not world geoms, so that touching it is not a fall) whose top centre is `top`."""
    table = spec.worldbody.add_body(name="rl_table", pos=[top[0], top[1], top[2] / 2])
    table.add_geom(name="rl_table_top", type=mujoco.mjtGeom.mjGEOM_BOX, size=[half[0], half[1], top[2] / 2],
                   rgba=[0.55, 0.42, 0.3, 1], friction=[SUPPORT_FRICTION, 0.005, 0.0001], priority=1, **_SOLID)


def add_post(spec: mujoco.MjSpec, top: tuple[float, float, float], radius: float) -> None:
    """A narrow post (a table for the cube) whose top centre is `top`: fingers reach around the cube above it."""
    post = spec.worldbody.add_body(name="rl_table", pos=[top[0], top[1], top[2] / 2])
    post.add_geom(name="rl_table_top", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[radius, top[2] / 2, 0],
                  rgba=[0.55, 0.42, 0.3, 1], friction=[SUPPORT_FRICTION, 0.005, 0.0001], priority=1, **_SOLID)


def add_cube(spec: mujoco.MjSpec, centre: np.ndarray) -> mujoco.MjsBody:
    """A free cube with coloured faces (thin coloured plates, no collision) at `centre`."""
    cube = spec.worldbody.add_body(name="rl_object", pos=list(centre))
    cube.add_freejoint(name="rl_object_free")
    h = CUBE_HALF_M
    cube.add_geom(name="rl_object_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[h, h, h], mass=CUBE_MASS_KG,
                  rgba=[0.92, 0.9, 0.85, 1], condim=4, friction=[FRICTION, 0.01, 0.001], **_SOLID)
    for k, colour in enumerate(FACE_COLOURS):
        axis, sign = k // 2, 1.0 - 2.0 * (k % 2)
        pos, size = [0.0, 0.0, 0.0], [0.8 * h, 0.8 * h, 0.8 * h]
        pos[axis], size[axis] = sign * h * 1.001, 0.0005
        cube.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos, size=size, rgba=[*colour, 1], contype=0,
                      conaffinity=0, mass=0)
    cube.add_site(name="rl_object_centre", size=[0.005] * 3, group=5)
    cube.add_site(name="rl_object_mouth", size=[0.005] * 3, group=5)
    return cube


def add_bottle(spec: mujoco.MjSpec, base: np.ndarray) -> mujoco.MjsBody:
    """A free bottle (a cylinder with a neck) standing upright with its bottom centre at `base`."""
    bottle = spec.worldbody.add_body(name="rl_object", pos=list(base + np.array([0, 0, BOTTLE_HALF_M])))
    bottle.add_freejoint(name="rl_object_free")
    bottle.add_geom(name="rl_object_geom", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[BOTTLE_RADIUS_M,
                    BOTTLE_HALF_M, 0], mass=BOTTLE_MASS_KG * 0.9, rgba=[0.3, 0.65, 0.4, 0.95], condim=4,
                    friction=[FRICTION, 0.01, 0.001], **_SOLID)
    neck_z = BOTTLE_HALF_M + NECK_HALF_M
    bottle.add_geom(name="rl_object_neck", type=mujoco.mjtGeom.mjGEOM_CYLINDER, pos=[0, 0, neck_z],
                    size=[NECK_RADIUS_M, NECK_HALF_M, 0], mass=BOTTLE_MASS_KG * 0.1, rgba=[0.3, 0.65, 0.4, 0.95],
                    condim=4, **_SOLID)
    bottle.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, pos=[0, 0, neck_z + NECK_HALF_M],
                    size=[NECK_RADIUS_M * 1.1, 0.002, 0], rgba=[0.9, 0.2, 0.2, 1], contype=0, conaffinity=0, mass=0)
    bottle.add_site(name="rl_object_centre", size=[0.005] * 3, group=5)
    bottle.add_site(name="rl_object_mouth", pos=[0, 0, neck_z + NECK_HALF_M], size=[0.005] * 3, group=5)
    return bottle


def add_ghost(spec: mujoco.MjSpec, kind: str, pos: np.ndarray, quat: np.ndarray, *,
              mouth: np.ndarray | None = None) -> None:
    """The goal pose as a translucent mocap body that collides with nothing (it only marks the goal), with the
    goal's reference point (the cube's centre, the bottle's mouth target) as a site."""
    ghost = spec.worldbody.add_body(name="rl_goal", pos=list(pos), quat=list(quat), mocap=True)
    colour = [0.3, 0.8, 1.0, 0.25]
    if kind == "cube":
        ghost.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[CUBE_HALF_M] * 3, rgba=colour, contype=0,
                       conaffinity=0)
        ghost.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=[CUBE_HALF_M * 1.002, 0, 0],
                       size=[0.0005, 0.8 * CUBE_HALF_M, 0.8 * CUBE_HALF_M], rgba=[*FACE_COLOURS[0], 0.4], contype=0,
                       conaffinity=0)
    else:
        ghost.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[BOTTLE_RADIUS_M, BOTTLE_HALF_M, 0], rgba=colour,
                       contype=0, conaffinity=0)
    ghost.add_site(name="rl_goal_frame", size=[0.005] * 3, group=5)
    target = spec.worldbody.add_body(name="rl_goal_point", pos=list(mouth if mouth is not None else pos),
                                     mocap=True)
    target.add_site(name="rl_goal_point", size=[0.008] * 3, rgba=[1, 0.2, 0.2, 0.6], group=2)
    if kind == "bottle" and mouth is not None:
        cup = spec.worldbody.add_body(name="rl_cup", pos=list(mouth - [0, 0, CUP_OFFSET_M + 0.04]))
        cup.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.035, 0.04, 0], rgba=[0.9, 0.9, 0.95, 0.5],
                     contype=0, conaffinity=0)
