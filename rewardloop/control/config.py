"""The optimizers' settings and progress reports: plain frozen records that every optimizer module reads.

Kept apart from the optimizers themselves so that the registry (`rewardloop.control.optimizer`) imports the
optimizers and they import only this, never each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rewardloop.control.controllers.lowlevel import PDGains
from rewardloop.control.controllers.muscles import MuscleGains
from rewardloop.errors import UserError, unknown_name
from rewardloop.sim.terrain import Terrain

OPTIMIZER_KINDS = ("mppi", "cem", "predictive", "search", "plan", "ppo")
"""Names of the optimizers in rewardloop.control.optimizer.OPTIMIZERS (checked to match there)."""


@dataclass(frozen=True)
class PlannerConfig:
    """The sampling planner's settings."""

    samples: int = 64
    """Sampled plans per planning iteration (sample 0 is the current plan)."""
    horizon_s: float = 0.3
    """Planning horizon (s)."""
    replan_every: int = 4
    """Physics steps of the body executed between replans."""
    planning_dt: float | None = 0.01
    """Timestep of the planner's rollouts (s); None uses the body's own. Never affects the executed motion."""
    knots: int = 4
    """Spline knots over the horizon."""
    elite_fraction: float = 0.1
    """Fraction of samples in the elite set."""
    iterations: int = 1
    """Planning iterations per replan."""
    noise: float = 0.08
    """Sampling noise standard deviation as a fraction of each target's range (the maximum for CEM)."""
    min_noise: float = 0.01
    """Lower bound of the noise, as a fraction of each target's range."""
    temperature: float = 0.2
    """MPPI temperature, relative to the spread of elite returns."""
    leak: float = 0.0
    """Fraction of the way back to the start the plan moves at each replan, after its update: a plan wanders away
    from the start posture only as far as the reward keeps paying for (0: never pulled back)."""
    pd: PDGains = field(default_factory=PDGains)
    """Low-level PD gains of torque bodies."""
    muscle: MuscleGains = field(default_factory=MuscleGains)
    """Low-level muscle controller gains of muscle bodies."""

    def __post_init__(self) -> None:
        checks = {
            "samples must be at least 2": self.samples >= 2,
            "horizon_s must be positive": self.horizon_s > 0,
            "replan_every must be at least 1": self.replan_every >= 1,
            "planning_dt must be positive": self.planning_dt is None or self.planning_dt > 0,
            "knots must be at least 1": self.knots >= 1,
            "elite_fraction must be in (0, 1]": 0 < self.elite_fraction <= 1,
            "iterations must be at least 1": self.iterations >= 1,
            "noise must be positive and min_noise within [0, noise]": 0 <= self.min_noise <= self.noise > 0,
            "temperature must be positive": self.temperature > 0,
            "leak must be in [0, 1)": 0 <= self.leak < 1,
        }
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad planner config: " + "; ".join(problems))


TRAINING_PHYSICS_SEED = 300
"""Seed of a search's first randomized-physics draw; the benchmark evaluates on other seeds (200 + k), unseen."""
FRESH_GROUND_SEEDS = (1000, 2**31)
"""Range of the rough-ground seeds a search draws afresh each generation: none is the default ground (seed 0) or
one of the benchmark's unseen grounds (100 + k)."""


@dataclass(frozen=True)
class Perturbations:
    """What every candidate is also tried under, for robustness. The score is the average over all."""

    pushes: tuple[tuple[float, float], ...] = ()
    """(time s, sideways velocity kick m/s; + pushes left) applied to the whole body; each entry one more run."""
    param_noise: float = 0.0
    """Relative noise on every parameter (e.g. 0.03 for ±3 %), one more run per `noise_draws`."""
    noise_draws: int = 0
    """Runs with independently drawn parameter noise."""
    terrain_seeds: tuple[int, ...] = ()
    """Other patterns of the scene's rough ground, each one more run (rough scenes only)."""
    grounds: tuple[Terrain, ...] = ()
    """Other grounds (flat, slope, stairs, rough), each one more run: one gait for all of them."""
    physics_draws: int = 0
    """Runs under randomized physics (`rewardloop.sim.scene.random_physics`: friction, strength, joint friction,
    latency), draw k from seed TRAINING_PHYSICS_SEED + k: the same draws for every candidate and generation."""
    fresh_grounds: int = 0
    """Runs on rough ground whose bump pattern is drawn afresh every generation (seeds in FRESH_GROUND_SEEDS),
    the same grounds for every candidate of a generation: a gait cannot learn one pattern by heart."""
    fresh_roughness: float = Terrain().roughness
    """Peak bump height of those grounds (m)."""

    def __post_init__(self) -> None:
        if min(self.param_noise, self.noise_draws, self.physics_draws, self.fresh_grounds) < 0:
            raise UserError("param_noise, noise_draws, physics_draws and fresh_grounds must not be negative")
        Terrain("rough", roughness=self.fresh_roughness)  # checks the roughness

    @property
    def runs(self) -> int:
        """Runs per candidate: the unperturbed one, one per push, noise draw, terrain seed, other ground, physics
        draw and fresh ground."""
        return (1 + len(self.pushes) + self.noise_draws + len(self.terrain_seeds) + len(self.grounds)
                + self.physics_draws + self.fresh_grounds)

    @property
    def noisy(self) -> bool:
        """Whether a candidate's score changes between generations (parameter noise or fresh grounds)."""
        return self.noise_draws > 0 or self.fresh_grounds > 0


@dataclass(frozen=True)
class RecedingConfig:
    """Receding-horizon modulation of a found policy's parameters while it runs
    (`rewardloop.control.planners.receding`)."""

    replan_s: float = 0.2
    """Time between two choices of the parameters (s)."""
    horizon_s: float = 1.5
    """How far ahead each candidate is simulated (s). A stumble takes a second or more to become a fall: with a
    1-s horizon the muscle legs' main gait walked 6 of 16 unseen rough grounds, with 1.5 s 15 of 16 (planner seed
    0; the humanoid's 20 of 20 with either)."""
    samples: int = 16
    """Candidates per choice: the nominal parameters, the last chosen, and neighbours of the last chosen."""
    sigma: float = 0.03
    """Spread of the neighbours around the last chosen, as a fraction of each parameter's range."""
    steering_only: bool = False
    """Draw the neighbours by moving only the controller's steering parameters (its `steering`: the gait's clock,
    curves, speed, stance width, clearance, trunk pitch, heading, arm swing), the balance gains kept as the nominal
    has them; `sigma` is then a step within those parameters' ranges."""
    moves: int = 0
    """Each neighbour moves this many of the parameters it may move, drawn afresh for each (0: all of them). Moving
    eleven steering parameters at once mid-stride costs the humanoid's walk 0.3-1.5 of its 3.5 reward per step over
    the horizon, whatever was asked; moving one costs under 0.1 (2026-12-03), so a neighbour that moves what the
    reward asks for can win."""
    stay_weight: float = 5.0
    """Cost, in reward per step, of a candidate's squared distance from the nominal parameters (in units of the
    ranges): the nominal gait is kept unless another does clearly better. At 1 the planner drifted to slower gaits
    on flat ground, which the walk reward prefers over 1.5 s (muscle legs 9.6-11.8 m in 10 s against 12.4 as found);
    at 5 it keeps them (12.3 m; the humanoid's 12.07 m exactly) and walks as many unseen rough grounds."""
    preplan_generations: int = 0
    """Before the motion, re-centre the nominal on what the reward asks (`receding.preplan`): this many rounds of
    the cross-entropy method over the parameters the planner may move (0: off, the nominal as given)."""
    preplan_s: float = 3.0
    """How long each pre-plan candidate is simulated from the scene's start (s)."""
    preplan_sigma: float = 0.1
    """The pre-plan's first spread around the nominal, as a fraction of each parameter's range."""
    screen: bool = False
    """Look ahead first with the nominal and the last chosen parameters alone, and with the neighbours only where
    neither of those two stays up over the whole horizon: where nothing goes wrong a choice then costs 2 look-aheads
    instead of `samples`, and the choice is between the nominal and the last chosen (`choose`)."""

    def __post_init__(self) -> None:
        checks = {
            "replan_s must be positive": self.replan_s > 0,
            "horizon_s must be positive": self.horizon_s > 0,
            "samples must be at least 2": self.samples >= 2,
            "sigma must be in [0, 1]": 0 <= self.sigma <= 1,
            "stay_weight must be at least 0": self.stay_weight >= 0,
            "moves must be at least 0": self.moves >= 0,
            "preplan_generations must be at least 0": self.preplan_generations >= 0,
            "preplan_s must be positive": self.preplan_s > 0,
            "preplan_sigma must be in [0, 1]": 0 <= self.preplan_sigma <= 1,
        }
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad receding-horizon config: " + "; ".join(problems))


@dataclass(frozen=True)
class SearchConfig:
    """Settings of a policy search: CMA-ES over a structured controller's parameters."""

    controller: str | None = None
    """Registry name in CONTROLLERS; None picks the one that walks the scene's body."""
    population: int = 12
    """Candidates per generation (CMA-ES λ)."""
    generations: int = 24
    """Generations to run (fewer if `max_seconds` runs out)."""
    sigma: float = 0.02
    """Initial step size, as a fraction of each parameter's range (small: shipped gaits tolerate ±1 % changes)."""
    segment_s: float = 0.5
    """Simulated time between checks for a fall (s)."""
    stall_speed: float = 0.0
    """A trial whose centre of mass advances less than this (m/s, along +x) over a second counts as fallen there
    (0: off). For grounds where standing still is the easy way to stay up (stairs): it makes "climb as long as
    you can" the search's aim instead of "stand in front of the stairs"."""
    heading_limit_deg: float = 0.0
    """A trial whose heading strays more than this from +x (degrees) counts as fallen there (0: off). For grounds
    with edges (the stairs are 6 m wide): a gait that climbs diagonally and walks off the side otherwise ranks as
    alive until it falls off."""
    max_seconds: float | None = 90.0
    """The candidate's time limit (s): no new generation starts once the wall time since the candidate's start
    (scoring the shipped gaits included, since 2026-11-29: on a machine three times slower they took 50 s and
    candidates 140-160 s) plus a forecast of what runs after the search (the hold's runs and the executed motion
    with its receding-horizon planner, at the seconds per step of the search's generations; since 2026-12-01: the
    muscle legs' stairs planner, about 60 s on the 2-core machine, ran outside the limit and their candidates took
    102-157 s) would pass it. The first generation runs unless the limit has passed already; None: no limit."""
    hold: float = 0.5
    """After the search, the found policy and its start are run (1 + hold) times the motion's length, as they are
    and under `hold_draws` draws of parameter noise (the same draws for both); where the reward ranks the start
    higher on average over those runs, falls included, the start is kept. A search on trials of the motion's length
    can trade staying up just after them for reward within them (the muscle legs' walk, seed 2: a gait that ranked
    above the shipped one in its 10-s trials fell at 10.6 s). Where exactly one of the two falls as it is within the
    motion's length, the other is kept whatever the average (since 2026-12-01: on that day's 2-core machine the
    slope gait fell as set at 7.9 s while 7 of its 9 noise draws walked, and the average kept it over the walking
    gaits its searches found). 0: off."""
    hold_draws: int = 8
    """Runs of the hold under parameter noise, beside the one as found: on unperturbed trials a search can win by
    the luck of the exact numbers (the muscle legs' walk, seed 2, 2026-11-28: a gait 0.017 above the shipped one in
    its 10-s trial, with 24° of pelvis yaw against 19°, fell within 15 s under 5 of 8 draws of ±1 % noise, the
    shipped one under none). 0: as found only."""
    hold_noise: float = 0.01
    """Relative noise of those runs on every parameter (±), and of the start draws' (`start_draws`)."""
    start_draws: int = 8
    """Where several shipped gaits could start the search, each also runs this many times under draws of
    ±`hold_noise` parameter noise (the same draws for every start), and the start is picked from its median outcome
    over its runs (as set and these) and whether any of them fell (`search.pick_start`): of the starts whose medians
    are about equal to the best (`start_margin`), the best as set of those that never fell, else the best as set.
    As set, one run decides, and near a cliff the last bits of a CPU's arithmetic decide that run: on the 2-core
    machine the fast walk's reward ranked the main gait above the fast gait as set (1.991 against 1.585) while the
    fast gait's median over these runs was 15-24 % above the main gait's in seeds 0-2, and the canonical walk's
    ranked the straight-knee gait first as set on 1 of 6 emulated CPUs while that gait fell in 1-4 of its 9 runs in
    every seed and CPU, the main gait in one run of all 162 (2026-11-29, `benchmarks/start_picks.py --cpus 6`; README
    "which gait starts"). 0: as set only."""
    start_margin: float = 0.08
    """When two starts' median outcomes count as about equal: unless one is cheaper or longer alive, or has a return
    higher by more than this fraction of the other's median return. Measured in seeds 0-2 on the muscle legs: the
    fast gait's median beats the main gait's under the fast walk's reward by 15-24 %, the straight-knee gait's and
    the main gait's under the canonical walk's are within 5 % of each other."""
    warm_start: bool = True
    """Start from the best of the body's shipped gaits under the reward (else from the controller's defaults)."""
    steer_only: bool = False
    """Move only the controller's steering parameters (its `steering`: speed, step, knee, trunk, heading, width...),
    keeping the start's balance gains; `sigma` is then a step within those parameters' ranges."""
    only: tuple[str, ...] = ()
    """Move only these parameters (names in the controller's space), keeping the rest as the start has them; ()
    moves all (or the steering ones with `steer_only`). E.g. the reactions to the ground seen ahead, which do
    nothing on flat ground: a search over them on rough grounds leaves the flat walk exactly as it was."""
    constraints: tuple[str, ...] = ()
    """Reward terms held as constraints (0 or more where met, negative by how far they miss): candidates are ranked
    first by what these terms cost them (the mean of each one's unweighted negative part, summed, averaged over the
    perturbation runs), then by time alive, then by return. A feasible candidate beats an infeasible one however
    long either stays up; among infeasible ones the smaller miss wins. E.g. the human-gait term measured on flat
    ground, so that robustness on rough grounds cannot be bought with a less human-like walk (the search
    otherwise ranks time alive first)."""
    perturbations: Perturbations = field(default_factory=Perturbations)
    """Robustness: what each candidate is also tried under."""
    receding: RecedingConfig | None = None
    """Run the found policy with its parameters modulated online by a receding-horizon planner against the
    reward (None: as found). The search is unchanged; the executed motion is the modulated one."""

    def __post_init__(self) -> None:
        checks = {
            "population must be at least 4": self.population >= 4,
            "generations must be at least 0": self.generations >= 0,
            "sigma must be in (0, 1]": 0 < self.sigma <= 1,
            "segment_s must be positive": self.segment_s > 0,
            "stall_speed must be at least 0": self.stall_speed >= 0,
            "heading_limit_deg must be in [0, 180]": 0 <= self.heading_limit_deg <= 180,
            "hold must be at least 0": self.hold >= 0,
            "hold_draws must be at least 0": self.hold_draws >= 0,
            "hold_noise must be in [0, 0.5]": 0 <= self.hold_noise <= 0.5,
            "start_draws must be at least 0": self.start_draws >= 0,
            "start_margin must be at least 0": self.start_margin >= 0,
            "max_seconds must be positive": self.max_seconds is None or self.max_seconds > 0,
        }
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad policy search config: " + "; ".join(problems))


PPO_STARTS = ("base", "scratch")
"""Where a PPO candidate's network starts (PPOSettings.start)."""


@dataclass(frozen=True)
class PPOSettings:
    """Settings of the PPO optimizer (`rewardloop.rl.optimize`): how long each candidate's policy trains, on what,
    and from which network."""

    steps: int = 200_000
    """Env steps (control periods, all copies together) to train for."""
    max_seconds: float | None = 300.0
    """Wall time of the training (s): no PPO iteration starts after it (the first always runs); None: `steps`
    alone decides."""
    envs: int = 32
    """Copies of the scene stepped together."""
    start: str = "base"
    """'base': fine-tune the body's shipped base policy (`rewardloop.rl.base`), or the one `base` names; where none
    is shipped the network starts fresh and the progress says so. 'scratch': always a fresh network."""
    base: str | None = None
    """A policy folder to fine-tune instead of the shipped one (OUT/policy of `rewardloop train`)."""
    randomize: bool = False
    """Train under MotionVL's domain randomization (`rewardloop.rl.randomize.Randomization`)."""

    def __post_init__(self) -> None:
        if self.start not in PPO_STARTS:
            raise unknown_name("PPO start", self.start, PPO_STARTS)
        checks = {"steps must be at least 1": self.steps >= 1, "envs must be at least 1": self.envs >= 1,
                  "max_seconds must be positive": self.max_seconds is None or self.max_seconds > 0}
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad PPO settings: " + "; ".join(problems))


@dataclass(frozen=True)
class OptimizerConfig:
    """Which optimizer, its planner, and how long a motion to produce."""

    kind: str = "mppi"
    """Registry name in rewardloop.control.optimizer.OPTIMIZERS."""
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    """Settings of the posture-space planners (mppi, cem, predictive)."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """Settings of the policy search (search); the controller and warm starts of the gait planner (plan)."""
    gait_planner: RecedingConfig | None = None
    """Settings of the gait planner's receding-horizon planning (plan); None: `gait_planning.STEERING_PLANNER` with
    the ground's horizon."""
    duration_s: float = 10.0
    """Length of the executed motion (s)."""
    nthread: int | None = None
    """Threads for batched rollouts; None uses one per core."""
    ppo: PPOSettings = field(default_factory=PPOSettings)
    """Settings of the PPO optimizer (ppo): its training budget and start."""

    def __post_init__(self) -> None:
        if self.kind not in OPTIMIZER_KINDS:
            raise unknown_name("optimizer", self.kind, OPTIMIZER_KINDS)
        if not (math.isfinite(self.duration_s) and self.duration_s > 0):
            raise UserError(f"duration_s must be a positive finite number, got {self.duration_s}")
        if self.nthread is not None and self.nthread < 1:
            raise UserError(f"nthread must be at least 1, got {self.nthread}")


@dataclass(frozen=True)
class Progress:
    """How far an optimization has got."""

    fraction: float
    """Fraction of the motion executed (0..1)."""
    sim_time: float
    """Simulated time executed so far (s)."""
    best_return: float
    """Best sampled return (mean reward per step) of the latest planning iteration."""
    message: str
    """One line for a progress display."""
