"""`rewardloop train`: PPO for a robot against a canonical reward or a reward program file, with live progress.

    rewardloop train --body berkeley_humanoid --reward walk --steps 2000000 --out runs/walk

Run again with the same --out to resume from its checkpoint (a larger --steps trains on). The policy lands in
OUT/policy (policy.pt, policy.onnx, policy.json, weights.pt: a base that PPO candidates can fine-tune), the learning
curve in OUT/curve.json.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rewardloop.cli_base import AddCommand, writable_directory
from rewardloop.errors import UserError


def _program(reward: str) -> tuple[str, bool]:
    """--reward: a canonical reward's name (vetted: runs in process) or a program file (runs in the sandbox)."""
    from rewardloop.reward.canonical import CANONICAL, canonical
    from rewardloop.reward.commands import read_program_text
    from rewardloop.reward.program import RewardProgram

    if reward in CANONICAL:
        return canonical(reward).source, True
    if not Path(reward).suffix == ".py":
        raise UserError(f"--reward {reward}: neither a canonical reward ({', '.join(CANONICAL)}) nor a .py file")
    return RewardProgram.from_source(read_program_text(reward)).source, False


def command_speed(source: str, standing_height: float) -> float:
    """The forward speed a walk program asks for (m/s): its stated ramp top, 1.5 × standing height for the
    canonical walks that scale with the body, else 0 (standing, turning in place)."""
    from rewardloop.reward.canonical import ramp_top

    top = ramp_top(source)
    if top is not None:
        return top
    return 1.5 * standing_height if "1.5 * f.standing_height" in source else 0.0


def _config(args: argparse.Namespace):  # -> TrainConfig (torch is imported only when training)
    from rewardloop.rl.env import EnvConfig
    from rewardloop.rl.randomize import Randomization
    from rewardloop.rl.train import TrainConfig
    from rewardloop.sim.scene import Scene, compile_scene

    if args.steps < 1 or args.envs < 1:
        raise UserError("--steps and --envs must be positive")
    source, trusted = _program(args.reward)
    speed = args.speed if args.speed is not None else command_speed(
        source, compile_scene(Scene(args.body)).standing_height)
    env = EnvConfig(num_envs=args.envs, command_speed=speed, seed=args.seed,
                    randomization=Randomization() if args.randomize else None)
    return TrainConfig(reward_source=source, reward_trusted=trusted, body=args.body, steps=args.steps,
                       seed=args.seed, env=env)


def _progress(total: int):  # -> Callable[[IterationRecord], None]
    """One line per iteration: reward, episode return, speed, falls, env-steps/s, time left."""
    start = time.perf_counter()
    first: list[int] = []

    def show(record) -> None:  # type: ignore[no-untyped-def]
        first.append(record.iteration) if not first else None
        done = record.iteration + 1 - first[0]
        left = (time.perf_counter() - start) / done * (total - record.iteration - 1)
        ret = f"{record.episode_return:8.2f}" if record.episode_return is not None else f"{'-':>8}"
        print(f"it {record.iteration + 1:>5}/{total}  steps {record.env_steps:>9}  reward {record.reward:7.3f}  "
              f"return {ret}  speed {record.speed:5.2f} m/s  falls {record.falls:>3}  "
              f"{record.steps_per_s:6.0f} steps/s  left {left / 60:5.1f} min", flush=True)
    return show


def cmd_train(args: argparse.Namespace) -> int:
    """Train a robot policy with PPO (rsl_rl) against a reward; resumes from OUT's checkpoint."""
    from rewardloop.rl import missing_extra

    try:
        from rewardloop.rl.policy import TrainedPolicy, export_onnx, save_policy
        from rewardloop.rl.train import Trainer
    except ImportError as error:
        raise missing_extra("rewardloop train", error) from None

    out = writable_directory(args.out, flag="--out")
    config = _config(args)
    print(f"training {config.body} on {args.reward}: {config.iterations} iterations of "
          f"{config.env.num_envs} x {config.env.block_steps} steps, command {config.env.command_speed:.2f} m/s")
    with Trainer(config, out=out) as trainer:
        result = trainer.run(progress=_progress(config.iterations),
                             max_seconds=args.minutes * 60 if args.minutes else None)
        folder = save_policy(trainer.alg.get_policy(), config, trainer.env.obs_layout(), out / "policy",
                             weights=trainer.weights())
        obs = trainer.env.observe()
    mismatch = export_onnx(TrainedPolicy.load(folder), folder, check_obs=obs)
    print(f"policy: {folder} (ONNX matches torch within {mismatch:.1e})")
    if len(result.curve) < config.iterations:
        print(f"stopped after --minutes {args.minutes:g} at iteration {len(result.curve)}/{config.iterations}; "
              f"the same command resumes")
    return 0


def register(add: AddCommand) -> None:
    """Add `train`."""
    train = add("train", cmd_train)
    train.add_argument("--body", default="berkeley_humanoid", help="a servo-driven robot (see `rewardloop bodies`)")
    train.add_argument("--reward", default="walk", help="a canonical reward's name or a reward program file (.py)")
    train.add_argument("--steps", type=int, default=1_000_000, help="env steps in all (all copies together)")
    train.add_argument("--out", required=True, help="run folder; an existing run there resumes")
    train.add_argument("--envs", type=int, default=64, help="copies stepped together")
    train.add_argument("--speed", type=float, help="commanded forward speed (m/s); default: the reward's")
    train.add_argument("--randomize", action="store_true", help="MotionVL's domain randomization")
    train.add_argument("--minutes", type=float, help="stop after this much training (resume later); default: none")
    train.add_argument("--seed", type=int, default=0)
