"""In-hand manipulation with the posture-space planner: a muscle plant whose nominal posture grips the object.

MuJoCo MPC plans its Allegro cube task by sampling around the previous plan over a few hundred milliseconds; the
hand's nominal posture is part of the task. Here the hand starts with its fingers resting against the object
(`rewardloop.sim.hand_scene.close_fingers`); the planner's first plan asks every closing joint to go the
placement's `squeeze` rad further, into the object, so that the muscles press and friction holds it, and the
samples perturb that plan as any other. Everything else (the muscle controller, rollouts, updates) is the
posture plant's.
"""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np

from rewardloop.control.config import PlannerConfig
from rewardloop.control.controllers.muscles import MuscleGains
from rewardloop.control.planners.plants import PostureMuscle
from rewardloop.sim.hand import Manipulation, Placement, placement
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import STATE_SPEC, CompiledScene

MANIPULATION_PLANNER = PlannerConfig(samples=32, horizon_s=0.5, replan_every=25, planning_dt=0.002, knots=5,
                                     noise=0.04, muscle=MuscleGains(interval_s=0.004))
"""Planner settings of object tasks: MuJoCo MPC plans its Allegro cube task over about 0.25 s; 32 samples
replanned every 50 ms. The planner's model steps at the body's own 2 ms: at 4 ms the pinched cube jitters
(about 1.3 rad/s at rest against 0.1 in the executed motion), the reward's spin limit then outweighs the turn, and
the forearm's roll stalled half way on every seed."""
POUR_PLANNER = dataclasses.replace(MANIPULATION_PLANNER, noise=0.08, horizon_s=0.8, planning_dt=0.004)
"""Planner settings of pouring: wider samples, so that the forearm's roll (a range of π) is tried at about 0.25
rad, not 0.13: with the cube's noise the bottle reached its tilt only in the last second of five. The power grip
holds the bottle steady at 4-ms steps, which halve the planner's cost."""


def manipulation_planner(manipulation: Manipulation | None) -> PlannerConfig:
    """The planner settings of an object task."""
    return POUR_PLANNER if manipulation is not None and manipulation.object == "bottle" else MANIPULATION_PLANNER


FINGER_BAND_RAD = 0.15
"""The finger and thumb targets stay within this much of the gripping posture (rad): the planner moves the forearm
and the wrist freely and the fingers only to adjust the grip, so that its samples do not open the hand."""
FREE_JOINTS = ("pro_sup_r", "flexion_r", "deviation_r")
"""MJCF joints the planner moves over their whole range: forearm rotation and the wrist."""


class GripMuscle(PostureMuscle):
    """Target postures through the muscle controller; the first plan closes the grip on the object, and the finger
    targets stay near that grip (FINGER_BAND_RAD) while the forearm and wrist range freely."""

    def __init__(self, scene: CompiledScene, gains: MuscleGains, *, planning_dt: float | None):
        super().__init__(scene, gains, planning_dt=planning_dt)
        self.squeeze = self._squeeze_vector(placement(scene.scene.manipulation))
        grip = np.clip(super().start(scene.initial_state) + self.squeeze, self.low, self.high)
        banded = np.array([name not in FREE_JOINTS for name in self.space.names])
        self.low = np.where(banded, np.maximum(self.low, grip - FINGER_BAND_RAD), self.low)
        self.high = np.where(banded, np.minimum(self.high, grip + FINGER_BAND_RAD), self.high)

    def _squeeze_vector(self, where: Placement) -> np.ndarray:
        """[J] offset of the first plan from the current posture: a pinch's pressing offsets (`_pressing`); else the
        placement's `squeeze` rad along each closing joint's direction towards its grip, 0 on the other joints."""
        if where.pinch:
            return self._pressing(where)
        offset = np.zeros(len(self.low))
        fist = {joint: angle for joints in where.grip.values() for joint, angle in joints.items()}
        start = self.scene.initial_state[1 + np.asarray(self.space.qpos_adr)]
        for index, name in enumerate(self.space.names):
            if name in fist:
                offset[index] = where.squeeze * np.sign(fist[name] - start[index])
        return offset

    def _pressing(self, where: Placement) -> np.ndarray:
        """[J] for each finger of a pinch, the offset of its joints along Jᵀn, the direction whose torques press its
        tip straight into the object (n: the unit normal from the tip's nearest point to the object's), scaled so
        that its largest is the placement's `squeeze` rad; 0 on the forearm and the wrist. Offsets that only curl
        the fingers push the pads along the cube's faces, and the pinch squirts the cube out."""
        model, data = self.scene.model, mujoco.MjData(self.scene.model)
        mujoco.mj_setState(model, data, self.scene.initial_state, STATE_SPEC)
        mujoco.mj_forward(model, data)
        held = [index for index, name in enumerate(self.space.names) if name not in FREE_JOINTS]
        dofs = np.asarray(self.space.dof_adr)[held]
        offset = np.zeros(len(self.low))
        for finger in where.grip:
            tip = model.body(self.scene.body.fingertips[finger].body).id
            point, normal = _nearest(model, data, tip)
            jacobian = np.zeros((3, model.nv))
            mujoco.mj_jac(model, data, jacobian, None, point, tip)
            push = jacobian[:, dofs].T @ normal
            offset[held] += where.squeeze * push / np.abs(push).max()
        return offset

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(super().start(state) + self.squeeze, self.low, self.high)


def _nearest(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> tuple[np.ndarray, np.ndarray]:
    """([3] the point of `body`'s collision geoms nearest the object, [3] the unit normal from it into the object)."""
    found = np.zeros(6)
    best = (np.inf, np.zeros(3), np.zeros(3))
    target = model.geom("rl_object_geom").id
    for geom in np.flatnonzero((model.geom_bodyid == body) & (model.geom_contype > 0)):
        gap = mujoco.mj_geomDistance(model, data, int(geom), target, 0.5, found)
        if gap < best[0]:
            best = (gap, found[:3].copy(), found[3:].copy())
    gap, point, other = best
    return point, np.sign(gap) * (other - point) / np.linalg.norm(other - point)


def scripted_roll(scene: CompiledScene, seconds: float = 3.0, ramp_s: float = 1.5) -> Rollouts:
    """[1, T] the planner's first grip (the start posture plus the squeeze) held while the forearm's target rolls
    over `ramp_s`, for `seconds` in all: a motion with no planner. A bottle's forearm rolls towards the cup, to the
    end of its range (a pour); a cube's by the task's turn (the cube, on the forearm's axis, turns with it)."""
    gains = manipulation_planner(scene.scene.manipulation).muscle
    plant = GripMuscle(scene, gains, planning_dt=None)
    grip = plant.start(scene.initial_state)
    forearm = plant.space.names.index(FREE_JOINTS[0])
    manipulation = scene.scene.manipulation or Manipulation()
    if manipulation.object == "cube":
        end = grip[forearm] + math.radians(manipulation.turn_deg)
    else:
        end = plant.low[forearm] if manipulation.side == "right" else plant.high[forearm]
    times = np.arange(max(1, round(seconds / scene.dt))) * scene.dt
    targets = np.repeat(grip[None], len(times), axis=0)
    targets[:, forearm] += np.minimum(times / ramp_s, 1.0) * (end - grip[forearm])
    with Simulator(scene, nthread=1) as sim:
        return plant.execute(sim, scene.initial_state, targets[None])


def poured_seat(scene: CompiledScene) -> tuple[np.ndarray, np.ndarray]:
    """The object's ([3] position (m), [4] orientation (w, x, y, z)) in the palm's body frame at the end of the
    scripted pour (`scripted_roll`): where the grip seats a poured bottle (`rewardloop.sim.hand.BOTTLE_SEAT`)."""
    model = scene.model
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scripted_roll(scene).state[0, -1], STATE_SPEC)
    mujoco.mj_kinematics(model, data)
    palm = model.body(scene.body.palm.body).id  # type: ignore[union-attr]
    frame, bottle = data.xmat[palm].reshape(3, 3), model.body("rl_object").id
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, (frame.T @ data.xmat[bottle].reshape(3, 3)).ravel())
    return frame.T @ (data.xpos[bottle] - data.xpos[palm]), quat
