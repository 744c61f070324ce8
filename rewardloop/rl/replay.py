"""`rewardloop replay` of a trained network policy: its deterministic run in another scene (other ground, pushes,
changed physics, MotionVL's randomization, another timestep or integrator for sim-to-sim checks).

The structured controllers' replay lives in `rewardloop.control.commands`; it hands a folder holding policy.pt here.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from pathlib import Path

import mujoco

from rewardloop.control.trajectory import NetworkPolicy, Trajectory, replayed
from rewardloop.errors import UserError, unknown_name
from rewardloop.rl.policy import TrainedPolicy, run_policy
from rewardloop.rl.randomize import Randomization
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene

INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "rk4": mujoco.mjtIntegrator.mjINT_RK4,
               "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
"""--integrator name -> MuJoCo's integrator."""


@dataclasses.dataclass(frozen=True)
class SimChange:
    """A sim-to-sim change of the physics: another timestep or integrator (None keeps the scene's)."""

    timestep: float | None = None
    """Physics timestep (s); the policy's control period must be a whole number of them."""
    integrator: str | None = None
    """A name in INTEGRATORS."""

    def __post_init__(self) -> None:
        if self.timestep is not None and not 0 < self.timestep <= 0.02:
            raise UserError(f"--timestep must be within (0, 0.02] s, got {self.timestep}")
        if self.integrator is not None and self.integrator not in INTEGRATORS:
            raise unknown_name("integrator", self.integrator, tuple(INTEGRATORS))

    def apply(self, scene: CompiledScene) -> CompiledScene:
        """`scene` with a copy of its model changed (compiled scenes are cached and shared: never edit one)."""
        if self.timestep is None and self.integrator is None:
            return scene
        model = copy.copy(scene.model)
        if self.timestep is not None:
            model.opt.timestep = self.timestep
        if self.integrator is not None:
            model.opt.integrator = INTEGRATORS[self.integrator]
        return dataclasses.replace(scene, model=model)


def replay_network(folder: Path, scene: Scene, *, seconds: float, pushes: Sequence[tuple[float, float]] = (),
                   randomize_seed: int | None = None,
                   change: SimChange = SimChange()) -> tuple[CompiledScene, Trajectory]:
    """Run the policy in `folder` once on `scene` (its body must be the policy's) for `seconds`: the scene as
    changed and the motion (a body that falls lies where it fell). `randomize_seed`: one draw of MotionVL's
    randomization (friction, servo gains, joint friction, latency, pushes every 8 s, observation noise)."""
    policy = TrainedPolicy.load(folder)
    if scene.body != policy.config.body:
        raise UserError(f"the policy in {folder} drives {policy.config.body}, not {scene.body}")
    compiled = change.apply(compile_scene(scene))
    randomization = Randomization() if randomize_seed is not None else None
    run = run_policy(policy, seconds=seconds, copies=1, randomization=randomization, seed=randomize_seed or 0,
                     scene=compiled, restart=False, pushes=pushes)
    return compiled, replayed(compiled, run.rollouts, NetworkPolicy.load(folder))
