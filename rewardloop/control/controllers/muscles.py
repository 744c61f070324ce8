"""The MPC² morphology-aware muscle controller: target postures -> muscle excitations, for a batch of samples.

Muscle lengths depend only on the posture. `LengthMap` poses a copy of the body at a few thousand postures
within the joint limits (coupled joints follow their equality constraints), reads each muscle's length and
which joints it crosses, and fits each muscle's length as a cubic in the angles of those joints (at most 4
on myolegs), so its moment arms (∂length/∂angle) come from the same few coefficients. `MuscleController`
then sets each muscle's desired force from its length error, weighted by |moment arm| × joint error of the
joints it crosses, and inverts MuJoCo's force-length-velocity curves and activation dynamics to excitations
in [0, 1].

`MuscleTorques` is the torque counterpart for structured controllers (the muscle tracker): wanted joint torques
-> the activations that give them best now (bounded least squares over the same moment arms) -> excitations.

The controller runs every few milliseconds of every sampled rollout, so it is one numba-compiled kernel over
the batch (`_excite`, about 0.1 ms for 16 samples × 80 muscles) that releases the GIL: in a pipelined closed
loop one thread's controller runs while the other thread's physics steps, and neither waits for the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import mujoco
import numba
import numpy as np

from rewardloop.control.controllers.lowlevel import PostureSpace, posture_space
from rewardloop.errors import UserError
from rewardloop.sim.scene import STATE_SPEC, CompiledScene


@dataclass(frozen=True)
class MuscleGains:
    """Gains of the muscle controller."""

    kp: float = 30.0
    """Desired force (fraction of peak) per unit of length error relative to optimal fibre length."""
    kd: float = 0.05
    """Seconds of lengthening velocity added to the length error (damping), s."""
    error_scale: float = 0.15
    """Joint error (rad) at which a muscle's |moment arm|-weighted involvement reaches 1."""
    min_involvement: float = 0.3
    """Involvement floor, so muscles still hold a posture once their joints are on target."""
    interval_s: float = 0.004
    """Time between controller updates (s); activation dynamics are inverted over this interval."""
    balance: float = 0.0
    """Ankle strategy under a plan on a body with feet (`plants.AnkleBalance`): ankle dorsiflexion target change
    (rad) per m that the centre of mass, led by `balance_lead_s` of its velocity, is ahead of the feet's centre
    (0: none, as for a hand)."""
    balance_lead_s: float = 0.1
    """Seconds of the centre of mass's velocity the ankle strategy leads by (its damping)."""

    def __post_init__(self) -> None:
        if self.kp <= 0 or self.kd < 0 or self.error_scale <= 0 or self.interval_s <= 0:
            raise UserError("muscle gains need kp > 0, kd >= 0, error_scale > 0 and interval_s > 0")
        if self.balance < 0 or self.balance_lead_s < 0:
            raise UserError("muscle gains need balance >= 0 and balance_lead_s >= 0")


class LengthMap:
    """Each muscle's length as a cubic polynomial of the angles of the joints it crosses, fitted to lengths
    measured on posed copies of the body.

    A muscle crosses at most K joints (4 on myolegs). In normalised angles z = (q − centre) / half-range of
    those joints, L = c + a·z + Σ_{k≤l} b_kl z_k z_l + d·z³; `coef` holds each muscle's T = 1 + 2K + K(K+1)/2
    coefficients, zero on the slots of a muscle that crosses fewer than K joints. Moment arms
    ∂L/∂q = ∂L/∂z / half-range come from the same coefficients (`_muscle_length`).
    """

    def __init__(self, scene: CompiledScene, space: PostureSpace, *, samples: int = 3000, seed: int = 0):
        self.space = space
        self.centre, self.half = 0.5 * (space.low + space.high), 0.5 * space.span
        postures = np.random.default_rng(seed).uniform(space.low, space.high, size=(samples, space.size))
        lengths, crosses = measure_lengths(scene, space, postures)
        count = crosses.sum(axis=1)  # [M] joints each muscle crosses
        width = max(1, int(count.max()))
        self.joints = np.zeros((len(count), width), dtype=np.int64)  # [M, K] joint indices, padded with 0
        for m, row in enumerate(crosses):
            self.joints[m, : count[m]] = np.flatnonzero(row)
        used = np.arange(width) < count[:, None]  # [M, K]
        z = self._normalised(postures)[:, self.joints] * used  # [N, M, K], 0 on padding
        self.coef = np.zeros((len(count), _term_count(width)))  # [M, T]
        for m in range(len(count)):
            self.coef[m], *_ = np.linalg.lstsq(_cubic_basis(z[:, m]), lengths[:, m], rcond=None)
            self.coef[m] *= _cubic_basis(used[m : m + 1].astype(float))[0]  # exactly 0 on terms with padding

    def _normalised(self, q: np.ndarray) -> np.ndarray:
        """[N, J] postures (rad) -> [N, J] z in [-1, 1] within the joint limits."""
        return (q - self.centre) / self.half

    def lengths(self, q: np.ndarray) -> np.ndarray:
        """[N, J] postures (rad) -> [N, M] muscle lengths (m)."""
        return _lengths(np.ascontiguousarray(q, dtype=float), self.joints, self.coef, self.centre, self.half)


def _term_count(width: int) -> int:
    """Terms of a cubic in `width` variables without cross terms of order three: 1 + 2K + K(K+1)/2."""
    return 1 + 2 * width + width * (width + 1) // 2


def _cubic_basis(z: np.ndarray) -> np.ndarray:
    """[N, K] normalised angles -> [N, T] monomials in `_muscle_length`'s order: 1, z_k, z_k³, z_k·z_l (k ≤ l)."""
    pairs = np.triu_indices(z.shape[1])
    return np.concatenate([np.ones((len(z), 1)), z, z**3, z[:, pairs[0]] * z[:, pairs[1]]], axis=1)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _muscle_length(coef: np.ndarray, z: np.ndarray, slope: np.ndarray) -> float:
    """One muscle's length at normalised angles z [K] from its coefficients [T]; writes ∂L/∂z into slope [K]."""
    width = z.shape[0]
    value = coef[0]
    for k in range(width):
        linear, cubic = coef[1 + k], coef[1 + width + k]
        value += (linear + cubic * z[k] * z[k]) * z[k]
        slope[k] = linear + 3.0 * cubic * z[k] * z[k]
    term = 1 + 2 * width
    for k in range(width):
        for n in range(k, width):
            value += coef[term] * z[k] * z[n]
            slope[k] += coef[term] * z[n]
            slope[n] += coef[term] * z[k]  # the square term z_k² gets both halves of its derivative 2·b·z_k
            term += 1
    return value


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _lengths(q: np.ndarray, joints: np.ndarray, coef: np.ndarray, centre: np.ndarray,
             half: np.ndarray) -> np.ndarray:
    """[N, J] postures -> [N, M] muscle lengths (m)."""
    out = np.empty((q.shape[0], joints.shape[0]))
    z, slope = np.empty(joints.shape[1]), np.empty(joints.shape[1])
    for b in range(q.shape[0]):
        normal = (q[b] - centre) / half
        for m in range(joints.shape[0]):
            out[b, m] = _length_at(normal, joints[m], coef[m], z, slope)
    return out


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _length_at(normal: np.ndarray, joints: np.ndarray, coef: np.ndarray, z: np.ndarray, slope: np.ndarray) -> float:
    """One muscle's length from [J] normalised angles of the whole posture, its [K] joints and [T] coefficients;
    z and slope [K] are scratch (slope holds ∂L/∂z afterwards)."""
    for k in range(joints.shape[0]):
        z[k] = normal[joints[k]]
    return _muscle_length(coef, z, slope)


def measure_lengths(scene: CompiledScene, space: PostureSpace, postures: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[N, J] postures -> ([N, M] muscle lengths (m) read from a copy of the body posed at each one,
    [M, J] whether each muscle crosses each joint: a nonzero moment arm on it or on a joint it drives)."""
    model = scene.model
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    coupled = [(int(model.eq_obj1id[i]), int(model.eq_obj2id[i]), model.eq_data[i, :5].copy())
               for i in range(model.neq) if model.eq_type[i] == mujoco.mjtEq.mjEQ_JOINT]
    column = _posture_columns(model, space, {follower: leader for follower, leader, _ in coupled})
    muscles = scene.layout.muscles
    out = np.empty((len(postures), len(muscles)))
    moment = np.zeros((model.nu, model.nv))
    crosses = np.zeros((len(muscles), space.size), dtype=bool)
    for n, posture in enumerate(postures):
        data.qpos[space.qpos_adr] = posture
        for follower, leader, poly in coupled:  # y − y0 = Σ c_i (x − x0)^i
            fa, la = model.jnt_qposadr[follower], model.jnt_qposadr[leader]
            x = data.qpos[la] - model.qpos0[la]
            data.qpos[fa] = model.qpos0[fa] + np.polyval(poly[::-1], x)
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_tendon(model, data)
        mujoco.mj_transmission(model, data)
        out[n] = data.actuator_length[muscles]
        mujoco.mju_sparse2dense(moment, data.actuator_moment, data.moment_rownnz, data.moment_rowadr,
                                data.moment_colind)
        arm = np.abs(moment[muscles]) > 1e-9  # [M, nv]
        for dof, j in column.items():
            crosses[:, j] |= arm[:, dof]
    return out, crosses


def _posture_columns(model: mujoco.MjModel, space: PostureSpace, leader_of: dict[int, int]) -> dict[int, int]:
    """dof -> index in the posture space of the joint that moves it (itself, or the joint driving it)."""
    index = {int(model.jnt_dofadr[model.joint(name).id]): j for j, name in enumerate(space.names)}
    columns = {}
    for dof in range(model.nv):
        joint = int(model.dof_jntid[dof])
        j = index.get(int(model.jnt_dofadr[leader_of.get(joint, joint)]))
        if j is not None:
            columns[dof] = j
    return columns


class MuscleParams(NamedTuple):
    """MuJoCo muscle parameters of each muscle, as [M] arrays; compiled kernels read them stacked (`table`)."""

    peak: np.ndarray
    """Peak isometric force (N)."""
    optimal: np.ndarray
    """Optimal length L0 (m)."""
    range_low: np.ndarray
    """Normalised length at the lower end of the length range."""
    length_low: np.ndarray
    """Lower end of the actuator length range (m)."""
    lmin: np.ndarray
    lmax: np.ndarray
    vmax: np.ndarray
    """Maximum shortening velocity in optimal lengths per second."""
    fpmax: np.ndarray
    fvmax: np.ndarray
    tau_act: np.ndarray
    tau_deact: np.ndarray

    @classmethod
    def of(cls, scene: CompiledScene) -> MuscleParams:
        model, m = scene.model, scene.layout.muscles
        prm, lr = model.actuator_gainprm[m], model.actuator_lengthrange[m]
        peak = np.where(prm[:, 2] > 0, prm[:, 2], prm[:, 3] / np.maximum(model.actuator_acc0[m], 1e-10))
        optimal = (lr[:, 1] - lr[:, 0]) / np.maximum(prm[:, 1] - prm[:, 0], 1e-10)
        dyn = model.actuator_dynprm[m]
        return cls(*(np.ascontiguousarray(a, dtype=float) for a in (
            peak, optimal, prm[:, 0], lr[:, 0], prm[:, 4], prm[:, 5], prm[:, 6], prm[:, 7], prm[:, 8],
            dyn[:, 0], dyn[:, 1])))

    def table(self) -> np.ndarray:
        """[11, M] the fields stacked in order, for compiled kernels (rows named by `_PEAK` … `_TAU_DEACT`)."""
        return np.stack(self)


_PEAK, _OPTIMAL, _RANGE_LOW, _LENGTH_LOW, _LMIN, _LMAX, _VMAX, _FPMAX, _FVMAX, _TAU_ACT, _TAU_DEACT = range(11)
"""Rows of `MuscleParams.table()`, in field order."""


@numba.njit(cache=True, nogil=True, error_model="numpy")
def normalised(length: float, velocity: float, p: np.ndarray, m: int) -> tuple[float, float]:
    """Muscle m's length (m) and lengthening velocity (m/s) -> normalised length and velocity as MuJoCo has
    them; p is `MuscleParams.table()`."""
    norm_len = p[_RANGE_LOW, m] + (length - p[_LENGTH_LOW, m]) / p[_OPTIMAL, m]
    return norm_len, velocity / (p[_OPTIMAL, m] * p[_VMAX, m])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def active_curve(norm_len: float, norm_vel: float, lmin: float, lmax: float, fvmax: float) -> float:
    """FL(L)·FV(V) of MuJoCo's muscle gain (unitless, peak force = 1).

    FL is two mirrored pairs of half-parabolas around L = 1, each pair as wide as 1 − lmin (below) or
    lmax − 1 (above): with s = |L − 1| / half that width, FL = 1 − s²/2 for s ≤ 1, (2 − s)²/2 up to 2, then 0.
    """
    width = 0.5 * (1.0 - lmin) if norm_len <= 1.0 else 0.5 * (lmax - 1.0)
    s = abs(norm_len - 1.0) / width
    fl = 1.0 - 0.5 * s * s if s <= 1.0 else 0.5 * max(2.0 - s, 0.0) ** 2
    v = min(max(norm_vel, -1.0), fvmax - 1.0)
    fv = (v + 1.0) ** 2 if v <= 0.0 else fvmax - (fvmax - 1.0 - v) ** 2 / (fvmax - 1.0)
    return fl * fv


@numba.njit(cache=True, nogil=True, error_model="numpy")
def passive_curve(norm_len: float, lmax: float, fpmax: float) -> float:
    """Passive force of MuJoCo's muscle bias, as a fraction of peak force."""
    u = max(norm_len - 1.0, 0.0) / (0.5 * (lmax - 1.0))
    return fpmax * (0.5 * u * u if u <= 1.0 else u - 0.5)


class _MuscleKernel:
    """What both muscle controllers' compiled kernels read: the posture joints, the fitted `LengthMap`, the muscle
    parameters and where joints and activations sit in the state."""

    def __init__(self, scene: CompiledScene, fit_samples: int, what: str):
        if scene.body.actuator_kind != "muscle":
            raise UserError(f"{what} needs a muscle body, {scene.scene.body} has motors")
        self.scene = scene
        self.space = posture_space(scene)
        self.map = LengthMap(scene, self.space, samples=fit_samples)
        self.params = MuscleParams.of(scene)
        model = scene.model
        self._table = self.params.table()
        self._joint_index = np.stack([1 + self.space.qpos_adr, 1 + model.nq + self.space.dof_adr])  # [2, J]
        self._muscle_index = np.stack([1 + model.nq + model.nv + scene.layout.act_of_muscle,
                                       scene.layout.muscles]).astype(np.int64)  # [2, M]


class MuscleController(_MuscleKernel):
    """Target postures -> muscle excitations, for a batch at a time, in one compiled call that frees the GIL
    (so two threads' controllers and physics overlap in a pipelined closed loop)."""

    def __init__(self, scene: CompiledScene, gains: MuscleGains, *, fit_samples: int = 3000):
        super().__init__(scene, fit_samples, "the muscle controller")
        self.gains = gains
        self._gains = np.array([gains.kp, gains.kd, gains.error_scale, gains.min_involvement, gains.interval_s])

    def __call__(self, state: np.ndarray, target: np.ndarray) -> np.ndarray:
        """[B, nstate] states, [B, J] target postures (rad) -> [B, nu] excitations in [0, 1]."""
        target = np.clip(target, self.space.low, self.space.high)
        excitation = np.zeros((state.shape[0], self.scene.model.nu))
        _excite(np.ascontiguousarray(state, dtype=float), target, self._joint_index, self._muscle_index,
                self.map.joints, self.map.coef, self.map.centre, self.map.half, self._table, self._gains, excitation)
        return excitation


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _excite(state: np.ndarray, target: np.ndarray, joint_index: np.ndarray,
            muscle_index: np.ndarray, joints: np.ndarray, coef: np.ndarray, centre: np.ndarray, half: np.ndarray,
            p: np.ndarray, gains: np.ndarray, out: np.ndarray) -> None:
    """Writes [B, nu] excitations into `out` for [B, nstate] states and [B, J] target postures within limits.

    joint_index: [2, J] state index of each posture joint's angle and rate. muscle_index: [2, M] state index of
    each muscle's activation and its actuator index. joints, coef, centre, half: the `LengthMap`.
    p: [11, M] `MuscleParams.table()`. gains: kp, kd, error_scale, min_involvement, interval_s.
    """
    width, error_scale = joints.shape[1], gains[2]
    z, slope, per_half = np.empty(width), np.empty(width), 1.0 / half
    for b in range(state.shape[0]):
        angle, rate = state[b, joint_index[0]], state[b, joint_index[1]]  # [J] each
        normal, goal, error = (angle - centre) * per_half, (target[b] - centre) * per_half, np.abs(target[b] - angle)
        for m in range(joints.shape[0]):
            target_length = _length_at(goal, joints[m], coef[m], z, slope)
            length = _length_at(normal, joints[m], coef[m], z, slope)  # slope now at the current posture
            velocity = weighted = arms = 0.0
            for k in range(width):
                j = joints[m, k]
                arm = slope[k] * per_half[j]  # ∂L/∂q (m/rad); 0 on padding
                velocity += arm * rate[j]
                weighted += abs(arm) * error[j]
                arms += abs(arm)
            involvement = min(weighted / (max(arms, 1e-9) * error_scale), 1.0)
            out[b, muscle_index[1, m]] = _excitation(length, target_length, velocity, involvement,
                                                     state[b, muscle_index[0, m]], p, m, gains)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _excitation(length: float, target_length: float, velocity: float, involvement: float, activation: float,
                p: np.ndarray, m: int, gains: np.ndarray) -> float:
    """Muscle m's excitation in [0, 1] from its length, target length (m), lengthening velocity (m/s),
    involvement (its |moment arm|-weighted joint error over the error scale, at most 1) and activation now.

    Desired force (fraction of peak) = kp · (stretch + kd · velocity) / L0 × (floor + involvement); the wanted
    activation inverts force = FL·FV · activation + passive, and the excitation reaches it after one
    controller interval through MuJoCo's activation dynamics.
    """
    kp, kd, floor, interval = gains[0], gains[1], gains[3], gains[4]
    drive = (length - target_length + kd * velocity) / p[_OPTIMAL, m]
    force = min(max(kp * drive * (floor + involvement), 0.0), 1.0)
    norm_len, norm_vel = normalised(length, velocity, p, m)
    active = max(active_curve(norm_len, norm_vel, p[_LMIN, m], p[_LMAX, m], p[_FVMAX, m]), 0.05)
    wanted = min(max((force - passive_curve(norm_len, p[_LMAX, m], p[_FPMAX, m])) / active, 0.0), 1.0)
    return _reach(activation, wanted, p, m, interval)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _reach(activation: float, wanted: float, p: np.ndarray, m: int, interval: float) -> float:
    """Muscle m's excitation in [0, 1] that takes its activation now to `wanted` after `interval` s through
    MuJoCo's activation dynamics (time constants growing with activation when activating, shrinking when not)."""
    act = min(max(activation, 0.0), 1.0)
    tau = p[_TAU_ACT, m] * (0.5 + 1.5 * act) if wanted > act else p[_TAU_DEACT, m] / (0.5 + 1.5 * act)
    return min(max(act + tau * (wanted - act) / interval, 0.0), 1.0)


TORQUE_SCALE = 100.0
"""Joint torque (N·m) that weighs as much in `MuscleTorques`' least squares as one muscle fully active."""


class MuscleTorques(_MuscleKernel):
    """Wanted joint torques -> muscle excitations, for a batch at a time, in one compiled call that frees the GIL.

    Each muscle's torque per unit of activation is its moment arms (the `LengthMap`'s slopes) × peak force ×
    FL·FV now; its passive force is subtracted first. The activations a ∈ [0, 1] minimise
    ‖torque(a) − wanted‖² / TORQUE_SCALE² + effort · ‖a‖² (projected coordinate descent from the present
    activations), so the antagonists stay quiet and the effort is shared among the agonists; the excitations reach
    those activations after one controller interval through MuJoCo's activation dynamics. A torque controller on
    muscles, where `MuscleController` is a posture controller.
    """

    def __init__(self, scene: CompiledScene, *, interval_s: float, effort: float = 0.01, sweeps: int = 12,
                 fit_samples: int = 3000):
        super().__init__(scene, fit_samples, "muscle torques")
        self._settings = np.array([effort * TORQUE_SCALE**2, interval_s, sweeps])

    def __call__(self, state: np.ndarray, torque: np.ndarray) -> np.ndarray:
        """[B, nstate] states, [B, J] wanted torques (N·m) on the posture joints -> [B, nu] excitations in [0, 1]."""
        return self._solve(state, torque, excite=True)

    def activations(self, state: np.ndarray, torque: np.ndarray) -> np.ndarray:
        """[B, nstate] states, [B, J] wanted torques (N·m) -> [B, M] the activations that give them best now."""
        return self._solve(state, torque, excite=False)[:, self.scene.layout.muscles]

    def _solve(self, state: np.ndarray, torque: np.ndarray, *, excite: bool) -> np.ndarray:
        out = np.zeros((state.shape[0], self.scene.model.nu))
        _torque_excite(np.ascontiguousarray(state, dtype=float), np.ascontiguousarray(torque, dtype=float),
                       self._joint_index, self._muscle_index, self.map.joints, self.map.coef, self.map.centre,
                       self.map.half, self._table, self._settings, excite, out)
        return out


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _torque_excite(state: np.ndarray, torque: np.ndarray, joint_index: np.ndarray, muscle_index: np.ndarray,
                   joints: np.ndarray, coef: np.ndarray, centre: np.ndarray, half: np.ndarray, p: np.ndarray,
                   settings: np.ndarray, excite: bool, out: np.ndarray) -> None:
    """Writes [B, nu] excitations (or, `excite` False, the wanted activations) into `out` for [B, nstate] states
    and [B, J] wanted torques (N·m).

    joint_index, muscle_index, joints, coef, centre, half, p: as `_excite`'s. settings: effort (already × the
    torque scale²), interval_s, sweeps.
    """
    count, width, njoint = joints.shape[0], joints.shape[1], centre.shape[0]
    effort, interval, sweeps = settings[0], settings[1], int(settings[2])
    z, slope, per_half = np.empty(width), np.empty(width), 1.0 / half
    gain = np.empty((count, width))  # [M, K] torque per unit activation on each muscle's joints
    wanted, act = np.empty(njoint), np.empty(count)
    for b in range(state.shape[0]):
        angle, rate = state[b, joint_index[0]], state[b, joint_index[1]]
        normal = (angle - centre) * per_half
        wanted[:] = torque[b]
        for m in range(count):
            length = _length_at(normal, joints[m], coef[m], z, slope)
            velocity = 0.0
            for k in range(width):
                velocity += slope[k] * per_half[joints[m, k]] * rate[joints[m, k]]
            norm_len, norm_vel = normalised(length, velocity, p, m)
            active = max(active_curve(norm_len, norm_vel, p[_LMIN, m], p[_LMAX, m], p[_FVMAX, m]), 0.05)
            passive = passive_curve(norm_len, p[_LMAX, m], p[_FPMAX, m])
            for k in range(width):
                arm = slope[k] * per_half[joints[m, k]]  # ∂L/∂q; a muscle's tension T gives the torque −arm·T
                gain[m, k] = -arm * p[_PEAK, m] * active
                wanted[joints[m, k]] += arm * p[_PEAK, m] * passive
            act[m] = min(max(state[b, muscle_index[0, m]], 0.0), 1.0)
        _bounded_least_squares(gain, joints, wanted, effort, sweeps, act)
        for m in range(count):
            out[b, muscle_index[1, m]] = _reach(state[b, muscle_index[0, m]], act[m], p, m, interval) if excite \
                else act[m]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _bounded_least_squares(gain: np.ndarray, joints: np.ndarray, wanted: np.ndarray, effort: float, sweeps: int,
                           x: np.ndarray) -> None:
    """x ∈ [0, 1]^M (in place, from its value) minimising ‖G·x − wanted‖² + effort·‖x‖², by `sweeps` sweeps of
    projected coordinate descent. G is sparse, as a muscle crosses few joints: muscle m's column holds gain[m, k]
    on joint joints[m, k] ([M, K] each; a joint at most once per row, padding slots hold 0). Each coordinate reads
    and updates the residual G·x − wanted on its own joints only, so a sweep costs M·K, not M² (the full body has
    416 muscles)."""
    count, width = gain.shape
    residual = -wanted
    for m in range(count):
        for k in range(width):
            residual[joints[m, k]] += gain[m, k] * x[m]
    for _ in range(sweeps):
        for m in range(count):
            curvature, grad = effort, effort * x[m]
            for k in range(width):
                curvature += gain[m, k] * gain[m, k]
                grad += gain[m, k] * residual[joints[m, k]]
            if curvature <= 0.0:  # no effort and a muscle without leverage now: nothing to choose
                continue
            new = min(max(x[m] - grad / curvature, 0.0), 1.0)
            step = new - x[m]
            if step != 0.0:
                x[m] = new
                for k in range(width):
                    residual[joints[m, k]] += gain[m, k] * step
