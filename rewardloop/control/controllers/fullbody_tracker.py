"""A gait tracker for the full musculoskeletal body (myofullbody): the muscle legs' tracker for the legs, with the
trunk and arms held and swung by their own muscles.

The legs are the muscle tracker's (`muscle_tracker`): people's joint curves on a step clock, balance on the stance
hip, foot placement. Above the pelvis:
- the stance hip balances the thorax, where most of the mass above the legs is, rather than the pelvis: the
  muscle tracker's trunk law (`trunk_pitch`, `trunk_gain`) reads the thorax's pitch and roll (its damping still the
  pelvis's rates, and the swing leg's aims still reckon from the pelvis). The lumbar spine holds the trunk
  `trunk_lean` forward of the pelvis (`trunk_kp`), so the hip balances the trunk as a whole: the back muscles alone
  are too weak to right a trunk that has leant forward;
- each arm swings opposite its own leg, as people's do: the upper arm's forward angle follows people's hip flexion
  curve at the other leg's phase, `arm_lead` of a cycle ahead (`arm_swing` per unit of that curve's half range,
  about `arm_offset`), held out `arm_out` from the side, the elbow bent `elbow_bend`, at `arm_kp`;
- the rest of each arm (the humerus's rotation, the forearm's pronation, wrist and fingers) is held lightly at
  neutral (`HAND_KP`).
myo-sim's full body has no neck joints: the head is fixed on the thorax, so a steady trunk is a steady head.
Every joint's wanted torque goes to one `muscles.MuscleTorques`, which excites all 416 muscles at once.
"""

from __future__ import annotations

import mujoco
import numpy as np

from rewardloop.control.controllers.base import Parameter, ParameterSpace
from rewardloop.control.controllers.gait_tracker import CLOCK, STANCE, STEP_TIME
from rewardloop.control.controllers.humanoid import SENSORS
from rewardloop.control.controllers.muscle_tracker import ANKLE_KP, FOOT_KP, HIP_KP, KNEE_KP, MuscleTracker
from rewardloop.control.controllers.muscle_tracker import PARAMETERS as LEG_PARAMETERS
from rewardloop.sim.bodies import SIDES
from rewardloop.sim.scene import CompiledScene

P = Parameter
PARAMETERS = ParameterSpace((
    *LEG_PARAMETERS.parameters,
    P("trunk_kp", 100.0, 3000.0, 800.0, "N·m/rad", "lumbar torque per rad of trunk posture error on the pelvis"),
    P("trunk_lean", -0.3, 0.3, 0.0, "rad", "trunk flexion held on the pelvis, + forward"),
    P("arm_kp", 5.0, 300.0, 40.0, "N·m/rad", "shoulder and elbow torque per rad of posture error"),
    P("arm_swing", 0.0, 1.0, 0.35, "rad", "the upper arm's forward swing per unit of people's hip curve at the "
      "other leg's phase (half its range): the arm swings opposite its own leg"),
    P("arm_lead", 0.0, 0.5, 0.2, "-", "fraction of the gait cycle the arm's aim leads the leg by: the arm, "
      "moved by slow muscles, lags its aim"),
    P("arm_offset", -0.4, 0.4, 0.0, "rad", "the upper arm's mean forward angle"),
    P("arm_out", 0.1, 0.5, 0.15, "rad", "the upper arm held out from the side: the shoulder's plane of elevation turns "
      "the arm only when it is raised"),
    P("elbow_bend", 0.0, 1.5, 0.35, "rad", "elbow flexion held"),
))
"""The full-body tracker's parameters: the muscle tracker's, then the trunk's and the arms'."""
(TRUNK_KP, TRUNK_LEAN, ARM_KP, ARM_SWING, ARM_LEAD, ARM_OFFSET, ARM_OUT,
 ELBOW_BEND) = range(LEG_PARAMETERS.size, PARAMETERS.size)
HAND_KP = 2.0
"""Torque per rad of posture error (N·m/rad) of the arm's other joints, held at neutral: enough to keep a hand from
flopping, little enough for the forearm's and hand's small muscles."""
TRUNK_JOINTS = ("flex_extension", "lat_bending", "axial_rotation")
"""myo-sim's lumbar coordinates (the vertebrae follow them by equality constraints); + flex_extension bends back."""
ARM_JOINTS = ("elv_angle_{s}", "shoulder_elv_{s}", "elbow_flexion_{s}")
"""Per side: the shoulder's plane of elevation (0 sideways, π/2 forward), its elevation, and the elbow."""
FOOT, TRUNK, HAND, ARM = 3, 4, 5, 6
"""Gain groups of `stiffness` after the legs' 0-2 (hip, knee, ankle)."""


class FullBodyTracker(MuscleTracker):
    """The muscle tracker's legs with a stiff trunk and swinging arms, for myofullbody (see the module docstring)."""

    kind = "fullbody_tracker"
    space = PARAMETERS
    steering = (*MuscleTracker.steering, "trunk_lean", "arm_swing")

    def __init__(self, scene: CompiledScene):
        super().__init__(scene)
        model = scene.model
        column = {int(adr): c for c, adr in enumerate(self.muscles.space.qpos_adr)}
        self.trunk = np.array([column[_qpos(model, name)] for name in TRUNK_JOINTS])
        self.arms = np.array([[column[_qpos(model, name.format(s=side[0]))] for name in ARM_JOINTS]
                              for side in SIDES])  # [2 sides, 3 ARM_JOINTS]
        feet = {_body(model, scene.body.feet[side]) for side in SIDES}
        for c, adr in enumerate(self.muscles.space.qpos_adr):
            if self.gain_of[c] == FOOT and not _below(model, _joint_at(model, int(adr)), feet):
                self.gain_of[c] = HAND
        self.gain_of[self.trunk] = TRUNK
        self.gain_of[self.arms.ravel()] = ARM
        self.balanced = self.sensors.copy()  # the thorax's pitch and roll (see the module docstring)
        self.balanced[SENSORS.index("pelvis_zaxis")] = scene.layout.sensors["torso_zaxis"][0]
        hip = self.curves[0]
        self.hip_mid, self.hip_half = 0.5 * (hip.max() + hip.min()), 0.5 * (hip.max() - hip.min())

    def targets(self, state: np.ndarray, sensed: np.ndarray, memory: np.ndarray, params: np.ndarray) -> np.ndarray:
        """The muscle tracker's leg targets, then the trunk held on the pelvis and each arm swung opposite its
        leg (MJCF angles)."""
        targets = super().targets(state, sensed, memory, params)
        targets[:, self.trunk[0]] = -params[:, TRUNK_LEAN]  # + flex_extension bends back
        targets[:, self.trunk[1:]] = 0.0
        phase = leg_phases(memory, params)
        knots = np.linspace(0.0, 1.0, self.curves.shape[1])
        for side in range(2):
            hip = np.interp((phase[:, 1 - side] + params[:, ARM_LEAD]) % 1.0, knots, self.curves[0])
            forward = params[:, ARM_OFFSET] + params[:, ARM_SWING] * (hip - self.hip_mid) / self.hip_half
            plane, elevation, elbow = self.arms[side]
            targets[:, plane] = np.arctan2(forward, params[:, ARM_OUT])
            targets[:, elevation] = np.hypot(forward, params[:, ARM_OUT])
            targets[:, elbow] = params[:, ELBOW_BEND]
        return targets

    def stiffness(self, params: np.ndarray) -> np.ndarray:
        """[B, P] params -> [B, J] each posture joint's kp (N·m/rad): legs, feet, trunk, hands and arms."""
        batch = len(params)
        gains = np.concatenate([params[:, [HIP_KP, KNEE_KP, ANKLE_KP]], np.full((batch, 1), FOOT_KP),
                                params[:, [TRUNK_KP]], np.full((batch, 1), HAND_KP), params[:, [ARM_KP]]], axis=1)
        return gains[:, self.gain_of]


def leg_phases(memory: np.ndarray, params: np.ndarray) -> np.ndarray:
    """[B, 2] each leg's phase of its gait cycle (0 at its touchdown, 0.5 at the other's) from the step clock in
    `memory`, as `gait_tracker.step_clock` reckons it from the step time as given (on uneven ground the kernel's
    `uneven_step` changes it a little: the arms keep the given rhythm)."""
    progress = np.minimum(memory[:, CLOCK] / params[:, STEP_TIME], 1.0)
    stance = memory[:, STANCE].astype(np.int64)
    rows = np.arange(len(memory))
    phase = np.empty((len(memory), 2))
    phase[rows, stance] = 0.5 * progress
    phase[rows, 1 - stance] = 0.5 + 0.5 * progress
    return phase


def _qpos(model: mujoco.MjModel, joint: str) -> int:
    return int(model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)])


def _body(model: mujoco.MjModel, name: str) -> int:
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)


def _joint_at(model: mujoco.MjModel, qpos_adr: int) -> int:
    return int(np.flatnonzero(model.jnt_qposadr == qpos_adr)[0])


def _below(model: mujoco.MjModel, joint: int, bodies: set[int]) -> bool:
    """Whether `joint` moves a body in the subtree of one of `bodies`."""
    body = int(model.jnt_bodyid[joint])
    while body > 0:
        if body in bodies:
            return True
        body = int(model.body_parentid[body])
    return False
