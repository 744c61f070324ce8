"""Which RL library carries rewardloop's PPO: the cost of each library's own part of a training iteration.

Run once per library, each in a virtual environment holding only torch==2.13.0 (CPU) and that library:

    /tmp/venv_rsl/bin/python benchmarks/bench_rl_library.py rsl_rl
    /tmp/venv_skrl/bin/python benchmarks/bench_rl_library.py skrl
    /tmp/venv_sb3/bin/python benchmarks/bench_rl_library.py sb3

The environment is a synthetic vectorized one (a noisy linear system, 64 copies, 47 observations, 12 actions:
berkeley_humanoid's sizes) whose stepping costs nothing measurable, so the figures are the library's alone: the
seconds of one PPO update (5 epochs x 4 minibatches of 64 x 24 transitions, actor and critic MLPs 128-128-128
ELU, one torch thread) and the env-steps/s of the collection loop's library calls (act, store). One JSON line to stdout.
"""

from __future__ import annotations

import itertools
import json
import sys
import time

import numpy as np
import torch

NUM_ENVS, NUM_STEPS, OBS, ACT = 64, 24, 47, 12
EPOCHS, MINIBATCHES, HIDDEN, ITERATIONS = 5, 4, (128, 128, 128), 6
torch.set_num_threads(1)  # measured: 2 OpenMP threads on 2 shared cores are 25-50x slower


class LinearSystem:
    """[NUM_ENVS] copies of x' = 0.9 x + B a + noise; reward -|x|², observations x (numpy arrays)."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.gain = self.rng.normal(0, 0.1, (ACT, OBS))
        self.x = self.rng.normal(0, 1, (NUM_ENVS, OBS))

    def step(self, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """[NUM_ENVS, ACT] -> observations [NUM_ENVS, OBS], rewards [NUM_ENVS], dones [NUM_ENVS]."""
        self.x = 0.9 * self.x + action @ self.gain + self.rng.normal(0, 0.1, self.x.shape)
        return self.x.astype(np.float32), -(self.x**2).sum(1).astype(np.float32), np.zeros(NUM_ENVS, bool)


def bench_rsl_rl() -> dict[str, float]:
    from rsl_rl.algorithms import PPO
    from tensordict import TensorDict

    system = LinearSystem()

    class Env:
        num_envs, num_actions, device = NUM_ENVS, ACT, "cpu"

    def observe(x: np.ndarray) -> TensorDict:
        return TensorDict({"policy": torch.as_tensor(x, dtype=torch.float32)}, batch_size=[NUM_ENVS])

    mlp = {"class_name": "rsl_rl.models.MLPModel", "hidden_dims": HIDDEN, "activation": "elu"}
    cfg = {"algorithm": {"class_name": "rsl_rl.algorithms.PPO", "num_learning_epochs": EPOCHS,
                         "num_mini_batches": MINIBATCHES},
           "actor": {**mlp, "distribution_cfg": {"class_name": "rsl_rl.modules.distribution.GaussianDistribution"}},
           "critic": mlp, "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
           "num_steps_per_env": NUM_STEPS, "multi_gpu": None}
    obs = observe(system.x)
    alg = PPO.construct_algorithm(obs, Env(), cfg, "cpu")
    collect = update = 0.0
    for _ in range(ITERATIONS):
        start = time.perf_counter()
        with torch.inference_mode():
            for _ in range(NUM_STEPS):
                actions = alg.act(obs)
                x, reward, done = system.step(actions.numpy())
                obs = observe(x)
                alg.process_env_step(obs, torch.as_tensor(reward), torch.as_tensor(done), {})
            alg.compute_returns(obs)
        middle = time.perf_counter()
        alg.update()
        collect, update = collect + middle - start, update + time.perf_counter() - middle
    return {"collect_steps_per_s": ITERATIONS * NUM_STEPS * NUM_ENVS / collect, "update_s": update / ITERATIONS}


def bench_skrl() -> dict[str, float]:
    import gymnasium
    import torch.nn as nn
    from skrl.agents.torch.ppo import PPO
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model

    obs_space = gymnasium.spaces.Box(-np.inf, np.inf, (OBS,))
    act_space = gymnasium.spaces.Box(-1.0, 1.0, (ACT,))

    def mlp(out: int) -> nn.Sequential:
        sizes = (OBS, *HIDDEN)
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(sizes):
            layers += [nn.Linear(a, b), nn.ELU()]
        return nn.Sequential(*layers, nn.Linear(sizes[-1], out))

    class Policy(GaussianMixin, Model):
        def __init__(self) -> None:
            Model.__init__(self, observation_space=obs_space, action_space=act_space, device="cpu")
            GaussianMixin.__init__(self)
            self.net, self.log_std = mlp(ACT), nn.Parameter(torch.zeros(ACT))

        def compute(self, inputs, role=""):  # type: ignore[no-untyped-def]
            return self.net(inputs["observations"]), {"log_std": self.log_std}

    class Value(DeterministicMixin, Model):
        def __init__(self) -> None:
            Model.__init__(self, observation_space=obs_space, action_space=act_space, device="cpu")
            DeterministicMixin.__init__(self)
            self.net = mlp(1)

        def compute(self, inputs, role=""):  # type: ignore[no-untyped-def]
            return self.net(inputs["observations"]), {}

    memory = RandomMemory(memory_size=NUM_STEPS, num_envs=NUM_ENVS, device="cpu")
    agent = PPO(models={"policy": Policy(), "value": Value()}, memory=memory, observation_space=obs_space,
                action_space=act_space, device="cpu",
                cfg={"rollouts": NUM_STEPS, "learning_epochs": EPOCHS, "mini_batches": MINIBATCHES})
    agent.init()
    agent.enable_training_mode(True)
    system = LinearSystem()
    obs = torch.as_tensor(system.x, dtype=torch.float32)
    timesteps, step, collect, update = ITERATIONS * NUM_STEPS, 0, 0.0, 0.0
    for _ in range(ITERATIONS):
        start = time.perf_counter()
        for _ in range(NUM_STEPS):
            with torch.no_grad():
                actions, _ = agent.act(obs, None, timestep=step, timesteps=timesteps)
                x, reward, done = system.step(actions.numpy())
                nxt = torch.as_tensor(x)
                flags = torch.as_tensor(done)[:, None]
                agent.record_transition(observations=obs, states=None, actions=actions,
                                        rewards=torch.as_tensor(reward)[:, None], next_observations=nxt,
                                        next_states=None, terminated=flags, truncated=flags, infos={},
                                        timestep=step, timesteps=timesteps)
            obs, step = nxt, step + 1
            if step % NUM_STEPS:
                agent.post_interaction(timestep=step, timesteps=timesteps)
        middle = time.perf_counter()
        agent.post_interaction(timestep=step, timesteps=timesteps)  # the update
        collect, update = collect + middle - start, update + time.perf_counter() - middle
    return {"collect_steps_per_s": ITERATIONS * NUM_STEPS * NUM_ENVS / collect, "update_s": update / ITERATIONS}


def bench_sb3() -> dict[str, float]:
    import gymnasium
    import torch.nn as nn
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecEnv

    class Vec(VecEnv):
        """The synthetic system behind SB3's VecEnv interface (the methods a custom vectorized env must write)."""

        def __init__(self) -> None:
            super().__init__(NUM_ENVS, gymnasium.spaces.Box(-np.inf, np.inf, (OBS,)),
                             gymnasium.spaces.Box(-1.0, 1.0, (ACT,)))
            self.system, self.actions = LinearSystem(), np.zeros((NUM_ENVS, ACT))

        def reset(self):  # type: ignore[no-untyped-def]
            return self.system.x.astype(np.float32)

        def step_async(self, actions):  # type: ignore[no-untyped-def]
            self.actions = actions

        def step_wait(self):  # type: ignore[no-untyped-def]
            x, reward, done = self.system.step(self.actions)
            return x, reward, done, [{} for _ in range(NUM_ENVS)]

        def close(self) -> None: ...
        def get_attr(self, name, indices=None): return [None] * NUM_ENVS  # type: ignore[no-untyped-def]
        def set_attr(self, name, value, indices=None): ...  # type: ignore[no-untyped-def]
        def env_method(self, name, *args, indices=None, **kw): return [None] * NUM_ENVS  # type: ignore[no-untyped-def]
        def env_is_wrapped(self, wrapper, indices=None): return [False] * NUM_ENVS  # type: ignore[no-untyped-def]

    model = PPO("MlpPolicy", Vec(), n_steps=NUM_STEPS, batch_size=NUM_STEPS * NUM_ENVS // MINIBATCHES,
                n_epochs=EPOCHS, device="cpu", policy_kwargs={"net_arch": list(HIDDEN), "activation_fn": nn.ELU})
    update_time = []
    train = model.train

    def timed_train() -> None:
        start = time.perf_counter()
        train()
        update_time.append(time.perf_counter() - start)

    model.train = timed_train  # type: ignore[method-assign]
    start = time.perf_counter()
    model.learn(ITERATIONS * NUM_STEPS * NUM_ENVS)
    total = time.perf_counter() - start
    collect = total - sum(update_time)
    return {"collect_steps_per_s": ITERATIONS * NUM_STEPS * NUM_ENVS / collect,
            "update_s": sum(update_time) / len(update_time)}


if __name__ == "__main__":
    library = sys.argv[1]
    result = {"rsl_rl": bench_rsl_rl, "skrl": bench_skrl, "sb3": bench_sb3}[library]()
    print(json.dumps({"library": library, **{k: round(v, 4) for k, v in result.items()}}))
