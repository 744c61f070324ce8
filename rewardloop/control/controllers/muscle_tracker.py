"""A gait tracker for the muscle legs: the humanoid tracker's step clock, people's joint curves and foot placement
(`gait_tracker`) set target postures; a PD law turns them into joint torques, and `muscles.MuscleTorques` into
the muscle excitations that give those torques best (least squares over the muscles' moment arms and forces now).

A different structure from the reflex circuit (`reflex.py`), where the gait emerges from spinal reflexes: here
every leg joint follows the normative human curve (`critic/human_gait.json`) at its leg's phase of the gait
cycle, as in `gait_tracker`, and balance acts on the targets:
- the swing thigh is aimed in the world frame (people's hip curve, scaled and offset, plus foot placement from
  the centre of mass against the stance foot, blended in over the swing: `gait_tracker.swing_aims`), and
  outward by `width` plus sideways placement; the swing thigh is held unrotated; with `path_steer` the placement is
  reckoned in the heading turned that fraction of the way to the wanted one (`turn_rate` integrated over the
  motion), so the feet land where they stop the drift off the wanted heading: steering through the feet;
- the stance hip moves the pelvis: its flexion target is the present angle plus `trunk_gain` × the pelvis pitch
  error (to `trunk_pitch`) minus `trunk_damping` × the pitch rate, its adduction the same for roll (to level),
  and its rotation turns the pelvis about the planted thigh towards the heading (`yaw_gain`, `trunk_damping`);
- the stance leg's targets are pulled `stance_stiffness` times as hard as given, the swing leg's
  `swing_stiffness` times;
- the ground's reactions are the humanoid tracker's (`REACTIONS`): knee `lift` in mid-swing and `trip_lift` after a
  stumble on the swing knee; the slope measured between the feet at each touchdown, scaled, on the swing thigh
  (`slope_hip`), the pelvis pitch (`slope_trunk`) and the ankles (`slope_ankle`); the rise of the ground seen ahead
  of the swing toe on its knee (`look_lift`) and thigh (`look_hip`), and the rise of the stance foot's ground over
  the swing foot's on the stance knee (`look_push`); its landing on higher ground (`look_land`); and the knee's
  bend onto a step and through the stance on it (`stair_knee`);
- clearance for a straighter swing knee (since 2026-11-27; 0 by default), each over the swing leg's mid-swing (sin²,
  peak at 75 % of its cycle, `gait_tracker.mid_swing`): the stance ankle plantarflexed (`vault`, rising on the toes),
  the swing hip abducted (`circumduct`) and the pelvis held with the swing side up (`hike`), as people walking with
  a stiff knee clear the foot; and `knee_max`, a cap on either knee's aim;
- `yaw_catch` (since 2026-11-28; 0 by default): the stance hip's rotation also turns the pelvis back by the heading
  error beyond `yaw_band`, against a pelvis spinning off its heading (a foot caught on a bump or a stair's edge: the
  main gait's falls on rough ground and stairs begin so), while a gait that stays within the band walks as it did;
  measured, it did not make the main gait walk rough ground nor the stairs gait climb (README, November 28);
- the shape on uneven ground (since 2026-11-28; 0 by default, and nothing on flat ground or a slope): the tracker
  reads how uneven the ground under the centre of mass is (`terrain.unevenness_map`, in full from UNEVEN_FULL) and
  adds that fraction of each `UNEVEN` parameter to the gait parameter it shapes: `uneven_hip` to `hip_offset`,
  `uneven_knee` to `knee_offset`, `uneven_speed` to `speed`, `uneven_reach` to `land_ahead` and so on. People walk
  uneven ground with more hip and knee flexion than level ground (Voloshina et al. 2013, J. Exp. Biol.), and a gait
  searched this way keeps its level walk exactly while it learns its walk over bumps;
- `push_off` (since 2026-11-27; 0 by default): each ankle plantarflexed more over the end of its stance, 40-65 % of
  its cycle (sin², most at 52.5 %, around the other foot's touchdown): people's push-off, which the fast gait
  (`gaits/myolegs-fast.json`) leans on;
- torque = kp × (target − angle) − `damping` × kp × rate, with kp `hip_kp`, `knee_kp`, `ankle_kp` (FOOT_KP on the
  subtalar and toe joints), so the stance hip's pelvis terms act as SIMBICON's virtual torque on the trunk; the
  hips' flexion damping scaled per leg (`stance_hip_damping`, `swing_hip_damping`) and the stance hip's reckoned
  from an extension at `stance_hip_rate` (1, 1 and 0 by default, as before 2026-11-27: there the stance hip's
  damping brakes the body's passing over the foot, about 110 N·m of flexion in the main gait's stance).
The clock, phases and heading (`turn_rate`) are the humanoid tracker's. Our own code; anchors: Coros, Beaudoin and
van de Panne (2010) for targets over a phase with feedback, SIMBICON (Yin et al. 2007) for the stance hip's torque.
Until 2026-11-24 the targets went to the MPC² posture controller (`muscles.MuscleController`, force from each
muscle's length error) instead: the legs did not even stand with it (1.5 s), and searches stayed up 5.5 s at most;
through torques they stand, and the shipped gait (`gaits/myolegs.json`) walks 12.1 m in 10 s, human-like.
"""

from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.gait_tracker import (
    ANKLE_OFFSET,
    ANKLE_SCALE,
    GAIT,
    HEADING,
    KNEE_OFFSET,
    KNEE_SCALE,
    REACTIONS,
    SLOPE,
    STANCE,
    TRUNK_PITCH,
    TURN_RATE,
    curve_at,
    ground_at,
    ground_slope,
    human_curves,
    landing_reach,
    landing_waiver,
    mid_swing,
    rise_ahead,
    stair_bend,
    step_clock,
    step_rise,
    swing_aims,
    swing_lift,
)
from rewardloop.control.controllers.humanoid import COM, CONTACT, SENSORS, follow_heading, pelvis_frame
from rewardloop.control.controllers.lowlevel import posture_space
from rewardloop.control.controllers.musclebody import hip_rotators
from rewardloop.control.controllers.muscles import MuscleTorques
from rewardloop.sim.bodies import SIDES
from rewardloop.sim.scene import CompiledScene
from rewardloop.sim.terrain import Terrain, ground_map, unevenness_map

UPDATE_S = 0.004
"""Time between two updates of the targets and excitations (s)."""
JOINTS = ("hip_flexion", "hip_adduction", "hip_rotation", "knee_flexion", "ankle_dorsiflexion")
"""Semantic leg joints the tracker sets, in column order."""
HF, HA, HR, KN, AN = range(len(JOINTS))

P = Parameter
UNEVEN = (
    ("uneven_hip", "hip_offset", -0.2, 0.5, "rad", "a higher reach of the swing thigh"),
    ("uneven_knee", "knee_offset", -0.2, 0.5, "rad", "a more crouched, compliant leg"),
    ("uneven_trunk", "trunk_pitch", -0.2, 0.4, "rad", "+ leaning forward"),
    ("uneven_ankle", "ankle_scale", -0.5, 1.0, "-", "more or less of the ankle's curve"),
    ("uneven_speed", "speed", -0.8, 0.4, "m/s", "the speed foot placement keeps, - slower"),
    ("uneven_width", "width", -0.1, 0.2, "m", "a wider or narrower stance"),
    ("uneven_step", "step_time", -0.15, 0.15, "s", "shorter or longer steps"),
    ("uneven_place", "place_pos", -1.0, 1.0, "-", "foot placement from the centre of mass, + further"),
    ("uneven_lift", "lift", 0.0, 0.6, "rad", "more clearance over mid-swing"),
    ("uneven_trip", "trip_lift", 0.0, 0.8, "rad", "the stumble's elevating reaction"),
    ("uneven_reach", "land_ahead", 0.0, 0.7, "m", "a touchdown far behind the centre of mass is a stumble"),
    ("uneven_stiffness", "stance_stiffness", -0.2, 2.0, "-", "a stiffer stance leg"),
)
"""The shape on uneven ground: (parameter, the parameter it adds to, low, high, unit, why). Walking uneven ground,
people flex hip and knee more, shorten their steps, vary their width more and work their leg muscles harder
(Voloshina et al. 2013, J. Exp. Biol.); the search finds how much. Since 2026-11-28."""
_MUSCLE_DEFAULTS = {"step_time": 0.55, "speed": 1.2, "width": 0.05, "place_pos": 0.3, "place_vel": 0.2,
                    "place_pos_lat": 0.5, "place_vel_lat": 0.2, "trunk_pitch": 0.1}
"""Where the muscle legs' defaults differ from the humanoid tracker's: people's step time and speed, a narrow
stance, stabilising placement gains and a small forward lean."""
PARAMETERS = ParameterSpace((
    *(dataclasses.replace(p, default=_MUSCLE_DEFAULTS.get(p.name, p.default)) for p in GAIT),
    P("trunk_gain", 0.0, 4.0, 1.0, "rad/rad", "stance hip target change per rad of pelvis pitch or roll error"),
    P("trunk_damping", 0.0, 0.5, 0.1, "s", "stance hip target change per rad/s of pelvis pitch, roll or yaw rate"),
    P("yaw_gain", 0.0, 4.0, 0.5, "rad/rad", "stance hip rotation target change per rad of heading error"),
    P("stance_stiffness", 0.3, 4.0, 1.5, "-", "how much harder the stance leg's targets pull (posture error ×)"),
    P("swing_stiffness", 0.3, 4.0, 1.0, "-", "how much harder the swing leg's targets pull (posture error ×)"),
    P("hip_kp", 100.0, 800.0, 400.0, "N·m/rad", "hip torque per rad of posture error (flexion, adduction, rotation)"),
    P("knee_kp", 100.0, 600.0, 300.0, "N·m/rad", "knee torque per rad of posture error"),
    P("ankle_kp", 100.0, 600.0, 300.0, "N·m/rad", "ankle torque per rad of posture error"),
    P("damping", 0.02, 0.3, 0.1, "s", "joint torque per rad/s of rate, per unit of kp"),
    *REACTIONS,
    P("path_steer", 0.0, 1.5, 0.0, "rad/rad", "foot placement reckoned in the heading turned this much of the way "
      "to the wanted heading: 1 stops the centre of mass drifting off the wanted heading, 0 off the pelvis's"),
    P("stance_hip_damping", 0.0, 1.5, 1.0, "-", "the stance hip flexion's damping, per unit of `damping`: below 1 it "
      "brakes less the hip's extension as the body passes over the foot"),
    P("swing_hip_damping", 0.0, 1.5, 1.0, "-", "the swing hip flexion's damping, per unit of `damping`: below 1 it "
      "brakes less the thigh's swing forward"),
    P("stance_hip_rate", 0.0, 3.0, 0.0, "rad/s", "the stance hip's extension rate its damping is reckoned from: "
      "at 0 it brakes the body's passing over the foot in proportion to its speed"),
    P("vault", 0.0, 0.5, 0.0, "rad", "stance ankle plantarflexion added over the other leg's mid-swing: clearance "
      "for a straighter swing knee by rising on the toes"),
    P("circumduct", 0.0, 0.3, 0.0, "rad", "swing hip abduction added over mid-swing: clearance for a straighter "
      "swing knee by swinging the foot out"),
    P("hike", 0.0, 0.2, 0.0, "rad", "pelvis roll the stance hip lifts the swing side by over mid-swing: clearance "
      "for a straighter swing knee by hitching the hip"),
    P("knee_max", 0.3, 2.0, 2.0, "rad", "the most knee flexion either knee aims at: a cap on the swing knee's bend "
      "(people's peaks near 1.05 rad)"),
    P("push_off", 0.0, 0.5, 0.0, "rad", "ankle plantarflexion added over the end of each leg's stance (40-65 % of "
      "its cycle, most at 52.5 %): the push-off that propels a faster walk"),
    P("yaw_catch", 0.0, 4.0, 0.0, "rad/rad", "stance hip rotation target change per rad of heading error beyond "
      "yaw_band: turns back a pelvis spinning off the heading (a foot caught on a bump or a stair's edge) and does "
      "nothing to a gait that stays within the band"),
    P("yaw_band", 0.0, 0.6, 0.25, "rad", "the heading error within which yaw_catch does nothing"),
    *(P(name, low, high, 0.0, unit, f"{base} added on uneven ground (in full from UNEVEN_FULL of "
        f"`terrain.unevenness_map` under the centre of mass, in proportion below): {why}", sighted=True)
      for name, base, low, high, unit, why in UNEVEN),
))
"""The muscle tracker's parameters, in vector order: the humanoid tracker's gait parameters (`GAIT`), balance and
stiffness, then its reactions to the ground (`REACTIONS`, off by default; since 2026-11-24), `path_steer`, and since
2026-11-27 the hips' damping per leg, the clearance for a straighter swing knee and the push-off, and since
2026-11-28 the yaw catch and the shape on uneven ground (their defaults change nothing).
The defaults walk a few steps at most; they are where gait searches from 'default' begin."""
(TRUNK_GAIN, TRUNK_DAMPING, YAW_GAIN, STANCE_STIFFNESS, SWING_STIFFNESS, HIP_KP, KNEE_KP, ANKLE_KP, DAMPING, LIFT,
 TRIP_LIFT, SLOPE_HIP, SLOPE_TRUNK, SLOPE_ANKLE, LOOK_LIFT, LOOK_HIP, LOOK_PUSH,
 LOOK_LAND, LAND_AHEAD, STAIR_KNEE, PATH_STEER, STANCE_HIP_DAMPING, SWING_HIP_DAMPING,
 STANCE_HIP_RATE, VAULT, CIRCUMDUCT, HIKE, KNEE_MAX, PUSH_OFF, YAW_CATCH, YAW_BAND) = range(len(GAIT),
                                                                                     PARAMETERS.size - len(UNEVEN))
UNEVEN_AT = np.array([PARAMETERS.index(name) for name, *_ in UNEVEN])
UNEVEN_TO = np.array([PARAMETERS.index(base) for _, base, *_ in UNEVEN])
"""The shape on uneven ground's columns, and the columns each adds to."""
PUSH_START, PUSH_SPAN = 0.4, 0.25
"""Where in a leg's cycle `push_off` begins, and over how much of it it acts."""
UNEVEN_FULL = 0.003
"""Unevenness (m, `terrain.unevenness_map`) from which the uneven_* changes act in full: the default rough
ground's (±4 cm bumps) is 2-8 mm, 90 % of it above 3 mm."""
FOOT_KP = 50.0
"""Torque per rad of posture error (N·m/rad) of the joints the tracker holds at neutral: subtalar and toes."""


class MuscleTracker:
    """People's joint curves on a phase clock for the MyoSuite muscle legs (see the module docstring)."""

    kind = "muscle_tracker"
    space = PARAMETERS
    memory_size = 7
    steering: tuple[str, ...] = ("step_time", "hip_scale", "hip_offset", "speed", "knee_scale", "knee_offset",
                                 "trunk_pitch", "turn_rate", "width", "lift")

    def __init__(self, scene: CompiledScene):
        self.chunk = max(1, round(UPDATE_S / scene.dt))
        self.interval = self.chunk * scene.dt
        self.muscles = MuscleTorques(scene, interval_s=self.interval)
        space = self.muscles.space
        self.neutral = np.clip(0.0, space.low, space.high)
        """[J] the posture targets of the joints the tracker does not set (subtalar, toes)."""
        self.curves = np.ascontiguousarray(human_curves())
        self.see(scene.scene.terrain)
        self.sensors = np.array([scene.layout.sensors[name][0] for name in SENSORS], dtype=np.int64)
        self.balanced = self.sensors
        """The SENSORS addresses the stance hip's trunk law reads pitch and roll through: the pelvis's here, which
        carries the legs' rigid torso."""
        self.joints = leg_columns(scene)
        rotation, _ = hip_rotators(scene)
        self.yaw_sign = np.ascontiguousarray(rotation[:, 2])
        self.angle_index = 1 + space.qpos_adr
        self.rate_index = 1 + scene.model.nq + space.dof_adr
        self.gain_of = np.full(space.size, 3)  # [J] each posture column's kp: hip, knee, ankle (stiffness()) or foot
        for side in range(2):
            for joint, gain in ((HF, 0), (HA, 0), (HR, 0), (KN, 1), (AN, 2)):
                self.gain_of[int(self.joints[side, joint, 3])] = gain

    def see(self, terrain: Terrain) -> None:
        """See `terrain`: the ground map and its unevenness map the kernel reads."""
        self.ground, self.uneven = ground_map(terrain), unevenness_map(terrain)

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        state = np.ascontiguousarray(state)
        targets = self.targets(state, sensed, memory, params)
        kp = self.stiffness(params)
        torque = (kp * (targets - state[:, self.angle_index])
                  - self.damping(params, memory) * kp * self.damped_rate(state, params, memory))
        return np.repeat(self.muscles(state, torque)[:, None], self.chunk, axis=1)

    def targets(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        """[B, J] the posture targets (MJCF angles) of this update, advancing the step clock in `memory`: the leg
        joints' from the kernel, the rest at neutral."""
        targets = np.repeat(self.neutral[None], len(state), axis=0)
        _targets_kernel(state, np.ascontiguousarray(sensed), memory, params, self.curves, self.ground, self.uneven,
                        self.joints, self.sensors, self.balanced, self.yaw_sign, self.interval, targets)
        return targets

    def damping(self, params: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """[B, P] params, [B, 5] memory -> [B, J] each posture joint's damping (s): `damping`, scaled on the hip
        flexion of the stance leg (memory's stance column) and of the swing leg."""
        damping = np.repeat(params[:, DAMPING, None], len(self.neutral), axis=1)
        stance = memory[:, STANCE].astype(np.int64)
        rows = np.arange(len(params))
        hip = self.joints[:, HF, 3].astype(np.int64)  # [2] each side's hip flexion column
        damping[rows, hip[stance]] *= params[:, STANCE_HIP_DAMPING]
        damping[rows, hip[1 - stance]] *= params[:, SWING_HIP_DAMPING]
        return damping

    def damped_rate(self, state: np.ndarray, params: np.ndarray, memory: np.ndarray) -> np.ndarray:
        """[B, nstate] state, [B, P] params, [B, 5] memory -> [B, J] the rates the damping acts on (MJCF, rad/s):
        each posture joint's, the stance hip flexion's reckoned from an extension at `stance_hip_rate`."""
        rate = state[:, self.rate_index].copy()
        hip = self.joints[memory[:, STANCE].astype(np.int64), HF]  # [B, 4] stance hip flexion: qpos, dof, sign, column
        rate[np.arange(len(rate)), hip[:, 3].astype(np.int64)] += hip[:, 2] * params[:, STANCE_HIP_RATE]
        return rate

    def stiffness(self, params: np.ndarray) -> np.ndarray:
        """[B, P] params -> [B, J] each posture joint's kp (N·m/rad)."""
        gains = np.concatenate([params[:, [HIP_KP, KNEE_KP, ANKLE_KP]], np.full((len(params), 1), FOOT_KP)], axis=1)
        return gains[:, self.gain_of]


def leg_columns(scene: CompiledScene) -> np.ndarray:
    """[2 sides, 5 JOINTS, 4]: each semantic leg joint's qpos address, dof address, sign (MJCF -> semantic) and
    column in the muscle controller's posture space."""
    layout, space = scene.layout, posture_space(scene)
    columns = {int(adr): column for column, adr in enumerate(space.qpos_adr)}
    return np.array([[[layout.joint_qpos[f"{side}_{joint}"], layout.joint_qvel[f"{side}_{joint}"],
                       layout.joint_sign[f"{side}_{joint}"], columns[layout.joint_qpos[f"{side}_{joint}"]]]
                      for joint in JOINTS] for side in SIDES])


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def push_phase(phase: float) -> float:
    """0 to 1 and back over the end of a leg's stance at its `phase`: sin² from 40 % to 65 % of the cycle, 1 at
    52.5 % (people's push-off, around the other foot's touchdown at 50 %)."""
    if not PUSH_START < phase < PUSH_START + PUSH_SPAN:
        return 0.0
    return math.sin(math.pi * (phase - PUSH_START) / PUSH_SPAN) ** 2


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _targets_kernel(state, sensed, memory, params, curves, ground, uneven, joints, sensors, balanced, yaw_sign,
                    interval, targets):
    """Target postures for every row: [b, nstate], [b, nsensor], [b, 5] memory (in place; `gait_tracker`'s
    columns), [b, P] params, [3, K] human curves (rad), [nx, ny] ground map and its unevenness map, [2, 5, 4] leg
    columns, the SENSORS addresses and those of the part the stance hip balances (`MuscleTracker.balanced`), [2]
    yaw signs (`hip_rotators`) -> targets [b, J] (the leg joints' columns written, in MJCF angles)."""
    angle, aim, phase, p = np.empty((2, 5)), np.empty((2, 5)), np.empty(2), np.empty(params.shape[1])
    com = sensors[COM]
    for b in range(state.shape[0]):
        s = sensed[b]
        rough = min(ground_at(uneven, s[com], s[com + 1]) / UNEVEN_FULL, 1.0)  # 0 flat .. 1 uneven ground
        p[:] = params[b]
        for k in range(len(UNEVEN_AT)):
            p[UNEVEN_TO[k]] += rough * params[b, UNEVEN_AT[k]]
        before = int(memory[b, STANCE])
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        _, _, _, lean, tilt, _, _, _ = pelvis_frame(s, balanced)  # the balanced part's pitch and roll
        early = landing_waiver(p[LOOK_LAND], s, sensors, ground, memory[b])
        reach_ok = landing_reach(p[LAND_AHEAD], s, sensors, memory[b], fx, fy)
        stance = step_clock(memory[b], p, s, sensors, interval, phase, early, reach_ok)
        swing = 1 - stance
        outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
        heading_error = follow_heading(memory[b], HEADING, p[TURN_RATE], state[b, 0], yaw)
        rise = rise_ahead(s, sensors, ground, stance, fx, fy)
        lift = swing_lift(memory[b], p, p[LIFT], p[TRIP_LIFT], p[LOOK_LIFT] * rise, s[sensors[CONTACT + swing]] > 0,
                          phase[swing], stance != before, reach_ok)
        bend_swing, bend_stance = stair_bend(p[STAIR_KNEE], s, sensors, ground, memory[b], stance, phase,
                                             stance != before)
        if stance != before:
            memory[b, SLOPE] = ground_slope(s, sensors, stance, fx, fy)
        slope = memory[b, SLOPE]
        for side in range(2):
            for j in range(5):
                angle[side, j] = joints[side, j, 2] * state[b, 1 + int(joints[side, j, 0])]
            knee, ankle = curve_at(curves, 1, phase[side]), curve_at(curves, 2, phase[side])
            aim[side, KN] = p[KNEE_OFFSET] + p[KNEE_SCALE] * knee
            aim[side, AN] = (p[ANKLE_OFFSET] + p[ANKLE_SCALE] * ankle
                             + p[SLOPE_ANKLE] * slope - p[PUSH_OFF] * push_phase(phase[side]))
        aim[swing, KN] += lift + bend_swing
        aim[stance, KN] += bend_stance - p[LOOK_PUSH] * step_rise(s, sensors, ground, stance)
        thigh, lateral = swing_aims(p, s, sensors, curves, stance, phase[swing], fx, fy,
                                    p[PATH_STEER] * heading_error)
        aim[swing, HF] = thigh + p[SLOPE_HIP] * slope + p[LOOK_HIP] * rise + pitch
        clearing = mid_swing(phase[swing])
        aim[swing, HA] = outward * (roll - lateral - p[CIRCUMDUCT] * clearing)
        aim[swing, HR] = 0.0
        trunk_target = p[TRUNK_PITCH] + p[SLOPE_TRUNK] * slope
        aim[stance, HF] = angle[stance, HF] + p[TRUNK_GAIN] * (trunk_target - lean) - p[TRUNK_DAMPING] * pitch_rate
        hiked = outward * p[HIKE] * clearing  # roll (+ left side up) that lifts the swing side
        aim[stance, HA] = angle[stance, HA] - outward * (p[TRUNK_GAIN] * (hiked - tilt) - p[TRUNK_DAMPING] * roll_rate)
        aim[stance, AN] -= p[VAULT] * clearing
        # the pelvis turning left about the planted thigh moves the hip rotation by -yaw_sign per rad
        caught = p[YAW_CATCH] * math.copysign(max(abs(heading_error) - p[YAW_BAND], 0.0), heading_error)
        aim[stance, HR] = angle[stance, HR] - yaw_sign[stance] * (p[YAW_GAIN] * heading_error + caught
                                                                  - p[TRUNK_DAMPING] * yaw_rate)
        for side in range(2):
            aim[side, KN] = min(aim[side, KN], p[KNEE_MAX])
            stiffness = p[STANCE_STIFFNESS] if side == stance else p[SWING_STIFFNESS]
            for j in range(5):
                wanted = angle[side, j] + stiffness * (aim[side, j] - angle[side, j])
                targets[b, int(joints[side, j, 3])] = joints[side, j, 2] * wanted

