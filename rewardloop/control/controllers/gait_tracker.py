"""A gait tracker for the torque humanoid: a phase clock drives people's hip, knee and ankle curves over the gait
cycle, with SIMBICON's balance feedback on top.

A different structure from the gait machine (`gait_machine.py`), whose joints hold one constant target per
state: here every leg joint follows the normative human curve (`critic/human_gait.json`, Schwartz et al. 2008)
at the leg's own phase of the gait cycle, scaled and offset by the parameters, so the knee flexes in loading
response, straightens in mid-stance, bends about 60° in swing and reaches nearly straight at touchdown, and the
ankle pushes off at the end of stance. Target trajectories over a phase with feedback on top follow Coros,
Beaudoin and van de Panne (2010); our own code.

A step lasts from one touchdown to the next. At a touchdown the landing leg is at 0 % of its cycle and the
other at 50 %; both phases advance with the clock over `step_time` (the trailing leg pushes off, lifts and
swings from 50 % to 100 %) and hold at 50 % and 100 % when the step lasts longer. The step ends when the swing
foot touches down after `touch_min` × `step_time`, or at 1.5 × `step_time`; the clock of a step waits for its
stance foot to touch the ground (at the walking start, and after a step that ended without a touchdown). On top
of the curves:
- the swing thigh is aimed in the world frame (the curve plus `hip_offset`, the pelvis's pitch removed), and
  adds foot placement, blended in from 62.5 % of the cycle and whole from 87.5 % (late in the swing):
  `place_pos` × d + `place_vel` × (v − `speed`), d and v the centre of mass's position and velocity ahead of the
  stance foot (sideways the same with `width`, `place_pos_lat`, `place_vel_lat`);
- the stance hip holds the pelvis at `trunk_pitch`, upright and on the heading (a virtual torque on the pelvis,
  minus the swing hip's reaction), as in SIMBICON;
- the stance knee and ankle track their curves with `stance_kp`, the swing leg's with `joint_kp`;
- for uneven ground, the swing knee bends `lift` more in mid-swing, and `trip_lift` more for the rest of a swing
  whose foot strikes the ground early (a stumble); the stance ankle rolls the foot `ankle_lat` per m/s of
  sideways CoM speed; at each touchdown the tracker measures the ground's slope between the feet (their lowest
  points), and the swing thigh, the pelvis pitch and both ankles add `slope_hip`, `slope_trunk` and `slope_ankle`
  times it (all 0 by default: the gait on flat ground is unchanged);
- the tracker sees the ground (a robot's height map: `terrain.ground_map`), with four reactions (0 by default, and
  without effect on flat ground): over the swing, the swing knee bends `look_lift` and the swing thigh reaches
  `look_hip` more per metre that the ground within LOOK_AHEAD of the swing toe rises above the ground under the
  stance foot (a stair, a bump), the knee's fading out over the last quarter of the cycle as the stumble's does;
  the stance knee straightens `look_push` per metre that the ground under the stance foot is above the ground
  under the swing foot (pushing the body up a step); a swing foot over higher ground than the stance foot's
  may end its step `look_land` of `touch_min` sooner (landing on a step, not stumbling on it); and, for stair
  climbing's knee (bent about 60° at touchdown on a step and extending through stance, where level walking's is
  nearly straight), the knee bends `stair_knee` per metre of the step's rise at the end of a swing onto higher
  ground and keeps that bend at touchdown, straightening it over the first part of stance;
- the arms swing against the legs (`arm_swing`), the chest leans `chest_lean` on the pelvis.
Heading follows `turn_rate` (rad/s, + left). Angles are semantic (hip flexion + forward, knee flexion + bent,
ankle dorsiflexion + toes up); commands are fractions of each motor's strength.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.humanoid import (
    AI,
    AN,
    CONTACT,
    KN,
    balance_hips,
    clip,
    com_from_foot,
    follow_heading,
    humanoid_layout,
    pd,
    pelvis_frame,
    read_legs,
    write_body,
)
from rewardloop.critic.gait import human_gait_reference
from rewardloop.sim.scene import CompiledScene
from rewardloop.sim.terrain import GROUND_MAP_STEP, HFIELD_EXTENT, Terrain, ground_map

P = Parameter
GAIT = (
    P("step_time", 0.3, 0.75, 0.45, "s", "nominal duration of a step, touchdown to touchdown (the phase clock)"),
    P("touch_min", 0.3, 1.0, 0.7, "-", "fraction of step_time before a touchdown may end the step"),
    P("hip_scale", 0.3, 1.6, 1.0, "-", "swing hip curve's amplitude, as a multiple of people's"),
    P("hip_offset", -0.5, 0.5, 0.0, "rad", "swing thigh angle from vertical added to the hip curve, + forward"),
    P("place_pos", -1.0, 3.0, 0.2, "rad/m", "extra swing thigh angle per metre of CoM ahead of the stance foot"),
    P("place_vel", -1.0, 2.0, 0.2, "rad/(m/s)", "extra swing thigh angle per m/s of CoM speed above `speed`"),
    P("speed", 0.0, 2.5, 0.5, "m/s", "walking speed the foot placement aims for"),
    P("width", -0.2, 0.3, 0.25, "rad", "swing thigh angle outwards from vertical, before feedback"),
    P("place_pos_lat", -1.0, 3.0, 0.0, "rad/m", "extra outward swing thigh angle per m of CoM beside the stance foot"),
    P("place_vel_lat", -1.0, 2.0, 0.0, "rad/(m/s)", "extra outward swing thigh angle per m/s of sideways CoM speed"),
    P("knee_scale", 0.3, 1.6, 1.0, "-", "knee curve's amplitude, as a multiple of people's"),
    P("knee_offset", -0.2, 0.4, 0.0, "rad", "knee flexion added to the knee curve"),
    P("ankle_scale", 0.0, 2.0, 1.0, "-", "ankle curve's amplitude, as a multiple of people's"),
    P("ankle_offset", -0.4, 0.4, 0.0, "rad", "ankle dorsiflexion added to the ankle curve"),
    P("trunk_pitch", -0.3, 0.5, 0.25, "rad", "pelvis pitch the stance hip holds, + leaning forward"),
    P("turn_rate", -1.0, 1.0, 0.0, "rad/s", "rate of the target heading, + turning left"),
)
"""The parameters of the gait itself (clock, curves, foot placement, trunk pitch, heading), first in the vector of
every tracker (this one and `muscle_tracker`'s), so the shared compiled pieces read them at the same places."""
PARAMETERS = ParameterSpace((
    *GAIT,
    P("chest_lean", -0.4, 0.6, -0.2, "rad", "chest flexion on the pelvis, + bending forward"),
    P("trunk_kp", 1.0, 20.0, 5.0, "1/rad", "pelvis balance stiffness (hip strength per rad of lean error)"),
    P("trunk_kd", 0.0, 2.0, 1.2, "s/rad", "pelvis balance damping (hip strength per rad/s)"),
    P("hip_kp", 1.0, 20.0, 12.0, "1/rad", "swing hip stiffness (strength per rad)"),
    P("hip_kd", 0.0, 2.0, 0.9, "s/rad", "swing hip damping (strength per rad/s)"),
    P("stance_kp", 1.0, 20.0, 8.0, "1/rad", "stance knee and ankle stiffness (strength per rad)"),
    P("joint_kp", 1.0, 20.0, 4.0, "1/rad", "swing knee and ankle, trunk and arm stiffness (strength per rad)"),
    P("joint_kd", 0.0, 1.0, 0.2, "s/rad", "knee, ankle, trunk and arm damping (strength per rad/s)"),
    P("arm_swing", 0.0, 2.0, 0.8, "-", "shoulder swing per rad of hip flexion difference, against the legs"),
    P("yaw_kp", 0.0, 10.0, 2.0, "1/rad", "heading stiffness through the stance hip (strength per rad)"),
    P("lift", 0.0, 0.6, 0.0, "rad", "swing knee flexion added in mid-swing (peak at 75 % of the cycle): clearance"),
    P("trip_lift", 0.0, 0.8, 0.0, "rad", "swing knee flexion added for the rest of a swing after its foot strikes "
      "the ground early (a stumble): the elevating reaction"),
    P("ankle_lat", -1.0, 1.0, 0.0, "rad/(m/s)", "stance ankle inversion per m/s of sideways CoM speed, + rolling "
      "the foot towards the motion"),
    P("slope_hip", 0.0, 2.0, 0.0, "rad/rad", "swing thigh angle added per rad of the ground's slope, + uphill"),
    P("slope_trunk", 0.0, 2.0, 0.0, "rad/rad", "pelvis pitch added per rad of the ground's slope, + uphill"),
    P("slope_ankle", 0.0, 1.5, 0.0, "rad/rad", "ankle dorsiflexion added per rad of the ground's slope, + uphill"),
    P("look_lift", 0.0, 8.0, 0.0, "rad/m", "swing knee flexion added per metre the ground ahead of the swing toe "
      "rises above the stance foot's (a stair): clearance where it is needed", sighted=True),
    P("look_hip", 0.0, 6.0, 0.0, "rad/m", "swing thigh angle added per metre of that rise: the foot reaches up onto "
      "the step", sighted=True),
    P("look_push", 0.0, 8.0, 0.0, "rad/m", "stance knee straightened per metre the ground under the stance foot is "
      "above the swing foot's: pushing the body up a step", sighted=True),
    P("look_land", 0.0, 1.0, 0.0, "-", "fraction of touch_min waived for a swing foot over higher ground than the "
      "stance foot's: landing on a step ends the step", sighted=True),
    P("land_ahead", 0.0, 0.7, 0.0, "m", "a touchdown ends the step only with the swing foot at least land_ahead - "
      "REACH_BEHIND m ahead of the centre of mass (0: off); one further back is a stumble and the swing goes on",
      uneven=True),
    P("stair_knee", 0.0, 10.0, 0.0, "rad/m", "knee flexion per metre a foot's ground is above the other foot's: "
      "the swing knee bends it over the last quarter of a swing onto a step, the stance knee keeps it at touchdown "
      "and straightens it by STAIR_EXTEND of the cycle (climbing's knee: bent on landing, lifting the body)",
      sighted=True),
))
"""The gait tracker's parameters, in vector order. The defaults track people's curves at their amplitude, a 0.45-s
step (133 steps/min), with the balance gains of the gait machine's stage-4 gait
(rewardloop/control/gaits/humanoid-gait_machine.json, rounded); they take a few steps from the walking start and
are where gait searches from 'default' begin."""
REACTIONS = tuple(p for p in PARAMETERS.parameters if p.name in ("lift", "trip_lift", "slope_hip", "slope_trunk",
                                                                  "slope_ankle", "land_ahead") or p.sighted)
"""The reactions to the ground (clearance, the stumble's elevating reaction, the slope's, the rises seen), which the
muscle tracker shares: 0 by default, so a gait without them walks as before."""

(STEP_TIME, TOUCH_MIN, HIP_SCALE, HIP_OFFSET, PLACE_POS, PLACE_VEL, SPEED, WIDTH, PLACE_POS_LAT, PLACE_VEL_LAT,
 KNEE_SCALE, KNEE_OFFSET, ANKLE_SCALE, ANKLE_OFFSET, TRUNK_PITCH, TURN_RATE, CHEST_LEAN, TRUNK_KP, TRUNK_KD, HIP_KP,
 HIP_KD, STANCE_KP, JOINT_KP, JOINT_KD, ARM_SWING, YAW_KP, LIFT, TRIP_LIFT, ANKLE_LAT, SLOPE_HIP, SLOPE_TRUNK,
 SLOPE_ANKLE, LOOK_LIFT, LOOK_HIP, LOOK_PUSH, LOOK_LAND, LAND_AHEAD, STAIR_KNEE) = range(PARAMETERS.size)
STANCE, CLOCK, TRIPPED, SLOPE, RISE, HEADING = 0, 1, 2, 3, 4, 5
"""Memory columns: the stance leg (0 left, 1 right), the time since its touchdown (s), whether the swing foot has
stumbled during this step (1) or not (0), the slope of the ground (rad, + uphill) measured between the feet at the
last touchdown, how much higher (m) the stance foot's ground was than the other's then (a step up), and the turn
rate last used and the wanted heading's offset (rad/s, rad: `humanoid.follow_heading`)."""
STAIR_EXTEND = 0.3
"""Phase of the gait cycle (from touchdown at 0) by which a stance knee has straightened `stair_knee`'s bend."""
MAX_SLOPE = 0.4
"""Largest ground slope (rad, either way) the tracker believes it measures; steeper readings are clipped."""
LONGEST_STEP = 1.5
"""A step ends at this multiple of step_time even without a touchdown."""
LOOK_AHEAD = 0.3
"""How far ahead of the swing foot's toe (m, along the heading) the tracker looks at the ground."""
LANDING_RISE = 0.01
"""How much higher (m) the ground under the swing foot must be than the stance foot's for `look_land`."""
MAX_RISE = 0.3
"""Largest rise of the ground ahead (m) the tracker reacts to; the ground falling away reads as 0."""
REACH_BEHIND = 0.5
"""With a small `land_ahead`, a touchdown may end the step with the swing foot up to this far (m) behind the centre
of mass; `land_ahead` moves that limit forward."""


def human_curves() -> np.ndarray:
    """[3, K] people's hip flexion, knee flexion and ankle dorsiflexion (rad) at K evenly spaced phases of the
    gait cycle from touchdown (0) to the next touchdown (1), both ends included."""
    reference = human_gait_reference()
    if not np.allclose(np.diff(reference.phase), reference.phase[1] - reference.phase[0]):
        raise ValueError("the human gait reference must be sampled at evenly spaced phases")
    return np.radians(reference.mean)


class GaitTracker:
    """The human-curve gait tracker on the dm_control humanoid (see the module docstring)."""

    kind = "gait_tracker"
    space = PARAMETERS
    steering = ("step_time", "hip_scale", "hip_offset", "speed", "knee_scale", "knee_offset", "trunk_pitch",
                "turn_rate", "width", "lift", "arm_swing")
    chunk = 1
    memory_size = 7

    def __init__(self, scene: CompiledScene):
        self.dt, self.nu, self.nq = scene.dt, scene.model.nu, scene.model.nq
        self.layout = humanoid_layout(scene)
        self.curves = np.ascontiguousarray(human_curves())
        self.see(scene.scene.terrain)

    def see(self, terrain: Terrain) -> None:
        """See `terrain`: the ground map the kernel reads."""
        self.ground = ground_map(terrain)

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.empty((len(state), self.chunk, self.nu))
        _tracker_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, self.curves,
                        self.ground, *self.layout, self.nq, self.dt * self.chunk, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def curve_at(curves: np.ndarray, joint: int, phase: float) -> float:
    """People's angle (rad) of `joint` (0 hip, 1 knee, 2 ankle) at `phase` ∈ [0, 1], linearly interpolated."""
    position = min(max(phase, 0.0), 1.0) * (curves.shape[1] - 1)
    k = min(int(position), curves.shape[1] - 2)
    w = position - k
    return (1.0 - w) * curves[joint, k] + w * curves[joint, k + 1]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def step_clock(memory: np.ndarray, p: np.ndarray, s: np.ndarray, sensors: np.ndarray, interval: float,
               phase: np.ndarray, early: float, reach_ok: bool) -> int:
    """Advance one row's step clock by an update of `interval` s: its memory [2] (stance leg, time since that
    leg's touchdown) in place, each leg's phase of the gait cycle into `phase` [2]; -> the stance leg (0 left).
    `p` holds the `GAIT` parameters first; `sensors`, the humanoid.SENSORS addresses; `early`, the fraction of
    `touch_min` waived for this update's touchdown; `reach_ok`, whether a touchdown now may end the step at all
    (`landing_reach`)."""
    stance, clock = int(memory[STANCE]), memory[CLOCK]
    progress = clock / p[STEP_TIME]
    touching = s[sensors[CONTACT + 1 - stance]] > 0
    if (progress >= p[TOUCH_MIN] * (1.0 - early) and touching and reach_ok) or progress >= LONGEST_STEP:
        stance, clock, progress = 1 - stance, 0.0, 0.0
    landed = clock > 0.0 or s[sensors[CONTACT + stance]] > 0  # a step's clock starts at its touchdown
    memory[STANCE], memory[CLOCK] = stance, clock + interval if landed else 0.0
    phase[stance], phase[1 - stance] = 0.5 * min(progress, 1.0), 0.5 + 0.5 * min(progress, 1.0)
    return stance


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def swing_aims(p: np.ndarray, s: np.ndarray, sensors: np.ndarray, curves: np.ndarray, stance: int, phase: float,
               fx: float, fy: float, steer: float = 0.0) -> tuple[float, float]:
    """The swing thigh's aims (rad) at its `phase`: forward from vertical in the world (people's hip curve, scaled
    and offset) and outward from vertical, each with foot placement from the centre of mass against the stance
    foot blended in from 62.5 % of the cycle, whole from 87.5 %. (fx, fy): the heading. Foot placement is reckoned in
    the heading turned by `steer` (rad, + left) and turned back onto the heading, so that it stops the centre of
    mass drifting off that direction rather than off the heading."""
    c, t = math.cos(steer), math.sin(steer)
    d_fwd, d_lat, v_fwd, v_lat = com_from_foot(s, sensors, stance, fx * c - fy * t, fy * c + fx * t)
    placing = min(max(4.0 * (phase - 0.5) - 0.5, 0.0), 1.0)
    ahead = placing * (p[PLACE_POS] * d_fwd + p[PLACE_VEL] * (v_fwd - p[SPEED]))
    left = placing * (p[PLACE_POS_LAT] * d_lat + p[PLACE_VEL_LAT] * v_lat)
    thigh = p[HIP_OFFSET] + p[HIP_SCALE] * curve_at(curves, 0, phase) + ahead * c - left * t
    outward = 1.0 if stance == 1 else -1.0  # +y is outward for the left leg, which swings when the right stands
    lateral = outward * p[WIDTH] + ahead * t + left * c
    return thigh, lateral


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def mid_swing(phase: float) -> float:
    """0 to 1 and back over a leg's swing at its `phase`: sin² from 50 % to 100 % of the cycle, 1 at 75 %."""
    return math.sin(2.0 * math.pi * (phase - 0.5)) ** 2 if phase > 0.5 else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def swing_lift(memory: np.ndarray, p: np.ndarray, lift: float, trip_lift: float, seen: float, touching: bool,
               phase: float, stepped: bool, reach_ok: bool) -> float:
    """Knee flexion (rad) added to the swing leg's curve at its `phase`: `lift` over mid-swing (sin² from 50 % to
    100 % of the cycle), `trip_lift` for the rest of a step whose swing foot struck the ground (`touching`)
    between 55 % and the earliest touchdown (`touch_min` of `p`'s GAIT) or too far back to land (not `reach_ok`),
    and `seen` (for the ground ahead) over the swing, both fading out over the last quarter. Updates the row's
    stumble flag in `memory` [3] (cleared when a step begins: `stepped`)."""
    if stepped:
        memory[TRIPPED] = 0.0
    if touching and (0.55 < phase < 0.5 + 0.5 * p[TOUCH_MIN] or not reach_ok):
        memory[TRIPPED] = 1.0
    bump = mid_swing(phase)
    fade = min(1.0, 4.0 * (1.0 - phase)) if phase > 0.5 else 0.0
    return lift * bump + (trip_lift * memory[TRIPPED] + seen) * fade


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def ground_slope(s: np.ndarray, sensors: np.ndarray, stance: int, fx: float, fy: float) -> float:
    """The ground's slope (rad, + rising ahead, within ±MAX_SLOPE) from the other foot to the `stance` foot, both
    on the ground at a touchdown: the rise and run between each foot's lowest point (heel or toe) along the
    heading (fx, fy)."""
    ahead, behind = _lowest_point(s, sensors, stance), _lowest_point(s, sensors, 1 - stance)
    run = (ahead[0] - behind[0]) * fx + (ahead[1] - behind[1]) * fy
    slope = math.atan2(ahead[2] - behind[2], max(run, 0.1))
    return min(MAX_SLOPE, max(-MAX_SLOPE, slope))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def ground_at(ground: np.ndarray, x: float, y: float) -> float:
    """The height (m) of a `terrain.ground_map` at the sample nearest (x, y), clamped to the map's edges."""
    i = min(max(round((x - HFIELD_EXTENT[0]) / GROUND_MAP_STEP), 0), ground.shape[0] - 1)
    j = min(max(round((y - HFIELD_EXTENT[2]) / GROUND_MAP_STEP), 0), ground.shape[1] - 1)
    return ground[i, j]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def ground_under(s: np.ndarray, sensors: np.ndarray, ground: np.ndarray, foot: int) -> float:
    """The height (m) of the ground map under the middle of `foot` (0 left), between its heel and toe."""
    heel, toe = sensors[5 + 2 * foot], sensors[6 + 2 * foot]
    return ground_at(ground, 0.5 * (s[heel] + s[toe]), 0.5 * (s[heel + 1] + s[toe + 1]))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def landing_waiver(look_land: float, s: np.ndarray, sensors: np.ndarray, ground: np.ndarray,
                   memory: np.ndarray) -> float:
    """The fraction of touch_min waived now: `look_land` while the swing foot (of `memory`'s stance leg) is over
    ground at least LANDING_RISE higher than the stance foot's, else 0."""
    stance = int(memory[STANCE])
    higher = ground_under(s, sensors, ground, 1 - stance) - ground_under(s, sensors, ground, stance)
    return look_land if higher >= LANDING_RISE else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def landing_reach(land_ahead: float, s: np.ndarray, sensors: np.ndarray, memory: np.ndarray, fx: float,
                  fy: float) -> bool:
    """Whether a touchdown of the swing foot (of `memory`'s stance leg) now may end the step: always with
    `land_ahead` 0, else only with the foot's middle at least `land_ahead` - REACH_BEHIND m ahead of the centre of
    mass along the heading (fx, fy). A foot that strikes the ground further back (a bump caught early in the
    swing) would take the body's weight behind it and the body would pitch over it."""
    if land_ahead == 0.0:
        return True
    ahead = -com_from_foot(s, sensors, 1 - int(memory[STANCE]), fx, fy)[0]
    return ahead >= land_ahead - REACH_BEHIND


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def step_rise(s: np.ndarray, sensors: np.ndarray, ground: np.ndarray, stance: int) -> float:
    """How much higher (m, within [0, MAX_RISE]) the ground under the `stance` foot is than under the swing foot."""
    return min(max(ground_under(s, sensors, ground, stance) - ground_under(s, sensors, ground, 1 - stance), 0.0),
               MAX_RISE)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def rise_ahead(s: np.ndarray, sensors: np.ndarray, ground: np.ndarray, stance: int, fx: float, fy: float) -> float:
    """How much higher (m, within [0, MAX_RISE]) the ground's highest point within LOOK_AHEAD of the swing toe,
    along the heading (fx, fy), is than the ground under the middle of the `stance` foot."""
    base = ground_under(s, sensors, ground, stance)
    swing_toe = sensors[6 + 2 * (1 - stance)]
    top, samples = base, round(LOOK_AHEAD / GROUND_MAP_STEP)
    for k in range(samples + 1):
        reach = LOOK_AHEAD * k / samples
        top = max(top, ground_at(ground, s[swing_toe] + reach * fx, s[swing_toe + 1] + reach * fy))
    return min(top - base, MAX_RISE)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def stair_bend(stair_knee: float, s: np.ndarray, sensors: np.ndarray, ground: np.ndarray, memory: np.ndarray,
               stance: int, phase: np.ndarray, stepped: bool) -> tuple[float, float]:
    """Knee flexion (rad) added for a step up: (the swing knee's, the stance knee's). The swing knee bends
    `stair_knee` per metre its foot's ground is above the stance foot's, ramping in over the last quarter of the
    cycle, so the foot lands on the step with the knee bent; the stance knee starts its stance with the bend of
    the rise it stepped up (latched in `memory` [4] when a step begins: `stepped`) and straightens it linearly by
    STAIR_EXTEND of the cycle, lifting the body. `phase` [2]: each leg's phase."""
    if stepped:
        memory[RISE] = step_rise(s, sensors, ground, stance)
    landing = min(max(4.0 * (phase[1 - stance] - 0.75), 0.0), 1.0)
    holding = max(1.0 - phase[stance] / STAIR_EXTEND, 0.0)
    onto = step_rise(s, sensors, ground, 1 - stance) if landing > 0.0 else 0.0  # read late in a swing only
    return stair_knee * landing * onto, stair_knee * holding * memory[RISE]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _lowest_point(s: np.ndarray, sensors: np.ndarray, foot: int) -> tuple[float, float, float]:
    """World position of `foot`'s heel or toe, whichever is lower."""
    heel, toe = sensors[5 + 2 * foot], sensors[6 + 2 * foot]
    point = heel if s[heel + 2] <= s[toe + 2] else toe
    return s[point], s[point + 1], s[point + 2]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _tracker_kernel(state, sensed, memory, params, curves, ground, legs, arms, trunk, sensors, nq, interval,
                    controls):
    """One update of the tracker for every row: [b, nstate], [b, nsensor], [b, 7] memory (in place), [b, P]
    params, [3, K] human curves (rad), [nx, ny] ground map -> controls [b, chunk, nu] (written)."""
    angle, rate, cmd, phase = np.empty((2, 6)), np.empty((2, 6)), np.zeros((2, 6)), np.empty(2)
    for b in range(state.shape[0]):
        p, s = params[b], sensed[b]
        q, qd = state[b, 1 : 1 + nq], state[b, 1 + nq :]
        before = int(memory[b, STANCE])
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        early = landing_waiver(p[LOOK_LAND], s, sensors, ground, memory[b])
        reach_ok = landing_reach(p[LAND_AHEAD], s, sensors, memory[b], fx, fy)
        stance = step_clock(memory[b], p, s, sensors, interval, phase, early, reach_ok)
        swing = 1 - stance
        outward = 1.0 if swing == 0 else -1.0  # +y is outward for the left leg
        rise = rise_ahead(s, sensors, ground, stance, fx, fy)
        push = p[LOOK_PUSH] * step_rise(s, sensors, ground, stance)  # the stance knee's, up a step
        lift = swing_lift(memory[b], p, p[LIFT], p[TRIP_LIFT], p[LOOK_LIFT] * rise, s[sensors[CONTACT + swing]] > 0,
                          phase[swing], stance != before, reach_ok)
        bend_swing, bend_stance = stair_bend(p[STAIR_KNEE], s, sensors, ground, memory[b], stance, phase,
                                             stance != before)
        if stance != before:
            memory[b, SLOPE] = ground_slope(s, sensors, stance, fx, fy)
        slope = memory[b, SLOPE]
        roll_foot = -outward * p[ANKLE_LAT] * com_from_foot(s, sensors, stance, fx, fy)[3]
        heading_error = follow_heading(memory[b], HEADING, p[TURN_RATE], state[b, 0], yaw)
        read_legs(q, qd, legs, angle, rate)
        trunk_target = p[TRUNK_PITCH] + p[SLOPE_TRUNK] * slope
        pitch_torque = clip(p[TRUNK_KP] * (trunk_target - pitch) - p[TRUNK_KD] * pitch_rate)
        roll_torque = clip(p[TRUNK_KP] * (0.0 - roll) - p[TRUNK_KD] * roll_rate)
        yaw_torque = clip(p[YAW_KP] * heading_error - p[TRUNK_KD] * yaw_rate)
        thigh, lateral = swing_aims(p, s, sensors, curves, stance, phase[swing], fx, fy)
        hip_aim = thigh + p[SLOPE_HIP] * slope + p[LOOK_HIP] * rise + pitch
        balance_hips(cmd, angle, rate, swing, p[HIP_KP], p[HIP_KD], hip_aim, outward * (roll - lateral),
                     -outward * heading_error, pitch_torque, roll_torque, yaw_torque)
        for side in range(2):
            kp = p[STANCE_KP] if side == stance else p[JOINT_KP]
            knee = p[KNEE_OFFSET] + p[KNEE_SCALE] * curve_at(curves, 1, phase[side])
            knee += lift + bend_swing if side == swing else bend_stance - push
            ankle = p[ANKLE_OFFSET] + p[ANKLE_SCALE] * curve_at(curves, 2, phase[side]) + p[SLOPE_ANKLE] * slope
            inversion = roll_foot if side == stance else 0.0
            cmd[side, KN] = pd(kp, p[JOINT_KD], knee, angle[side, KN], rate[side, KN])
            cmd[side, AN] = pd(kp, p[JOINT_KD], ankle, angle[side, AN], rate[side, AN])
            cmd[side, AI] = pd(0.5 * p[JOINT_KP], p[JOINT_KD], inversion, angle[side, AI], rate[side, AI])
        write_body(controls[b, 0], cmd, angle, q, qd, legs, arms, trunk, p[ARM_SWING], p[JOINT_KP], p[JOINT_KD],
                   p[CHEST_LEAN])
        for t in range(1, controls.shape[1]):
            controls[b, t] = controls[b, 0]
