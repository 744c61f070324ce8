"""Scenes: a body on a terrain, optionally injured, compiled with the sensors that features read.

A compiled scene carries a MuJoCo model whose sensor suite measures everything in the feature vocabulary,
so `mujoco.rollout` returns features in C, for a whole batch, with no Python per step.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import mujoco
import numpy as np

from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.bodies import SIDES, Body, _quiet_stderr, get_body
from rewardloop.sim.hand import Manipulation
from rewardloop.sim.terrain import Terrain, add_terrain

STATE_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS
"""The state layout used everywhere: time, qpos, qvel, act, plugin state, mocap, eq_active."""
FRAMES = ("pelvis", "torso", "head")
"""Parts whose position and axes are sensed; their frames have x forward and z up in the standing pose."""
OBS = mujoco.mjtObj
WALKING_START_SPEED = 1.0
"""The walking start (m/s): the whole body moving forward at this speed in WALKING_STRIDE, at the left heel strike.
Locomotion tasks start from it, so that every optimizer is compared from the same state."""
WALKING_STRIDE: dict[str, float] = {
    "left_hip_flexion": 0.45, "left_knee_flexion": 0.1, "left_ankle_dorsiflexion": 0.0,
    "right_hip_flexion": -0.1, "right_knee_flexion": 0.15, "right_ankle_dorsiflexion": 0.1}
"""Semantic joint -> angle (rad) of the walking start's pose: people's at the left heel strike (left hip about 26°
flexed, right hip 6° extended, knees nearly straight; Schwartz et al. 2008 at 0 % and 50 % of the cycle, hip
reduced by the pelvis's anterior tilt), other joints as standing."""
BODY_STRIDES: dict[str, dict[str, float]] = {
    body: {"left_hip_flexion": 0.436, "left_knee_flexion": 0.0, "left_ankle_dorsiflexion": 0.0,
           "right_hip_flexion": -0.175, "right_knee_flexion": 0.262, "right_ankle_dorsiflexion": 0.0}
    for body in ("myolegs", "myofullbody")}
"""Bodies whose walking start has its own stride pose instead of WALKING_STRIDE: the MyoSuite legs take
MyoLegReflex's mid-stride pose (left hip flexed 25°, right hip extended 10°, right knee bent 15°, ankles neutral;
its 15° pelvis pitch and 1.5 m/s are left out, so that every body starts at WALKING_START_SPEED, upright)."""


def walking_start_speed(body: str) -> float:
    """The speed (m/s) a body's locomotion starts at: the walking start, WALKING_START_SPEED, for people's bodies;
    rest for a robot, which starts from its standing keyframe as a robot does (its gait shifts its weight before
    the first step; a 1-m/s start in people's stride would straighten a crouched robot's knees and is a Froude
    number of about 0.5 for Berkeley Humanoid's 0.41-m legs)."""
    return 0.0 if get_body(body).actuator_kind == "servo" else WALKING_START_SPEED


@dataclass(frozen=True)
class Physics:
    """Changes to a body's physics for robustness tests (MotionVL's domain randomization). The defaults change
    nothing; `random_physics` draws them from RANDOMIZATION."""

    friction: float | None = None
    """Sliding friction coefficient of every contact (μ); None keeps the model's own."""
    gain: float = 1.0
    """Strength of every actuator, as a factor."""
    joint_friction: float = 0.0
    """Dry friction on every joint below the root (N·m for hinges)."""
    latency_steps: int = 0
    """Physics steps between a structured controller's command and the actuators."""

    def __post_init__(self) -> None:
        checks = {"friction must be within (0, 5]": self.friction is None or 0 < self.friction <= 5,
                  "gain must be within (0, 5]": 0 < self.gain <= 5,
                  "joint_friction must be within [0, 50]": 0 <= self.joint_friction <= 50,
                  "latency_steps must be within [0, 100]": 0 <= self.latency_steps <= 100}
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad physics: " + "; ".join(problems))


RANDOMIZATION: dict[str, tuple[float, float]] = {
    "friction": (0.2, 1.3), "gain": (0.8, 1.2), "joint_friction": (0.1, 3.0), "latency_steps": (1, 10)}
"""Physics field -> (low, high) range drawn uniformly by `random_physics` (MotionVL's randomization ranges)."""


def random_physics(rng: np.random.Generator) -> Physics:
    """One draw of Physics from the RANDOMIZATION ranges (latency in whole steps)."""
    draw = {name: float(rng.uniform(low, high)) for name, (low, high) in RANDOMIZATION.items()}
    return Physics(friction=draw["friction"], gain=draw["gain"], joint_friction=draw["joint_friction"],
                   latency_steps=round(draw["latency_steps"]))


@dataclass(frozen=True)
class Scene:
    """A body on a terrain, optionally injured."""

    body: str = "humanoid"
    """Registry name of the body."""
    terrain: Terrain = field(default_factory=Terrain)
    """The ground."""
    injury: tuple[tuple[str, float], ...] = ()
    """(group, strength factor) pairs; the group's actuators keep `factor` of their strength."""
    start_speed: float = 0.0
    """Forward speed of the whole body in its standing pose at the start (m/s): 0 starts standing still,
    WALKING_START_SPEED is the walking start every locomotion comparison uses. A hand scene starts at rest."""
    physics: Physics = field(default_factory=Physics)
    """Changes to the physics for robustness tests (none by default)."""
    manipulation: Manipulation | None = None
    """The object a hand holds and its goal (bodies with fingertips only); None: no object."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start_speed) and 0.0 <= self.start_speed <= 3.0):
            raise UserError(f"start_speed must be within [0, 3] m/s, got {self.start_speed}")
        body = get_body(self.body)
        if self.manipulation is not None and not body.fingertips:
            hands = ", ".join(name for name, b in _bodies().items() if b.fingertips)
            raise UserError(f"{self.body} has no hand to hold {self.manipulation.describe()}; object tasks need a "
                            f"body with a hand: {hands}")
        for group, factor in self.injury:
            if group not in body.muscle_groups:
                raise unknown_name(f"injury group for {self.body}", group, body.muscle_groups)
            if not 0.0 <= factor <= 1.0:
                raise UserError(f"injury factor for {group!r} must be within [0, 1], got {factor}")

    def describe(self) -> str:
        """Short human description, e.g. 'myolegs on rough ground ±4 cm (seed 0)'."""
        text = f"{self.body} on {self.terrain.describe()}"
        if self.injury:
            text += ", injured: " + ", ".join(f"{g} at {f:.0%}" for g, f in self.injury)
        if self.start_speed:
            text += f", starting at {self.start_speed:g} m/s"
        if self.manipulation is not None:
            text = f"{self.body} holding {self.manipulation.describe()}"
        if self.physics != Physics():
            default = dataclasses.asdict(Physics())
            text += ", physics " + ", ".join(f"{k}={v:.3g}" for k, v in dataclasses.asdict(self.physics).items()
                                              if v != default[k])
        return text


@dataclass(frozen=True)
class Layout:
    """Where each measured quantity lives in sensordata, qpos and qvel of a compiled scene."""

    sensors: dict[str, tuple[int, int]]
    """Sensor name -> (address, dimension) in sensordata."""
    joint_qpos: dict[str, int]
    """Semantic joint ('left_knee_flexion') -> qpos address."""
    joint_qvel: dict[str, int]
    """Semantic joint -> qvel (dof) address."""
    joint_sign: dict[str, float]
    """Semantic joint -> sign that turns the MJCF angle into the semantic one."""
    muscles: np.ndarray
    """[n_muscles] indices of muscle actuators."""
    act_of_muscle: np.ndarray
    """[n_muscles] index into the act vector for each muscle."""


@dataclass(frozen=True)
class CompiledScene:
    """A scene's compiled model, its standing initial state and the layout of its measurements."""

    scene: Scene
    model: mujoco.MjModel
    """The physics model. Treat as read-only; copy it before editing."""
    initial_state: np.ndarray
    """[nstate] full-physics state of the standing pose, facing +x at the origin."""
    layout: Layout
    standing_height: float
    """Pelvis height above the ground in the initial state (m)."""

    @property
    def body(self) -> Body:
        return get_body(self.scene.body)

    @property
    def nstate(self) -> int:
        return mujoco.mj_stateSize(self.model, STATE_SPEC)

    @property
    def dt(self) -> float:
        """Physics timestep (s)."""
        return float(self.model.opt.timestep)

    def ctrl_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """([nu], [nu]) lower and upper control limits."""
        low = self.model.actuator_ctrlrange[:, 0].copy()
        high = self.model.actuator_ctrlrange[:, 1].copy()
        unlimited = self.model.actuator_ctrllimited == 0
        low[unlimited], high[unlimited] = -1.0, 1.0
        return low, high


HAND_SCENES: list[Callable[[Scene], CompiledScene]] = []
"""The compiler of scenes for a body with fingertips (a hand holding an object, not legs on a ground), registered by
`rewardloop.sim.hand_scene` when the package is imported; it builds on this module's pieces."""


@functools.lru_cache(maxsize=32)
def compile_scene(scene: Scene) -> CompiledScene:
    """Build, compile and lay out a scene (cached: the last 32 scenes compile once per process; a bounded cache,
    since a search on rough grounds drawn afresh every generation compiles thousands, ~15 MB each)."""
    body = get_body(scene.body)
    if body.fingertips:
        return HAND_SCENES[0](scene)
    with _quiet_stderr():
        spec = body.load_spec()
        _strip_world(spec)
        add_terrain(spec, scene.terrain)
        bare = spec.compile()
        qpos = _standing_qpos(body, bare)
        _add_semantic_sites(spec, body, bare, qpos)
        _add_sensors(spec, body)
        _set_visual(spec)
        model = spec.compile()
    _apply_injury(model, body, scene.injury)
    _apply_physics(model, scene.physics)
    if scene.start_speed:
        qpos = _striding(model, body, qpos)
    qpos = _rest_on_ground(body, model, qpos, scene.terrain)
    state, pelvis = _state_of(model, qpos)
    state[1 + model.nq] = scene.start_speed  # the root's free joint: its linear velocity comes first in qvel
    standing = float(pelvis[2] - scene.terrain.height(pelvis[0], pelvis[1]))
    return CompiledScene(scene, model, state, _layout(model, body), standing)


def _bodies() -> dict[str, Body]:
    from rewardloop.sim.bodies import BODIES

    return BODIES


def _strip_world(spec: mujoco.MjSpec) -> None:
    """Remove the body file's own floor and decorations so the terrain is the only ground."""
    for geom in list(spec.worldbody.geoms):
        spec.delete(geom)


def _standing_qpos(body: Body, model: mujoco.MjModel) -> np.ndarray:
    """[nq] standing pose turned by body.yaw to face +x."""
    qpos = model.key(body.keyframe).qpos.copy() if body.keyframe else model.qpos0.copy()
    adr = model.jnt_qposadr[model.body(body.root).jntadr[0]]
    turn = np.array([np.cos(body.yaw / 2), 0.0, 0.0, np.sin(body.yaw / 2)])
    quat = np.empty(4)
    mujoco.mju_mulQuat(quat, turn, qpos[adr + 3 : adr + 7])
    qpos[adr + 3 : adr + 7] = quat
    return qpos


def _striding(model: mujoco.MjModel, body: Body, qpos: np.ndarray) -> np.ndarray:
    """The standing pose [nq] with the legs in the body's stride (BODY_STRIDES, else WALKING_STRIDE)."""
    qpos = qpos.copy()
    for semantic, angle in BODY_STRIDES.get(body.name, WALKING_STRIDE).items():
        ref = body.joints[semantic]
        qpos[model.jnt_qposadr[model.joint(ref.mjcf).id]] = ref.sign * angle
    return qpos


def _rest_on_ground(body: Body, model: mujoco.MjModel, qpos: np.ndarray, terrain: Terrain) -> np.ndarray:
    """Shift the root vertically so the lowest heel or toe sits body.sole_offset above the ground."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    points = np.array([data.site(f"rl_{side}_{p}").xpos for side in SIDES for p in ("heel", "toe")])
    clearance = points[:, 2] - terrain.height(points[:, 0], points[:, 1]) - body.sole_offset
    adr = model.jnt_qposadr[model.body(body.root).jntadr[0]]
    qpos = qpos.copy()
    qpos[adr + 2] -= clearance.min() - 0.002
    return qpos


def _add_semantic_sites(spec: mujoco.MjSpec, body: Body, model: mujoco.MjModel, qpos: np.ndarray) -> None:
    """Add frame sites (x forward, z up when standing) and heel/toe sites under their bodies."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    for part in FRAMES:
        mjcf = getattr(body, part)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, data.body(mjcf).xmat.reshape(3, 3).T.copy().ravel())
        spec.body(mjcf).add_site(name=f"rl_{part}", quat=list(quat), size=[0.02, 0.02, 0.02], group=5)
    for side in SIDES if body.feet else ():  # a hand has no feet
        for point, ref in (("heel", body.heels[side]), ("toe", body.toes[side])):
            spec.body(ref.body).add_site(name=f"rl_{side}_{point}", pos=list(ref.pos), size=[0.015] * 3, group=5)


def _add_sensor(spec: mujoco.MjSpec, name: str, kind: mujoco.mjtSensor, obj: mujoco.mjtObj, objname: str,
                **kwargs: object) -> None:
    spec.add_sensor(name=name, type=kind, objtype=obj, objname=objname, **kwargs)


def _add_sensors(spec: mujoco.MjSpec, body: Body) -> None:
    """The sensor suite features read. Contact sensors report [found, fx, fy, fz] (netforce, world)."""
    S = mujoco.mjtSensor
    for part in FRAMES:
        _add_sensor(spec, f"rl_{part}_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, f"rl_{part}")
        _add_sensor(spec, f"rl_{part}_xaxis", S.mjSENS_FRAMEXAXIS, OBS.mjOBJ_SITE, f"rl_{part}")
        _add_sensor(spec, f"rl_{part}_zaxis", S.mjSENS_FRAMEZAXIS, OBS.mjOBJ_SITE, f"rl_{part}")
    _add_sensor(spec, "rl_pelvis_linvel", S.mjSENS_FRAMELINVEL, OBS.mjOBJ_SITE, "rl_pelvis")
    _add_sensor(spec, "rl_pelvis_angvel", S.mjSENS_FRAMEANGVEL, OBS.mjOBJ_SITE, "rl_pelvis")
    _add_sensor(spec, "rl_com_pos", S.mjSENS_SUBTREECOM, OBS.mjOBJ_BODY, body.root)
    _add_sensor(spec, "rl_com_vel", S.mjSENS_SUBTREELINVEL, OBS.mjOBJ_BODY, body.root)
    found_force = [1 | 2, 3, 1]  # data = found | force, reduce = netforce, num = 1
    for side in SIDES if body.feet else ():  # a hand has no feet
        for point in ("heel", "toe"):
            _add_sensor(spec, f"rl_{side}_{point}_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_SITE, f"rl_{side}_{point}")
            _add_sensor(spec, f"rl_{side}_{point}_vel", S.mjSENS_FRAMELINVEL, OBS.mjOBJ_SITE,
                        f"rl_{side}_{point}")
        _add_sensor(spec, f"rl_{side}_foot_contact", S.mjSENS_CONTACT, OBS.mjOBJ_XBODY, body.feet[side],
                    reftype=OBS.mjOBJ_BODY, refname="world", intprm=found_force)
    _add_sensor(spec, "rl_all_contact", S.mjSENS_CONTACT, OBS.mjOBJ_XBODY, body.root,
                reftype=OBS.mjOBJ_BODY, refname="world", intprm=found_force)
    for actuator in spec.actuators:
        _add_sensor(spec, f"rl_force_{actuator.name}", S.mjSENS_ACTUATORFRC, OBS.mjOBJ_ACTUATOR, actuator.name)
    for side, hand in body.hands.items():  # last, so that the sensors before keep their addresses
        _add_sensor(spec, f"rl_{side}_hand_pos", S.mjSENS_FRAMEPOS, OBS.mjOBJ_XBODY, hand)


def _set_visual(spec: mujoco.MjSpec) -> None:
    """Cheap rendering defaults: no shadows, no MSAA, a headlight, room for 1280x720 offscreen frames."""
    spec.visual.quality.shadowsize = 0
    spec.visual.quality.offsamples = 0
    spec.visual.global_.offwidth = max(spec.visual.global_.offwidth, 1280)
    spec.visual.global_.offheight = max(spec.visual.global_.offheight, 720)
    spec.visual.headlight.ambient = [0.45, 0.45, 0.45]
    spec.visual.headlight.diffuse = [0.6, 0.6, 0.6]


def _apply_injury(model: mujoco.MjModel, body: Body, injury: tuple[tuple[str, float], ...]) -> None:
    """Scale the strength of the actuators in each injured group."""
    for group, factor in injury:
        _scale_strength(model, [model.actuator(name).id for name in body.muscle_groups[group]], factor)


def _apply_physics(model: mujoco.MjModel, physics: Physics) -> None:
    """Set every contact's friction, scale every actuator's strength, add dry friction to every joint below the
    root."""
    if physics.friction is not None:
        model.geom_friction[:, 0] = physics.friction  # contacts take the larger of two geoms' coefficients
    _scale_strength(model, range(model.nu), physics.gain)
    rooted = model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    model.dof_frictionloss[6 if rooted else 0 :] += physics.joint_friction


def _scale_strength(model: mujoco.MjModel, ids: Iterable[int], factor: float) -> None:
    """Scale the peak force of muscles (a muscle's gear would also scale its length, off its force-length curve),
    the gains and torque limits of joint-position servos (their gear would move the joint target) and the gear
    of motors."""
    for i in ids:
        if model.actuator_dyntype[i] == mujoco.mjtDyn.mjDYN_MUSCLE:
            peak = model.actuator_gainprm[i, 2]
            if peak < 0:  # force given as scale / acc0
                peak = model.actuator_gainprm[i, 3] / max(model.actuator_acc0[i], 1e-10)
            model.actuator_gainprm[i, 2] = model.actuator_biasprm[i, 2] = peak * factor
        elif is_servo(model, i):
            model.actuator_gainprm[i, 0] *= factor
            model.actuator_biasprm[i, 1:3] *= factor
            model.actuator_forcerange[i] *= factor
            model.jnt_actfrcrange[model.actuator_trnid[i, 0]] *= factor
        else:
            model.actuator_gear[i, 0] *= factor


def actuator_strength(model: mujoco.MjModel) -> np.ndarray:
    """[nu] the largest force each actuator produces, in its own units (N or N·m before the gear): a force limit
    where it has one (its own, or its joint's divided by the gear), a muscle's peak force, else gain × the largest
    control. Never below 1e-9, so that it divides."""
    strength = np.abs(model.actuator_gainprm[:, 0]) * np.abs(model.actuator_ctrlrange).max(axis=1)
    for i in range(model.nu):
        joint = model.actuator_trnid[i, 0]
        if model.actuator_dyntype[i] == mujoco.mjtDyn.mjDYN_MUSCLE:
            peak = model.actuator_gainprm[i, 2]
            strength[i] = peak if peak > 0 else model.actuator_gainprm[i, 3] / max(model.actuator_acc0[i], 1e-10)
        elif model.actuator_forcelimited[i]:
            strength[i] = np.abs(model.actuator_forcerange[i]).max()
        elif model.actuator_trntype[i] == mujoco.mjtTrn.mjTRN_JOINT and model.jnt_actfrclimited[joint]:
            strength[i] = np.abs(model.jnt_actfrcrange[joint]).max() / max(abs(model.actuator_gear[i, 0]), 1e-9)
    return np.maximum(strength, 1e-9)


def is_servo(model: mujoco.MjModel, actuator: int) -> bool:
    """Whether an actuator is a joint-position servo (force = kp·(ctrl − q) − kv·q̇, MuJoCo's `position`)."""
    return bool(model.actuator_biastype[actuator] == mujoco.mjtBias.mjBIAS_AFFINE
                and model.actuator_biasprm[actuator, 1] < 0
                and model.actuator_trntype[actuator] == mujoco.mjtTrn.mjTRN_JOINT)


def _state_of(model: mujoco.MjModel, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([nstate] full-physics state at rest in pose qpos, [3] pelvis position)."""
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    state = np.empty(mujoco.mj_stateSize(model, STATE_SPEC))
    mujoco.mj_getState(model, data, state, STATE_SPEC)
    return state, data.site("rl_pelvis").xpos.copy()


def _layout(model: mujoco.MjModel, body: Body) -> Layout:
    sensors = {}
    for i in range(model.nsensor):
        name = model.sensor(i).name
        if name.startswith("rl_"):
            sensors[name[3:]] = (int(model.sensor_adr[i]), int(model.sensor_dim[i]))
    qpos_adr, qvel_adr, signs = {}, {}, {}
    for semantic, ref in body.joints.items():
        joint = model.joint(ref.mjcf)
        qpos_adr[semantic], qvel_adr[semantic] = int(joint.qposadr[0]), int(joint.dofadr[0])
        signs[semantic] = ref.sign
    muscles = np.flatnonzero(model.actuator_dyntype == mujoco.mjtDyn.mjDYN_MUSCLE)
    act_index = np.cumsum(model.actuator_actnum) - model.actuator_actnum
    return Layout(sensors, qpos_adr, qvel_adr, signs, muscles, act_index[muscles])
