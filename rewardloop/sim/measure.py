"""Size and speed of bodies: what `rewardloop bodies` lists and the simulation benchmark measures."""

from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from rewardloop.sim.rollout import Simulator, zero_controls
from rewardloop.sim.scene import STATE_SPEC, Scene, compile_scene


@dataclass(frozen=True)
class BodyMeasure:
    """Size and speed of one body on flat ground."""

    dof: int
    actuators: int
    muscles: int
    timestep: float
    """Physics timestep (s)."""
    steps_per_second: float | None
    """Batched rollout speed with one thread per core; None when not timed."""


def measure_body(name: str, *, seconds: float = 0.5) -> BodyMeasure:
    """Compile `name` on flat ground and time batched stepping for about `seconds` (0 skips timing)."""
    scene = compile_scene(Scene(body=name))
    model = scene.model
    speed = batched_steps_per_second(scene, seconds=seconds) if seconds > 0 else None
    return BodyMeasure(model.nv, model.nu, len(scene.layout.muscles), scene.dt, speed)


def python_steps_per_second(scene, *, seconds: float) -> float:
    """Steps/s of a plain Python loop of mj_step from the standing state."""
    data = mujoco.MjData(scene.model)
    mujoco.mj_setState(scene.model, data, scene.initial_state, STATE_SPEC)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            mujoco.mj_step(scene.model, data)
        steps += 100
    return steps / (time.perf_counter() - start)


def batched_steps_per_second(scene, *, seconds: float, nthread: int | None = None, batch: int = 16,
                             horizon: int = 100) -> float:
    """Steps/s of batched `mujoco.rollout` ([batch, horizon] per call) with `nthread` threads."""
    control = zero_controls(scene, batch, horizon)
    with Simulator(scene, nthread=nthread) as sim:
        sim.open_loop(control)  # warm up the pool
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds or calls == 0:
            sim.open_loop(control)
            calls += 1
        elapsed = time.perf_counter() - start
    return float(np.float64(calls * batch * horizon) / elapsed)
