"""A vectorized robot environment on native MuJoCo: many copies of a scene stepped in threads by `mujoco.rollout`.

One env step is one control period: the policy's action becomes joint targets for the servos, held for
`decimation` physics steps that `mujoco.rollout` runs for all copies at once on its thread pool (no Python per
physics step). What a robot senses is observed; the reward is the candidate's reward program on the stored physics
samples, scored per block of steps by `RewardBlocks` (see `rewardloop.rl.blocks`). Arrays here are NumPy; the
rsl_rl adapter in `rewardloop.rl.train` turns them into tensors.

Observation, in this order (`obs_layout()` names the slices):
  joint_pos   [nu]  actuated joints' angles minus the standing pose's (rad, MJCF signs)
  joint_vel   [nu]  their rates (rad/s)
  angvel      [3]   pelvis (root body) angular velocity in its own frame (rad/s)
  gravity     [3]   unit gravity vector in the root body's frame ((0, 0, -1) upright)
  last_action [nu]  the previous action
  phase       [2]   sin, cos of 2π t / gait_period_s (t: episode time)
  command     [1]   the commanded forward speed (m/s)
Action: [nu] offsets from the standing pose in units of `action_scale` rad, clipped to ±action_clip; the joint
targets are then clipped into the servos' control range.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field

import mujoco
import mujoco.rollout
import numpy as np

from rewardloop.errors import UserError
from rewardloop.reward import TrustedReward
from rewardloop.rl import randomize
from rewardloop.rl.blocks import BlockResult, RewardBlocks, RewardCall
from rewardloop.rl.randomize import Randomization
from rewardloop.sim.scene import CompiledScene, is_servo

OBS_NOISE = {"joint_pos": 0.03, "joint_vel": 1.5, "angvel": 0.2, "gravity": 0.05}
"""Observation group -> amplitude of its uniform noise at Randomization.obs_noise = 1 (MuJoCo Playground's Berkeley
Humanoid joystick: rad, rad/s, rad/s, unit vector)."""


@dataclass(frozen=True)
class EnvConfig:
    """How the copies are stepped, observed, ended and randomized."""

    num_envs: int = 64
    """Copies stepped together."""
    control_dt: float = 0.02
    """Seconds per action (50 Hz, Playground's Berkeley Humanoid); a whole number of physics steps."""
    action_scale: float = 0.5
    """Radians of joint-target offset per unit of action (Playground's Berkeley Humanoid joystick)."""
    action_clip: float = 5.0
    """Actions are clipped to ±this (the Gaussian policy's samples are unbounded)."""
    episode_s: float = 20.0
    """Episode length (s); reaching it is a time-out, not a failure."""
    fall_height: float = 0.6
    """A fall: pelvis below this fraction of its standing height above the ground..."""
    fall_tilt_deg: float = 60.0
    """...or the torso tilted more than this from vertical."""
    command_speed: float = 0.0
    """Forward speed (m/s) shown to the policy as its command: the speed the reward asks for."""
    gait_period_s: float = 0.8
    """Period of the phase clock in the observation (s)."""
    block_steps: int = 24
    """Env steps per reward block (the PPO rollout length)."""
    reward_context_s: float = 0.5
    """Seconds of each episode's past that the reward sees before every block (running windows up to this)."""
    reset_noise: float = 0.02
    """Uniform noise (rad) on the actuated joints' angles at each episode start."""
    randomization: Randomization | None = None
    """Domain randomization; None: the scene's own physics, no pushes, latency or noise."""
    nthread: int = 0
    """Physics threads (0: one per core)."""
    seed: int = 0

    def __post_init__(self) -> None:
        checks = {"num_envs must be positive": self.num_envs >= 1,
                  "control_dt, episode_s and gait_period_s must be positive":
                      min(self.control_dt, self.episode_s, self.gait_period_s) > 0,
                  "action_scale and action_clip must be positive": min(self.action_scale, self.action_clip) > 0,
                  "fall_height must be within [0, 1)": 0 <= self.fall_height < 1,
                  "block_steps must be positive": self.block_steps >= 1,
                  "reward_context_s must be >= 0": self.reward_context_s >= 0}
        problems = [message for message, ok in checks.items() if not ok]
        if problems:
            raise UserError("bad RL environment settings: " + "; ".join(problems))


@dataclass(frozen=True)
class StepResult:
    """What one env step returns. Arrays are over the B copies."""

    obs: np.ndarray
    """[B, num_obs] observations after the step (of the new episode where one ended)."""
    dones: np.ndarray
    """[B] the episode ended at this step (a fall or a time-out)."""
    time_outs: np.ndarray
    """[B] it ended by reaching episode_s (bootstrapped, not a failure)."""
    forward_speed: np.ndarray
    """[B] pelvis velocity along +x at the end of the step (m/s)."""


@dataclass
class _Episode:
    """Per-copy episode state. Arrays are [B]."""

    steps: np.ndarray
    next_push: np.ndarray
    latency: np.ndarray
    draw: randomize.Draw | None = None
    new: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


class RobotEnv:
    """`config.num_envs` copies of a servo-driven scene with a reward program. Call `close` (or use `with`)."""

    def __init__(self, scene: CompiledScene, reward: RewardCall | None, config: EnvConfig):
        self.scene, self.config, self.model = scene, config, scene.model
        self._check_servos()
        self.decimation = _decimation(config.control_dt, scene.dt)
        self.num_envs, self.num_actions = config.num_envs, self.model.nu
        self.max_episode_steps = max(1, round(config.episode_s / config.control_dt))
        self._indices()
        self.num_obs = sum(size for _, size in self.obs_layout())
        self.rng = np.random.default_rng(config.seed)
        nthread = config.nthread or os.cpu_count() or 1
        self._pool = mujoco.rollout.Rollout(nthread=nthread if nthread > 1 else 0)
        self._data = [mujoco.MjData(self.model) for _ in range(nthread)]
        shared = config.randomization is None
        self.models = [self.model] * self.num_envs if shared else [copy.copy(self.model) for _ in range(self.num_envs)]
        context = round(config.reward_context_s / scene.dt)
        threads = nthread if isinstance(reward, TrustedReward) else 1  # a sandbox worker takes one call at a time
        self.blocks = RewardBlocks(scene, reward, num_envs=self.num_envs, block_steps=config.block_steps,
                                   decimation=self.decimation, context=context, threads=threads)
        self.reset()

    def _check_servos(self) -> None:
        if self.model.nu == 0 or not all(is_servo(self.model, i) for i in range(self.model.nu)):
            raise UserError(f"{self.scene.scene.body} is not driven by joint-position servos; the RL environment "
                            "takes joint-target actions (robots such as berkeley_humanoid, unitree_g1)")

    def _indices(self) -> None:
        """Addresses of the actuated joints, the root's free joint and the sensors the env reads."""
        m = self.model
        joints = m.actuator_trnid[:, 0]
        self.qpos_adr = 1 + m.jnt_qposadr[joints]  # full-physics state: time, qpos, qvel, ...
        self.qvel_adr = 1 + m.nq + m.jnt_dofadr[joints]
        root = m.body(self.scene.body.root).jntadr[0]
        self.root_quat = 1 + m.jnt_qposadr[root] + 3
        self.root_angvel = 1 + m.nq + m.jnt_dofadr[root] + 3  # a free joint's angular velocity is in its own frame
        self.root_linvel = 1 + m.nq + m.jnt_dofadr[root]
        self.standing = self.scene.initial_state[self.qpos_adr].copy()
        self.low, self.high = self.scene.ctrl_bounds()
        sensors = self.scene.layout.sensors
        self.pelvis_adr, self.torso_up_adr = sensors["pelvis_pos"][0], sensors["torso_zaxis"][0]

    def obs_layout(self) -> list[tuple[str, int]]:
        """(group, size) of each observation slice, in order."""
        nu = self.model.nu
        return [("joint_pos", nu), ("joint_vel", nu), ("angvel", 3), ("gravity", 3), ("last_action", nu),
                ("phase", 2), ("command", 1)]

    def reset(self) -> np.ndarray:
        """Start every copy's episode; [B, num_obs] observations."""
        b = self.num_envs
        self.state = np.tile(self.scene.initial_state, (b, 1))
        self.sensors = np.zeros((b, self.model.nsensordata))
        self.last_action = np.zeros((b, self.num_actions))
        self.last_target = np.tile(self.standing, (b, 1))
        self.episode = _Episode(np.zeros(b, int), np.zeros(b), np.zeros(b, int), new=np.ones(b, bool))
        self._restart(np.arange(b))
        return self.observe()

    def _restart(self, envs: np.ndarray) -> None:
        """New episodes for `envs`: the standing state with noisy joints, a fresh draw, no previous action."""
        cfg = self.config
        state = np.tile(self.scene.initial_state, (len(envs), 1))
        state[:, self.qpos_adr] += self.rng.uniform(-cfg.reset_noise, cfg.reset_noise, (len(envs), self.num_actions))
        self.state[envs] = state
        self.last_action[envs] = 0.0
        self.last_target[envs] = self.standing
        self.episode.steps[envs] = 0
        self.episode.new[envs] = True
        ranges = cfg.randomization
        if ranges is None:
            return
        self.episode.next_push[envs] = ranges.push_interval_s
        fresh = randomize.draw(ranges, self.rng, len(envs))
        if self.episode.draw is None:
            self.episode.draw = fresh
        else:
            for name in ("friction", "pd_gain", "joint_friction", "latency_steps"):
                getattr(self.episode.draw, name)[envs] = getattr(fresh, name)
        self._apply_draws(envs)

    def _apply_draws(self, envs: np.ndarray) -> None:
        draw = self.episode.draw
        assert draw is not None
        for env in envs:
            randomize.apply(self.models[env], self.model, draw.friction[env], draw.pd_gain[env],
                            draw.joint_friction[env])
        self.episode.latency[envs] = np.minimum(draw.latency_steps[envs], self.decimation)

    def step(self, actions: np.ndarray) -> StepResult:
        """Apply [B, nu] actions for one control period."""
        action = np.clip(np.asarray(actions, dtype=float), -self.config.action_clip, self.config.action_clip)
        target = np.clip(self.standing + self.config.action_scale * action, self.low, self.high)
        self._push()
        control = self._controls(target)
        states = np.empty((self.num_envs, self.decimation, self.scene.nstate))
        sensors = np.empty((self.num_envs, self.decimation, self.model.nsensordata))
        self._pool.rollout(self.models, self._data, self.state, control, nstep=self.decimation,
                           control_spec=mujoco.mjtState.mjSTATE_CTRL, skip_checks=True, state=states,
                           sensordata=sensors)
        before = np.concatenate([self.state[:, None], states[:, :-1]], axis=1)
        self.blocks.record(before, sensors, control, self.episode.new)
        self.episode.new[:] = False
        self.state, self.sensors = np.ascontiguousarray(states[:, -1]), sensors[:, -1]
        self.last_action, self.last_target = action, target
        self.episode.steps += 1
        return self._finish_step()

    def _finish_step(self) -> StepResult:
        speed = self.state[:, self.root_linvel].copy()
        fell = self.fallen()
        time_outs = (self.episode.steps >= self.max_episode_steps) & ~fell
        dones = fell | time_outs
        if dones.any():
            self._restart(np.flatnonzero(dones))
        return StepResult(self.observe(), dones, time_outs, speed)

    def _controls(self, target: np.ndarray) -> np.ndarray:
        """[B, D, nu] the controls of each physics step: the previous target until each copy's latency has
        passed, then the new one."""
        late = np.arange(self.decimation)[None, :] < self.episode.latency[:, None]
        return np.ascontiguousarray(np.where(late[..., None], self.last_target[:, None], target[:, None]))

    def _push(self) -> None:
        """Every push_interval_s of episode time, add a random horizontal velocity to the root."""
        ranges = self.config.randomization
        if ranges is None or ranges.push_interval_s <= 0:
            return
        due = np.flatnonzero(self.state[:, 0] >= self.episode.next_push)
        if len(due) == 0:
            return
        angle = self.rng.uniform(0, 2 * np.pi, len(due))
        speed = self.rng.uniform(0, ranges.push_speed, len(due))
        self.state[due, self.root_linvel] += speed * np.cos(angle)
        self.state[due, self.root_linvel + 1] += speed * np.sin(angle)
        self.episode.next_push[due] += ranges.push_interval_s

    def fallen(self) -> np.ndarray:
        """[B] pelvis below fall_height × standing height, torso tilted past fall_tilt_deg, or a broken state."""
        pelvis = self.sensors[:, self.pelvis_adr : self.pelvis_adr + 3]
        ground = self.scene.scene.terrain.height(pelvis[:, 0], pelvis[:, 1])
        low = pelvis[:, 2] - ground < self.config.fall_height * self.scene.standing_height
        tilted = self.sensors[:, self.torso_up_adr + 2] < math.cos(math.radians(self.config.fall_tilt_deg))
        broken = ~np.isfinite(self.state).all(axis=1)
        return low | tilted | broken

    def observe(self) -> np.ndarray:
        """[B, num_obs] observations of the current states (float32)."""
        s = self.state
        parts = {"joint_pos": s[:, self.qpos_adr] - self.standing, "joint_vel": s[:, self.qvel_adr],
                 "angvel": s[:, self.root_angvel : self.root_angvel + 3],
                 "gravity": gravity_in_frame(s[:, self.root_quat : self.root_quat + 4])}
        ranges = self.config.randomization
        if ranges is not None and ranges.obs_noise > 0:
            for name, amplitude in OBS_NOISE.items():
                noise = ranges.obs_noise * amplitude
                parts[name] = parts[name] + self.rng.uniform(-noise, noise, parts[name].shape)
        angle = 2 * np.pi * s[:, 0] / self.config.gait_period_s
        parts |= {"last_action": self.last_action, "phase": np.stack([np.sin(angle), np.cos(angle)], axis=1),
                  "command": np.full((self.num_envs, 1), self.config.command_speed)}
        return np.concatenate([parts[name] for name, _ in self.obs_layout()], axis=1).astype(np.float32)

    def block_rewards(self) -> BlockResult:
        """The rewards of the steps since the last call (at most block_steps of them)."""
        return self.blocks.evaluate()

    def snapshot(self) -> dict[str, object]:
        """Everything that decides the continuation, taken between blocks (for checkpoints)."""
        arrays = {"state": self.state, "sensors": self.sensors, "last_action": self.last_action,
                  "last_target": self.last_target, "steps": self.episode.steps, "next_push": self.episode.next_push,
                  "latency": self.episode.latency, "new": self.episode.new}
        draw = {} if self.episode.draw is None else {f"draw_{k}": v for k, v in vars(self.episode.draw).items()}
        return {**{k: np.copy(v) for k, v in {**arrays, **draw}.items()}, **self.blocks.snapshot(),
                "rng": self.rng.bit_generator.state}

    def restore(self, snapshot: dict[str, object]) -> None:
        """Put back a `snapshot` of a copy with the same scene and config."""
        arrays = {k: np.array(v) for k, v in snapshot.items() if k != "rng"}
        self.state, self.sensors = arrays["state"], arrays["sensors"]
        self.last_action, self.last_target = arrays["last_action"], arrays["last_target"]
        self.episode = _Episode(arrays["steps"], arrays["next_push"], arrays["latency"], new=arrays["new"])
        if "draw_friction" in arrays:
            self.episode.draw = randomize.Draw(arrays["draw_friction"], arrays["draw_pd_gain"],
                                               arrays["draw_joint_friction"], arrays["draw_latency_steps"])
            self._apply_draws(np.arange(self.num_envs))
        self.blocks.restore(arrays)
        self.rng.bit_generator.state = snapshot["rng"]  # type: ignore[assignment]  # the dict bit_generator gave

    def close(self) -> None:
        """Shut the physics and reward threads down."""
        self._pool.close()
        self.blocks.close()

    def __enter__(self) -> RobotEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def gravity_in_frame(quat: np.ndarray) -> np.ndarray:
    """[B, 4] body orientations (w, x, y, z) -> [B, 3] the world's (0, 0, -1) in each body's frame."""
    w, x, y, z = quat.T
    # the third row of the rotation matrix R (body -> world), negated: R^T (0, 0, -1)
    return -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)


def _decimation(control_dt: float, dt: float) -> int:
    """Physics steps per action; a UserError unless control_dt is a whole number of them."""
    steps = round(control_dt / dt)
    if steps < 1 or abs(steps * dt - control_dt) > 1e-9:
        raise UserError(f"control_dt {control_dt} s is not a whole number of physics steps of {dt} s")
    return steps
