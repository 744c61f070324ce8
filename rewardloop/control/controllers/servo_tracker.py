"""A gait tracker for robots driven by joint-position servos: the humanoid tracker's phase clock, people's joint
curves and foot placement (`gait_tracker`), written as each servo's joint target instead of a torque.

The body's own standing keyframe is the posture the gait is reckoned from, so a robot that stands crouched
(the Berkeley Humanoid's knees at 0.98 rad) walks crouched, and one that stands straight (the Unitree G1) walks
straight: every leg target is the keyframe angle plus a change. At each update (every UPDATE_S):
- the step clock, the legs' phases and the swing thigh's world-frame aim with foot placement are
  `gait_tracker.step_clock` and `gait_tracker.swing_aims`, on the parameters of `gait_tracker.GAIT` (the first
  sixteen, in its order); the swing thigh's aim is a change of the keyframe's thigh angle, the pelvis's pitch and
  roll taken out so that it is an aim in the world;
- the stance hip holds the pelvis (SIMBICON's torso control as a position offset): its target is its present
  angle plus `trunk_gain` × the pitch error (to `trunk_pitch`) less `trunk_damping` × the pitch rate, so the servo
  gives a torque in proportion to the error, as SIMBICON's virtual torque; roll the same to level; the swing hip's
  own pull on the pelvis is taken off (`reaction`);
- heading: the stance hip's rotation is aimed from the keyframe's by `yaw_gain` × the stance foot's yaw from the
  wanted heading (and `yaw_damping` × the pelvis's yaw rate), so the servo turns the pelvis onto the heading over the
  planted foot and holds it there. Aimed from its present angle (a torque in proportion to the heading error), the
  stance hip drifted to its rotation limit in every stance and the pelvis swung 0.3-0.6 rad a step;
- the knees follow people's knee curve above its straightest, scaled (`knee_scale`) and added to the keyframe's
  bend plus `knee_offset` (negative straightens the knees);
- the ankles keep the foot level with the ground (from the leg's angles and the pelvis pitch, the keyframe as
  level), the swing foot's from its targets so that it lands flat, the stance foot's from its present angles with
  `ankle_hold` of the way back to the keyframe's angle (some ankle stiffness); both add `ankle_offset` and
  `ankle_scale` × the plantarflexion of people's ankle curve beyond its angle at touchdown (the loading response and
  the push-off around 60 % of the cycle);
- every other servo (the ankles' roll, a waist, arms) holds its keyframe target;
- gravity compensation: a servo's joint lags its target by the load torque over its stiffness (the Berkeley
  Humanoid's knee, 35 N·m/rad, by 0.3 rad on one leg), so each leg target adds `support` × that lag as the model
  gives it at the keyframe (`ServoLayout.sag`), the stance leg's for the whole weight.
Every target is clipped to its servo's control range. Step time, speed and the foot-placement gains scale with the
leg (hip-to-sole height of the keyframe) by Froude similarity (`froude_space`): one table of dimensionless numbers
(SERVO_GAIT) for every robot. Our own code; anchors: SIMBICON (Yin et al. 2007), Coros, Beaudoin and van de Panne
(2010), Raibert's foot placement.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import mujoco
import numba
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.gait_tracker import (
    ANKLE_OFFSET,
    ANKLE_SCALE,
    CLOCK,
    GAIT,
    HEADING,
    KNEE_OFFSET,
    KNEE_SCALE,
    TRUNK_PITCH,
    TURN_RATE,
    curve_at,
    human_curves,
    step_clock,
    swing_aims,
)
from rewardloop.control.controllers.humanoid import SENSORS, follow_heading, pelvis_frame
from rewardloop.sim.bodies import SEMANTIC_JOINTS, SIDES
from rewardloop.sim.scene import STATE_SPEC, CompiledScene

UPDATE_S = 0.01
"""Time between two updates of the servo targets (s); the servos act at every physics step in between."""
GRAVITY = 9.81
HF, HA, HR, KN, AN = range(len(SEMANTIC_JOINTS))

P = Parameter
SERVO_GAIT: dict[str, tuple[float, float, float]] = {
    "step_time": (1.4, 2.8, 1.9),
    "touch_min": (0.3, 1.0, 0.7),
    "hip_scale": (0.3, 1.6, 1.0),
    "hip_offset": (-0.5, 0.5, 0.0),
    "place_pos": (-0.5, 1.5, 0.2),
    "place_vel": (-0.5, 1.0, 0.15),
    "speed": (0.0, 0.8, 0.4),
    "width": (-0.2, 0.3, 0.0),
    "place_pos_lat": (-0.5, 1.5, 0.3),
    "place_vel_lat": (-0.5, 1.0, 0.15),
    "knee_scale": (0.0, 1.6, 0.6),
    "knee_offset": (-1.0, 0.5, 0.0),
    "ankle_scale": (0.0, 2.0, 0.5),
    "ankle_offset": (-0.4, 0.4, 0.0),
    "trunk_pitch": (-0.3, 0.4, 0.0),
    "turn_rate": (-1.0, 1.0, 0.0),
}
"""`gait_tracker.GAIT`'s parameters as (low, high, default) in Froude units, for every robot: a time in units of
sqrt(leg / g), a speed in sqrt(g × leg), foot placement from the centre of mass's distance in leg lengths of offset
per leg length and from its speed in sqrt(leg / g) of offset per leg length (`froude_space` turns them into the
body's SI units); angles and ratios as they are."""
SERVO = (
    P("trunk_gain", 0.0, 4.0, 1.5, "rad/rad", "stance hip flexion target beyond its present angle per rad of pelvis "
      "pitch error (and adduction per rad of roll): SIMBICON's torso torque through the servo"),
    P("trunk_damping", 0.0, 0.5, 0.1, "s", "the same per rad/s of pelvis pitch and roll rate"),
    P("yaw_gain", 0.0, 3.0, 1.0, "rad/rad", "stance hip rotation target beyond the keyframe's per rad of the "
      "stance foot's yaw from the wanted heading: the servo turns the pelvis onto the heading over the planted foot"),
    P("reaction", 0.0, 1.0, 1.0, "-", "fraction of the swing hip's pull on the pelvis the stance hip takes off"),
    P("support", 0.0, 1.5, 1.0, "-", "fraction of each leg servo's sag under its load (the stance leg's the whole "
      "weight, the swing leg's its own) added to its target: gravity compensation"),
    P("shift", 0.0, 0.4, 0.15, "rad", "hip adduction of the first stance leg (abduction of the other) over the "
      "weight shift before the first step: the centre of mass moves towards the first stance foot"),
    P("shift_time", 0.0, 2.0, 1.0, "s", "how long the weight shift before the first step lasts (both feet down)"),
    P("ankle_hold", 0.0, 1.0, 0.5, "-", "fraction of the way from a level stance foot back to the keyframe's ankle "
      "angle: ankle stiffness in stance"),
    P("yaw_damping", 0.0, 0.5, 0.0, "s", "stance hip rotation target against each rad/s of pelvis yaw rate: damps "
      "the twist each swing gives the pelvis (a robot without arms has nothing else to cancel it)"),
)
"""The servo tracker's own parameters, after the gait's, in Froude units as SERVO_GAIT (`froude_space`)."""
(TRUNK_GAIN, TRUNK_DAMPING, YAW_GAIN, REACTION, SUPPORT, SHIFT, SHIFT_TIME, ANKLE_HOLD,
 YAW_DAMPING) = range(len(GAIT), len(GAIT) + len(SERVO))
MEMORY = 7
"""Memory columns as the humanoid tracker's (`gait_tracker.STANCE` ... `HEADING`)."""
FROUDE_UNITS: dict[str, str] = {"s": "time", "m/s": "speed", "rad/m": "per_length", "rad/(m/s)": "per_speed"}
"""A GAIT unit -> the Froude scale its values take (`froude_scale`); other units are dimensionless."""


def froude_scale(kind: str, leg: float) -> float:
    """The SI value of one Froude unit of `kind` for a leg of `leg` m (hip-to-sole height)."""
    time, speed = math.sqrt(leg / GRAVITY), math.sqrt(GRAVITY * leg)
    return {"time": time, "speed": speed, "per_length": 1.0 / leg, "per_speed": time / leg}[kind]


def froude_space(leg: float) -> ParameterSpace:
    """The servo tracker's parameters for a body whose leg is `leg` m: SERVO_GAIT's bounds on GAIT, then SERVO, all
    turned from Froude units into the body's SI units."""
    gait = [dataclasses.replace(p, low=SERVO_GAIT[p.name][0], high=SERVO_GAIT[p.name][1], default=SERVO_GAIT[p.name][2])
            for p in GAIT]
    scaled = []
    for p in (*gait, *SERVO):
        scale = froude_scale(FROUDE_UNITS[p.unit], leg) if p.unit in FROUDE_UNITS else 1.0
        scaled.append(dataclasses.replace(p, low=p.low * scale, high=p.high * scale, default=p.default * scale))
    return ParameterSpace(tuple(scaled))


class ServoLayout(NamedTuple):
    """Addresses and keyframe values the kernel reads, as arrays numba takes."""

    legs: np.ndarray
    """[2 sides, 5 joints, 4]: qpos address, dof address, actuator, sign (MJCF -> semantic)."""
    rest: np.ndarray
    """[2, 5] the keyframe's semantic leg angles (rad)."""
    hold: np.ndarray
    """[nu] the keyframe's control of every servo (the leg servos' are overwritten each update)."""
    low: np.ndarray
    """[nu] lower control limits."""
    high: np.ndarray
    """[nu] upper control limits."""
    sensors: np.ndarray
    """[len(humanoid.SENSORS)] sensordata addresses."""
    sag: np.ndarray
    """[2 legs, 2 (swinging, bearing the whole weight), 5] how far (rad, semantic) each leg servo's joint lags its
    target under the leg's load at the keyframe: the load torque over the servo's stiffness."""


def servo_layout(scene: CompiledScene) -> tuple[ServoLayout, float]:
    """(the layout of this scene's robot, its leg length: the keyframe's hip-to-sole height in m)."""
    model, body = scene.model, scene.body
    servo_of = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu)
                if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT}
    key = model.key(body.keyframe) if body.keyframe else None
    qpos = key.qpos if key is not None else model.qpos0
    legs, rest = np.zeros((2, 5, 4)), np.zeros((2, 5))
    for s, side in enumerate(SIDES):
        for j, semantic in enumerate(SEMANTIC_JOINTS):
            ref = body.joints[f"{side}_{semantic}"]
            jid = model.joint(ref.mjcf).id
            legs[s, j] = model.jnt_qposadr[jid], model.jnt_dofadr[jid], servo_of[jid], ref.sign
            rest[s, j] = ref.sign * qpos[model.jnt_qposadr[jid]]
    hold = np.array([qpos[model.jnt_qposadr[int(model.actuator_trnid[a, 0])]] for a in range(model.nu)])
    if key is not None and len(key.ctrl) == model.nu:
        hold = key.ctrl.copy()
    low, high = scene.ctrl_bounds()
    sensors = np.array([scene.layout.sensors[name][0] for name in SENSORS], dtype=np.int64)
    return ServoLayout(legs, rest, hold, low, high, sensors, _sag(scene, legs)), _leg_length(scene)


def _sag(scene: CompiledScene, legs: np.ndarray) -> np.ndarray:
    """[2, 2, 5] `ServoLayout.sag`: in the keyframe at rest, the torque each leg joint of the sagittal plane (hip
    flexion, knee, ankle) gives against gravity (the leg swinging: its own weight; bearing: the whole body's weight,
    m·g up under the centre of mass at the foot's sole, as in a single stance balanced fore and aft), over the servo's
    stiffness, in the semantic sign. The hip's adduction and rotation get none: in single stance the centre of mass
    is not over the foot sideways, and holding the pelvis level there is the balance feedback's job."""
    model, body = scene.model, scene.body
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    mujoco.mj_forward(model, data)
    root = model.body(body.root).id
    weight = np.array([0.0, 0.0, model.body_subtreemass[root] * -model.opt.gravity[2]])
    sag = np.zeros((2, 2, 5))
    for s, side in enumerate(SIDES):
        sole = 0.5 * (data.site(f"rl_{side}_heel").xpos + data.site(f"rl_{side}_toe").xpos)
        point = np.array([data.subtree_com[root][0], sole[1], sole[2]])
        jacp = np.zeros((3, model.nv))
        mujoco.mj_jac(model, data, jacp, None, point, model.body(body.feet[side]).id)
        for bearing, ground in enumerate((np.zeros(model.nv), jacp.T @ weight)):
            torque = data.qfrc_bias - ground  # the static actuator torque: bias = actuator + ground
            for j in (HF, KN, AN):
                dof, servo, sign = int(legs[s, j, 1]), int(legs[s, j, 2]), legs[s, j, 3]
                sag[s, bearing, j] = sign * torque[dof] / model.actuator_gainprm[servo, 0]
    return sag


def _leg_length(scene: CompiledScene) -> float:
    """The standing scene's hip-to-sole height (m): the hip flexion joints' height above the lowest heel or toe,
    less the body's sole offset, averaged over the sides."""
    model, body = scene.model, scene.body
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    mujoco.mj_forward(model, data)
    heights = []
    for side in SIDES:
        hip = data.xanchor[model.joint(body.joints[f"{side}_hip_flexion"].mjcf).id][2]
        sole = min(data.site(f"rl_{side}_{point}").xpos[2] for point in ("heel", "toe")) - body.sole_offset
        heights.append(hip - sole)
    return float(np.mean(heights))


class ServoTracker:
    """The human-curve gait tracker on a servo-driven robot (see the module docstring)."""

    kind = "servo_tracker"
    steering = ("step_time", "hip_scale", "hip_offset", "speed", "knee_scale", "knee_offset", "trunk_pitch",
                "turn_rate", "width", "ankle_offset", "ankle_scale")
    memory_size = MEMORY

    def __init__(self, scene: CompiledScene):
        self.nu, self.nq = scene.model.nu, scene.model.nq
        self.chunk = max(1, round(UPDATE_S / scene.dt))
        self.interval = self.chunk * scene.dt
        self.layout, self.leg = servo_layout(scene)
        self.space = froude_space(self.leg)
        self.curves = np.ascontiguousarray(human_curves())

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.empty((len(state), self.chunk, self.nu))
        _servo_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, self.curves,
                      *self.layout, self.nq, self.interval, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def level_ankle(rest: np.ndarray, side: int, hip: float, knee: float, pitch: float) -> float:
    """The dorsiflexion (rad) that keeps `side`'s foot as level as in the keyframe `rest` [2, 5] with the hip and
    knee at these angles and the pelvis pitched `pitch` forward: the shank's forward tilt, knee − hip + pitch,
    against the keyframe's."""
    return rest[side, AN] + (knee - rest[side, KN]) - (hip - rest[side, HF]) + pitch


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def foot_yaw(s: np.ndarray, sensors: np.ndarray, foot: int) -> float:
    """The yaw (rad, + left) of `foot`'s heel-to-toe line in the world."""
    heel, toe = sensors[5 + 2 * foot], sensors[6 + 2 * foot]
    return math.atan2(s[toe + 1] - s[heel + 1], s[toe] - s[heel])


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def leg_targets(p: np.ndarray, curves: np.ndarray, rest: np.ndarray, sag: np.ndarray, angle: np.ndarray, stance: int,
                phase: np.ndarray, knee_min: float, thigh: float, lateral: float, pitch: float, roll: float,
                pitch_rate: float, roll_rate: float, heading_error: float, foot_twist: float, yaw_rate: float,
                target: np.ndarray) -> None:
    """Semantic targets [2, 5] (written) of both legs from the parameters `p`, the keyframe `rest` [2, 5], the
    present angles `angle` [2, 5], each leg's `phase` [2], the swing thigh's aims and the pelvis's attitude."""
    swing = 1 - stance
    outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
    for side in range(2):
        knee = rest[side, KN] + p[KNEE_OFFSET] + p[KNEE_SCALE] * (curve_at(curves, 1, phase[side]) - knee_min)
        target[side, KN] = knee
    target[swing, HF] = rest[swing, HF] + thigh + pitch
    target[swing, HA] = rest[swing, HA] + outward * (roll - lateral)
    target[swing, HR] = rest[swing, HR] - outward * heading_error
    pull_pitch = target[swing, HF] - angle[swing, HF]
    pull_roll = outward * (target[swing, HA] - angle[swing, HA])
    trunk = p[TRUNK_GAIN] * (p[TRUNK_PITCH] - pitch) - p[TRUNK_DAMPING] * pitch_rate
    level = p[TRUNK_GAIN] * roll + p[TRUNK_DAMPING] * roll_rate
    target[stance, HF] = angle[stance, HF] + trunk - p[REACTION] * pull_pitch
    target[stance, HA] = angle[stance, HA] + outward * (level - p[REACTION] * pull_roll)
    target[stance, HR] = rest[stance, HR] + outward * (p[YAW_GAIN] * foot_twist + p[YAW_DAMPING] * yaw_rate)
    target[swing, AN] = level_ankle(rest, swing, target[swing, HF], target[swing, KN], pitch)
    flat = level_ankle(rest, stance, angle[stance, HF], angle[stance, KN], pitch)
    target[stance, AN] = flat + p[ANKLE_HOLD] * (rest[stance, AN] - flat)
    for side in range(2):
        plantar = min(curve_at(curves, 2, phase[side]) - curves[2, 0], 0.0)  # people's push-off and loading
        target[side, AN] += p[ANKLE_OFFSET] + p[ANKLE_SCALE] * plantar
        for j in range(5):
            target[side, j] += p[SUPPORT] * sag[side, 1 if side == stance else 0, j]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def shift_targets(p: np.ndarray, rest: np.ndarray, sag: np.ndarray, time: float, roll: float, roll_rate: float,
                  target: np.ndarray) -> None:
    """Semantic targets [2, 5] (written) at `time` s into the weight shift before the first step: the keyframe
    with both legs carrying half the weight, the left hip adducted and the right abducted by `shift` (eased in
    over `shift_time`), which moves the pelvis over the left foot, the first stance foot; both hips hold the pelvis
    level against its `roll` (rad, + left side up) as a stance hip does."""
    ease = 0.5 - 0.5 * math.cos(math.pi * min(time / max(p[SHIFT_TIME], 1e-6), 1.0))
    for side in range(2):
        for j in range(5):
            target[side, j] = rest[side, j] + p[SUPPORT] * 0.5 * (sag[side, 0, j] + sag[side, 1, j])
    level = p[TRUNK_GAIN] * roll + p[TRUNK_DAMPING] * roll_rate
    target[0, HA] += ease * p[SHIFT] - level
    target[1, HA] -= ease * p[SHIFT] - level


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _servo_kernel(state, sensed, memory, params, curves, legs, rest, hold, low, high, sensors, sag, nq, interval,
                  controls):
    """One update for every row: [b, nstate], [b, nsensor], [b, 7] memory (in place), [b, P] params, [3, K] human
    curves (rad) and the layout -> servo targets [b, chunk, nu] (written, MJCF angles within the control range)."""
    angle, target, phase = np.empty((2, 5)), np.empty((2, 5)), np.empty(2)
    knee_min = curves[1].min()
    for b in range(state.shape[0]):
        p, s, q = params[b], sensed[b], state[b, 1 : 1 + nq]
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        stance = step_clock(memory[b], p, s, sensors, interval, phase, 0.0, True)
        shifting = state[b, 0] < p[SHIFT_TIME]
        heading_error = follow_heading(memory[b], HEADING, p[TURN_RATE], state[b, 0], yaw)
        twist = foot_yaw(s, sensors, stance) - yaw - heading_error  # the stance foot's yaw from the wanted heading
        twist = math.atan2(math.sin(twist), math.cos(twist))
        thigh, lateral = swing_aims(p, s, sensors, curves, stance, phase[1 - stance], fx, fy)
        for side in range(2):
            for j in range(5):
                angle[side, j] = legs[side, j, 3] * q[int(legs[side, j, 0])]
        if shifting:
            memory[b, CLOCK] = 0.0  # the first step begins when the weight shift ends
            shift_targets(p, rest, sag, state[b, 0], roll, roll_rate, target)
        else:
            leg_targets(p, curves, rest, sag, angle, stance, phase, knee_min, thigh, lateral, pitch, roll,
                        pitch_rate, roll_rate, heading_error, twist, yaw_rate, target)
        out = controls[b, 0]
        out[:] = hold
        for side in range(2):
            for j in range(5):
                out[int(legs[side, j, 2])] = legs[side, j, 3] * target[side, j]
        for u in range(out.shape[0]):
            out[u] = min(high[u], max(low[u], out[u]))
        for t in range(1, controls.shape[1]):
            controls[b, t] = out
