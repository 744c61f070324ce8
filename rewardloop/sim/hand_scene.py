"""Compiling a hand scene: the forearm placed over a table, the object and its goal, and the sensors that the
hand and object features read (see `rewardloop.sim.hand` for the setting)."""

from __future__ import annotations

import mujoco
import numpy as np

from rewardloop.errors import UserError
from rewardloop.sim.bodies import Body, _quiet_stderr, get_body
from rewardloop.sim.hand import (
    BOTTLE_HALF_M,
    BOTTLE_RAISE_M,
    BOTTLE_SEAT,
    CUBE_HALF_M,
    CUBE_SEAT,
    FINGERS,
    NECK_HALF_M,
    TABLE_GAP_M,
    Manipulation,
    Placement,
    add_bottle,
    add_cube,
    add_ghost,
    add_post,
    add_table,
    hide_scaffold,
    place_hand,
    placement,
)
from rewardloop.sim.scene import (
    HAND_SCENES,
    OBS,
    CompiledScene,
    Scene,
    _add_semantic_sites,
    _add_sensor,
    _add_sensors,
    _apply_injury,
    _apply_physics,
    _layout,
    _set_visual,
    _state_of,
    _strip_world,
)
from rewardloop.sim.terrain import add_terrain

PALM_BODIES = ("secondmc_r", "thirdmc_r", "fourthmc_r", "fifthmc_r")
"""MJCF bodies of the palm whose contact with the object is palm contact."""


def compile_hand_scene(scene: Scene) -> CompiledScene:
    """Build and compile a hand scene: the placed forearm, the object on its table with its goal ghost, sensors."""
    body = get_body(scene.body)
    where = placement(scene.manipulation)
    with _quiet_stderr():
        spec = body.load_spec()
        _strip_world(spec)
        add_terrain(spec, scene.terrain)
        for geom in spec.worldbody.geoms:  # the hand model's default class leaves new geoms without contacts
            geom.contype = geom.conaffinity = 1
        hide_scaffold(spec, body.root, str(body.forearm))
        place_hand(spec, spec.compile(), body.root, where.side_body, where)
        placed = spec.compile()
        qpos = _posed(placed, where)
        if scene.manipulation is not None:
            grip = _cube_seat(placed, body, qpos) if where.pinch else _grip(placed, body, qpos, where)
            _add_object(spec, scene.manipulation, grip, _PourRoll(placed, body, qpos))
        _add_semantic_sites(spec, body, placed, qpos)
        _add_hand_sites(spec, body)
        _add_sensors(spec, body)
        _add_hand_sensors(spec, body, with_object=scene.manipulation is not None)
        _set_visual(spec)
        model = spec.compile()
    _apply_injury(model, body, scene.injury)
    _apply_physics(model, scene.physics)
    full = model.qpos0.copy()
    full[: placed.nq] = qpos
    if scene.manipulation is not None:
        full = close_fingers(model, full, where.grip, wrap=where.wrap)
    state, pelvis = _state_of(model, full)
    return CompiledScene(scene, model, state, _layout(model, body), float(pelvis[2]))


CLOSING_GAP_M = 0.001
"""A closed finger stops this far from the object (m): it rests against it without pressing."""


def close_fingers(model: mujoco.MjModel, qpos: np.ndarray, grip: dict[str, dict[str, float]], *,
                  wrap: bool = False) -> np.ndarray:
    """[nq] the pose with each finger of `grip` curled from its starting angles towards the grip's until it rests
    against the object: the hand starts holding the object, as MyoSuite's hold tasks do, without pressing.
    `wrap`: joint by joint from the knuckle out, each until the finger rests against the object (a power grip);
    else all of a finger's joints together (a pinch)."""
    data = mujoco.MjData(model)
    qpos = qpos.copy()
    for joints in grip.values():
        for moved in ([{joint: angle} for joint, angle in joints.items()] if wrap else [joints]):
            qpos = _close(model, data, qpos, moved)
    return qpos


def _close(model: mujoco.MjModel, data: mujoco.MjData, qpos: np.ndarray, joints: dict[str, float]) -> np.ndarray:
    """[nq] the pose with `joints` moved together from their angles in qpos towards theirs until a body they move
    comes within CLOSING_GAP_M of the object (all the way when none does)."""
    adr = [model.jnt_qposadr[model.joint(j).id] for j in joints]
    moving = _moved_bodies(model, joints)
    start, end = qpos[adr].copy(), np.array(list(joints.values()))
    qpos = qpos.copy()
    qpos[adr] = end
    if not _touches(model, data, qpos, moving):
        return qpos
    low, high = 0.0, 1.0
    for _ in range(12):  # bisect the fraction of the way at which the finger meets the object
        middle = (low + high) / 2
        qpos[adr] = start + middle * (end - start)
        low, high = (low, middle) if _touches(model, data, qpos, moving) else (middle, high)
    qpos[adr] = start + low * (end - start)
    return qpos


def _moved_bodies(model: mujoco.MjModel, joints: dict[str, float]) -> set[int]:
    """Ids of the bodies that `joints` move: their own and every body below them."""
    moved = {int(model.jnt_bodyid[model.joint(j).id]) for j in joints}
    for body in range(model.nbody):  # parents come before their children in MuJoCo's body order
        if int(model.body_parentid[body]) in moved:
            moved.add(body)
    return moved


def _touches(model: mujoco.MjModel, data: mujoco.MjData, qpos: np.ndarray, moving: set[int]) -> bool:
    """Whether a body in `moving` comes within CLOSING_GAP_M of the object in pose qpos."""
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    target = model.body("rl_object").id
    for contact in data.contact[: data.ncon]:
        bodies = {int(model.geom_bodyid[g]) for g in contact.geom}
        if target in bodies and bodies & moving and contact.dist < CLOSING_GAP_M:
            return True
    return False


def _posed(model: mujoco.MjModel, where: Placement) -> np.ndarray:
    """[nq] the hand's starting pose."""
    qpos = model.qpos0.copy()
    for joint, angle in where.pose.items():
        qpos[model.jnt_qposadr[model.joint(joint).id]] = angle
    return qpos


def _grip(model: mujoco.MjModel, body: Body, qpos: np.ndarray, where: Placement) -> tuple[np.ndarray, np.ndarray]:
    """([3] palm centre, [3] unit palm normal) in the start pose."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    palm = _point(model, data, body.palm.body, body.palm.pos)  # type: ignore[union-attr]
    return palm - np.asarray(where.axis) * where.reach, np.asarray(where.palm_normal, float)


def _cube_seat(model: mujoco.MjModel, body: Body, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([3] centre, [4] orientation (w, x, y, z)) of the pinched cube in the start pose: CUBE_SEAT in the palm's
    frame."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    palm = model.body(body.palm.body).id  # type: ignore[union-attr]
    frame = data.xmat[palm].reshape(3, 3)
    position, orientation = CUBE_SEAT
    quat = np.empty(4)
    mujoco.mju_mulQuat(quat, data.xquat[palm], np.asarray(orientation))
    return data.xpos[palm] + frame @ np.asarray(position), quat


def _point(model: mujoco.MjModel, data: mujoco.MjData, body: str, pos: tuple[float, float, float]) -> np.ndarray:
    i = model.body(body).id
    return data.xpos[i] + data.xmat[i].reshape(3, 3) @ np.asarray(pos)


def _yaw_quat(angle: float) -> np.ndarray:
    return np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])


def _add_object(spec: mujoco.MjSpec, manipulation: Manipulation, grip: tuple[np.ndarray, np.ndarray],
                roll: _PourRoll) -> None:
    """The object in the hand, on its table or post, and its goal. `grip`: the pinched cube's ([3] centre,
    [4] orientation), or the palm's ([3] centre, [3] normal) a bottle rests against."""
    if manipulation.object == "cube":
        centre, quat = grip
        add_cube(spec, centre).quat = list(quat)
        add_post(spec, (centre[0], centre[1], centre[2] - CUBE_HALF_M), 0.019)
        goal = np.empty(4)
        mujoco.mju_mulQuat(goal, _yaw_quat(np.radians(manipulation.turn_deg)), quat)
        add_ghost(spec, "cube", centre, goal)
        return
    palm, normal = grip
    base = palm + np.array([0.0, 0.0, BOTTLE_RAISE_M - BOTTLE_HALF_M])
    body = add_bottle(spec, base)
    centre = base + _resting_offset(spec, roll.qpos, base, normal) * normal
    body.pos = list(centre + np.array([0.0, 0.0, BOTTLE_HALF_M]))
    add_table(spec, (centre[0], centre[1], centre[2] - TABLE_GAP_M), (0.05, 0.05))
    middle, rotation = roll.poured(manipulation)
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, rotation.ravel())
    add_ghost(spec, "bottle", middle, quat, mouth=middle + rotation[:, 2] * (BOTTLE_HALF_M + 2 * NECK_HALF_M))


class _PourRoll:
    """The held bottle's pose as the forearm alone rolls from the hand's start pose (BOTTLE_SEAT in the palm's
    frame)."""

    def __init__(self, model: mujoco.MjModel, body: Body, qpos: np.ndarray):
        self.model, self.qpos, self.data = model, qpos, mujoco.MjData(model)
        joint = model.joint(body.joints["forearm_rotation"].mjcf)
        self.adr, self.range = int(joint.qposadr[0]), joint.range.copy()
        self.palm = model.body(body.palm.body).id  # type: ignore[union-attr]
        self.seat_pos = np.asarray(BOTTLE_SEAT[0])
        self.seat = np.empty(9)
        mujoco.mju_quat2Mat(self.seat, np.asarray(BOTTLE_SEAT[1]) / np.linalg.norm(BOTTLE_SEAT[1]))

    def pose(self, roll: float) -> tuple[np.ndarray, np.ndarray]:
        """([3] the bottle's middle, [3, 3] its orientation) with the forearm rolled `roll` rad from its start."""
        self.data.qpos[:] = self.qpos
        self.data.qpos[self.adr] += roll
        mujoco.mj_kinematics(self.model, self.data)
        frame = self.data.xmat[self.palm].reshape(3, 3)
        return self.data.xpos[self.palm] + frame @ self.seat_pos, frame @ self.seat.reshape(3, 3)

    def poured(self, manipulation: Manipulation) -> tuple[np.ndarray, np.ndarray]:
        """The held bottle's ([3] middle, [3, 3] orientation) rolled towards the cup until it tilts
        manipulation.tilt_deg from upright; UserError when the forearm's range ends first."""
        sign = 1.0 if manipulation.side == "left" else -1.0
        start = self.qpos[self.adr]
        low, high = 0.0, float(self.range[1] - start if sign > 0 else start - self.range[0])
        wanted = np.cos(np.radians(manipulation.tilt_deg))  # the bottle's axis' z at the goal's tilt
        furthest = self.pose(sign * high)[1][2, 2]
        if furthest > wanted:
            raise UserError(f"the bottle's goal tilt {manipulation.tilt_deg:g}° is beyond the forearm's reach: the "
                            f"hand pours it at most {np.degrees(np.arccos(np.clip(furthest, -1.0, 1.0))):.0f}° to "
                            f"the {manipulation.side}")
        for _ in range(40):  # bisection on the roll
            mid = (low + high) / 2
            low, high = (mid, high) if self.pose(sign * mid)[1][2, 2] > wanted else (low, mid)
        return self.pose(sign * high)


def _resting_offset(spec: mujoco.MjSpec, qpos: np.ndarray, start: np.ndarray, normal: np.ndarray) -> float:
    """How far (m) along the palm normal from `start` the object (the spec's last free body) first clears the hand
    by CLOSING_GAP_M: it rests against the palm."""
    model = spec.compile()
    data = mujoco.MjData(model)
    free = model.jnt_qposadr[model.joint("rl_object_free").id]
    low, high = 0.0, 0.12
    for _ in range(14):
        middle = (low + high) / 2
        data.qpos[: len(qpos)] = qpos
        data.qpos[free: free + 3] = model.qpos0[free: free + 3] + middle * normal
        mujoco.mj_forward(model, data)
        hit = any(contact.dist < CLOSING_GAP_M for contact in data.contact)
        low, high = (middle, high) if hit else (low, middle)
    return high


def _add_hand_sites(spec: mujoco.MjSpec, body: Body) -> None:
    for finger, ref in body.fingertips.items():
        spec.body(ref.body).add_site(name=f"rl_{finger}_tip", pos=list(ref.pos), size=[0.004] * 3, group=5)
    palm = body.palm
    assert palm is not None
    spec.body(palm.body).add_site(name="rl_palm", pos=list(palm.pos), size=[0.006] * 3, group=5)


def _add_hand_sensors(spec: mujoco.MjSpec, body: Body, *, with_object: bool) -> None:
    """Fingertip, palm and wrist positions; with an object, its pose, velocity, contacts and goal."""
    S = mujoco.mjtSensor
    for finger in FINGERS:
        _add_sensor(spec, f"rl_{finger}_tip_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, f"rl_{finger}_tip")
    _add_sensor(spec, "rl_palm_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, "rl_palm")
    _add_sensor(spec, "rl_wrist_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_XBODY, str(body.wrist))
    if not with_object:
        return
    for name, kind in (("pos", S.mjSENS_FRAMEPOS), ("linvel", S.mjSENS_FRAMELINVEL),
                       ("angvel", S.mjSENS_FRAMEANGVEL), ("zaxis", S.mjSENS_FRAMEZAXIS)):
        _add_sensor(spec, f"rl_object_{name}", kind, OBS.mjOBJ_SITE, "rl_object_centre")
    _add_sensor(spec, "rl_object_quat", S.mjSENS_FRAMEQUAT, OBS.mjOBJ_XBODY, "rl_object")
    _add_sensor(spec, "rl_mouth_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, "rl_object_mouth")
    _add_sensor(spec, "rl_goal_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, "rl_goal_point")
    _add_sensor(spec, "rl_goal_quat", S.mjSENS_FRAMEQUAT, OBS.mjOBJ_XBODY, "rl_goal")
    found_force = [1 | 2, 3, 1]
    touching = {f"{finger}_tip": body.fingertips[finger].body for finger in FINGERS}
    touching |= {f"palm{k}": name for k, name in enumerate(PALM_BODIES)}
    for name, part in touching.items():
        _add_sensor(spec, f"rl_{name}_contact", S.mjSENS_CONTACT, OBS.mjOBJ_BODY, part, reftype=OBS.mjOBJ_BODY,
                    refname="rl_object", intprm=found_force)
    _add_sensor(spec, "rl_hand_contact", S.mjSENS_CONTACT, OBS.mjOBJ_XBODY, str(body.wrist),
                reftype=OBS.mjOBJ_BODY, refname="rl_object", intprm=found_force)
    for name, other in (("table", "rl_table"), ("floor", "world")):
        _add_sensor(spec, f"rl_object_{name}_contact", S.mjSENS_CONTACT, OBS.mjOBJ_BODY, "rl_object",
                    reftype=OBS.mjOBJ_BODY, refname=other, intprm=found_force)


HAND_SCENES.append(compile_hand_scene)
