"""Structured controllers: feedback policies with a documented parameter vector, run for a whole batch.

A controller maps each trajectory's state and latest sensor readings, its own memory (the gait phase, the
stance leg) and its parameter vector to actuator controls for the next few physics steps. Every parameter has
bounds, a default, a unit and a meaning, so a policy search can move within the bounds and a person can read
what it found. The per-step work is one compiled kernel over the batch; `run_controller` drives it inside a
closed-loop batched rollout.

    controller = make_controller("gait_machine", scene)
    rollouts = run_controller(sim, controller, controller.space.default[None], nstep=2000)
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol

import numpy as np

from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import CompiledScene, Physics, compile_scene


@dataclass(frozen=True)
class Parameter:
    """One entry of a controller's parameter vector."""

    name: str
    low: float
    high: float
    default: float
    unit: str
    """SI unit, or '-' for a ratio or a relative gain."""
    meaning: str
    """What it sets, in a sentence."""
    sighted: bool = False
    """It acts only through rises of the ground the controller sees, so it does nothing on flat ground (where a
    search leaves it as it starts)."""
    uneven: bool = False
    """It reacts to what uneven ground does to a gait (a foot caught early on a bump), so on flat ground it does
    next to nothing and a search there leaves it as it starts, like a `sighted` one."""


@dataclass(frozen=True)
class ParameterSpace:
    """A controller's parameters in order, with vectors of their bounds and defaults."""

    parameters: tuple[Parameter, ...]

    def __post_init__(self) -> None:
        for p in self.parameters:
            if not p.low <= p.default <= p.high:
                raise ValueError(f"parameter {p.name}: default {p.default} outside [{p.low}, {p.high}]")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def size(self) -> int:
        return len(self.parameters)

    @property
    def low(self) -> np.ndarray:
        """[P] lower bounds."""
        return np.array([p.low for p in self.parameters])

    @property
    def high(self) -> np.ndarray:
        """[P] upper bounds."""
        return np.array([p.high for p in self.parameters])

    @property
    def default(self) -> np.ndarray:
        """[P] defaults."""
        return np.array([p.default for p in self.parameters])

    def index(self, name: str) -> int:
        """Position of parameter `name`; a UserError listing the valid names otherwise."""
        if name not in self.names:
            raise unknown_name("controller parameter", name, self.names)
        return self.names.index(name)

    def vector(self, values: dict[str, float], base: np.ndarray | None = None) -> np.ndarray:
        """Named values over `base` (the defaults when None) -> [P] vector; unknown or out-of-bounds names are
        a UserError."""
        out = (self.default if base is None else np.asarray(base, dtype=float)).copy()
        for name, value in values.items():
            p = self.parameters[self.index(name)]
            if not (np.isfinite(value) and p.low <= value <= p.high):
                raise UserError(f"controller parameter {name}={value} is outside its bounds [{p.low}, {p.high}]")
            out[self.index(name)] = value
        return out

    def narrowed(self, bounds: Mapping[str, tuple[float, float]]) -> ParameterSpace:
        """This space with some parameters' bounds narrowed to `bounds` (name -> (low, high)), defaults clipped
        into them; a UserError for an unknown name or bounds outside the parameter's own."""
        parameters = list(self.parameters)
        for name, (low, high) in bounds.items():
            p = parameters[self.index(name)]
            if not p.low <= low <= high <= p.high:
                raise UserError(f"bounds [{low}, {high}] for {name} must lie within [{p.low}, {p.high}]")
            parameters[self.index(name)] = replace(p, low=low, high=high, default=min(max(p.default, low), high))
        return ParameterSpace(tuple(parameters))

    def named(self, vector: np.ndarray) -> dict[str, float]:
        """[P] vector -> {name: value}."""
        return {name: float(v) for name, v in zip(self.names, vector, strict=True)}

    def reference(self) -> str:
        """The parameters as a Markdown table (name | bounds | default | unit | meaning)."""
        rows = ["| name | bounds | default | unit | meaning |", "|---|---|---|---|---|"]
        rows += [f"| `{p.name}` | [{p.low:g}, {p.high:g}] | {p.default:g} | {p.unit} | {p.meaning} |"
                 for p in self.parameters]
        return "\n".join(rows)


class Controller(Protocol):
    """A structured feedback controller for one compiled scene's body."""

    kind: str
    """Registry name in CONTROLLERS."""
    space: ParameterSpace
    """The parameter vector's meaning and bounds."""
    chunk: int
    """Physics steps between two updates of the controls."""
    memory_size: int
    """Entries of per-trajectory memory the controller keeps between updates (gait phase, stance leg, ...)."""
    steering: tuple[str, ...]
    """The parameters that steer the motion (speed, step length and timing, knee flexion, trunk lean, heading),
    as against balance gains: what a search that only steers a found gait moves."""

    def act(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        """Controls for the next chunk; updates `memory` in place.

        Args:
          state: [b, nstate] full-physics states now.
          sensed: [b, nsensor] sensor readings of the latest physics step.
          memory: [b, memory_size] the controller's memory (zeros at the start of a motion).
          params: [b, P] parameter vectors.
        Returns:
          [b, chunk, nu] controls.
        """
        ...


@dataclass(frozen=True)
class ControllerEntry:
    """Where a registered controller lives and what it drives (imported only when asked for)."""

    module: str
    cls: str
    actuator_kind: str
    """The actuators of the bodies it drives: 'torque', 'muscle' or 'servo'."""
    summary: str
    bodies: tuple[str, ...] = ()
    """The bodies it drives where not every body of its actuator kind has the parts it moves (none: all of them)."""


CONTROLLERS: dict[str, ControllerEntry] = {
    "fullbody_tracker": ControllerEntry("rewardloop.control.controllers.fullbody_tracker", "FullBodyTracker",
                                        "muscle", "the muscle tracker's legs with a stiff trunk and arms swinging "
                                        "against the legs, for the MyoSuite full body", bodies=("myofullbody",)),
    "gait_machine": ControllerEntry("rewardloop.control.controllers.gait_machine", "GaitMachine", "torque",
                                    "SIMBICON-style gait machine for the humanoid"),
    "gait_tracker": ControllerEntry("rewardloop.control.controllers.gait_tracker", "GaitTracker", "torque",
                                    "people's joint curves on a phase clock, SIMBICON balance, for the humanoid"),
    "muscle_tracker": ControllerEntry("rewardloop.control.controllers.muscle_tracker", "MuscleTracker", "muscle",
                                      "people's joint curves on a phase clock, SIMBICON balance, joint torques "
                                      "through the muscles, for the MyoSuite muscle legs"),
    "reflex": ControllerEntry("rewardloop.control.controllers.reflex", "Reflex", "muscle",
                              "Song & Geyer reflex circuit for the MyoSuite muscle legs"),
    "servo_tracker": ControllerEntry("rewardloop.control.controllers.servo_tracker", "ServoTracker", "servo",
                                     "people's joint curves on a phase clock from the robot's keyframe, SIMBICON "
                                     "balance and foot placement as joint-position servo targets"),
}
"""Every structured controller by kind name."""


def make_controller(kind: str, scene: CompiledScene) -> Controller:
    """The controller `kind` for this scene's body; a UserError for an unknown kind or the wrong body. It is built
    for the body as designed: under changed physics (`Scene.physics`, a robustness test) it does not know the
    draw, e.g. a muscle controller expects its muscles' nominal strength."""
    if kind not in CONTROLLERS:
        raise unknown_name("controller", kind, CONTROLLERS)
    entry = CONTROLLERS[kind]
    if entry.actuator_kind != scene.body.actuator_kind:
        raise UserError(f"controller {kind!r} drives {entry.actuator_kind} bodies; {scene.scene.body} has "
                        f"{scene.body.actuator_kind} actuators")
    if entry.bodies and scene.scene.body not in entry.bodies:
        raise UserError(f"controller {kind!r} drives {', '.join(entry.bodies)} (the parts it moves); not "
                        f"{scene.scene.body}")
    if scene.scene.physics != Physics():
        scene = compile_scene(replace(scene.scene, physics=Physics()))
    return getattr(importlib.import_module(entry.module), entry.cls)(scene)


def on_ground(controller: Controller, scene: CompiledScene) -> Controller:
    """`controller` walking on `scene`'s ground: a controller that sees the ground (it has `see(terrain)`, which
    points its maps at a terrain's) gets a copy seeing that one, the rest of it as built; any other is returned as
    is. Cheaper than building the controller again for each ground of a search (the maps are cached)."""
    if not hasattr(controller, "see"):
        return controller
    seeing = copy.copy(controller)
    seeing.see(scene.scene.terrain)
    return seeing


WALKERS: dict[str, str] = {"humanoid": "gait_tracker", "myolegs": "muscle_tracker",
                           "myofullbody": "fullbody_tracker", "berkeley_humanoid": "servo_tracker",
                           "unitree_g1": "servo_tracker"}
"""Body -> the controller kind that walks it (its main shipped gait is control/gaits/BODY.json); searches start from
every gait shipped for the body, and from this controller's defaults when there is none."""


def controller_for(scene: CompiledScene) -> str | None:
    """The kind of structured controller that walks this scene's body, or None when there is none."""
    return WALKERS.get(scene.scene.body)


class Carry(NamedTuple):
    """What a controlled motion carries from one segment to the next."""

    memory: np.ndarray
    """[B, memory_size] the controller's memory (zeros at the start of a motion)."""
    queue: np.ndarray
    """[B, latency, nu] commands on their way to the actuators (NaN before the first command)."""
    sensed: np.ndarray
    """[B, nsensor] the latest sensor readings (NaN before the motion starts: the initial state's own)."""

    @classmethod
    def fresh(cls, controller: Controller, scene: CompiledScene, batch: int) -> Carry:
        latency, model = scene.scene.physics.latency_steps, scene.model
        return cls(np.zeros((batch, controller.memory_size)), np.full((batch, latency, model.nu), np.nan),
                   np.full((batch, model.nsensordata), np.nan))

    def rows(self, index: np.ndarray) -> Carry:
        """A copy of some trajectories' carry (write it back with `put`)."""
        return Carry(self.memory[index], self.queue[index], self.sensed[index])

    def put(self, index: np.ndarray, part: Carry) -> None:
        self.memory[index], self.queue[index], self.sensed[index] = part.memory, part.queue, part.sensed


def run_controller(sim: Simulator, controller: Controller, params: np.ndarray, *, nstep: int,
                   initial_state: np.ndarray | None = None, carry: Carry | None = None) -> Rollouts:
    """Roll a batch out under a controller, its commands reaching the actuators after the scene's latency.

    Args:
      sim: a simulator of the controller's scene.
      params: [B, P] one parameter vector per trajectory.
      nstep: physics steps to simulate.
      initial_state: [nstate] or [B, nstate]; the scene's standing state by default.
      carry: the controller's memory, commands in flight and latest sensors, updated in place (continue a
        motion in segments: the segments then give the very motion of one run); a fresh one when None.
    """
    params = np.ascontiguousarray(params, dtype=float)
    if params.ndim != 2 or params.shape[1] != controller.space.size:
        raise UserError(f"controller parameters must have shape [B, {controller.space.size}], got {params.shape}")
    carry = carry or Carry.fresh(controller, sim.scene, len(params))

    def feedback(now: np.ndarray, sensed: np.ndarray, step: int, rows: slice) -> np.ndarray:
        commands = controller.act(now, sensed, carry.memory[rows], params[rows])
        return _delayed(carry.queue[rows], commands)

    started = not np.isnan(carry.sensed).any()
    rollouts = sim.closed_loop(feedback, batch=len(params), nstep=nstep, chunk=controller.chunk,
                               initial_state=initial_state, sensed=carry.sensed if started else None)
    carry.sensed[:] = rollouts.sensordata[:, -1]
    return rollouts


def _delayed(queue: np.ndarray, commands: np.ndarray) -> np.ndarray:
    """[b, chunk, nu] commands -> those reaching the actuators now; `queue` [b, latency, nu] is updated in
    place. Before the first command arrives, the actuators hold it."""
    latency = queue.shape[1]
    if not latency:
        return commands
    fresh = np.isnan(queue[:, 0, 0])
    queue[fresh] = commands[fresh, :1]
    pending = np.concatenate([queue, commands], axis=1)
    queue[:] = pending[:, -latency:]
    return pending[:, : commands.shape[1]]
