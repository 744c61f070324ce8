"""Command-line subcommands of rewardloop.control, registered into `rewardloop` by cli.build_parser."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

from rewardloop.cli_base import AddCommand, positive_number, scene_arguments, scene_from_args, writable_directory
from rewardloop.errors import UserError


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
    parser = add("optimize", _optimize)
    scene_arguments(parser)
    parser.add_argument("--reward", default="walk", help="a canonical reward name or a reward program file")
    parser.add_argument("--optimizer", default=None,
                        help="plan (the body's gait planned against the reward), search (policy search over the "
                             "body's gait controller), ppo (a network policy trained with PPO; robots, the rl "
                             "extra), mppi, cem or predictive (default: plan where the body has a gait controller, "
                             "else mppi)")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of motion (default 3)")
    parser.add_argument("--samples", type=int, default=None, help="planner samples per iteration")
    parser.add_argument("--horizon", type=float, default=None, help="planning horizon (s)")
    parser.add_argument("--standing", action="store_true",
                        help="the reward asks to stand still: posture MPPI (unless --optimizer says otherwise) with "
                             "the body's settings for balance (a longer horizon; what `rewardloop run` uses for a "
                             "standing task)")
    parser.add_argument("--generations", type=int, default=None, help="policy search generations")
    parser.add_argument("--population", type=int, default=None, help="policy search candidates per generation")
    parser.add_argument("--controller", default=None,
                        help="policy search over this controller only, from its shipped gait (default: from every "
                             "gait shipped for the body, keeping the best)")
    perturbation_arguments(parser)
    receding_argument(parser, searching=True)
    ppo_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="rollout threads (default: one per core)")
    parser.add_argument("--out", required=True, help="directory for trajectory.npz/.json (and video.mp4)")
    parser.add_argument("--video", action="store_true", help="also render video.mp4 of the motion")
    replay = add("replay", _replay)
    replay.add_argument("policy", help="a policy file, a trajectory directory holding policy.json or policy/ "
                                       "(a trained network), a trained policy folder (OUT/policy of `rewardloop "
                                       "train`), or 'shipped' (the body's shipped base policy where a robot has one, "
                                       "else its shipped gait)")
    scene_arguments(replay)
    replay.set_defaults(body=None)  # None: the policy's body
    replay.add_argument("--duration", type=float, default=10.0, help="seconds of motion (default 10)")
    replay.add_argument("--push", action="append", default=[], metavar="T:V",
                        help="push the whole body sideways at T s by V m/s (+ left; repeatable)")
    physics_arguments(replay)
    receding_argument(replay, searching=False)
    replay.add_argument("--reward", default="walk",
                        help="with --receding: the reward the planner pursues, a canonical name or a reward program "
                             "file (default walk)")
    replay.add_argument("--seed", type=int, default=0, help="with --receding: the planner's random seed")
    replay.add_argument("--network", action="store_true",
                        help="replay a trained network policy (with 'shipped': the body's shipped base policy, an "
                             "error where none is shipped)")
    replay.add_argument("--timestep", type=float, help="a trained policy: another physics timestep (s; sim-to-sim)")
    replay.add_argument("--integrator",
                        help="a trained policy: another integrator (euler, implicitfast, rk4, implicit)")
    replay.add_argument("--out", help="directory for trajectory.npz/.json and policy.json (and video.mp4)")
    replay.add_argument("--video", action="store_true", help="also render video.mp4 (needs --out)")


def ppo_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the PPO optimizer's training (OptimizerConfig.ppo)."""
    parser.add_argument("--steps", type=int, default=None,
                        help="ppo: env steps to train for, all copies together (default 200000)")
    parser.add_argument("--minutes", type=float, default=None, help="ppo: wall time of the training (default 5)")
    parser.add_argument("--envs", type=int, default=None, help="ppo: copies trained on together (default 32)")
    parser.add_argument("--base", default=None,
                        help="ppo: fine-tune this trained policy folder (default: the body's shipped base policy "
                             "where one is shipped)")
    parser.add_argument("--scratch", action="store_true", help="ppo: train a fresh network, never a base policy")
    parser.add_argument("--train-randomized", action="store_true",
                        help="ppo: train under MotionVL's domain randomization")


def ppo_from_args(args: argparse.Namespace, config):  # OptimizerConfig -> OptimizerConfig
    """`config` with the PPO options given; a UserError where they are given to another optimizer."""
    from rewardloop.control.config import PPOSettings

    asked = {"steps": args.steps, "envs": args.envs, "base": args.base,
             "max_seconds": None if args.minutes is None else positive_number(args.minutes, flag="--minutes") * 60}
    asked = {k: v for k, v in asked.items() if v is not None}
    asked |= {"start": "scratch"} if args.scratch else {}
    asked |= {"randomize": True} if args.train_randomized else {}
    if asked and config.kind != "ppo":
        raise UserError(f"--steps, --minutes, --envs, --base, --scratch and --train-randomized set PPO's training "
                        f"(--optimizer ppo), not {config.kind}")
    return dataclasses.replace(config, ppo=PPOSettings(**asked)) if asked else config


def receding_argument(parser: argparse.ArgumentParser, *, searching: bool) -> None:
    """The option that runs a policy with its parameters modulated online (SearchConfig.receding); `searching`:
    for a command that searches (there the ground may turn it on: `defaults.search_for`)."""
    where = ("on by default for the muscle legs on stairs, 2 s ahead" if searching
             else "2 s ahead for the muscle legs on stairs")
    parser.add_argument("--receding", action="store_true",
                        help="run the policy with a receding-horizon planner choosing its parameters every 0.2 s "
                             f"from candidates simulated 1.5 s ahead against the reward ({where})")


def perturbation_arguments(parser: argparse.ArgumentParser) -> None:
    """Policy search options that try every candidate under perturbations too (SearchConfig.perturbations)."""
    parser.add_argument("--push", action="append", default=[], metavar="T:V",
                        help="policy search: also try each candidate pushed sideways at T s by V m/s (repeatable)")
    parser.add_argument("--noise", type=float, default=0.0,
                        help="policy search: also try each candidate with this relative parameter noise (0.03: ±3 %%)")
    parser.add_argument("--noise-draws", type=int, default=2, help="runs with parameter noise (default 2)")
    parser.add_argument("--fresh-grounds", type=int, default=0,
                        help="policy search: also try each candidate on this many rough grounds drawn afresh "
                             "every generation")
    parser.add_argument("--fresh-roughness", type=float, default=None, help="bump height of those grounds (m)")


def perturbations_from_args(args: argparse.Namespace, kind: str):  # -> Perturbations | None
    """The Perturbations the perturbation options ask for (None: none asked); a UserError unless `kind` is the
    policy search."""
    from rewardloop.control.config import Perturbations

    asked = {"pushes": tuple(pushes_from_args(args.push)), "param_noise": args.noise,
             "noise_draws": args.noise_draws if args.noise else 0, "fresh_grounds": args.fresh_grounds}
    if args.fresh_roughness is not None:
        asked["fresh_roughness"] = args.fresh_roughness
    if not (asked["pushes"] or args.noise or args.fresh_grounds):
        return None
    if kind != "search":
        raise UserError(f"--push, --noise and --fresh-grounds apply to policy search (--optimizer search), "
                        f"not {kind}")
    return Perturbations(**asked)


def physics_arguments(parser: argparse.ArgumentParser) -> None:
    """Options that change the physics for robustness tests (rewardloop.sim.scene.Physics)."""
    parser.add_argument("--friction", type=float, default=None, help="friction coefficient of every contact")
    parser.add_argument("--gain", type=float, default=1.0, help="actuator strength factor")
    parser.add_argument("--joint-friction", type=float, default=0.0, help="dry friction on every joint (N·m)")
    parser.add_argument("--latency", type=int, default=0, help="physics steps of command latency")
    parser.add_argument("--randomize", type=int, default=None, metavar="SEED",
                        help="draw friction, gain, joint friction and latency from MotionVL's ranges")


def physics_from_args(args: argparse.Namespace):  # -> Physics
    """The Physics the physics options describe."""
    import numpy as np

    from rewardloop.sim.scene import Physics, random_physics

    if args.randomize is not None:
        return random_physics(np.random.default_rng(args.randomize))
    return Physics(friction=args.friction, gain=args.gain, joint_friction=args.joint_friction,
                   latency_steps=args.latency)


def pushes_from_args(items: list[str]) -> list[tuple[float, float]]:
    """'T:V' strings -> (time s, sideways speed m/s) pairs; a UserError for anything else."""
    try:
        return [(float(t), float(v)) for t, v in (item.split(":") for item in items)]
    except ValueError:
        raise UserError(f"--push takes T:V (seconds:m/s), e.g. 4:0.5; got {' '.join(items)}") from None


def _program(reward: str):  # type: ignore[no-untyped-def]
    """(program, trusted) from a canonical name or a file path."""
    from rewardloop.reward.canonical import CANONICAL, canonical
    from rewardloop.reward.commands import read_program_text
    from rewardloop.reward.program import RewardProgram

    if reward in CANONICAL:
        return canonical(reward), True
    if not Path(reward).is_file():
        raise UserError(f"--reward {reward!r} is neither a canonical reward ({', '.join(CANONICAL)}) nor a file")
    return RewardProgram.from_source(read_program_text(reward)), False


def _with_receding(config):  # OptimizerConfig -> OptimizerConfig
    """`config` with the policy search's receding-horizon mode on; a UserError for another optimizer."""
    from rewardloop.control.config import RecedingConfig

    if config.kind != "search":
        raise UserError(f"--receding modulates a policy search's gait; the optimizer here is {config.kind}")
    receding = config.search.receding or RecedingConfig()  # the ground's planner where it has one
    return dataclasses.replace(config, search=dataclasses.replace(config.search, receding=receding))


def _optimize(args: argparse.Namespace) -> int:
    """Optimize a controller for a reward on a body and write the executed trajectory (and a video)."""
    from rewardloop.control.defaults import default_config
    from rewardloop.control.optimizer import Progress, optimize
    from rewardloop.reward import load_reward
    from rewardloop.reward.canonical import FROM_REST
    from rewardloop.sim.scene import compile_scene

    positive_number(args.duration, flag="--duration")
    writable_directory(args.out, flag="--out")  # before optimizing, not after
    from_rest = args.standing or args.reward in FROM_REST  # as the loop's tasks for these motions start
    scene = compile_scene(scene_from_args(args, start_speed=0.0 if from_rest else None))
    config = default_config(scene, kind=args.optimizer or ("mppi" if args.standing else None),
                            duration_s=args.duration, nthread=args.threads, standing=args.standing,
                            samples=args.samples, horizon_s=args.horizon,
                            search={"generations": args.generations, "population": args.population,
                                    "controller": args.controller})
    perturbations = perturbations_from_args(args, config.kind)
    if perturbations is not None:
        config = dataclasses.replace(config, search=dataclasses.replace(config.search, perturbations=perturbations))
    if args.receding:
        config = _with_receding(config)
    config = ppo_from_args(args, config)
    program, trusted = _program(args.reward)

    def show(progress: Progress) -> None:
        best = "" if np.isnan(progress.best_return) else f"  best return {progress.best_return:.3f}"
        sys.stderr.write(f"\r{progress.fraction:6.1%}  {progress.message}{best}")

    with load_reward(program, trusted=trusted) as reward:
        trajectory = optimize(scene, reward, config, seed=args.seed, progress=show)
    sys.stderr.write("\n")
    out = trajectory.save(args.out)
    if args.video:
        from rewardloop.sim.render import render, write_video

        write_video(render(scene, trajectory.rollouts.states_with_initial()), out / "video.mp4")
    summary = {"optimizer": config.kind, "metrics": trajectory.metrics.to_dict(), "return": trajectory.total_return,
               "wall_time_s": round(trajectory.wall_time_s, 2), "out": str(out)}
    if trajectory.policy is not None:
        summary["policy"] = str(out / ("policy.json" if config.kind != "ppo" else "policy"))
    if config.kind == "ppo":
        summary["ppo"] = _ppo_summary(config, trajectory)
    if config.kind == "search" and config.search.receding is not None:  # policy.json: the parameters as found
        summary["receding"] = dataclasses.asdict(config.search.receding)
    if config.kind == "plan":  # policy.json: the gait planned from
        from rewardloop.control.planners.gait_planning import planner_settings

        summary["planner"] = dataclasses.asdict(planner_settings(config, scene))
    elif config.kind not in ("search", "ppo"):  # a posture planner: its settings (the standing ones with --standing)
        summary["planner"] = dataclasses.asdict(config.planner)
    print(json.dumps(summary, indent=2))
    return 0


def _ppo_summary(config, trajectory) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """PPO's settings and the end of its learning curve (env steps, mean step reward, speed, training seconds)."""
    from rewardloop.control.trajectory import NetworkPolicy

    assert isinstance(trajectory.policy, NetworkPolicy)
    last = trajectory.policy.curve[-1]
    return {**dataclasses.asdict(config.ppo), "iterations": last["iteration"] + 1, "env_steps": last["env_steps"],
            "last_reward": round(last["reward"], 4), "last_speed": round(last["speed"], 3),
            "train_s": round(trajectory.planner_time_s, 1)}


def _receding_replay(scene, controller, vector, args: argparse.Namespace,  # type: ignore[no-untyped-def]
                     pushes: list[tuple[float, float]]):
    """The replayed motion with the receding-horizon planner pursuing --reward (with the ground's settings)."""
    from rewardloop.control.defaults import receding_for
    from rewardloop.control.planners.receding import run_receding
    from rewardloop.reward import load_reward

    config = receding_for(scene.body.actuator_kind, scene.scene.terrain.kind)
    program, trusted = _program(args.reward)
    with load_reward(program, trusted=trusted) as reward:
        return run_receding(scene, controller, vector, reward, config, duration_s=args.duration, seed=args.seed,
                            pushes=pushes)


def _replay(args: argparse.Namespace) -> int:
    """Run a saved policy in a scene (another ground, pushes, changed physics) and report its metrics."""
    positive_number(args.duration, flag="--duration")
    out = writable_directory(args.out, flag="--out") if args.out else None
    folder = _network_folder(args)
    if folder is not None:
        return _replay_network(args, folder, out)
    if args.timestep is not None or args.integrator is not None:
        raise UserError("--timestep and --integrator change the physics under a trained network policy (sim-to-sim); "
                        f"{args.policy} is a structured controller's")
    return _replay_structured(args, out)


def _network_folder(args: argparse.Namespace) -> Path | None:
    """The trained policy folder the replay's `policy` names (None: a structured controller's policy)."""
    from rewardloop.control.trajectory import NETWORK_DIR, NETWORK_MARK
    from rewardloop.rl.base import not_shipped, shipped_policy
    from rewardloop.sim.bodies import get_body

    if args.policy == "shipped":
        body = args.body or "humanoid"
        if not (args.network or get_body(body).actuator_kind == "servo"):
            return None
        folder = shipped_policy(body)
        if folder is None and args.network:
            raise UserError(not_shipped(body))
        if folder is None:
            sys.stderr.write(f"{not_shipped(body)}; replaying its shipped gait instead\n")
        return folder
    path = Path(args.policy)
    for folder in (path, path / NETWORK_DIR):
        if (folder / NETWORK_MARK).is_file():
            return folder
    if args.network:
        raise UserError(f"{path} holds no trained network policy ({NETWORK_MARK}, or {NETWORK_DIR}/{NETWORK_MARK})")
    return None


def _replay_network(args: argparse.Namespace, folder: Path, out: Path | None) -> int:
    """Replay a trained network policy: its deterministic run in the scene the options describe."""
    from rewardloop.control.trajectory import NetworkPolicy
    from rewardloop.rl import missing_extra
    from rewardloop.sim.scene import Physics

    try:
        from rewardloop.rl.replay import SimChange, replay_network
    except ImportError as error:
        raise missing_extra("replaying a trained policy", error) from None
    if args.receding or (args.reward, args.seed) != ("walk", 0):
        raise UserError("--receding, --reward and --seed plan a structured controller's parameters; a trained "
                        "network policy runs as trained")
    if args.latency:
        raise UserError("--latency delays a structured controller's commands; for a trained policy use --randomize "
                        "SEED (MotionVL's ranges, latency 1-10 steps among them)")
    args.body = args.body or NetworkPolicy.load(folder).body
    physics = Physics() if args.randomize is not None else physics_from_args(args)
    scene = dataclasses.replace(scene_from_args(args), physics=physics)
    changed, trajectory = replay_network(folder, scene, seconds=args.duration, pushes=pushes_from_args(args.push),
                                     randomize_seed=args.randomize,
                                     change=SimChange(timestep=args.timestep, integrator=args.integrator))
    extra = {"policy": str(folder), "timestep": changed.dt, "integrator": args.integrator, "randomize": args.randomize}
    return _report_replay(changed, trajectory, out, args, extra)


def _replay_structured(args: argparse.Namespace, out: Path | None) -> int:
    """Replay a structured controller's policy (a file, a trajectory directory, or the body's shipped gait)."""
    from rewardloop.control.controllers.base import make_controller
    from rewardloop.control.search.cmaes import pushed_motion
    from rewardloop.control.search.policy import Policy, shipped_gait
    from rewardloop.control.trajectory import replayed
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import compile_scene

    body = args.body or "humanoid"
    policy = shipped_gait(body) if args.policy == "shipped" else Policy.load(args.policy)
    if policy is None:
        raise UserError(f"no shipped gait for {body}")
    args.body = args.body or policy.body
    scene = compile_scene(dataclasses.replace(scene_from_args(args), physics=physics_from_args(args)))
    controller = make_controller(policy.controller, scene)
    pushes = pushes_from_args(args.push)
    if not args.receding and (args.reward, args.seed) != ("walk", 0):
        raise UserError("--reward and --seed set the receding-horizon planner: add --receding")
    if args.receding:
        rollouts = _receding_replay(scene, controller, policy.vector(controller), args, pushes)
    else:
        with Simulator(scene) as sim:
            rollouts = pushed_motion(sim, controller, policy.vector(controller), duration_s=args.duration,
                                     pushes=pushes)
    return _report_replay(scene, replayed(scene, rollouts, policy), out, args, {})


def _report_replay(scene, trajectory, out: Path | None, args: argparse.Namespace,  # type: ignore[no-untyped-def]
                   extra: dict[str, object]) -> int:
    """Print the replay's scene, metrics and gait as JSON; save the trajectory (and video) under `out`."""
    from rewardloop.critic.gait import analyze_gait
    from rewardloop.critic.likeness import met

    analysis = analyze_gait(trajectory.features(scene))
    summary = {"scene": scene.scene.describe(), **extra, "metrics": trajectory.metrics.to_dict(),
               "human_like": {name: bool(ok[0]) for name, ok in met(analysis).items()}, "gait": analysis.row(0)}
    if out is not None:
        trajectory.save(out)
        summary["out"] = str(out)
        if args.video:
            from rewardloop.sim.render import render, write_video

            write_video(render(scene, trajectory.rollouts.states_with_initial()), out / "video.mp4")
    print(json.dumps(summary, indent=2, default=float))
    return 0
