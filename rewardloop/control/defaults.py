"""Planner settings that suit each kind of body, for the CLI, the benchmark and the loop."""

from __future__ import annotations

import dataclasses
from typing import Any

from rewardloop.control.optimizer import OptimizerConfig, PlannerConfig
from rewardloop.sim.scene import CompiledScene

BODY_PLANNERS: dict[str, PlannerConfig] = {
    # Replanning every 10 ms on the body's own 5-ms step: 3 of 4 seeds walk 10 s without a fall (every 20 ms: 0 of 2).
    "torque": PlannerConfig(samples=64, horizon_s=0.4, replan_every=2, planning_dt=None, knots=4, iterations=1),
    # A muscle body topples slowly: a 0.5-s horizon sees it coming (0.25 s does not); 32 samples keep a 10-s
    # rollout within 90 s on 2 cores.
    "muscle": PlannerConfig(samples=32, horizon_s=0.5, replan_every=20, planning_dt=0.004, knots=5,
                            noise=0.06),
}
"""Actuator kind -> planner settings tuned for it (torque: dm_control humanoid; muscle: myolegs)."""


def default_config(scene: CompiledScene, *, kind: str = "mppi", duration_s: float = 10.0,
                   nthread: int | None = None, **planner: Any) -> OptimizerConfig:
    """The optimizer config for a scene's body; `planner` overrides PlannerConfig fields (None keeps them)."""
    base = BODY_PLANNERS[scene.body.actuator_kind]
    changes = {name: value for name, value in planner.items() if value is not None}
    return OptimizerConfig(kind=kind, planner=dataclasses.replace(base, **changes),  # type: ignore[arg-type]
                           duration_s=duration_s, nthread=nthread)
