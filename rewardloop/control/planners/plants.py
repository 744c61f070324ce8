"""Plants: how a plan's targets become motion, for the planner's sampled rollouts and for the executed motion.

A plan is a [S, H, J] array of targets per step. What a target means depends on the plant:
- `PosturePD` (torque bodies): target joint postures; the PD law runs inside MuJoCo for the samples and in
  NumPy on the body's own motors for the executed motion.
- `PostureMuscle` (muscle bodies): target joint postures; the compiled muscle controller updates the
  excitations of a whole group of samples every few milliseconds. On legs, an ankle strategy under the plan
  (`AnkleBalance`) keeps the centre of mass over the feet, so a plan need not balance a slow muscle body itself.
- `PostureServo` (robots): target joint postures are the joint-position servos' own controls, so the planner's
  rollouts and the executed motion run the body's own model with no Python per step.
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
from rewardloop.sim.bodies import SIDES
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


class AnkleBalance:
    """The ankle strategy of a person standing: both ankles' targets turned against the centre of mass's lead over
    the feet, along the feet's heel-to-toe line. Held at its start posture, the muscle legs topple backwards in
    1.4 s on flat or rough ground; a fixed 0.05-rad dorsiflexion keeps them up where 0.035 and 0.065 do not
    (rough ground, seed 0); with this strategy at 2-16 rad/m and a 0.1-s lead they stand 10 s on every ground tried
    (rough seeds 0-3 and 5, 2026-12-05)."""

    def __init__(self, scene: CompiledScene, space: PostureSpace, *, gain: float, lead_s: float):
        body, sensors = scene.body, scene.layout.sensors
        refs = [body.joints[f"{side}_ankle_dorsiflexion"] for side in SIDES]
        self.columns = np.array([space.names.index(ref.mjcf) for ref in refs])
        self.signs = np.array([ref.sign for ref in refs])
        self.heels = np.array([sensors[f"{side}_heel_pos"][0] for side in SIDES])
        self.toes = np.array([sensors[f"{side}_toe_pos"][0] for side in SIDES])
        self.com, self.velocity = sensors["com_pos"][0], sensors["com_vel"][0]
        self.gain, self.lead_s = gain, lead_s

    def __call__(self, sensed: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """[B, nsensor] sensor readings, [B, J] posture targets -> [B, J] targets with the ankles turned."""
        xy = np.arange(2)
        heel = sensed[:, self.heels[:, None] + xy].mean(axis=1)  # [B, 2]
        toe = sensed[:, self.toes[:, None] + xy].mean(axis=1)
        forward = (toe - heel) / np.maximum(np.linalg.norm(toe - heel, axis=1, keepdims=True), 1e-6)
        lead = sensed[:, self.com + xy] + self.lead_s * sensed[:, self.velocity + xy] - 0.5 * (heel + toe)
        ahead = (lead * forward).sum(axis=1)  # [B] m
        turned = targets.copy()
        turned[:, self.columns] -= self.signs * self.gain * ahead[:, None]
        return turned


def ankle_balance(scene: CompiledScene, space: PostureSpace, gains: MuscleGains) -> AnkleBalance | None:
    """The ankle strategy `gains` ask for on `scene`'s body; None where they ask for none or it has no feet."""
    if gains.balance == 0 or not scene.body.feet:
        return None
    return AnkleBalance(scene, space, gain=gains.balance, lead_s=gains.balance_lead_s)


class PostureMuscle:
    """Target postures through the MPC² muscle controller, under the ankle strategy where the gains ask for it."""

    def __init__(self, scene: CompiledScene, gains: MuscleGains, *, planning_dt: float | None):
        self.scene, self.gains = scene, gains
        self.controller = MuscleController(scene, gains)
        self.space: PostureSpace = self.controller.space
        self.balance = ankle_balance(scene, self.space, gains)
        self.low, self.high = self.space.low, self.space.high
        self.planner_scene = _coarse(scene, planning_dt)
        for dt in (scene.dt, self.planner_scene.dt):
            _steps_per_update(gains.interval_s, dt)

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(self.space.read(state, self.scene.model)[0], self.low, self.high)

    def _run(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        chunk = _steps_per_update(self.gains.interval_s, sim.scene.dt)

        def policy(now: np.ndarray, sensed: np.ndarray, step: int, rows: slice) -> np.ndarray:
            aim = targets[rows, step] if self.balance is None else self.balance(sensed, targets[rows, step])
            return np.repeat(self.controller(now, aim)[:, None], chunk, axis=1)

        return sim.closed_loop(policy, batch=targets.shape[0], nstep=targets.shape[1], chunk=chunk,
                               initial_state=state)

    simulate = _run
    execute = _run


class PostureServo:
    """Target postures as the controls of a robot's joint-position servos (its own gains)."""

    def __init__(self, scene: CompiledScene, *, planning_dt: float | None):
        self.scene, self.space = scene, posture_space(scene)
        self.low, self.high = scene.ctrl_bounds()
        self.planner_scene = _coarse(scene, planning_dt)

    def start(self, state: np.ndarray) -> np.ndarray:
        return np.clip(self.space.read(state, self.scene.model)[0], self.low, self.high)

    def simulate(self, sim: Simulator, state: np.ndarray, targets: np.ndarray) -> Rollouts:
        return sim.open_loop(targets, initial_state=state)

    execute = simulate


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
