"""Planner settings that suit each kind of body, for the CLI, the benchmark and the loop."""

from __future__ import annotations

import dataclasses
from typing import Any

from rewardloop.control.config import OptimizerConfig, PlannerConfig, RecedingConfig, SearchConfig
from rewardloop.control.controllers.base import controller_for
from rewardloop.control.controllers.muscles import MuscleGains
from rewardloop.errors import UserError
from rewardloop.sim.scene import CompiledScene

BODY_PLANNERS: dict[str, PlannerConfig] = {
    # Replanning every 10 ms on the body's own 5-ms step over a 0.6-s horizon: with the canonical walk of 2026-11-25,
    # 8.9, 9.1, 8.9 m in 10 s without a fall and 6.6 m with one on seeds 0-3 (a 0.4-s horizon with 64 samples:
    # 3-6 m); since its balance term moved to a frame at the target speed, it falls in seeds 0-2 (0.8 s: 2 of 3).
    "torque": PlannerConfig(samples=48, horizon_s=0.6, replan_every=2, planning_dt=None, knots=6, iterations=1),
    # A muscle body topples slowly: a 0.5-s horizon sees it coming (0.25 s does not); 32 samples keep a 10-s
    # rollout within 90 s on 2 cores. The muscle controller updates every 8 ms: the planner's 4-ms rollouts then
    # rank plans closer to how the body's own 2-ms physics does (myolegs: Spearman 0.63-0.91, mean 0.75,
    # against 0.25-0.74, mean 0.46, with a 4-ms controller; benchmarks/bench_fidelity.py).
    "muscle": PlannerConfig(samples=32, horizon_s=0.5, replan_every=20, planning_dt=0.004, knots=5,
                            noise=0.06, muscle=MuscleGains(interval_s=0.008)),
    # Robots: the plan is the servos' own joint targets, rolled out on the body's own 2-ms model.
    "servo": PlannerConfig(samples=32, horizon_s=0.5, replan_every=10, planning_dt=None, knots=5, noise=0.06),
}
"""Actuator kind -> planner settings tuned for it (torque: dm_control humanoid; muscle: myolegs)."""

TERRAIN_PLANNERS: dict[tuple[str, str], dict[str, Any]] = {
    # Heightfield contacts make a humanoid step 1.6x dearer on rough ground. Replanning every 15 ms instead of
    # 10 ms keeps a 10-s rollout within 90 s on 2 cores and walks as far: seeds 0-2 went 7.8, 7.2, 8.9 m (falling
    # at 3.9 and 6.8 s) in 67-74 s, against 7.1, 7.6, 8.6 m (all falling, at 6.4-9.3 s) in 113-115 s that day.
    ("torque", "rough"): {"replan_every": 3},
}
"""(actuator kind, terrain kind) -> changes to BODY_PLANNERS for that ground."""

STANDING_PLANNERS: dict[str, dict[str, Any]] = {
    # Standing still is balance: the planner must see a fall coming. On rough ground the humanoid with the walking
    # settings (a 0.6-s horizon) stepped about, wandered up to 1.2 m and fell at 4.8-5.1 s (48, 32 or 24 samples;
    # noise 0.08 or 0.04). With noise 0.04 and 32 samples, a 1.0-s horizon over 8 knots replanned every 30 ms stood
    # on seeds 0 and 1 and fell at 8.5 s on seed 2; a 1.2-s horizon over 10 knots stays up on all three, though
    # swinging its arms, lifting a leg and twisting (2026-12-05, benchmarks/results/beyond_forward_humanoid.json), in
    # 104-116 s a stand; 24 samples took 82-92 s and fell at 6.0 s in seed 2. Probes (seeds 0-2, 2026-12-06): the plan
    # pulled 1 % back to the start posture at each replan (`leak`) or stiffer PD gains (kp 12, kd 0.6) still shifted
    # the feet 4-19 times, 0.21-0.61 m; noise 0.02 fell at 9.6 s (seed 0); raw-torque predictive sampling (32 samples,
    # 0.5 s ahead, every 10 ms) fell at 4.2 s in 154 s (seed 0).
    "torque": {"samples": 32, "horizon_s": 1.2, "knots": 10, "noise": 0.04, "replan_every": 6},
    # Held at their start posture the muscle legs topple backwards in 1.4 s, and with the walking settings MPPI's
    # plans fell at 2.1 s on rough ground in 197 s (seed 0). Under the ankle strategy (`plants.AnkleBalance`) they
    # stood 10 s on rough ground in seeds 0-2, with 32 samples in 122-146 s and with 16 in 64-81 s, within 0.06 m
    # of the start (2026-12-05, two benchmarks sharing the 2 cores).
    "muscle": {"samples": 16, "muscle": MuscleGains(interval_s=0.008, balance=4.0)},
    # Robots standing still: half the walking noise (benchmarks/results/robots_stand.json).
    "servo": {"noise": 0.03},
}
"""Actuator kind -> changes to its planner for standing still (posture MPPI, no steps), on any ground."""

SERVO_REFERENCE_DOF = 18
"""Degrees of freedom of the robot the servo planner settings were measured on (Berkeley Humanoid). A robot with
more (the Unitree G1: 35) samples fewer plans and replans less often in proportion (`servo_budget`), so that its
planning costs about as much wall time per simulated second."""

STEPPING_PLANNERS: dict[str, dict[str, Any]] = {
    # Stepping on the spot or backward from rest on the muscle legs (posture MPPI, their gaits cannot start there:
    # GAITS_FROM_REST). Under the standing settings, a 0.5-s horizon, they stepped and fell at 1.9-2.8 s (16 samples)
    # or 2.2-8.2 s (32); a 1.0-s horizon stepped on the spot at 1.7-2.7 steps/s, falling in 1 of 3 seeds (at 8.8 s),
    # and walked 1.2-2.8 m backward, falling in 2 of 3, in 82-93 s a motion (2026-12-05, bench_beyond.py,
    # benchmarks/results/beyond_forward_myolegs.json). On the spot, a 1.2-s horizon or 8 knots fell in 2 of 3 seeds,
    # noise 0.04 in 3 of 3, 32 samples on 8-ms rollouts at 1.9 s (seed 0). Their plans wandered into splits and
    # twists (feet up to 1 m apart, the pelvis turned 90 degrees): with the plan pulled 1 % of the way back to the
    # start posture at each replan (`leak`, every 40 ms) none fell on the spot, always within 0.25 m, at 1.8-2.8
    # steps/s; backward it fell in 2 of 3 (0.8-2.95 m; 3 % fell in 3 of 3), 2026-12-06, seeds 0-2
    # (beyond_forward_myolegs.json).
    "muscle": {**STANDING_PLANNERS["muscle"], "horizon_s": 1.0, "leak": 0.01},
}
"""Actuator kind -> changes to its planner for motions made of steps that posture MPPI makes (a body whose gaits
do not start from the scene's start state: `gaits_start`)."""

GAITS_FROM_REST: dict[str, bool] = {"torque": True, "muscle": False}
"""Actuator kind -> whether the body's shipped gaits start from rest. The humanoid's do (it steps on the spot and
walks backward from rest with the gait planner). Every muscle-leg gait, found from a 1 m/s walking start, falls
within 0.56-0.93 s from rest (and within about 1.0-1.2 s from a 0.3 or 0.6 m/s start): the first swing bends the
knee of a leg that still bears half the weight; policy searches from rest (stepping on the spot, 3-6 s trials)
settled on standing still or fell within 5-6 s (2026-12-05)."""

TERRAIN_SEARCHES: dict[tuple[str, str], dict[str, Any]] = {
    # The muscle legs' stairs gait is on a knife edge: as found it climbs 6.95 m in 10 s on the 2-core machine, but
    # ±0.1 % noise on its parameters (or another CPU's arithmetic) makes it fall in 15 of 15 draws. With the
    # receding-horizon planner on top it climbs without a fall in 6 of 8 draws of ±1 % noise with a 1.5-s horizon and
    # in 26 of 27 with a 2-s one (three planner seeds; 2026-11-29, README "The stairs with the planner"), for about
    # 60 s of wall time per 10-s motion on one core.
    ("muscle", "stairs"): {"receding": RecedingConfig(horizon_s=2.0)},
}
"""(actuator kind, terrain kind) -> SearchConfig fields for that ground, where a search leaves them at their
defaults (`search_for`)."""


def planner_for(actuator_kind: str, terrain_kind: str, *, standing: bool = False,
                stepping: bool = False) -> PlannerConfig:
    """The planner settings for a kind of body on a kind of ground, for standing still when `standing`, for steps
    posture MPPI makes when `stepping` (STEPPING_PLANNERS)."""
    changes = {**TERRAIN_PLANNERS.get((actuator_kind, terrain_kind), {}),
               **(STANDING_PLANNERS.get(actuator_kind, {}) if standing else {}),
               **(STEPPING_PLANNERS.get(actuator_kind, {}) if stepping else {})}
    return dataclasses.replace(BODY_PLANNERS[actuator_kind], **changes)


def receding_for(actuator_kind: str, terrain_kind: str) -> RecedingConfig:
    """The receding-horizon planner's settings for a kind of body on a kind of ground: the ground's
    (TERRAIN_SEARCHES) where it has some, else RecedingConfig's defaults."""
    return TERRAIN_SEARCHES.get((actuator_kind, terrain_kind), {}).get("receding") or RecedingConfig()


def receding_changed(config: RecedingConfig, items: list[str], *, option: str = "--planner") -> RecedingConfig:
    """`config` with NAME=VALUE changes of its fields ('sigma=0.08', 'steering_only=1'); a one-line UserError naming
    the fields for anything else."""
    names = [field.name for field in dataclasses.fields(RecedingConfig)]
    changes = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if name not in names or number is None:
            raise UserError(f"{option} takes NAME=VALUE with NAME one of {', '.join(names)} and VALUE a number, "
                            f"got {item!r}")
        changes[name] = type(getattr(config, name))(number)  # 16.0 -> 16 samples, 1.0 -> screen on
    return dataclasses.replace(config, **changes)


def search_for(actuator_kind: str, terrain_kind: str, search: SearchConfig) -> SearchConfig:
    """`search` with the ground's settings for a kind of body (TERRAIN_SEARCHES) in the fields it leaves at
    SearchConfig's defaults; a receding-horizon planner asked for with its default settings (`--receding`) takes
    the ground's settings too."""
    plain = SearchConfig()
    changes = {name: value for name, value in TERRAIN_SEARCHES.get((actuator_kind, terrain_kind), {}).items()
               if getattr(search, name) == getattr(plain, name)
               or (name == "receding" and search.receding == RecedingConfig())}
    return dataclasses.replace(search, **changes)


def default_kind(scene: CompiledScene, *, locomotion: bool = True) -> str:
    """The gait planner for locomotion on a body with a gait controller whose gaits start from the scene's start
    (`gaits_start`); posture-space MPPI otherwise."""
    return "plan" if locomotion and controller_for(scene) is not None and gaits_start(scene) else "mppi"


def gaits_start(scene: CompiledScene) -> bool:
    """Whether the body's shipped gaits start from the scene's start state: a walking start, or rest where the
    body's gaits start from rest (GAITS_FROM_REST)."""
    return scene.scene.start_speed > 0 or GAITS_FROM_REST.get(scene.body.actuator_kind, True)


def mppi_steps(scene: CompiledScene, kind: str) -> bool:
    """Whether optimizer `kind` on `scene` is posture MPPI standing in for a gait controller whose gaits cannot start
    there (`gaits_start`): the motions made of steps that STEPPING_PLANNERS' settings are for."""
    return kind == "mppi" and controller_for(scene) is not None and not gaits_start(scene)


def fitted_to_body(planner: PlannerConfig, scene: CompiledScene) -> PlannerConfig:
    """`planner` (settings by actuator kind) fitted to the scene's body: a robot's by its degrees of freedom
    (`servo_budget`); any other body's as it is."""
    return servo_budget(planner, scene.model.nv) if scene.body.actuator_kind == "servo" else planner


def servo_budget(planner: PlannerConfig, dof: int) -> PlannerConfig:
    """`planner` for a robot with `dof` degrees of freedom: samples divided and the replanning interval multiplied
    by dof / SERVO_REFERENCE_DOF where that is above 1 (a step's cost grows about with the degrees of freedom)."""
    scale = max(1.0, dof / SERVO_REFERENCE_DOF)
    return dataclasses.replace(planner, samples=max(8, round(planner.samples / scale)),
                               replan_every=round(planner.replan_every * scale))


def default_config(scene: CompiledScene, *, kind: str | None = None, duration_s: float = 10.0,
                   nthread: int | None = None, search: dict[str, Any] | None = None, standing: bool = False,
                   **planner: Any) -> OptimizerConfig:
    """The optimizer config for a scene's body and ground: `kind` (None: the gait planner where a gait controller
    walks the body from the scene's start, else MPPI); the planner's settings for standing still where `standing`,
    for stepping where MPPI stands in for gaits that cannot start there (`gaits_start`); `planner` overrides
    PlannerConfig fields and `search` SearchConfig fields (None keeps them; the ground's settings, `search_for`,
    fill the fields left at their defaults)."""
    kind = kind or default_kind(scene)
    base = planner_for(scene.body.actuator_kind, scene.scene.terrain.kind, standing=standing,
                       stepping=not standing and mppi_steps(scene, kind))
    base = fitted_to_body(base, scene)
    changes = {name: value for name, value in planner.items() if value is not None}
    searching = {name: value for name, value in (search or {}).items() if value is not None}
    search_config = search_for(scene.body.actuator_kind, scene.scene.terrain.kind, SearchConfig(**searching))
    return OptimizerConfig(kind=kind, planner=dataclasses.replace(base, **changes),
                           search=search_config, duration_s=duration_s, nthread=nthread)
