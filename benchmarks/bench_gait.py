"""Benchmark of locomotion by policy search: how far, how human-like, how robust, and whether rewards steer it.

    .venv/bin/python benchmarks/bench_gait.py --body humanoid --seeds 0 1 2 --json gait.json

Each row is a reward (and ground) that the optimizer gets: the canonical walks on flat, rough, slope and
stairs ground, and rewards for a slow walk at 0.6 m/s, a fast walk, straight knees, a 90° left turn and the
injured walk (the walk-injured task's body and reward). For every row and seed, the default optimizer of the
loop (policy search warm-started from the shipped gait of the body that the reward ranks best, the per-candidate
budget) produces a 10-s motion from the walking start; the row reports distance, falls, speed, heading,
cadence, knee and hip angles, similarity to human walking, wall time, the controller kept and the receding-horizon
planner's settings where the motion ran with one (the muscle legs' stairs row, as `optimize` runs it). The flat walk's
policies are then replayed on unseen rough ground, under randomized physics (MotionVL's ranges) and after
sideways pushes (20 trials: ±0.1 and ±0.2 m/s at five times), where success means 10 s without a fall, and
walked for 30 s on flat ground (whether a gait tuned on 10-s trials keeps walking). Sampling optimizers are
chaotic: read the spread over seeds. With --receding they are also replayed with the receding-horizon planner on
top (rewardloop.control.planners.receding) pursuing the walk reward, its candidates drawn from the row's seed.

    .venv/bin/python benchmarks/bench_gait.py --policy gait.json --json replay.json

With --policy, no search runs: the gait file's own policy is replayed for 10 s from the walking start on the
rows' grounds (flat, rough, slope, stairs), then on unseen rough ground, under randomized physics and under
±3 % parameter noise (one draw per seed), after the sideways pushes (with --receding, also with the planner) and
for 30 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter

import numpy as np

from rewardloop.control.config import RecedingConfig
from rewardloop.control.controllers.base import Controller, make_controller, run_controller
from rewardloop.control.defaults import default_config
from rewardloop.control.metrics import fall_mask
from rewardloop.control.optimizer import optimize
from rewardloop.control.planners.receding import run_receding
from rewardloop.control.search.cmaes import pushed_motion, segment_rollouts
from rewardloop.control.search.policy import Policy
from rewardloop.control.trajectory import Trajectory, replayed
from rewardloop.critic.gait import analyze_gait
from rewardloop.critic.likeness import met
from rewardloop.errors import UserError, run_script, unknown_name
from rewardloop.reward.base import RewardFunction
from rewardloop.reward.canonical import CANONICAL, canonical
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.rollout import Rollouts, Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, CompiledScene, Scene, compile_scene, random_physics
from rewardloop.sim.terrain import Terrain
from rewardloop.spec import PACES
from rewardloop.tasks import INJURIES


def _with_speed(target: str) -> str:
    """The canonical walk with its speed target replaced by `target` (an expression in f)."""
    source = CANONICAL["walk"]
    old = "np.minimum(1.5 * f.standing_height, start + 0.6 * f.time)"
    if old not in source:
        raise UserError("the canonical walk's speed target changed; update bench_gait._with_speed")
    return source.replace(old, target)


_TURN_90 = CANONICAL["walk"].replace('''def face(f):
    """cos(heading): 1 facing +x."""
    return lib.heading(f, target=0.0)''', '''def face(f):
    """cos(heading error): the heading turns left at a steady rate to 90 degrees by the end."""
    target = np.minimum(f.time / 8.0, 1.0) * np.pi / 2
    return np.cos(f.heading - target)''').replace('''def side(f):
    """-(|sideways CoM speed| + |distance from the line y = 0|) (m/s + m)."""
    return -np.abs(f.com_vel[..., 1]) - np.abs(f.com_pos[..., 1])''', '''def side(f):
    """-|sideways speed relative to the heading| (m/s)."""
    return -np.abs(f.lateral_vel)''').replace('"face": 1.0', '"face": 3.0').replace(
    "-np.abs(f.com_vel[..., 0] - target)", "-np.abs(f.forward_vel - np.minimum(target, 0.8))").replace(
    "speed=target)", "speed=np.minimum(target, 0.8))")

ROWS: dict[str, tuple[str, Terrain]] = {
    "walk": (CANONICAL["walk"], Terrain("flat")),
    "slow 0.6 m/s": (_with_speed("0.6"), Terrain("flat")),
    "fast": (canonical("walk", speed=PACES["fast"]).source, Terrain("flat")),
    "straight knees": (CANONICAL["walk_straight_knees"], Terrain("flat")),
    "turn left 90°": (_TURN_90, Terrain("flat")),
    "rough": (CANONICAL["walk_rough"], Terrain("rough")),
    "slope 5°": (CANONICAL["walk_slope"], Terrain("slope", slope_deg=5.0)),
    "stairs": (CANONICAL["walk_stairs"], Terrain("stairs")),
    "injured": (CANONICAL["walk_injured"], Terrain("flat")),
}
"""Row name -> (reward program, ground); the `injured` row weakens the body as the walk-injured task does; the `fast`
row is the canonical program a user's "walk fast" starts from (the walk with its speed ramp topped at the fast pace,
1.8 m/s; until November 27 2026, when a pace in words set no reward target, 2.0 × standing height without the ramp)."""


def measure(scene: CompiledScene, trajectory: Trajectory) -> dict[str, float | bool | None]:
    """The row's numbers for one motion."""
    analysis = analyze_gait(trajectory.features(scene))
    m, g = trajectory.metrics, analysis.measures
    hip, knee = analysis.correlation[0, 0], analysis.correlation[0, 1]
    return {"distance": m.distance, "fell": m.fell, "fall_time": m.fall_time, "speed": m.speed,
            "heading_deg": float(np.degrees(m.heading_change)), "cadence": float(g.cadence[0]),
            "knee_midstance": float(g.knee_midstance[0]), "knee_swing": float(g.peak_knee_swing[0]),
            "hip_peak": float(g.peak_hip_flexion[0]), "clearance": float(g.swing_clearance[0]),
            "pelvis_yaw": float(g.pelvis_yaw_range[0]), "hip_r": float(hip), "knee_r": float(knee),
            "human_like": bool(all(ok[0] for ok in met(analysis).values())), "wall_s": trajectory.wall_time_s,
            "controller": trajectory.policy.controller if trajectory.policy else None}


def robustness(policy: Policy, body: str, *, seeds: list[int], receding: RewardFunction | None = None,
               planner_seed: int = 0) -> dict[str, float]:
    """Success rates (10 s without a fall) of a flat-trained policy on unseen rough ground and randomized physics;
    with a `receding` reward, also with the receding-horizon planner pursuing it (keys ending in `_receding`; the
    planner drawing its candidates from `planner_seed`)."""
    scenes = {"rough": [Scene(body, Terrain("rough", seed=100 + s), start_speed=WALKING_START_SPEED) for s in seeds],
              "physics": [Scene(body, start_speed=WALKING_START_SPEED,
                                physics=random_physics(np.random.default_rng(200 + s))) for s in seeds]}
    modes = {"": None} if receding is None else {"": None, "_receding": receding}
    rates = {}
    for name, group in scenes.items():
        for suffix, reward in modes.items():
            walked = [not replayed(scene, replay_motion(scene, policy, reward, planner_seed)).metrics.fell
                      for scene in map(compile_scene, group)]
            rates[name + suffix] = float(np.mean(walked))
    return rates


def replay_motion(scene: CompiledScene, policy: Policy, receding: RewardFunction | None = None,
                  planner_seed: int = 0) -> Rollouts:
    """The policy's 10-s motion from the scene's start [1, T, ·]; with a `receding` reward, its parameters
    modulated online by the receding-horizon planner pursuing it."""
    controller = make_controller(policy.controller, scene)
    if receding is not None:
        return run_receding(scene, controller, policy.vector(controller), receding, RecedingConfig(),
                            duration_s=10.0, seed=planner_seed)
    with Simulator(scene) as sim:
        return pushed_motion(sim, controller, policy.vector(controller), duration_s=10.0)


def replay_row(policy: Policy, terrain: Terrain, receding: RewardFunction | None = None) -> dict:
    """The row's numbers for a policy replayed for 10 s from the walking start on `terrain`, no search (with a
    `receding` reward: modulated online)."""
    scene = compile_scene(Scene(policy.body, terrain, start_speed=WALKING_START_SPEED))
    begin = time.perf_counter()
    rollouts = replay_motion(scene, policy, receding)
    trajectory = dataclasses.replace(replayed(scene, rollouts, policy), wall_time_s=time.perf_counter() - begin)
    return measure(scene, trajectory)


def _on_flat(policy: Policy) -> tuple[CompiledScene, Controller]:
    """Flat ground at the walking start for the policy's body, and the policy's controller there."""
    scene = compile_scene(Scene(policy.body, start_speed=WALKING_START_SPEED))
    return scene, make_controller(policy.controller, scene)


def noise_survival(policy: Policy, *, seeds: list[int], noise: float = 0.03) -> float:
    """Fraction of draws of relative parameter noise (uniform within ±`noise`, one draw per seed, clipped to the
    bounds) under which the policy walks 10 s on flat ground without a fall."""
    scene, controller = _on_flat(policy)
    vector, space = policy.vector(controller), controller.space
    draws = np.stack([np.clip(vector * (1 + np.random.default_rng(300 + s).uniform(-noise, noise, vector.shape)),
                              space.low, space.high) for s in seeds])
    with Simulator(scene) as sim:
        rollouts = run_controller(sim, controller, draws, nstep=round(10.0 / scene.dt))
    return float(np.mean(~fall_mask(rollouts.features(scene)).any(axis=1)))


PUSH_TIMES_S = (2.0, 3.5, 5.0, 6.5, 8.0)
"""When the push trials kick the walking body (s into the 10-s motion; not aligned with any gait's steps)."""
PUSH_SPEEDS = (-0.2, -0.1, 0.1, 0.2)
"""The sideways kicks of the push trials (m/s, + to the left): one trial per time and speed."""


def push_survival(policy: Policy, receding: RewardFunction | None = None, planner_seed: int = 0) -> float:
    """Fraction of the push trials (PUSH_TIMES_S × PUSH_SPEEDS, one sideways kick of the whole body's velocity
    each) after which the policy still walks its 10 s on flat ground without a fall; with a `receding` reward,
    with the receding-horizon planner pursuing it (its candidates drawn from `planner_seed`)."""
    scene, controller = _on_flat(policy)
    trials = [(at, speed) for at in PUSH_TIMES_S for speed in PUSH_SPEEDS]
    vector = policy.vector(controller)
    if receding is not None:
        return float(np.mean([not replayed(scene, run_receding(
            scene, controller, vector, receding, RecedingConfig(), duration_s=10.0, seed=planner_seed,
            pushes=[trial])).metrics.fell for trial in trials]))
    kicks = []
    for row, (at, speed) in enumerate(trials):
        kick = np.zeros((len(trials), 3))
        kick[row, 1] = speed
        kicks.append((round(at / scene.dt), kick))
    nstep = round(10.0 / scene.dt)
    with Simulator(scene) as sim:
        rollouts, _ = segment_rollouts(sim, controller, np.repeat(vector[None], len(trials), axis=0), nstep=nstep,
                                       segment=nstep, initial_state=scene.initial_state, pushes=kicks,
                                       stop_on_fall=False)
    return float(np.mean(~fall_mask(rollouts.features(scene)).any(axis=1)))


def long_walk(policy: Policy, seconds: float = 30.0) -> dict[str, float | None]:
    """Distance (m) and fall time (s, None without a fall) of the policy's `seconds`-long motion on flat ground
    from the walking start: whether a gait tuned on 10-s trials keeps walking."""
    scene, controller = _on_flat(policy)
    with Simulator(scene) as sim:
        metrics = replayed(scene, pushed_motion(sim, controller, policy.vector(controller),
                                                duration_s=seconds)).metrics
    return {f"distance_{seconds:g}s": metrics.distance, f"fall_time_{seconds:g}s": metrics.fall_time}


def replay_policy(path: str, robust_seeds: int, receding: bool = False) -> tuple[list[dict], list[dict]]:
    """Rows and robustness of a gait file replayed without search (with `receding`: each row's motion modulated
    online by the planner pursuing the row's reward, and the robustness measured both ways)."""
    policy, seeds = Policy.load(path), list(range(robust_seeds))

    def reward(row: str) -> RewardFunction | None:
        return _reward(row) if receding else None

    rows = [{"row": name, "seed": 0, **replay_row(policy, ROWS[name][1], reward(name))}
            for name in ("walk", "rough", "slope 5°", "stairs")]
    robust = [{"seed": 0, **robustness(policy, policy.body, seeds=seeds, receding=reward("walk")),
               "noise_3pct": noise_survival(policy, seeds=seeds), "pushes": push_survival(policy), **long_walk(policy)}]
    if receding:
        robust[0]["pushes_receding"] = push_survival(policy, reward("walk"))
    return rows, robust


def _reward(row: str) -> RewardFunction:
    """The row's reward program, evaluated in-process (ours, trusted)."""
    return RewardProgram.from_source(ROWS[row][0]).evaluate_trusted


def row_scene(name: str, body: str) -> CompiledScene:
    """The row's ground for `body` at the walking start (weakened as the walk-injured task weakens it in the
    `injured` row)."""
    injury = INJURIES.get(body, ()) if name == "injured" else ()
    return compile_scene(Scene(body, ROWS[name][1], injury, start_speed=WALKING_START_SPEED))


def run_row(name: str, body: str, seed: int, config_changes: dict, kind: str = "search") -> tuple[dict, Policy | None]:
    scene = row_scene(name, body)
    config = default_config(scene, kind=kind, duration_s=10.0, search=config_changes)
    trajectory = optimize(scene, _reward(name), config, seed=seed)
    planner = config.search.receding  # the ground's (the muscle legs' stairs) or --receding-rows
    return {**measure(scene, trajectory), "receding": planner and dataclasses.asdict(planner)}, trajectory.policy


def summary(rows: list[dict]) -> str:
    """Markdown table: mean ± spread (min–max) per row over seeds."""
    keys = ("distance", "speed", "heading_deg", "cadence", "knee_midstance", "knee_swing", "hip_peak", "clearance",
            "hip_r", "knee_r", "wall_s")
    lines = ["| row | falls | " + " | ".join(keys) + " | human-like | controller |", "|---" * (len(keys) + 4) + "|"]
    for name in dict.fromkeys(r["row"] for r in rows):
        group = [r for r in rows if r["row"] == name]
        cells = []
        for key in keys:
            values = np.array([r[key] for r in group], dtype=float)
            cells.append(f"{np.nanmean(values):.2f} ({np.nanmin(values):.2f}–{np.nanmax(values):.2f})")
        falls = sum(r["fell"] for r in group)
        human = sum(r["human_like"] for r in group)
        kinds = ", ".join(f"{kind} {count}" for kind, count in Counter(r.get("controller") for r in group).items())
        lines.append(f"| {name} | {falls}/{len(group)} | " + " | ".join(cells) + f" | {human}/{len(group)} | {kinds} |")
    return "\n".join(lines)


def robust_line(entry: dict) -> str:
    """One line on a flat-trained policy's robustness entry."""
    fell = entry["fall_time_30s"]
    line = (f"flat-trained policy, seed {entry['seed']}: unseen rough ground {entry['rough']:.0%}, randomized physics "
            f"{entry['physics']:.0%}, sideways pushes {entry['pushes']:.0%}, 30 s {entry['distance_30s']:.1f} m"
            + (f" (fell at {fell:.1f} s)" if fell is not None else " (no fall)"))
    if "rough_receding" in entry:
        line += (f"; with the receding-horizon planner {entry['rough_receding']:.0%}, "
                 f"{entry['physics_receding']:.0%}, pushes {entry['pushes_receding']:.0%}")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--body", default="humanoid")
    parser.add_argument("--rows", nargs="*", default=list(ROWS), help=f"rows to run: {', '.join(ROWS)}")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--robust-seeds", type=int, default=5, help="unseen terrains / physics draws per policy")
    parser.add_argument("--generations", type=int, default=None, help="override the per-candidate generations")
    parser.add_argument("--sigma", type=float, default=None, help="override the per-candidate initial step")
    parser.add_argument("--controller", default=None, help="search this controller only (default: every shipped gait)")
    parser.add_argument("--steer-only", action="store_true", default=None,
                        help="move only the controllers' steering parameters")
    parser.add_argument("--receding", action="store_true",
                        help="also replay the flat walk's policies with the receding-horizon planner (rough_receding, "
                             "physics_receding); with --policy, every row's motion too")
    parser.add_argument("--receding-rows", action="store_true",
                        help="execute every row's found policy with the receding-horizon planner")
    parser.add_argument("--optimizer", default="search", choices=("search", "plan"),
                        help="search: policy search (the rows' robustness replays its policy); plan: the gait planned "
                             "against the row's reward (no robustness replays: its motion is the planner's)")
    parser.add_argument("--json", default=None, help="write every row and the robustness rates here")
    parser.add_argument("--policy", default=None, help="replay this gait file on the rows' grounds, no search")
    args = parser.parse_args()
    if args.policy:
        rows, robust = replay_policy(args.policy, args.robust_seeds, args.receding)
        print(summary(rows))
        print(json.dumps(robust[0]))
        if args.json:
            with open(args.json, "w") as handle:
                json.dump({"policy": args.policy, "rows": rows, "robustness": robust}, handle, indent=1,
                          default=float)
        return
    for name in args.rows:
        if name not in ROWS:
            raise unknown_name("row", name, ROWS)
    rows, robust = [], []
    changes = {"generations": args.generations, "sigma": args.sigma, "controller": args.controller,
               "steer_only": args.steer_only, "receding": RecedingConfig() if args.receding_rows else None}
    for name in args.rows:
        for seed in args.seeds:
            begin = time.perf_counter()
            row, policy = run_row(name, args.body, seed, changes, args.optimizer)
            rows.append({"row": name, "seed": seed, "optimizer": args.optimizer, **row})
            print(json.dumps(rows[-1], default=float), f"({time.perf_counter() - begin:.0f} s)", flush=True)
            if name == "walk" and policy is not None and args.optimizer == "search":
                robust.append({"seed": seed, **robustness(policy, args.body, seeds=list(range(args.robust_seeds)),
                                                          receding=_reward("walk") if args.receding else None,
                                                          planner_seed=seed),
                               "pushes": push_survival(policy), **long_walk(policy)})
                if args.receding:
                    robust[-1]["pushes_receding"] = push_survival(policy, _reward("walk"), planner_seed=seed)
                print(json.dumps(robust[-1]), flush=True)
    print(summary(rows))
    for entry in robust:
        print(robust_line(entry))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"body": args.body, "rows": rows, "robustness": robust,
                       "settings": dataclasses.asdict(default_config(compile_scene(Scene(args.body)), kind="search",
                                                                     search=changes).search)},
                      handle, indent=1, default=float)


if __name__ == "__main__":
    run_script(main, "bench_gait.py")
