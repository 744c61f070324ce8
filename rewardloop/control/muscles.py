"""The MPC² morphology-aware muscle controller: target postures -> muscle excitations, vectorized over samples.

Muscle lengths depend only on the posture. `LengthMap` poses a copy of the body at a few thousand postures
within the joint limits (coupled joints follow their equality constraints), reads each muscle's length and
fits a polynomial in the posture, so lengths at any target posture and moment arms (∂length/∂angle) come
for a whole batch from one matrix product. `MuscleController` then sets each muscle's desired force from
its length error, weighted by |moment arm| × joint error of the joints it crosses, and inverts MuJoCo's
force-length-velocity curves and activation dynamics to excitations in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import mujoco
import numpy as np

from rewardloop.control.lowlevel import PostureSpace, posture_space
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

    def __post_init__(self) -> None:
        if self.kp <= 0 or self.kd < 0 or self.error_scale <= 0 or self.interval_s <= 0:
            raise UserError("muscle gains need kp > 0, kd >= 0, error_scale > 0 and interval_s > 0")


class LengthMap:
    """Muscle length as a cubic polynomial of the posture, fitted to lengths measured on posed copies of the body.

    In normalised angles z = (q − centre) / half-range: L = c + a·z + zᵀ B z + d·z³ per muscle, so lengths
    and moment arms ∂L/∂q = (a + 2 B z + 3 d z²) / half-range are each one matrix product per batch.
    """

    def __init__(self, scene: CompiledScene, space: PostureSpace, *, samples: int = 3000, seed: int = 0):
        self.space = space
        self.centre, self.half = 0.5 * (space.low + space.high), 0.5 * space.span
        postures = np.random.default_rng(seed).uniform(space.low, space.high, size=(samples, space.size))
        lengths = measure_lengths(scene, space, postures)
        size, muscles = space.size, lengths.shape[1]
        self.pairs = np.triu_indices(size)
        self.coef, *_ = np.linalg.lstsq(self._basis(self._normalised(postures)), lengths, rcond=None)  # [1+J+P+J, M]
        linear, cubic = self.coef[1 : 1 + size].T, self.coef[-size:].T  # [M, J] each
        quad = np.zeros((muscles, size, size))
        quad[:, self.pairs[0], self.pairs[1]] = self.coef[1 + size : -size].T
        quadratic = 0.5 * (quad + quad.transpose(0, 2, 1))  # [M, J, J] symmetric
        # moment arms = (slope_constant + [z, z²] @ slope_weights) reshaped to [M, J]
        weights = np.zeros((2 * size, muscles, size))
        weights[:size] = 2 * quadratic.transpose(2, 0, 1)  # z_k -> 2 B[m, j, k]
        weights[size + np.arange(size), :, np.arange(size)] = 3 * cubic.T  # z_j² -> 3 d[m, j]
        self.slope_constant = (linear / self.half).reshape(-1)  # [M·J]
        self.slope_weights = (weights / self.half).reshape(2 * size, muscles * size)  # [2J, M·J]

    def _normalised(self, q: np.ndarray) -> np.ndarray:
        """[N, J] postures (rad) -> [N, J] z in [-1, 1] within the joint limits."""
        return (q - self.centre) / self.half

    def _basis(self, z: np.ndarray) -> np.ndarray:
        """[N, J] normalised angles -> [N, 1 + J + J(J+1)/2 + J] monomials."""
        products = z[:, self.pairs[0]] * z[:, self.pairs[1]]
        return np.concatenate([np.ones((len(z), 1)), z, products, z**3], axis=1)

    def lengths(self, q: np.ndarray) -> np.ndarray:
        """[B, J] postures (rad) -> [B, M] muscle lengths (m)."""
        return self._basis(self._normalised(q)) @ self.coef

    def lengths_and_moments(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[B, J] postures -> ([B, M] lengths (m), [B, M, J] moment arms (m/rad))."""
        z = self._normalised(q)
        slope = self.slope_constant + np.concatenate([z, z * z], axis=1) @ self.slope_weights
        return self._basis(z) @ self.coef, slope.reshape(len(z), -1, len(self.centre))


def measure_lengths(scene: CompiledScene, space: PostureSpace, postures: np.ndarray) -> np.ndarray:
    """[N, J] postures -> [N, M] muscle lengths read from a copy of the body posed at each one (m)."""
    model = scene.model
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scene.initial_state, STATE_SPEC)
    coupled = [(int(model.eq_obj1id[i]), int(model.eq_obj2id[i]), model.eq_data[i, :5].copy())
               for i in range(model.neq) if model.eq_type[i] == mujoco.mjtEq.mjEQ_JOINT]
    muscles = scene.layout.muscles
    out = np.empty((len(postures), len(muscles)))
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
    return out


@dataclass(frozen=True)
class MuscleParams:
    """MuJoCo muscle parameters of each muscle, as [M] arrays."""

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
        return cls(peak, optimal, prm[:, 0], lr[:, 0], prm[:, 4], prm[:, 5], prm[:, 6], prm[:, 7], prm[:, 8],
                   dyn[:, 0], dyn[:, 1])

    def normalised(self, length: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[B, M] lengths (m), velocities (m/s) -> normalised length and velocity as MuJoCo defines them."""
        norm_len = self.range_low + (length - self.length_low) / self.optimal
        return norm_len, velocity / (self.optimal * self.vmax)

    def active_curve(self, norm_len: np.ndarray, norm_vel: np.ndarray) -> np.ndarray:
        """[B, M] FL(L)·FV(V) of MuJoCo's muscle gain (unitless, peak force = 1).

        FL is two mirrored pairs of half-parabolas around L = 1, each pair as wide as 1 − lmin (below) or
        lmax − 1 (above): with s = |L − 1| / half that width, FL = 1 − s²/2 for s ≤ 1, (2 − s)²/2 up to 2, then 0.
        """
        width = np.where(norm_len <= 1, self._below_width, self._above_width)
        s = np.abs(norm_len - 1) / width
        fl = np.where(s <= 1, 1 - 0.5 * s * s, 0.5 * np.square(np.maximum(2 - s, 0.0)))
        v = np.clip(norm_vel, -1.0, self.fvmax - 1)
        fv = np.where(v <= 0, np.square(v + 1), self.fvmax - np.square(self.fvmax - 1 - v) / (self.fvmax - 1))
        return fl * fv

    def passive_curve(self, norm_len: np.ndarray) -> np.ndarray:
        """[B, M] passive force of MuJoCo's muscle bias, as a fraction of peak force."""
        u = np.maximum(norm_len - 1, 0.0) / self._above_width
        return self.fpmax * np.where(u <= 1, 0.5 * u * u, u - 0.5)

    @cached_property
    def _below_width(self) -> np.ndarray:
        """[M] half the width of the FL curve below the optimum, (1 − lmin) / 2."""
        return 0.5 * (1 - self.lmin)

    @cached_property
    def _above_width(self) -> np.ndarray:
        """[M] half the width of the FL curve above the optimum, (lmax − 1) / 2."""
        return 0.5 * (self.lmax - 1)


class MuscleController:
    """Target postures -> muscle excitations, vectorized over a batch."""

    def __init__(self, scene: CompiledScene, gains: MuscleGains, *, fit_samples: int = 3000):
        if scene.body.actuator_kind != "muscle":
            raise UserError(f"the muscle controller needs a muscle body, {scene.scene.body} has motors")
        self.scene, self.gains = scene, gains
        self.space = posture_space(scene)
        self.map = LengthMap(scene, self.space, samples=fit_samples)
        self.params = MuscleParams.of(scene)
        model = scene.model
        self._act = 1 + model.nq + model.nv + scene.layout.act_of_muscle
        self._muscles = scene.layout.muscles

    def __call__(self, state: np.ndarray, target: np.ndarray, target_length: np.ndarray | None = None) -> np.ndarray:
        """[B, nstate] states, [B, J] target postures (rad) -> [B, nu] excitations in [0, 1].

        target_length: [B, M] muscle lengths at the (clipped) targets, when already known (`target_lengths`).
        """
        q, qdot = self.space.read(state, self.scene.model)
        target = np.clip(target, self.space.low, self.space.high)
        if target_length is None:
            target_length = self.map.lengths(target)
        length, moment = self.map.lengths_and_moments(q)
        velocity = (moment @ qdot[:, :, None])[..., 0]
        force = self.desired_force(q, target, length, moment, velocity, target_length)
        norm_len, norm_vel = self.params.normalised(length, velocity)
        active = np.maximum(self.params.active_curve(norm_len, norm_vel), 0.05)
        wanted = np.clip((force - self.params.passive_curve(norm_len)) / active, 0.0, 1.0)
        excitation = np.zeros((state.shape[0], self.scene.model.nu))
        excitation[:, self._muscles] = self.excitation_for(state[:, self._act], wanted)
        return excitation

    def target_lengths(self, target: np.ndarray) -> np.ndarray:
        """[..., J] target postures (rad) -> [..., M] muscle lengths there (m), for a whole plan in one call."""
        flat = np.clip(target, self.space.low, self.space.high).reshape(-1, self.space.size)
        return self.map.lengths(flat).reshape(*target.shape[:-1], -1)

    def desired_force(self, q: np.ndarray, target: np.ndarray, length: np.ndarray, moment: np.ndarray,
                      velocity: np.ndarray, target_length: np.ndarray) -> np.ndarray:
        """[B, M] desired force as a fraction of peak: length error × |moment arm|-weighted joint error.

        Args:
          q, target: [B, J] posture now and target posture (rad).
          length, velocity, target_length: [B, M] muscle lengths (m) and lengthening velocities (m/s) now, and
            lengths at the target (m).
          moment: [B, M, J] moment arms now (m/rad).
        """
        g, p = self.gains, self.params
        arm = np.abs(moment)
        involvement = (arm @ np.abs(target - q)[:, :, None])[..., 0] / np.maximum(arm.sum(axis=2), 1e-9)
        involvement /= g.error_scale
        stretch = length - target_length  # + : longer than at the target, so pull
        drive = (stretch + g.kd * velocity) / p.optimal
        return np.clip(g.kp * drive * (g.min_involvement + np.minimum(involvement, 1.0)), 0.0, 1.0)

    def excitation_for(self, activation: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """[B, M] activations now, wanted activations -> excitations reaching them after one interval."""
        act = np.clip(activation, 0.0, 1.0)
        tau = np.where(wanted > act, self.params.tau_act * (0.5 + 1.5 * act),
                       self.params.tau_deact / (0.5 + 1.5 * act))
        return np.clip(act + tau * (wanted - act) / self.gains.interval_s, 0.0, 1.0)
