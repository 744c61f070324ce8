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

import mujoco
import numpy as np

from rewardloop.control.config import PlannerConfig
from rewardloop.control.controllers.muscles import MuscleGains
from rewardloop.control.planners.plants import PostureMuscle
from rewardloop.sim.hand import Manipulation, Placement, placement
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import STATE_SPEC, CompiledScene

MANIPULATION_PLANNER = PlannerConfig(samples=32, horizon_s=0.5, replan_every=25, planning_dt=0.004, knots=5,
                                     noise=0.04, muscle=MuscleGains(interval_s=0.004))
"""Planner settings of object tasks: MuJoCo MPC plans its Allegro cube task over about 0.25 s; 32 samples
replanned every 50 ms keep a 5-s motion within about two minutes on two shared cores."""
POUR_PLANNER = dataclasses.replace(MANIPULATION_PLANNER, noise=0.08, horizon_s=0.8)
"""Planner settings of pouring: wider samples, so that the forearm's roll (a range of π) is tried at about 0.25
rad, not 0.13: with the cube's noise the bottle reached its tilt only in the last second of five."""


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
        """[J] offset of the first plan from the current posture: the placement's `squeeze` rad along each closing
        joint's direction towards its grip, 0 on the other joints."""
        offset = np.zeros(len(self.low))
        fist = {joint: angle for joints in where.grip.values() for joint, angle in joints.items()}
        start = self.scene.initial_state[1 + np.asarray(self.space.qpos_adr)]
        for index, name in enumerate(self.space.names):
            if name in fist:
                offset[index] = where.squeeze * np.sign(fist[name] - start[index])
        return offset

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(super().start(state) + self.squeeze, self.low, self.high)


def scripted_pour(scene: CompiledScene, seconds: float = 3.0, ramp_s: float = 1.5) -> Rollouts:
    """[1, T] the planner's first grip (the start posture plus the squeeze) held while the forearm's target rolls
    towards the cup, to the end of its range over `ramp_s`, for `seconds` in all: a pour with no planner."""
    gains = manipulation_planner(scene.scene.manipulation).muscle
    plant = GripMuscle(scene, gains, planning_dt=None)
    grip = plant.start(scene.initial_state)
    forearm = plant.space.names.index(FREE_JOINTS[0])
    manipulation = scene.scene.manipulation
    end = plant.low[forearm] if manipulation is not None and manipulation.side == "right" else plant.high[forearm]
    times = np.arange(max(1, round(seconds / scene.dt))) * scene.dt
    targets = np.repeat(grip[None], len(times), axis=0)
    targets[:, forearm] += np.minimum(times / ramp_s, 1.0) * (end - grip[forearm])
    with Simulator(scene, nthread=1) as sim:
        return plant.execute(sim, scene.initial_state, targets[None])


def poured_seat(scene: CompiledScene) -> tuple[np.ndarray, np.ndarray]:
    """The object's ([3] position (m), [4] orientation (w, x, y, z)) in the palm's body frame at the end of the
    scripted pour: where the grip seats a poured bottle (`rewardloop.sim.hand.BOTTLE_SEAT`)."""
    model = scene.model
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, scripted_pour(scene).state[0, -1], STATE_SPEC)
    mujoco.mj_kinematics(model, data)
    palm = model.body(scene.body.palm.body).id  # type: ignore[union-attr]
    frame, bottle = data.xmat[palm].reshape(3, 3), model.body("rl_object").id
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, (frame.T @ data.xmat[bottle].reshape(3, 3)).ravel())
    return frame.T @ (data.xpos[bottle] - data.xpos[palm]), quat
