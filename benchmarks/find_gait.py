"""Find a gait for a body's structured controller by policy search, and write it as a shipped-gait file.

    .venv/bin/python benchmarks/find_gait.py --body humanoid --generations 400 --out gait.json
    .venv/bin/python benchmarks/find_gait.py --start gait.json --pushes 3:0.4 3:-0.4 --noise 0.03 --out gait2.json

Gaits are found in stages, each starting from the last; each shipped gait's file holds the command of every
stage that led to it (`found_by`, see docs/gaits.md). The muscle legs' muscle tracker: a 3-s stage from the
defaults, a 6-s stage, then 10-s stages with the human-gait term at full weight and parameter noise.

The objective is a walking reward program (speed, heading, staying on the line, upright, no falls) plus a
human-gait term: minus the shortfall from human-like walking measured by the gait analysis (curve shapes,
knee in stance and swing, hip swing, foot clearance, cadence, pelvis yaw). The search starts from the walking
start (rewardloop.sim.scene.WALKING_START_SPEED). It can take an hour; it is not a test. The file it writes
holds the parameters, the command and settings that found them, and what the gait measured over 10 s; while the
search runs, it holds the best gait so far every 5 minutes (marked "checkpoint"), so a killed search loses little.

With --validate N (for searches over perturbations, e.g. --fresh-grounds), the start, the best gait at every
checkpoint and at the end are each walked on N rough grounds that neither the search nor the benchmark uses
(seeds 500...), and the file gets the one that walks most of them: on noisy trials the best candidate is often
the luckiest one. Every gait offered stays in the file (found_by.validation.offered: its parameters, what it walked
and, with --validate-human, the human-like targets it missed).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from rewardloop.control.commands import pushes_from_args
from rewardloop.control.config import Perturbations, SearchConfig
from rewardloop.control.controllers.base import controller_for, make_controller, run_controller
from rewardloop.control.metrics import batch_metrics
from rewardloop.control.search.cmaes import PolicySearch
from rewardloop.control.search.policy import Policy, shipped_gait
from rewardloop.critic.gait import analyze_gait
from rewardloop.critic.likeness import NO_GAIT, HumanLikeTargets, met, shortfall
from rewardloop.errors import UserError, run_script, unknown_name
from rewardloop.reward.base import RewardEval
from rewardloop.reward.canonical import CANONICAL, with_top_speed
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.features import Features
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain

OBJECTIVE = '''
def speed(f):
    """-|forward CoM speed - target| (m/s)."""
    return -np.abs(f.com_vel[..., 0] - TARGET_SPEED)

def line(f):
    """-(|sideways CoM speed| + |distance from y = 0|)."""
    return -np.abs(f.com_vel[..., 1]) - np.abs(f.com_pos[..., 1])

def face(f):
    """cos(heading)."""
    return lib.heading(f, target=0.0)

def upright(f):
    return lib.upright(f, part="torso")

def fallen(f):
    return lib.nonfoot_contact(f)

WEIGHTS = {"speed": 2.0, "line": 0.5, "face": 1.0, "upright": 1.0, "fallen": 1.0}
'''
"""The walking part of the objective; TARGET_SPEED is filled in from --speed."""
FLAT_TOLERANCE_M = 1e-3
"""A trial is on flat ground when the ground under the centre of mass stays within this of 0 (m)."""

FLAT_FOOT = '''
def flat_foot(f):
    """-(heel height above the toes while the foot bears weight) (m): people stand on a flat foot."""
    left = f.left_foot_contact * np.maximum(f.left_heel_pos[..., 2] - f.left_toe_pos[..., 2], 0.0)
    right = f.right_foot_contact * np.maximum(f.right_heel_pos[..., 2] - f.right_toe_pos[..., 2], 0.0)
    return -(left + right)
'''
"""Added with --flat-foot W > 0 (weight W): a stance on the toes (the heel up) costs W per metre of heel height."""

ARMS = '''
def arms(f):
    """Each hand's swing against its own thigh, per 10 cm, clipped to [-1, 1]: people's arms swing so."""
    return lib.arm_swing(f, amplitude=0.1)
'''
"""Added with --arm-swing W > 0 (weight W), for a body with arms."""


def objective_source(speed: float, flat_foot: float, reward: str | None = None,
                     reward_speed: float | None = None, arm_swing: float = 0.0) -> str:
    """The reward program's source for a target speed and flat-foot weight; with `reward`, that canonical reward
    program (e.g. walk) stands in for the built-in walking part, and `speed` does not apply: `reward_speed` (m/s)
    sets the top of its speed ramp instead, as a task's speed does (`canonical.with_top_speed`)."""
    if reward is not None and reward not in CANONICAL:
        raise unknown_name("canonical reward", reward, CANONICAL)
    if reward is not None and (flat_foot > 0 or arm_swing > 0):
        raise UserError("--flat-foot or --arm-swing adds a term to the built-in objective: it does not go with "
                        "--reward")
    if reward is None and reward_speed is not None:
        raise UserError("--reward-speed sets the speed of a --reward program; the built-in objective takes --speed")
    source = OBJECTIVE.replace("TARGET_SPEED", repr(speed)) if reward is None else CANONICAL[reward]
    if reward_speed is not None:
        source = with_top_speed(source, repr(reward_speed))
    for weight, name, term in ((flat_foot, "flat_foot", FLAT_FOOT), (arm_swing, "arms", ARMS)):
        if weight > 0:
            source = source.replace('"fallen": 1.0', f'"fallen": 1.0, "{name}": {weight!r}')
            source = source.replace("\nWEIGHTS", term + "\nWEIGHTS")
    return source


class GaitObjective:
    """A reward program plus `human_gait`: -shortfall from human-like walking, the same at every step; with
    `flat_only`, on trials on flat ground only (0 on uneven ground, where people do not walk as on flat ground).
    With `duration_s`, a trial it scores that ends sooner (it fell) misses by NO_GAIT × the fraction of the
    duration it did not live, on top: a walk that falls is not a human-like walk, however human-like its steps
    before the fall (for --human-first, where the term is a constraint and a trial is scored on its lived part)."""

    def __init__(self, program: RewardProgram, weight: float, targets: HumanLikeTargets, *, flat_only: bool = False,
                 duration_s: float | None = None):
        self.program, self.weight, self.targets, self.flat_only = program, weight, targets, flat_only
        self.duration_s = duration_s

    def __call__(self, features: Features) -> RewardEval:
        evaluation = self.program.evaluate_trusted(features)
        miss = shortfall(analyze_gait(features), self.targets)
        if self.duration_s is not None:
            lived = features.batch_shape[1] * features.dt
            miss = miss + NO_GAIT * max(1.0 - lived / self.duration_s, 0.0)
        if self.flat_only:
            ground = features.com_pos[..., 2] - features.com_height  # [B, T] ground height under the CoM (m)
            miss = np.where(np.abs(ground).max(axis=1) < FLAT_TOLERANCE_M, miss, 0.0)
        terms = {**evaluation.terms, "human_gait": np.repeat(-miss[:, None], features.batch_shape[1], axis=1)}
        return RewardEval(terms, {**evaluation.weights, "human_gait": self.weight})


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--body", default="humanoid")
    parser.add_argument("--controller", default=None,
                        help="controller kind (default: the --start file's, else the one that walks the body)")
    parser.add_argument("--start", default="shipped", help="'shipped', 'default' or a policy file to start from")
    parser.add_argument("--generations", type=int, default=300)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--sigma", type=float, default=0.1, help="initial step, fraction of each range")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of each trial motion")
    parser.add_argument("--start-speed", type=float, default=WALKING_START_SPEED, metavar="M_PER_S",
                        help="speed the trials start at (0: from rest, as stepping in place and walking backward do)")
    parser.add_argument("--speed", type=float, default=1.3,
                        help="target walking speed (m/s) of the built-in objective (not with --reward)")
    parser.add_argument("--reward", default=None, metavar="NAME",
                        help="a canonical reward program (e.g. walk) as the walking part of the objective instead of "
                             "the built-in one (--speed then does not apply): polishes a gait where the loop's "
                             "per-candidate search under that reward would move it")
    parser.add_argument("--reward-speed", type=float, default=None, metavar="M_PER_S",
                        help="the top of the --reward program's speed ramp (m/s), as a task's speed sets it: e.g. "
                             "--reward walk --reward-speed 1.93 for the benchmark's fast walk")
    parser.add_argument("--human-weight", type=float, default=0.3, help="weight of the human-gait term")
    parser.add_argument("--human-on-flat", action="store_true",
                        help="the human-gait term on trials on flat ground only (uneven grounds score the walk)")
    parser.add_argument("--human-first", action="store_true",
                        help="hold the human-gait term as a constraint: rank candidates first by how far they miss "
                             "the human-like targets (a trial it scores that falls misses them more, the sooner it "
                             "falls), then by time alive (else time alive comes first)")
    parser.add_argument("--target", nargs="*", default=[], metavar="NAME=VALUE",
                        help="a human-like target the search aims at instead of the issue's, e.g. "
                             "max_hip_flexion_deg=36 (a margin, so the gait meets the real one on another CPU)")
    parser.add_argument("--arm-swing", type=float, default=0.0,
                        help="weight of each hand's swing against its own thigh (the library's arm_swing)")
    parser.add_argument("--flat-foot", type=float, default=0.0,
                        help="weight of a term against standing on the toes (0: none)")
    parser.add_argument("--terrain", default="flat", metavar="KIND[:VALUE]",
                        help="ground of the trials, as a --grounds entry (stairs:0.03: stairs of 3-cm rise)")
    parser.add_argument("--terrain-seeds", nargs="*", type=int, default=[], metavar="SEED",
                        help="on rough ground: more trials on these bump patterns")
    parser.add_argument("--grounds", nargs="*", default=[], metavar="KIND[:VALUE]",
                        help="more trials on other grounds: flat, rough[:SEED], slope[:DEGREES], stairs[:RISE_M]")
    parser.add_argument("--pushes", nargs="*", default=[], metavar="T:V",
                        help="extra trials pushed sideways at T s by V m/s")
    parser.add_argument("--noise", type=float, default=0.0, help="relative parameter noise of extra trials")
    parser.add_argument("--noise-draws", type=int, default=1, help="extra trials with parameter noise")
    parser.add_argument("--physics-draws", type=int, default=0,
                        help="extra trials under randomized physics (MotionVL's ranges; unseen by the benchmark)")
    parser.add_argument("--fresh-grounds", type=int, default=0,
                        help="extra trials on rough grounds drawn afresh every generation")
    parser.add_argument("--fresh-roughness", type=float, default=Terrain().roughness,
                        help="peak bump height of those grounds (m)")
    parser.add_argument("--bounds", nargs="*", default=[], metavar="NAME=LOW:HIGH",
                        help="narrow a parameter's bounds for this search (e.g. swing_time=0.33:0.45)")
    parser.add_argument("--only", nargs="*", default=[], metavar="NAME",
                        help="move only these parameters, the rest kept as the start has them (e.g. the reactions "
                             "to the ground seen ahead: look_lift look_hip look_push look_land stair_knee)")
    parser.add_argument("--stall-speed", type=float, default=0.0,
                        help="a trial advancing less than this (m/s) over a second counts as fallen (stairs)")
    parser.add_argument("--heading-limit", type=float, default=0.0, metavar="DEG",
                        help="a trial whose heading strays more than this from +x counts as fallen (stairs)")
    parser.add_argument("--validate", type=int, default=0, metavar="N",
                        help="walk the best gait so far on N rough grounds set aside for validation at every "
                             "checkpoint and at the end, and write the one that walks most of them")
    parser.add_argument("--validate-human", action="store_true",
                        help="with --validate: rank the validated gaits first by how many human-like targets they "
                             "meet on flat ground, then by the validation grounds walked")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this many minutes")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", required=True, help="the gait file to write (JSON)")
    return parser.parse_args(argv)


def perturbations(args: argparse.Namespace) -> Perturbations:
    return Perturbations(pushes=tuple(pushes_from_args(args.pushes)), param_noise=args.noise,
                         noise_draws=args.noise_draws if args.noise else 0, terrain_seeds=tuple(args.terrain_seeds),
                         grounds=tuple(ground(spec) for spec in args.grounds), physics_draws=args.physics_draws,
                         fresh_grounds=args.fresh_grounds, fresh_roughness=args.fresh_roughness)


GROUND_VALUE = {"rough": "seed", "slope": "slope_deg", "stairs": "step_height"}
"""The one number a --grounds entry may give, per kind of ground."""


def ground(spec: str, option: str = "--grounds") -> Terrain:
    """'KIND[:VALUE]' -> that ground ('rough:3' is rough ground of seed 3); a UserError naming `option` for a
    malformed one."""
    kind, _, value = spec.partition(":")
    form = f"{option} takes flat, rough[:SEED], slope[:DEGREES] or stairs[:RISE_M], got {spec!r}"
    if kind not in (*GROUND_VALUE, "flat") or (value and kind == "flat"):
        raise UserError(form)
    if not value:
        return Terrain(kind)
    try:
        number = float(value)
    except ValueError:
        raise UserError(form) from None
    if kind == "rough" and not number.is_integer():
        raise UserError(form)
    return Terrain(kind, **{GROUND_VALUE[kind]: int(number) if kind == "rough" else number})


def named_numbers(spec: str, option: str, form: str) -> tuple[str, tuple[float, ...]]:
    """'NAME=X[:Y...]' -> (name, (x, y, ...)); a UserError naming the option and its `form` for malformed numbers."""
    name, _, value = spec.partition("=")
    try:
        return name, tuple(float(v) for v in value.split(":"))
    except ValueError:
        raise UserError(f"{option} takes {form}, got {spec!r}") from None


def narrowed_bounds(specs: list[str]) -> dict[str, tuple[float, float]]:
    """'NAME=LOW:HIGH' strings -> {name: (low, high)}; a UserError for a malformed one."""
    bounds = {}
    for spec in specs:
        name, numbers = named_numbers(spec, "--bounds", "NAME=LOW:HIGH")
        if len(numbers) != 2:
            raise UserError(f"--bounds takes NAME=LOW:HIGH, got {spec!r}")
        bounds[name] = numbers
    return bounds


def search_targets(specs: list[str]) -> HumanLikeTargets:
    """'NAME=VALUE' strings -> the human-like targets with those fields replaced (two values 'LOW:HIGH' for a
    range); a UserError for an unknown name or a malformed value."""
    defaults, known = HumanLikeTargets(), tuple(HumanLikeTargets.__dataclass_fields__)
    changes = {}
    for spec in specs:
        name, numbers = named_numbers(spec, "--target", "NAME=VALUE")
        if name not in known:
            raise UserError(f"--target: unknown target {name!r}; known: {', '.join(known)}")
        ranged = isinstance(getattr(defaults, name), tuple)
        if len(numbers) != (2 if ranged else 1):
            raise UserError(f"--target {name} takes {'LOW:HIGH' if ranged else 'one value'}")
        changes[name] = numbers if ranged else numbers[0]
    return dataclasses.replace(defaults, **changes)


def starting_kind(args: argparse.Namespace) -> str | None:
    """The controller of the policy file a search starts from (None when it starts from 'shipped' or 'default'):
    a stage goes on with the controller of the stage before it."""
    return None if args.start in ("shipped", "default") else Policy.load(args.start).controller


def start_vector(args: argparse.Namespace, controller, body: str) -> np.ndarray:
    """The starting parameters."""
    if args.start == "default":
        return controller.space.default
    policy = shipped_gait(body) if args.start == "shipped" else Policy.load(args.start)
    if policy is None:
        raise UserError(f"no shipped gait for {body}; start from 'default' or a policy file")
    return policy.vector(controller)


def previous_stage(args: argparse.Namespace) -> dict | None:
    """How the starting gait was found (its file's found_by), so a gait file holds its whole lineage."""
    if args.start == "default":
        return None
    path = (Path(__file__).parent.parent / "rewardloop/control/gaits" / f"{args.body}.json" if args.start == "shipped"
            else Path(args.start))
    try:
        return json.loads(path.read_text()).get("found_by")
    except (OSError, ValueError, AttributeError):
        return None


CHECKPOINT_S = 300.0
"""Seconds between writes of the best gait so far to --out while the search runs (the last write has it all)."""


VALIDATION_SEEDS = 500
"""First seed of the rough grounds --validate walks (500, 501, ...): none is the default ground (0), one of the
benchmark's unseen grounds (100 + k) or one a search draws afresh (from 1000)."""


def validation(controller_kind: str, body: str, vector: np.ndarray, count: int, roughness: float) -> dict:
    """How [P] `vector` walks `count` rough grounds set aside for validation, 10 s from the walking start on each:
    how many it walks without a fall, and its mean distance (m)."""
    walked, distances = 0, []
    for seed in range(VALIDATION_SEEDS, VALIDATION_SEEDS + count):
        terrain = Terrain("rough", roughness=roughness, seed=seed)
        scene = compile_scene(Scene(body, terrain, start_speed=WALKING_START_SPEED))
        controller = make_controller(controller_kind, scene)
        with Simulator(scene) as sim:
            rollouts = run_controller(sim, controller, vector[None], nstep=round(10.0 / scene.dt))
        metrics = batch_metrics(rollouts.features(scene))[0]
        walked += not metrics.fell
        distances.append(metrics.distance)
    return {"seeds": [VALIDATION_SEEDS, VALIDATION_SEEDS + count - 1], "roughness": roughness, "walked": walked,
            "distance": round(float(np.mean(distances)), 3)}


@dataclasses.dataclass
class Validated:
    """The gait that walked the validation grounds best of those offered (--validate): most grounds without a
    fall, then the longest mean distance; with `human` (--validate-human), first the most human-like targets met
    on flat ground. A search on grounds drawn afresh keeps the candidate that won its last draws, often by luck;
    grounds it never saw tell the robust gait from the lucky one."""

    controller_kind: str
    body: str
    count: int
    roughness: float
    human: bool = False
    params: np.ndarray | None = None
    result: dict | None = None
    history: list[dict] = dataclasses.field(default_factory=list)
    """Every validation, in the order offered (the start first), with the gait's parameter vector."""

    def offer(self, params: np.ndarray) -> np.ndarray:
        """Validate [P] `params` (unless it was offered before); -> the [P] best validated so far."""
        if not any(np.array_equal(params, offered["params"]) for offered in self.history):
            result = validation(self.controller_kind, self.body, params, self.count, self.roughness)
            if self.human:
                met_now = measure(self.controller_kind, self.body, params)["human_like_met"]
                result["human_like_met"] = sum(met_now.values())
                result["human_like_missed"] = [name for name, ok in met_now.items() if not ok]
            result["params"] = params.tolist()  # every gait offered stays at hand, the pick or not
            self.history.append(result)
            if self.result is None or self._rank(result) > self._rank(self.result):
                self.params, self.result = params.copy(), result
        return self.params

    def _rank(self, result: dict) -> tuple:
        """Sort key of a validation: (human-like targets met, with `human`), grounds walked, mean distance."""
        walked = (result["walked"], result["distance"])
        return (result["human_like_met"], *walked) if self.human else walked

    def record(self) -> dict | None:
        """What goes in the file's found_by: the kept validation and every one made."""
        return None if self.result is None else {**self.result, "offered": self.history}


def measure(controller_kind: str, body: str, vector: np.ndarray, start_speed: float = WALKING_START_SPEED) -> dict:
    """What the gait does over 10 s from `start_speed` (m/s) on flat ground: task metrics and the human-like
    targets."""
    scene = compile_scene(Scene(body, start_speed=start_speed))
    controller = make_controller(controller_kind, scene)
    with Simulator(scene) as sim:
        rollouts = run_controller(sim, controller, vector[None], nstep=round(10.0 / scene.dt))
    features = rollouts.features(scene)
    analysis = analyze_gait(features)
    return {"metrics": batch_metrics(features)[0].to_dict(), "gait": analysis.row(0),
            "human_like_met": {name: bool(ok[0]) for name, ok in met(analysis).items()}}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # a bad --reward fails before any work
    source = objective_source(args.speed, args.flat_foot, args.reward, args.reward_speed, args.arm_swing)
    scene = compile_scene(Scene(args.body, ground(args.terrain, "--terrain"), start_speed=args.start_speed))
    if args.arm_swing > 0 and not scene.body.hands:
        raise UserError(f"--arm-swing asks the arms to swing; {args.body} has no arms")
    kind = args.controller or starting_kind(args) or controller_for(scene)
    if kind is None:
        raise UserError(f"no structured controller walks {args.body} yet")
    controller = make_controller(kind, scene)
    start = start_vector(args, controller, args.body)
    controller.space = controller.space.narrowed(narrowed_bounds(args.bounds))
    start = np.clip(start, controller.space.low, controller.space.high)
    program = RewardProgram.from_source(source)
    config = SearchConfig(population=args.population, generations=args.generations, sigma=args.sigma,
                          max_seconds=None if args.minutes is None else 60 * args.minutes,
                          stall_speed=args.stall_speed, heading_limit_deg=args.heading_limit,
                          perturbations=perturbations(args), only=tuple(args.only),
                          constraints=("human_gait",) if args.human_first else ())
    targets = search_targets(args.target)
    objective = GaitObjective(program, args.human_weight, targets, flat_only=args.human_on_flat,
                              duration_s=args.duration if args.human_first else None)
    search = PolicySearch(scene, controller, objective, config, duration_s=args.duration, seed=args.seed)
    begin = saved = time.perf_counter()
    previous = previous_stage(args)
    if args.validate < 0:
        raise UserError(f"--validate takes a number of grounds >= 0, got {args.validate}")
    if args.validate_human and not args.validate:
        raise UserError("--validate-human ranks the gaits --validate walks: give --validate N too")
    validated = (Validated(kind, args.body, args.validate, args.fresh_roughness, human=args.validate_human)
                 if args.validate else None)
    if validated:
        validated.offer(start)  # the gait written walks the validation grounds at least as well as the start

    def show(generation: int, scores, params: np.ndarray) -> None:
        nonlocal saved
        now = time.perf_counter()
        print(f"generation {generation}: cost {scores.cost[0]:.3f}, alive {scores.alive[0]:.2f}, "
              f"return {scores.returns[0]:.3f} ({now - begin:.0f} s)", flush=True)
        if now - saved > CHECKPOINT_S:  # a killed search leaves its best so far
            saved = now
            note = f"unfinished: the best after {generation} generations ({now - begin:.0f} s)"
            kept = validated.offer(params) if validated else params
            Policy.of(controller, args.body, kept).save(Path(args.out), found_by={
                "script": "benchmarks/find_gait.py", "argv": sys.argv[1:] if argv is None else argv,
                "checkpoint": note, "validation": validated.record() if validated else None, "previous": previous})

    with Simulator(scene, nthread=args.threads) as sim:
        best, _, log = search.run(sim, start, show)
    if validated:
        best = validated.offer(best)
    measured = measure(kind, args.body, best, args.start_speed)
    found_by = {"script": "benchmarks/find_gait.py", "argv": sys.argv[1:] if argv is None else argv,
                "objective": source.strip(), "target_speed": None if args.reward else args.speed, "reward": args.reward,
                "reward_speed": args.reward_speed,
                "human_weight": args.human_weight,
                "human_on_flat": args.human_on_flat, "human_first": args.human_first,
                "human_targets": dataclasses.asdict(targets),
                "start_speed": args.start_speed, "terrain": scene.scene.terrain.describe(),
                "bounds": narrowed_bounds(args.bounds), "only": args.only,
                "generations": log.generations, "evaluations": log.evaluations,
                "physics_steps": log.steps, "wall_s": round(log.seconds, 1), "best_alive": log.best_alive,
                "best_return": log.best_return, "validation": validated.record() if validated else None,
                "date": datetime.date.today().isoformat(),
                "machine": f"{platform.machine()}, {platform.python_version()}"}
    found_by["previous"] = previous
    Policy.of(controller, args.body, best).save(Path(args.out), found_by=found_by, measured=measured)
    print(json.dumps(measured, indent=1))


if __name__ == "__main__":
    run_script(main, "find_gait.py")
