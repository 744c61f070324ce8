"""RL measurements on this machine: collection rate against the raw stepping rate, PPO update cost, a short training.

    .venv/bin/python benchmarks/bench_rl.py collect --out benchmarks/results/rl_collection.json
    .venv/bin/python benchmarks/bench_rl.py train --steps 1000000 --minutes 4.5 \
        --out benchmarks/results/rl_walk_short.json

`collect`: the raw rate is threads × single-thread physics steps/s ÷ physics steps per action (env-steps/s a
perfect collector would reach); collection is RobotEnv stepping with the policy choosing actions (rsl_rl's actor),
measured without and with the block reward (the canonical walk, in process). Each figure is the best of `--repeats`
alternating runs, since other work shares these cores. `train`: `rewardloop train`'s Trainer on berkeley_humanoid
with CANONICAL["walk"] for at most --minutes, its learning curve and timings, then its deterministic policy for 10 s
in 8 copies, nominal and under MotionVL's randomization (falls, speed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rewardloop.reward.canonical import canonical
from rewardloop.rl.commands import command_speed
from rewardloop.rl.env import EnvConfig
from rewardloop.rl.policy import TrainedPolicy, run_policy, save_policy
from rewardloop.rl.randomize import Randomization
from rewardloop.rl.train import TrainConfig, Trainer
from rewardloop.sim.scene import Scene, compile_scene

BODY = "berkeley_humanoid"


def collection_rate(trainer: Trainer, blocks: int, *, with_reward: bool) -> tuple[float, float]:
    """(env steps/s of rollouts with the policy choosing actions, and the block reward when asked; physics steps/s
    inside `mujoco.rollout` alone)."""
    env, n = trainer.env, trainer.config.env.block_steps
    rollout, physics = env._pool.rollout, [0.0]

    def timed(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        out = rollout(*args, **kwargs)
        physics[0] += time.perf_counter() - start
        return out

    env._pool.rollout = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(blocks):
            for _ in range(n):
                actions = trainer.alg.act(trainer.obs)
                trainer.obs = trainer._tensors(env.step(actions.numpy()).obs)
            trainer.alg.storage.clear()
            trainer.alg.transition.clear()
            if with_reward:
                env.block_rewards()
            else:
                env.blocks.count = 0  # drop the block unscored
    env._pool.rollout = rollout  # type: ignore[method-assign]
    steps = blocks * n * env.num_envs
    return steps / (time.perf_counter() - start), steps * env.decimation / physics[0]


def reward_seconds(envs: int, *, trusted: bool, blocks: int = 3) -> float:
    """Best seconds to score one block of the untrained policy's walk, in process or through the sandbox worker."""
    from rewardloop.reward import load_reward
    from rewardloop.rl.env import RobotEnv

    scene, rng, best = compile_scene(Scene(BODY)), np.random.default_rng(0), float("inf")
    with load_reward(canonical("walk"), trusted=trusted) as reward, \
            RobotEnv(scene, reward, EnvConfig(num_envs=envs)) as env:
        for _ in range(blocks):
            for _ in range(env.config.block_steps):
                env.step(rng.normal(0.0, 0.3, (envs, env.num_actions)))
            start = time.perf_counter()
            env.block_rewards()
            best = min(best, time.perf_counter() - start)
    return best


def walk_config(steps: int, envs: int, randomize: bool = False) -> TrainConfig:
    source = canonical("walk").source
    speed = command_speed(source, compile_scene(Scene(BODY)).standing_height)
    env = EnvConfig(num_envs=envs, command_speed=speed, randomization=Randomization() if randomize else None)
    return TrainConfig(reward_source=source, reward_trusted=True, body=BODY, steps=steps, env=env)


def cmd_collect(args: argparse.Namespace) -> dict[str, object]:
    """Alternate a one-thread copy (the single-thread physics rate on the same motions: the untrained policy's) with
    the threaded one (collection without and with the reward, one PPO iteration)."""
    threads, rows = os.cpu_count() or 1, []
    single_config = walk_config(10**6, args.envs)
    one_thread_env = EnvConfig(**{**vars(single_config.env), "nthread": 1})
    single_config = TrainConfig(**{**vars(single_config), "env": one_thread_env})
    with Trainer(single_config) as single, Trainer(walk_config(10**6, args.envs)) as trainer:
        decimation = trainer.env.decimation
        for _ in range(args.repeats):
            one_thread = collection_rate(single, args.blocks, with_reward=False)[1]
            bare, physics = collection_rate(trainer, args.blocks, with_reward=False)
            scored = collection_rate(trainer, args.blocks, with_reward=True)[0]
            trainer.iterate()
            rows.append({"single_thread_physics_steps_per_s": one_thread, "threaded_physics_steps_per_s": physics,
                         "raw_env_steps_per_s": threads * one_thread / decimation,
                         "collect_env_steps_per_s": bare, "collect_with_reward_env_steps_per_s": scored,
                         "update_s": trainer.curve[-1].update_s, "reward_s": trainer.curve[-1].reward_s})
    best = {k: max(r[k] for r in rows) if "per_s" in k else min(r[k] for r in rows) for k in rows[0]}
    ideal = threads * best["single_thread_physics_steps_per_s"]
    return {"threads": threads, "envs": args.envs, "block_steps": trainer.config.env.block_steps,
            "decimation": decimation, "best": best,
            "ratio_collect": best["collect_env_steps_per_s"] / best["raw_env_steps_per_s"],
            "ratio_collect_with_reward": best["collect_with_reward_env_steps_per_s"] / best["raw_env_steps_per_s"],
            "ratio_threaded_physics": best["threaded_physics_steps_per_s"] / ideal,
            "reward_block_s": {"trusted_in_process": reward_seconds(args.envs, trusted=True),
                               "sandboxed_worker": reward_seconds(args.envs, trusted=False)},
            "runs": rows}


def cmd_train(args: argparse.Namespace) -> dict[str, object]:
    config = walk_config(args.steps, args.envs, args.randomize)
    start = time.perf_counter()
    run = Path(args.run or tempfile.mkdtemp(prefix="rl_walk_"))
    with Trainer(config, out=run) as trainer:
        curve = trainer.run(progress=lambda r: print(f"it {r.iteration} reward {r.reward:.3f} speed {r.speed:.2f} "
                                                     f"falls {r.falls} {r.steps_per_s:.0f} steps/s", flush=True),
                            max_seconds=args.minutes * 60).curve
        folder = save_policy(trainer.alg.get_policy(), config, trainer.env.obs_layout(), run / "policy")
    wall = time.perf_counter() - start
    evaluation = {}
    for name, ranges in (("nominal", None), ("randomized", Randomization())):
        done = run_policy(TrainedPolicy.load(folder), seconds=10.0, copies=8, randomization=ranges, seed=1)
        evaluation[name] = {"copies": 8, "seconds": 10.0, "falls": int((~np.isnan(done.fall_s)).sum()),
                            "fall_s": [None if np.isnan(t) else round(float(t), 2) for t in done.fall_s],
                            "speed_m_per_s": [round(float(v), 3) for v in done.speed]}
    return {"body": BODY, "reward": "walk (canonical)", "envs": args.envs, "randomize": args.randomize,
            "env_steps": curve[-1].env_steps, "wall_s": wall,
            "policy_10s_deterministic": evaluation,
            "curve": [{"iteration": r.iteration, "env_steps": r.env_steps, "reward": r.reward,
                       "episode_return": r.episode_return, "episode_s": r.episode_s, "speed": r.speed,
                       "falls": r.falls, "steps_per_s": r.steps_per_s, "collect_s": r.collect_s,
                       "reward_s": r.reward_s, "update_s": r.update_s, "terms": r.terms} for r in curve]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    collect = sub.add_parser("collect")
    collect.add_argument("--blocks", type=int, default=4)
    collect.add_argument("--repeats", type=int, default=3)
    train = sub.add_parser("train")
    train.add_argument("--steps", type=int, default=150_000)
    train.add_argument("--randomize", action="store_true")
    train.add_argument("--minutes", type=float, default=4.5, help="stop training after this long")
    train.add_argument("--run", help="also keep the run folder (checkpoint, policy) here")
    for p in (collect, train):
        p.add_argument("--envs", type=int, default=64)
        p.add_argument("--out", required=True)
    args = parser.parse_args()
    result = {"command": "python " + " ".join(sys.argv), "date": time.strftime("%Y-%m-%d"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores shared with other work, load average "
                         f"{os.getloadavg()[0]:.1f} at the start",
              **(cmd_collect(args) if args.what == "collect" else cmd_train(args))}
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k not in ("runs", "curve")}, indent=1))


if __name__ == "__main__":
    main()
