"""Plants: how a plan's targets become motion, for the planner's sampled rollouts and for the executed motion.

A plan is a [S, H, J] array of targets per step. What a target means depends on the plant:
- `PosturePD` (torque bodies): target joint postures; the PD law runs inside MuJoCo for the samples and in
  NumPy on the body's own motors for the executed motion.
- `PostureMuscle` (muscle bodies): target joint postures; the compiled muscle controller updates the
  excitations of a whole group of samples every few milliseconds.
- `RawControls` (the predictive-sampling baseline): the actuator controls themselves.
Only the planner's rollouts may use a coarser timestep; `execute` always steps the body's own model.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from rewardloop.control.controllers.lowlevel import PDController, PDGains, PostureSpace, pd_model, posture_space
from rewardloop.control.controllers.muscles import MuscleController, MuscleGains
from rewardloop.errors import UserError
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene


class Plant(Protocol):
    """Targets -> motion."""

    low: np.ndarray
    """[J] lower bound of a target."""
    high: np.ndarray
    """[J] upper bound of a target."""
    planner_scene: CompiledScene
    """The scene the planner's rollouts step (maybe a coarser timestep; its own actuators)."""

    def start(self, state: np.ndarray) -> np.ndarray:
        """[nstate] state -> [J] target that holds it, the initial plan."""
        ...

    def simulate(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        """Planner rollouts from one [nstate] state under [S, H, J] targets, on planner_scene."""
        ...

    def execute(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        """Executed motion from [nstate] under [1, N, J] targets on the body's own model; controls are the
        body's own actuator commands."""
        ...


def _coarse(scene: CompiledScene, planning_dt: float | None) -> CompiledScene:
    """A copy of the scene whose model steps at planning_dt (the same scene when None or equal)."""
    if planning_dt is None or abs(planning_dt - scene.dt) < 1e-12:
        return scene
    model = scene.model.__copy__()
    model.opt.timestep = planning_dt
    return dataclasses.replace(scene, model=model)


class PosturePD:
    """Target postures through a PD law on torque motors."""

    def __init__(self, scene: CompiledScene, gains: PDGains, *, planning_dt: float | None):
        self.scene, self.space = scene, posture_space(scene)
        self.low, self.high = self.space.low, self.space.high
        self.controller = PDController(scene, gains)
        model = pd_model(scene, gains, timestep=planning_dt)
        self.planner_scene = dataclasses.replace(scene, model=model)

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(self.space.read(state, self.scene.model)[0], self.low, self.high)

    def simulate(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        return sim.open_loop(targets, initial_state=state)

    def execute(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        return sim.closed_loop(lambda now, sensed, step, rows: self.controller(now, targets[rows, step])[:, None],
                               batch=1, nstep=targets.shape[1], chunk=1, initial_state=state)


def _steps_per_update(interval_s: float, dt: float) -> int:
    """Physics steps of `dt` per muscle-controller update. The interval must be a whole number of them, or
    the planner's rollouts and the executed motion would update the controller at different rates."""
    steps = round(interval_s / dt)
    if steps < 1 or abs(steps * dt - interval_s) > 1e-9:
        raise UserError(f"the muscle controller interval ({interval_s * 1e3:g} ms) must be a whole number of "
                        f"physics steps ({dt * 1e3:g} ms); pick a planning_dt that divides it")
    return steps


class PostureMuscle:
    """Target postures through the MPC² muscle controller."""

    def __init__(self, scene: CompiledScene, gains: MuscleGains, *, planning_dt: float | None):
        self.scene, self.gains = scene, gains
        self.controller = MuscleController(scene, gains)
        self.space: PostureSpace = self.controller.space
        self.low, self.high = self.space.low, self.space.high
        self.planner_scene = _coarse(scene, planning_dt)
        for dt in (scene.dt, self.planner_scene.dt):
            _steps_per_update(gains.interval_s, dt)

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(self.space.read(state, self.scene.model)[0], self.low, self.high)

    def _run(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        chunk = _steps_per_update(self.gains.interval_s, sim.scene.dt)

        def policy(now: np.ndarray, sensed: np.ndarray, step: int, rows: slice) -> np.ndarray:
            return np.repeat(self.controller(now, targets[rows, step])[:, None], chunk, axis=1)

        return sim.closed_loop(policy, batch=targets.shape[0], nstep=targets.shape[1], chunk=chunk,
                               initial_state=state)

    simulate = _run
    execute = _run


class RawControls:
    """Actuator controls directly (the predictive-sampling baseline)."""

    def __init__(self, scene: CompiledScene, *, planning_dt: float | None):
        self.scene = scene
        self.low, self.high = scene.ctrl_bounds()
        self.planner_scene = _coarse(scene, planning_dt)

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(np.zeros_like(self.low), self.low, self.high)

    def simulate(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        return sim.open_loop(targets, initial_state=state)

    execute = simulate
