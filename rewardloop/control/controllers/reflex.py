"""A reflex controller for the muscle legs, after Song and Geyer (2015) and MyoSuite's MyoLegReflex; our own code.

Each leg's muscles act as eleven functional groups (`musclebody.MUSCLE_GROUPS`), each excited by spinal
reflexes whose pathways switch with the leg's phase:
- **stance / swing** switch on ground load: a leg is loaded when its foot's contact force exceeds
  LOAD_THRESHOLD body weights. Touchdown starts stance; lift-off starts swing (knee flexion first). While both
  feet are loaded, the leg further behind its placement target prepares to swing (hip flexors on, knee
  extensors off) in proportion to the load on the other foot.
- **stance**: positive force feedback of the vasti, soleus, gastrocnemii and rectus femoris holds the leg up;
  knee hyperextension beyond `knee_stance_off` inhibits the vasti and excites the biceps short head; the hips
  (gluteals, hamstrings and hip flexors) hold the trunk at `trunk_lean` pitch and the hip abductors and
  adductors hold it level (`lateral_lean`), both in proportion to the leg's load; the tibialis keeps the ankle
  near `ankle_target`, inhibited by the soleus.
- **swing**: the hip flexors and gluteals drive the leg angle (thigh minus half the knee, from vertical in the
  world, + forward) to the placement target `leg_angle` + `leg_speed_gain` × forward speed (the faster, the
  further ahead the foot lands); the knee flexes to `knee_swing`, then is held; within `leg_stop` of the
  target the hamstrings stop the leg; once the leg swings back it is held, the knee extending to
  `knee_reach`. The hip abductors and adductors aim the swing leg sideways at `leg_width` abduction plus
  `width_speed_gain` × sideways speed (the foot steps under a sideways fall).
- **transverse plane** (our addition; the hip rotations are free joints that Song & Geyer's planar model does
  not have, and left alone the pelvis spins on them): the muscles that rotate each hip, weighted by their moment
  arms, turn the pelvis back to the target heading about the loaded stance thigh (`yaw_p`, `yaw_d`) and hold
  every thigh unrotated (`rot_p`, `rot_d`); they add to their groups' excitations.
- **heading**: the target heading turns at `turn_rate`; its error lengthens the outer leg's placement target
  and shortens the inner one's by `turn_gain` rad per rad.
Angles are semantic (hip flexion + forward, knee flexion + bent, ankle dorsiflexion + toes up, hip adduction +
towards the midline). Controls are muscle excitations in [0.01, 1], updated every `chunk` physics steps from the
sensors of the latest step (a one-step feedback delay).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.humanoid import follow_heading, pelvis_frame
from rewardloop.control.controllers.musclebody import (
    ADDUCTION,
    ANKLE,
    BFSH,
    COM_VEL,
    CONTACT,
    GAS,
    GLU,
    GROUPS,
    HAB,
    HAD,
    HAM,
    HFL,
    HIP,
    KNEE,
    RF,
    SOL,
    TA,
    VAS,
    muscle_layout,
)
from rewardloop.sim.scene import CompiledScene

LOAD_THRESHOLD = 0.1
"""Foot contact force (body weights) above which a leg counts as loaded (Song & Geyer; MyoSuite)."""
UPDATE_S = 0.01
"""Time between two updates of the excitations (s), as MyoSuite's reflex controller."""

P = Parameter
PARAMETERS = ParameterSpace((
    # supraspinal targets
    P("trunk_lean", -0.2, 0.4, 0.1, "rad", "pelvis pitch the stance hips hold, + leaning forward"),
    P("leg_angle", 0.0, 0.6, 0.26, "rad", "swing leg placement angle from vertical, + forward, at rest"),
    P("leg_speed_gain", 0.0, 0.4, 0.035, "rad/(m/s)", "extra placement angle per m/s of forward speed"),
    P("leg_stop", 0.0, 0.3, 0.09, "rad", "leg angle short of the target at which the hamstrings stop the swing"),
    P("knee_swing", 0.3, 1.5, 0.7, "rad", "swing knee flexion at which knee flexion stops"),
    P("knee_reach", 0.0, 0.6, 0.09, "rad", "knee flexion the held swing leg extends to before touchdown"),
    P("knee_stance_off", 0.0, 0.5, 0.09, "rad", "stance knee flexion below which the vasti are inhibited"),
    P("ankle_target", -0.4, 0.8, 0.17, "rad", "ankle dorsiflexion the tibialis pulls towards"),
    # sagittal reflex gains (Song & Geyer's module numbers)
    P("hfl_trunk_p", 0.0, 10.0, 2.0, "1/rad", "hip flexors: stance trunk pitch error gain (module 3)"),
    P("hfl_trunk_d", 0.0, 5.0, 1.0, "s/rad", "hip flexors: stance trunk pitch rate gain (module 3)"),
    P("hfl_swing_p", 0.0, 4.0, 1.0, "1/rad", "hip flexors: swing leg angle error gain (module 6)"),
    P("hfl_swing_d", 0.0, 0.5, 0.1, "s/rad", "hip flexors: swing leg angle rate gain (module 6)"),
    P("hfl_hold_p", 0.0, 4.0, 1.0, "1/rad", "hip flexors: held swing hip angle gain (module 10)"),
    P("glu_trunk_p", 0.0, 4.0, 2.0, "1/rad", "gluteals: stance trunk pitch error gain (module 3)"),
    P("glu_trunk_d", 0.0, 2.0, 0.5, "s/rad", "gluteals: stance trunk pitch rate gain (module 3)"),
    P("glu_swing_p", 0.0, 4.0, 1.0, "1/rad", "gluteals: swing leg angle error gain (module 6)"),
    P("glu_swing_d", 0.0, 0.5, 0.1, "s/rad", "gluteals: swing leg angle rate gain (module 6)"),
    P("glu_hold_p", 0.0, 2.0, 0.5, "1/rad", "gluteals: held swing hip angle gain (module 10)"),
    P("ham_glu", 0.0, 3.0, 1.0, "-", "hamstrings: share of the gluteals' trunk balance (module 3)"),
    P("ham_stop_p", 0.0, 6.0, 2.0, "1/rad", "hamstrings: swing leg stop gain (module 9)"),
    P("rf_force", 0.0, 2.0, 0.3, "-", "rectus femoris: stance force feedback gain (module 1)"),
    P("rf_knee_d", 0.0, 0.5, 0.1, "s/rad", "rectus femoris: swing knee flexion rate brake (module 8)"),
    P("vas_force", 0.0, 4.0, 2.0, "-", "vasti: stance force feedback gain (module 1)"),
    P("vas_knee_p", 0.0, 4.0, 2.0, "1/rad", "vasti: inhibition by knee extension past knee_stance_off (module 2)"),
    P("vas_reach_p", 0.0, 1.0, 0.3, "1/rad", "vasti: held swing knee extension gain (module 10)"),
    P("bfsh_knee_p", 0.0, 4.0, 2.0, "1/rad", "biceps short head: stance knee hyperextension gain (module 2)"),
    P("bfsh_flex_d", 0.0, 0.5, 0.2, "s/rad", "biceps short head: swing knee flexion by leg rate (module 7)"),
    P("bfsh_flex_p", 0.0, 4.0, 2.0, "1/rad", "biceps short head: swing knee flexion to knee_swing (module 7)"),
    P("bfsh_hold", 0.0, 2.0, 1.0, "s/rad²", "biceps short head: knee hold, knee rate × leg angle error (module 8)"),
    P("bfsh_ham", 0.0, 4.0, 2.0, "-", "biceps short head: follows the hamstrings' stop (module 9)"),
    P("bfsh_ham_off", 0.0, 0.6, 0.3, "-", "biceps short head: hamstring excitation it follows above (module 9)"),
    P("bfsh_reach_p", 0.0, 4.0, 2.0, "1/rad", "biceps short head: held swing knee flexion gain (module 10)"),
    P("gas_force", 0.0, 4.0, 2.0, "-", "gastrocnemii: stance force feedback gain (module 2)"),
    P("sol_force", 0.0, 4.0, 2.0, "-", "soleus: stance force feedback gain (module 1)"),
    P("ta_ankle_p", 0.0, 6.0, 2.0, "1/rad", "tibialis: ankle angle gain (module 5)"),
    P("ta_sol", 0.0, 1.0, 0.5, "-", "tibialis: inhibition by the soleus in stance (module 5)"),
    # frontal plane
    P("lateral_lean", -0.2, 0.25, 0.0, "rad", "pelvis roll the stance hips hold, + the other (swing) side up"),
    P("leg_width", -0.1, 0.4, 0.17, "rad", "swing leg abduction from vertical at rest"),
    P("width_speed_gain", 0.0, 0.6, 0.17, "rad/(m/s)",
      "extra swing leg adduction per m/s of sideways speed towards the other leg's side"),
    P("hab_trunk_p", 0.0, 20.0, 10.0, "1/rad", "hip abductors: stance pelvis roll error gain (module 3)"),
    P("hab_trunk_d", 0.0, 2.0, 1.0, "s/rad", "hip abductors: stance pelvis roll rate gain (module 3)"),
    P("hab_swing_p", 0.0, 4.0, 2.0, "1/rad", "hip abductors: swing leg abduction error gain (module 6)"),
    P("had_trunk_p", 0.0, 4.0, 2.0, "1/rad", "hip adductors: stance pelvis roll error gain (module 3)"),
    P("had_trunk_d", 0.0, 1.0, 0.3, "s/rad", "hip adductors: stance pelvis roll rate gain (module 3)"),
    P("had_swing_p", 0.0, 4.0, 2.0, "1/rad", "hip adductors: swing leg abduction error gain (module 6)"),
    # transverse plane (not in Song & Geyer's planar model)
    P("yaw_p", 0.0, 10.0, 2.0, "1/rad", "hip rotators: stance pelvis yaw error gain, turning it about the thigh"),
    P("yaw_d", 0.0, 2.0, 0.3, "s/rad", "hip rotators: stance pelvis yaw rate gain"),
    P("rot_p", 0.0, 10.0, 1.0, "1/rad", "hip rotators: gain holding the thigh unrotated"),
    P("rot_d", 0.0, 1.0, 0.1, "s/rad", "hip rotators: damping of the thigh's rotation"),
    # steering and tone
    P("turn_rate", -1.0, 1.0, 0.0, "rad/s", "rate of the target heading, + turning left"),
    P("turn_gain", 0.0, 1.0, 0.3, "rad/rad", "placement lengthening of the outer leg per rad of heading error"),
    P("tone", 0.0, 0.1, 0.01, "-", "baseline excitation of every muscle"),
))
"""The reflex controller's parameters, in vector order. Defaults follow MyoSuite's MyoLegReflex scales (its
parameters at 1) converted to our angles; they are where gait searches begin, not a gait."""

(TRUNK_LEAN, LEG_ANGLE, LEG_SPEED_GAIN, LEG_STOP, KNEE_SWING, KNEE_REACH, KNEE_STANCE_OFF, ANKLE_TARGET,
 HFL_TRUNK_P, HFL_TRUNK_D, HFL_SWING_P, HFL_SWING_D, HFL_HOLD_P, GLU_TRUNK_P, GLU_TRUNK_D, GLU_SWING_P, GLU_SWING_D,
 GLU_HOLD_P, HAM_GLU, HAM_STOP_P, RF_FORCE, RF_KNEE_D, VAS_FORCE, VAS_KNEE_P, VAS_REACH_P, BFSH_KNEE_P, BFSH_FLEX_D,
 BFSH_FLEX_P, BFSH_HOLD, BFSH_HAM, BFSH_HAM_OFF, BFSH_REACH_P, GAS_FORCE, SOL_FORCE, TA_ANKLE_P, TA_SOL,
 LATERAL_LEAN, LEG_WIDTH, WIDTH_SPEED_GAIN, HAB_TRUNK_P, HAB_TRUNK_D, HAB_SWING_P, HAD_TRUNK_P, HAD_TRUNK_D,
 HAD_SWING_P, YAW_P, YAW_D, ROT_P, ROT_D, TURN_RATE, TURN_GAIN, TONE) = range(PARAMETERS.size)

STARTED = 0
"""Memory column: 1 once the phases were set from the first sensors."""
LOADED, STANCE, FLEX_KNEE, HOLD_KNEE, STOP_LEG, HOLD_LEG = range(6)
"""Per-leg memory columns (left leg at 1 + column, right at 7 + column): loaded at the last update, in stance,
and the swing's sub-phases (flexing the knee, holding it, stopping the leg, holding the leg)."""
LEG_MEMORY = 6


class Reflex:
    """The Song & Geyer reflex controller on the MyoSuite legs (see the module docstring)."""

    kind = "reflex"
    space = PARAMETERS
    steering = ("trunk_lean", "leg_angle", "leg_speed_gain", "knee_swing", "knee_reach", "knee_stance_off",
                "turn_rate")
    memory_size = 3 + 2 * LEG_MEMORY

    def __init__(self, scene: CompiledScene):
        self.nu, self.nq = scene.model.nu, scene.model.nq
        self.chunk = max(1, round(UPDATE_S / scene.dt))
        self.layout = muscle_layout(scene)

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        controls = np.zeros((len(state), self.chunk, self.nu))  # muscles outside the groups rest
        _reflex_kernel(np.ascontiguousarray(state), np.ascontiguousarray(sensed), memory, params, *self.layout,
                       self.nq, controls)
        return controls


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _reflex_kernel(state, sensed, memory, params, joints, members, force_sensor, peak_force, sensors, weight,
                   rotation, rotators, nq, controls):
    """One update for every row: [b, nstate], [b, nsensor], [b, 15] memory (in place), [b, P] params -> controls
    [b, chunk, nu] (written)."""
    angle, rate = np.empty((2, 4)), np.empty((2, 4))
    load, targets = np.empty(2), np.empty(2)
    force, stim = np.empty((2, len(GROUPS))), np.empty((2, len(GROUPS)))
    for b in range(state.shape[0]):
        p, s, m = params[b], sensed[b], memory[b]
        q, qd = state[b, 1 : 1 + nq], state[b, 1 + nq :]
        yaw, fx, fy, pitch, roll, pitch_rate, roll_rate, yaw_rate = pelvis_frame(s, sensors)
        vel = sensors[COM_VEL]
        v_fwd, v_lat = s[vel] * fx + s[vel + 1] * fy, -s[vel] * fy + s[vel + 1] * fx
        _read_legs(q, qd, s, joints, members, force_sensor, peak_force, sensors, weight, angle, rate, load, force)
        heading_error = follow_heading(m, 2 * LEG_MEMORY + 1, p[TURN_RATE], state[b, 0], yaw)
        for side in range(2):  # placement target in the pelvis frame; turning left lengthens the right leg's step
            turn = (-1.0 if side == 0 else 1.0) * p[TURN_GAIN] * heading_error
            targets[side] = p[LEG_ANGLE] + p[LEG_SPEED_GAIN] * v_fwd + turn + pitch
        if m[STARTED] == 0.0:
            _start_phases(m, load)
        swing_first = _swing_leg(angle, targets)
        for side in range(2):
            leg = m[1 + LEG_MEMORY * side : 1 + LEG_MEMORY * (side + 1)]
            _update_phase(leg, angle[side], rate[side], load[side] > LOAD_THRESHOLD, targets[side], p)
            both = load[0] > LOAD_THRESHOLD and load[1] > LOAD_THRESHOLD
            prepare = leg[STANCE] * (1.0 if both and swing_first == side else 0.0)
            frontal = 1.0 if side == 1 else -1.0  # Song & Geyer's frontal sign: + for the right leg
            _leg_stimulation(p, leg, prepare, angle[side], rate[side], load[side], load[1 - side], force[side],
                             targets[side], pitch, pitch_rate, frontal * roll, frontal * roll_rate,
                             frontal * v_lat, stim[side])
        _write_groups(controls[b, 0], stim, members)
        for side in range(2):
            balance = m[1 + LEG_MEMORY * side + STANCE] * load[side]
            _add_rotation(controls[b, 0], rotators[side], p, balance, -heading_error, yaw_rate - p[TURN_RATE],
                          rotation[side], q, qd)
        for t in range(1, controls.shape[1]):
            controls[b, t] = controls[b, 0]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _read_legs(q, qd, s, joints, members, force_sensor, peak_force, sensors, weight, angle, rate, load, force):
    """Semantic leg angles and rates [2, 4], foot loads [2] (body weights) and group forces [2, 11] (mean fraction
    of peak force; + pulling), all written."""
    for side in range(2):
        for j in range(4):
            angle[side, j] = joints[side, j, 2] * q[int(joints[side, j, 0])]
            rate[side, j] = joints[side, j, 2] * qd[int(joints[side, j, 1])]
        c = sensors[CONTACT + side]
        load[side] = math.sqrt(s[c + 1] ** 2 + s[c + 2] ** 2 + s[c + 3] ** 2) / weight
        for g in range(members.shape[1]):
            total, count = 0.0, 0
            for a in members[side, g]:
                if a >= 0:
                    total += -s[force_sensor[a]] / peak_force[a]
                    count += 1
            force[side, g] = total / count


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _start_phases(m, load):
    """Phases at the first update: both legs stand (at the walking start's heel strike the leading foot is about
    to land; the trailing leg, further behind its target, then prepares to swing)."""
    m[STARTED] = 1.0
    for side in range(2):
        base = 1 + LEG_MEMORY * side
        m[base + LOADED] = 1.0 if load[side] > LOAD_THRESHOLD else 0.0
        m[base + STANCE] = 1.0
        m[base + FLEX_KNEE] = m[base + HOLD_KNEE] = m[base + STOP_LEG] = m[base + HOLD_LEG] = 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _swing_leg(angle, targets):
    """The leg further behind its placement target (0 left, 1 right): the one to swing next."""
    behind_left = targets[0] - (angle[0, HIP] - 0.5 * angle[0, KNEE])
    behind_right = targets[1] - (angle[1, HIP] - 0.5 * angle[1, KNEE])
    return 0 if behind_left > behind_right else 1


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _update_phase(leg, angle, rate, loaded, target, p):
    """Advance one leg's phase [6] (in place): touchdown starts stance, lift-off starts swing, and the swing moves
    on from flexing the knee to holding it, stopping the leg and holding the leg."""
    leg_angle, leg_rate = angle[HIP] - 0.5 * angle[KNEE], rate[HIP] - 0.5 * rate[KNEE]
    if loaded and leg[LOADED] == 0.0:
        leg[STANCE], leg[FLEX_KNEE], leg[HOLD_KNEE], leg[STOP_LEG], leg[HOLD_LEG] = 1.0, 0.0, 0.0, 0.0, 0.0
    elif not loaded and leg[LOADED] == 1.0:
        leg[STANCE], leg[FLEX_KNEE] = 0.0, 1.0
    if leg[STANCE] == 0.0:
        if leg[FLEX_KNEE] == 1.0:
            if angle[KNEE] > p[KNEE_SWING]:
                leg[FLEX_KNEE], leg[HOLD_KNEE] = 0.0, 1.0
        else:
            if leg[HOLD_KNEE] == 1.0 and leg_angle > target:
                leg[HOLD_KNEE] = 0.0
            if leg_angle > target - p[LEG_STOP]:
                leg[STOP_LEG] = 1.0
            if leg[STOP_LEG] == 1.0 and leg_rate < 0.0:
                leg[HOLD_LEG] = 1.0
    leg[LOADED] = 1.0 if loaded else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _leg_stimulation(p, leg, prepare, angle, rate, load, load_other, force, target, pitch, pitch_rate, roll,
                     roll_rate, v_medial, stim):
    """One leg's group excitations [11] (written). `prepare` is 1 while the stance leg prepares to swing; roll,
    its rate and `v_medial`, the sideways speed towards the other leg, are signed for this leg (Song & Geyer's
    frontal convention)."""
    stance = leg[STANCE]
    swing = 1.0 - stance
    balance = stance * load  # trunk balance in proportion to the leg's load
    drive = prepare * load_other + swing  # swing-leg drive, starting while the other foot takes the weight
    hold = stance * (1.0 - prepare) + prepare * (1.0 - load_other)  # stance support while not handing over
    leg_angle, leg_rate = angle[HIP] - 0.5 * angle[KNEE], rate[HIP] - 0.5 * rate[KNEE]
    hip_hold = target + 0.5 * p[KNEE_REACH]
    hfl_3 = balance * max(-p[HFL_TRUNK_P] * (pitch - p[TRUNK_LEAN]) - p[HFL_TRUNK_D] * pitch_rate, 0.0)
    glu_3 = balance * max(p[GLU_TRUNK_P] * (pitch - p[TRUNK_LEAN]) + p[GLU_TRUNK_D] * pitch_rate, 0.0)
    ham_9 = leg[STOP_LEG] * max(p[HAM_STOP_P] * (leg_angle - (target - p[LEG_STOP])), 0.0)
    stim[HFL] = hfl_3 + drive * max(p[HFL_SWING_P] * (target - leg_angle) - p[HFL_SWING_D] * leg_rate, 0.0) \
        + leg[HOLD_LEG] * max(p[HFL_HOLD_P] * (hip_hold - angle[HIP]), 0.0)
    stim[GLU] = glu_3 + drive * max(p[GLU_SWING_P] * (leg_angle - target) + p[GLU_SWING_D] * leg_rate, 0.0) \
        + leg[HOLD_LEG] * max(p[GLU_HOLD_P] * (angle[HIP] - hip_hold), 0.0)
    stim[HAM] = p[HAM_GLU] * glu_3 + ham_9
    stim[RF] = hold * max(p[RF_FORCE] * force[RF], 0.0) + leg[HOLD_KNEE] * max(p[RF_KNEE_D] * rate[KNEE], 0.0)
    stim[VAS] = hold * (max(p[VAS_FORCE] * force[VAS], 0.0)
                        - max(p[VAS_KNEE_P] * (p[KNEE_STANCE_OFF] - angle[KNEE]), 0.0)) \
        + leg[HOLD_LEG] * max(p[VAS_REACH_P] * (angle[KNEE] - p[KNEE_REACH]), 0.0)
    stim[BFSH] = hold * max(p[BFSH_KNEE_P] * (p[KNEE_STANCE_OFF] - angle[KNEE]), 0.0) \
        + (prepare * load_other + leg[FLEX_KNEE]) * max(p[BFSH_FLEX_D] * leg_rate
                                                        + p[BFSH_FLEX_P] * (p[KNEE_SWING] - angle[KNEE]), 0.0) \
        + leg[HOLD_KNEE] * max(-p[BFSH_HOLD] * rate[KNEE] * (target - leg_angle), 0.0) \
        + max(p[BFSH_HAM] * (ham_9 - p[BFSH_HAM_OFF]), 0.0) \
        + leg[HOLD_LEG] * max(p[BFSH_REACH_P] * (p[KNEE_REACH] - angle[KNEE]), 0.0)
    stim[GAS] = stance * max(p[GAS_FORCE] * force[GAS], 0.0)
    sol_1 = stance * max(p[SOL_FORCE] * force[SOL], 0.0)
    stim[SOL] = sol_1
    stim[TA] = max(p[TA_ANKLE_P] * (p[ANKLE_TARGET] - angle[ANKLE]), 0.0) - stance * p[TA_SOL] * sol_1
    width = -p[LEG_WIDTH] + p[WIDTH_SPEED_GAIN] * v_medial - roll  # swing hip adduction aim
    stim[HAB] = balance * max(-p[HAB_TRUNK_P] * (roll - p[LATERAL_LEAN]) - p[HAB_TRUNK_D] * roll_rate, 0.0) \
        + drive * max(p[HAB_SWING_P] * (angle[ADDUCTION] - width), 0.0)
    stim[HAD] = balance * max(p[HAD_TRUNK_P] * (roll - p[LATERAL_LEAN]) + p[HAD_TRUNK_D] * roll_rate, 0.0) \
        + drive * max(p[HAD_SWING_P] * (width - angle[ADDUCTION]), 0.0)
    for g in range(stim.shape[0]):
        stim[g] = min(1.0, max(0.01, p[TONE] + stim[g]))


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _write_groups(out, stim, members):
    """Every muscle's excitation in `out` [nu] (written) from its group's [2, 11] excitation."""
    for side in range(2):
        for g in range(members.shape[1]):
            for a in members[side, g]:
                if a >= 0:
                    out[a] = stim[side, g]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _add_rotation(out, rotators, p, balance, yaw_error, yaw_rate, rotation, q, qd):
    """Add one leg's hip rotation module to the excitations `out` [nu] (in place): the push wanted on the hip
    rotation (+ raising its angle) turns the pelvis back to the heading about the loaded stance thigh and holds
    the thigh unrotated; each muscle that pushes that way (`rotators` [nu], from `muscle_layout`) adds its share."""
    qpos, dof, sign = int(rotation[0]), int(rotation[1]), rotation[2]
    want = balance * sign * (p[YAW_P] * yaw_error + p[YAW_D] * yaw_rate) - p[ROT_P] * q[qpos] - p[ROT_D] * qd[dof]
    for a in range(out.shape[0]):
        extra = rotators[a] * want
        if extra > 0.0:
            out[a] = min(1.0, out[a] + extra)
