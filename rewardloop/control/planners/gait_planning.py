"""Locomotion planned against the reward: a gait controller's steering parameters chosen online, MJPC-style.

The body's shipped gaits are scored as they are under the candidate's reward (one run of the motion's length
each) and the best of them is the nominal policy. Its steering parameters (`Controller.steering`: the gait's clock,
the joint curves' amplitudes and offsets, speed, stance width, swing clearance, trunk pitch, heading, arm swing) are
then re-chosen every `replan_s` from the body's current state by simulating candidates `horizon_s` ahead against the
reward (`receding.receding_motion`), the balance gains kept as the gait has them. What the reward asks for is what
the look-ahead scores, so a term added to the reward moves the motion at once, the way a cost weight changed in
MuJoCo MPC moves its humanoid; and a planner that re-plans from the state it is in corrects a stumble, so the gait
needs no protective rules around it (start draws, holds, rematches): there is no search to protect.

    trajectory = plan_gait_motion(scene, reward, OptimizerConfig(kind="plan"), seed=0)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rewardloop.control.config import OptimizerConfig, Progress, RecedingConfig
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.planners.receding import planned_steps, planning_simulator, preplan, receding_motion
from rewardloop.control.search.cmaes import PolicySearch, pick_start, search_starts
from rewardloop.control.search.policy import Policy
from rewardloop.control.trajectory import Trajectory
from rewardloop.reward.base import RewardFunction, term_statistics
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import CompiledScene

STEERING_PLANNER = RecedingConfig(steering_only=True, sigma=0.08, moves=2, stay_weight=3.0, preplan_generations=6)
"""The planner's settings where OptimizerConfig.gait_planner names none: 16 candidates every 0.2 s, 1.5 s ahead;
neighbours that move 2 of the steering parameters by 8 % of their ranges, the balance gains as the gait has them;
a stay cost of 3 per squared range from the nominal; before the motion, 6 rounds of 16 pre-plan candidates over 3 s
re-centre the nominal on the reward (`receding.preplan`), and the stay cost is reckoned from that one. Measured on
the humanoid's steering benchmark (`rewardloop bench --suite steer --optimizer plan`, 3 seeds): neighbours that
moved every parameter made it fall or veer; neighbours that moved all eleven steering parameters at once cost the
walk 0.3-1.5 of its 3.5 reward per step over the look-ahead, so only the strongest asks won; a stay cost of 1 let
the plain walk's cadence drift to 127-134 steps/min (people: up to 130), a cost of 3 keeps it at 127-128 with all
nine human-likeness targets met (2026-12-03). The pre-plan (2026-12-05): 31 of 45 ask × seed pairs moved and no
fall, against 27 and 5 falls without it; 10 rounds at a spread of 0.15, or 8 rounds over 5 s, moved no more of the
asks it left unmoved. It moves the plain walk too (it gains 0.02-0.04 reward per step over 3 s there, the asks
0.05-0.4): its cadence went to 128-131 steps/min, and the walk met all nine human-likeness targets in 1 of 3 seeds.
Keeping the nominal unless the pre-plan gains 0.05 left the walk as the heading rate alone does (11.84-12.32 m, 2
of 3 human-like); starting from the pre-plan with the stay cost reckoned from the shipped gait moved 25 of 45 asks
with 4 falls. The humanoid looks at 32 candidates with a stay cost of 2 (STEERING_CHANGES). RecedingConfig's own
defaults (3 %, every parameter, stay cost 5, no pre-plan) keep a found gait on its line against disturbances and
left most asks where they were."""


STEERING_CHANGES: dict[str, dict[str, Any]] = {"torque": {"samples": 32, "stay_weight": 2.0, "horizon_s": 2.0}}
"""Actuator kind -> changes to STEERING_PLANNER for that kind of body (the muscle legs take it as it is: 16
candidates, a stay cost of 3; their candidate takes 45-60 s).

The humanoid's candidates: about 9 s of its 120-s budget with 16 and about 18 s with 32. Once the canonical walk asks
for people's cadence, 32 steer it further and keep it up (the steering benchmark, 3 seeds, 2026-12-05): 14 of 15
asks moved in most seeds, 41 of 45 ask × seed pairs, no fall, the plain walk at 116-118 steps/min; with 16, 11 of
15, 33 of 45 and 3 falls (a high foot lift and a quick cadence, the cadence band pulling against them). Before the
cadence term, 32 moved 34 of 45 but quickened the plain walk to 136-141 steps/min
(`benchmarks/results/steering_humanoid_plan_samples32.json`).

The humanoid's stay cost of 2 (3 elsewhere; 32 candidates both, 3 seeds, 2026-12-05): the steering benchmark moved
15 of 15 asks in most seeds (13 in every seed), 43 of 45 ask × seed pairs, against 14, 13 and 42 with 3; a faster
walk in 2 of 3 seeds, against 1. The plain walk met all nine human-likeness targets in 3 of 3 seeds (12.19-12.35 m,
hip peak 39.0-39.9°), against 2 of 3 (a hip peak of 40.1°). The cost: a high foot lift fell in 1 of 3 seeds, against
none (benchmarks/results/steering_humanoid_plan.json, walking_humanoid_plan.json). A cost of 1 (probes of the two)
moved the faster walk in 2 of 3 seeds and left the plain walk human-like in 1 of 3.

The humanoid's 2-s look-ahead (1.5 s elsewhere; 2026-12-05): with 1.5 s the higher foot lift (the canonical walk plus
a clearance of at least 0.15 m at weight 300) kicked the foot to 0.63 m and fell at 6.2 s in seed 1; with 2 s it
lifted to 0.16-0.21 m without a fall in seeds 0-2, in 19 s a motion instead of 16 (the steering benchmark's ask
alone, `bench.steer.locomotion_optimizer("plan")`). Neighbours that move one parameter instead of two kicked to 0.89 m
and fell. The steering benchmark (3 seeds): 15 of 15 asks moved in most seeds and 14 in every seed (13 with 1.5 s), 44
of 45 ask × seed pairs (43), no fall (1). The cost: the plain walk (benchmarks/bench_gait.py) met all nine
human-likeness targets in 2 of 3 seeds, against 3 of 3 (seed 2's hip peaked at 40.4°, the target is at most 40°)."""


def planner_settings(config: OptimizerConfig, scene: CompiledScene) -> RecedingConfig:
    """The receding planner this optimizer runs: config.gait_planner, else STEERING_PLANNER with the body's changes
    (STEERING_CHANGES) and the ground's horizon (`defaults.receding_for`: 2 s on the muscle legs' stairs) where the
    body's changes name none (the humanoid looks 2 s ahead on every ground)."""
    if config.gait_planner is not None:
        return config.gait_planner
    from rewardloop.control.defaults import receding_for

    kind = scene.body.actuator_kind
    ground = receding_for(kind, scene.scene.terrain.kind)
    return dataclasses.replace(STEERING_PLANNER, **{"horizon_s": ground.horizon_s, **STEERING_CHANGES.get(kind, {})})


def plan_gait_motion(scene: CompiledScene, reward: RewardFunction, config: OptimizerConfig, *, seed: int,
                     progress: Callable[[Progress], None] | None = None) -> Trajectory:
    """A motion of config.duration_s seconds: the shipped gait that `reward` ranks best as it is (alive longest, then
    the highest return over one run of the motion's length), its steering parameters planned online against
    `reward` (module docstring). The trajectory's policy is that gait (the nominal the planner steers from)."""
    begin = time.perf_counter()
    planner_config = planner_settings(config, scene)
    with Simulator(scene, nthread=config.nthread) as sim:
        starts = [(PolicySearch(scene, controller, reward, config.search, duration_s=config.duration_s, seed=seed),
                   params) for controller, params in search_starts(scene, config.search)]
        scores = [search.score_start(sim, params) for search, params in starts]
        search, nominal = starts[pick_start(scores, None, config.search.start_margin)]
        with planning_simulator(sim) as planner:
            if planner_config.preplan_generations:
                nominal = preplan(planner, search.controller, nominal, reward, planner_config,
                                  rng=np.random.default_rng(seed))
            rollouts, _ = receding_motion(sim, planner, search.controller, nominal, reward, planner_config,
                                          duration_s=config.duration_s, seed=seed,
                                          progress=_reporter(progress, search.controller.kind))
    features = rollouts.features(scene)
    evaluation = reward(features)
    seconds = time.perf_counter() - begin
    looked = planned_steps(planner_config, nstep=rollouts.state.shape[1], chunk=search.controller.chunk, dt=scene.dt)
    return Trajectory(rollouts=rollouts, reward=evaluation, term_stats=term_statistics(evaluation),
                      metrics=batch_metrics(features)[0], wall_time_s=seconds,
                      planner_steps=sum(search.steps for search, _ in starts) + looked, planner_time_s=seconds,
                      policy=Policy.of(search.controller, scene.scene.body, nominal))


def _reporter(progress: Callable[[Progress], None] | None, kind: str) -> Callable[[float, float], None] | None:
    """The planner's per-choice callback (fraction of the motion done, simulated seconds) as Progress."""
    if progress is None:
        return None

    def report(fraction: float, sim_time: float) -> None:
        progress(Progress(fraction=fraction, sim_time=sim_time, best_return=float("nan"),
                          message=f"{kind} planned against the reward: {sim_time:.1f} s"))

    return report
