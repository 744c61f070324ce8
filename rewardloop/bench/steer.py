"""The steering benchmark: does a change in the reward program change the motion the way it asks?

Each ask is the canonical walk (`reward.canonical`, "walk") with one change: one library term added at a stated
weight, one term of free code added, or the walk's target speed or path changed. For each body and seed, the locomotion
optimizer makes a 10-s motion on flat ground from the walking start for the canonical walk itself (the motion
before) and for every ask (the motion after), and the ask's measure is compared between the two: it *moved* when it
changed the asked way by at least the ask's margin (`Ask.margin_from`) without a fall. Beside it: whether the motion
still walks (no shuffle above SHUFFLE_CADENCE steps/min, no crouch past CROUCH_KNEE_DEG of mid-stance knee flexion,
unless that is what was asked), how many of the human-likeness targets it meets (`critic.likeness`), and the wall time.

    rewardloop bench --suite steer --bodies humanoid --seeds 3 --json steer.json

The asks reach the optimizer only through the reward program: nothing else tells it what was asked.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.control.defaults import default_config, receding_changed
from rewardloop.control.optimizer import optimize
from rewardloop.control.planners.gait_planning import planner_settings
from rewardloop.control.trajectory import Trajectory
from rewardloop.critic.gait import analyze_gait
from rewardloop.critic.likeness import met
from rewardloop.errors import UserError, unknown_name
from rewardloop.reward.canonical import canonical
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.bodies import SIDES, get_body
from rewardloop.sim.features import Features
from rewardloop.sim.scene import CompiledScene, Scene, compile_scene, walking_start_speed
from rewardloop.sim.terrain import Terrain

SHUFFLE_CADENCE = 180.0
"""Steps per minute above which a motion counts as a shuffle, not a walk (people walk at 100-130)."""
CROUCH_KNEE_DEG = 30.0
"""Mid-stance knee flexion (deg) above which a motion counts as a crouch (people: about 5-20)."""
DURATION_S = 10.0
"""Length of every motion (s)."""

def _trunk_pitch_term(name: str, target: float) -> str:
    """Free code of a term -(trunk pitch - target)² (rad²), pitch + leaning forward."""
    return f'''
def {name}(f):
    """-(trunk pitch - {target} rad)² (rad²), + leaning forward."""
    cos, sin = np.cos(f.heading), np.sin(f.heading)
    pitch = np.arctan2(f.torso_up[..., 0] * cos + f.torso_up[..., 1] * sin, f.torso_up[..., 2])
    return -(pitch - {target}) ** 2
'''


def _bent_knees_term(target: float) -> str:
    """Free code of a term -mean over legs of contact × (knee flexion - target)² (rad²) in stance."""
    return f'''
def bent_knees(f):
    """-mean over legs of contact × (knee flexion - {target:.4g} rad)² (rad²): knees bent more in stance."""
    return -0.5 * sum(f[f"{{side}}_foot_contact"] * (f[f"{{side}}_knee_flexion"] - {target:.4g}) ** 2
                      for side in ("left", "right"))
'''


BENT_KNEES_RAD = 0.5
"""How much more the bent-knees ask bends the stance knee than the body's standing pose (rad; about 30 degrees)."""
PERSON_STANDING_M = 0.86
"""Standing pelvis height (m) of the smallest body the asks' numbers were written for (the humanoid): a smaller
body's asks are scaled to it (`BodyScale`)."""


@dataclass(frozen=True)
class BodyScale:
    """What makes an ask's numbers fit a body smaller than the people-sized ones the asks were written for: lengths
    and speeds scale with the standing height (as the canonical walk's target speed does), rates with its inverse
    square root (Froude similarity: a shorter leg steps quicker); knee asks count from the standing pose's knee (a
    robot that stands crouched)."""

    length: float = 1.0
    """Standing height over PERSON_STANDING_M, at most 1 (a body larger than a person keeps the asks as written)."""
    knee_rad: float = 0.0
    """Knee flexion of the standing pose (rad), mean of both legs."""

    @classmethod
    def of(cls, scene: CompiledScene) -> BodyScale:
        state, layout = scene.initial_state, scene.layout
        knees = [layout.joint_sign[f"{side}_knee_flexion"] * state[1 + layout.joint_qpos[f"{side}_knee_flexion"]]
                 for side in SIDES]
        return cls(min(1.0, scene.standing_height / PERSON_STANDING_M), float(np.mean(knees)))

    def factor(self, kind: str) -> float:
        """The factor of a 'length', 'speed' or 'rate' quantity (1 for anything else)."""
        return {"length": self.length, "speed": self.length, "rate": self.length ** -0.5}.get(kind, 1.0)


MEASURE_SCALES = {"speed": "speed", "cadence": "rate", "width": "length", "clearance": "length"}
"""An ask's measure -> the kind of quantity it is (`BodyScale.factor`): its margin scales with the body."""
PARAM_SCALES = {"low": None, "high": None, "target": "length", "limit": "length"}
"""A library term's parameter -> the kind of quantity it is; None: the measure's own (a band of the measure)."""


@dataclass(frozen=True)
class Ask:
    """One change to the canonical walk and what it should do to the motion."""

    name: str
    """Short name, e.g. 'wider'."""
    measure: str
    """Key of `steer_measures` the ask targets."""
    sign: int
    """+1: the ask wants the measure larger; -1: smaller."""
    margin: float
    """How far (in the measure's units) it must move to count as moved."""
    term: str | None = None
    """Library term added to the walk (None: see `code` and `speed`)."""
    weight: float = 1.0
    """The added term's weight."""
    params: dict[str, Any] = field(default_factory=dict)
    """The library term's parameters."""
    code: str | None = None
    """Free code of one term added instead of a library term (its function's name is the term's name)."""
    speed: float | None = None
    """A changed top speed of the walk's speed ramp (m/s) instead of an added term."""
    turn: float | None = None
    """A changed path instead of an added term: the walk's line bent into a path turning at this rate (rad/s,
    + left; `canonical.with_turn`)."""
    floor: float | None = None
    """Where the measure cannot go below (a straight knee, a foot on the ground): an ask for less moves when it
    closes `margin` or half the plain walk's distance to the floor, whichever is less."""
    arms: bool = False
    """Only for bodies with arms."""

    def margin_from(self, before: float) -> float:
        """How far the measure must move from the plain walk's `before` to count as moved (see `floor`)."""
        if self.floor is None or self.sign > 0:
            return self.margin
        return min(self.margin, 0.5 * max(before - self.floor, 0.0))

    def for_body(self, scale: BodyScale) -> Ask:
        """This ask with its numbers fitted to a body (`BodyScale`); the same ask for a people-sized one."""
        kind = MEASURE_SCALES.get(self.measure, "")
        params = {name: value * scale.factor(PARAM_SCALES.get(name, "") or kind) if name in PARAM_SCALES else value
                  for name, value in self.params.items()}
        code = _bent_knees_term(scale.knee_rad + BENT_KNEES_RAD) if self.name == "bent-knees" else self.code
        speed = None if self.speed is None else self.speed * scale.factor("speed")
        return dataclasses.replace(self, margin=self.margin * scale.factor(kind), params=params, code=code,
                                   speed=speed)

    def program(self) -> RewardProgram:
        """The canonical walk with this ask's change."""
        if self.speed is not None or self.turn is not None:
            return canonical("walk", speed=self.speed, turn=self.turn)
        walk = canonical("walk")
        if self.term is not None:
            return walk.with_library_term(self.term, self.weight, self.params, name=f"ask_{self.term}")
        if self.code is None:
            raise UserError(f"ask {self.name!r} changes nothing")
        name = self.code.split("def ", 1)[1].split("(", 1)[0]
        weighted = f'{self.code.strip()}\n\nWEIGHTS = {{\n    "{name}": {self.weight!r},'
        return RewardProgram.from_source(walk.source.replace("WEIGHTS = {", weighted, 1))


ASKS: tuple[Ask, ...] = (
    Ask("slower", "speed", -1, 0.15, speed=0.8),
    Ask("faster", "speed", +1, 0.10, speed=1.8),
    Ask("quicker-cadence", "cadence", +1, 8.0, "cadence_band", 3.0, {"low": 2.4, "high": 3.0}),
    Ask("slower-cadence", "cadence", -1, 8.0, "cadence_band", 3.0, {"low": 1.3, "high": 1.6}),
    Ask("wider", "width", +1, 0.03, "feet_distance", 10.0, {"low": 0.3, "high": 0.5}),
    Ask("narrower", "width", -1, 0.02, "feet_distance", 10.0, {"low": 0.0, "high": 0.08}),
    Ask("higher-clearance", "clearance", +1, 0.02, "foot_clearance", 300.0, {"target": 0.15}),
    Ask("lower-clearance", "clearance", -1, 0.005, "swing_height_limit", 30.0, {"limit": 0.01}, floor=0.0),
    Ask("straighter-knees", "knee_midstance", -1, 3.0, "knee_extension", 10.0, {"stance_only": True}, floor=0.0),
    Ask("bent-knees", "knee_midstance", +1, 5.0, code=_bent_knees_term(BENT_KNEES_RAD), weight=10.0),
    Ask("lean-forward", "trunk_pitch", +1, 3.0, code=_trunk_pitch_term("lean", 0.3), weight=10.0),
    Ask("upright", "trunk_pitch", -1, 2.0, code=_trunk_pitch_term("upright_trunk", -0.05), weight=30.0),
    Ask("turn-left", "heading", +1, 20.0, turn=0.3),
    Ask("turn-right", "heading", -1, 20.0, turn=-0.3),
    Ask("more-arm-swing", "arm_swing", +1, 0.03, "arm_swing", 3.0, {"amplitude": 0.4}, arms=True),
)
"""The asks: each dimension in both directions where a library term or a target reaches it. Each asks for more
than the plain walk does on either body: the humanoid's walk already swings its hands 0.26 m either way (an
`arm_swing` amplitude of 0.25 would ask nothing) and lifts its swing foot 2.5 cm (a limit of 2 cm would ask 5 mm);
a turn bends the walk's line (its heading, sideways and speed terms) rather than adding a term that pulls against
it."""

MEASURE_UNITS = {"speed": "m/s", "cadence": "steps/min", "width": "m", "clearance": "m", "knee_midstance": "deg",
                 "trunk_pitch": "deg", "heading": "deg", "arm_swing": "m"}
"""Units of `steer_measures`' keys."""


def steer_measures(features: Features, trajectory: Trajectory) -> dict[str, float]:
    """The asks' measures of one motion ([1, T] features): mean speed, cadence, stance width (mean lateral distance
    between the feet), swing clearance (95th percentile), mid-stance knee flexion, mean trunk pitch (+ forward),
    heading change, fore-aft hand swing against the torso (5-95 % range; NaN without arms)."""
    measures = analyze_gait(features).measures
    cos, sin = np.cos(features.heading[0]), np.sin(features.heading[0])
    left = np.stack([-sin, cos], axis=-1)  # [T, 2] the body's left in the ground plane
    feet = features.left_foot_pos[0, :, :2] - features.right_foot_pos[0, :, :2]
    return {"speed": trajectory.metrics.speed, "cadence": float(measures.cadence[0]),
            "width": float(np.abs((feet * left).sum(axis=-1)).mean()),
            "clearance": float(measures.swing_clearance[0]), "knee_midstance": float(measures.knee_midstance[0]),
            "trunk_pitch": float(measures.trunk_pitch_mean[0]),
            "heading": float(np.degrees(trajectory.metrics.heading_change)), "arm_swing": _arm_swing(features)}


def _arm_swing(features: Features) -> float:
    """Fore-aft 5-95 % range of the hands against the torso along the heading, mean of both hands (m); NaN for a
    body without arms (its hands are at the torso)."""
    forward = np.stack([np.cos(features.heading[0]), np.sin(features.heading[0])], axis=-1)  # [T, 2]
    swings = []
    for side in SIDES:
        offset = features[f"{side}_hand_pos"][0, :, :2] - features.torso_pos[0, :, :2]
        along = (offset * forward).sum(axis=-1)
        swings.append(float(np.percentile(along, 95) - np.percentile(along, 5)))
    swing = float(np.mean(swings))
    return swing if swing > 0 else float("nan")


def motion_row(scene: CompiledScene, trajectory: Trajectory) -> dict[str, Any]:
    """One motion's measures, fall, walking checks (cadence, mid-stance knee), human-likeness targets met and wall
    time."""
    features = trajectory.features(scene)
    targets = met(analyze_gait(features))
    return {**steer_measures(features, trajectory), "fell": bool(trajectory.metrics.fell),
            "distance": trajectory.metrics.distance, "human_targets_met": int(sum(bool(ok[0]) for ok in
                                                                                 targets.values())),
            "human_targets": len(targets), "human_like": bool(all(ok[0] for ok in targets.values())),
            "wall_s": trajectory.wall_time_s}


def verdict(ask: Ask, before: dict[str, Any], after: dict[str, Any], scale: BodyScale = BodyScale()) -> dict[str, Any]:
    """Whether `after` moved the ask's measure from `before` the asked way by its margin without a fall, and still
    walks (no shuffle, no crouch past the standing knee, unless the ask is for that measure), for a body of
    `scale`."""
    change = after[ask.measure] - before[ask.measure]
    margin = ask.margin_from(before[ask.measure])
    moved = bool(np.isfinite(change) and ask.sign * change >= margin and not after["fell"])
    shuffle = bool(after["cadence"] > SHUFFLE_CADENCE * scale.factor("rate")) and ask.measure != "cadence"
    crouch_deg = CROUCH_KNEE_DEG + np.degrees(scale.knee_rad)
    crouch = bool(after["knee_midstance"] > crouch_deg) and ask.measure != "knee_midstance"
    return {"change": float(change), "margin": margin, "moved": moved,
            "walks": not (shuffle or crouch or after["fell"]), "shuffle": shuffle, "crouch": crouch}


Optimize = Callable[[CompiledScene, RewardProgram, int], Trajectory]
"""(scene, reward program, seed) -> the optimizer's 10-s motion."""


def locomotion_optimizer(kind: str = "search", *, search: dict[str, Any] | None = None,
                         planner: Sequence[str] = ()) -> Optimize:
    """The optimizer `kind` ('search': policy search; 'plan': the gait planner) with the body's defaults for
    10-s motions, `search` changes to its SearchConfig and NAME=VALUE changes to the gait planner's settings for the
    body (`gait_planning.planner_settings`, `defaults.receding_changed`)."""

    def run(scene: CompiledScene, program: RewardProgram, seed: int) -> Trajectory:
        config = default_config(scene, kind=kind, duration_s=DURATION_S, search=search)
        if planner:
            changed = receding_changed(planner_settings(config, scene), list(planner))
            config = dataclasses.replace(config, gait_planner=changed)
        return optimize(scene, program.evaluate_trusted, config, seed=seed)

    return run


def asks_for(body_has_arms: bool, names: Sequence[str] | None = None) -> tuple[Ask, ...]:
    """The asks that apply to a body (arm asks only with arms), all or those `names` picks (a UserError for an
    unknown name)."""
    known = {ask.name: ask for ask in ASKS}
    for name in names or ():
        if name not in known:
            raise unknown_name("ask", name, known)
    picked = [known[name] for name in names] if names else list(ASKS)
    return tuple(ask for ask in picked if body_has_arms or not ask.arms)


def steer_body(body: str, seeds: Sequence[int], asks: Sequence[Ask], optimizer: Optimize,
               say: Callable[[str], None] = lambda line: None) -> list[dict[str, Any]]:
    """Rows of one body: per seed, the canonical walk's motion ('walk', the before) and each ask's with its verdict;
    the asks' numbers fitted to the body (`Ask.for_body`)."""
    scene = compile_scene(Scene(body, Terrain("flat"), start_speed=walking_start_speed(body)))
    scale = BodyScale.of(scene)
    fitted = [ask.for_body(scale) for ask in asks]
    rows = []
    for seed in seeds:
        before = motion_row(scene, optimizer(scene, canonical("walk"), seed))
        rows.append({"body": body, "seed": seed, "ask": "walk", **before})
        say(_line(rows[-1]))
        for ask in fitted:
            after = motion_row(scene, optimizer(scene, ask.program(), seed))
            rows.append({"body": body, "seed": seed, "ask": ask.name, "measure": ask.measure,
                         "before": before[ask.measure], **after, **verdict(ask, before, after, scale)})
            say(_line(rows[-1]))
    return rows


def _line(row: dict[str, Any]) -> str:
    """One progress line."""
    if row["ask"] == "walk":
        return (f"{row['body']} seed {row['seed']} walk: {row['distance']:.2f} m, {row['cadence']:.0f} steps/min, "
                f"fell {row['fell']}, {row['wall_s']:.0f} s")
    return (f"{row['body']} seed {row['seed']} {row['ask']}: {row['measure']} {row['before']:.3g} -> "
            f"{row[row['measure']]:.3g}, moved {row['moved']}, fell {row['fell']}, walks {row['walks']}, "
            f"{row['wall_s']:.0f} s")


def body_has_arms(body: str) -> bool:
    """Whether a body has arms (hands apart from its torso): the humanoid does, the muscle legs do not."""
    return bool(get_body(body).hands)


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per body: asks tried, asks moved in every seed (and in a majority), (ask, seed) pairs moved, falls, motions
    that stopped walking, and the wall time per candidate (mean, max)."""
    result = {}
    for body in dict.fromkeys(row["body"] for row in rows):
        asked = [row for row in rows if row["body"] == body and row["ask"] != "walk"]
        by_ask: dict[str, list[bool]] = {}
        for row in asked:
            by_ask.setdefault(row["ask"], []).append(row["moved"])
        walls = [row["wall_s"] for row in rows if row["body"] == body]
        result[body] = {"asks": len(by_ask), "moved_every_seed": sum(all(v) for v in by_ask.values()),
                        "moved_most_seeds": sum(sum(v) * 2 > len(v) for v in by_ask.values()),
                        "pairs": len(asked), "pairs_moved": sum(row["moved"] for row in asked),
                        "falls": sum(row["fell"] for row in rows if row["body"] == body),
                        "stopped_walking": sum(not row["walks"] for row in asked),
                        "wall_mean_s": float(np.mean(walls)), "wall_max_s": float(np.max(walls))}
    return result


def table(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: one line per (body, ask): the measure before and after (mean over seeds, min-max), seeds moved,
    falls, human targets met, wall per candidate; then one line per body: asks moved / asks tried."""
    lines = ["| body | ask | measure | before | after | moved | falls | walks | human targets | wall (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = dict.fromkeys((row["body"], row["ask"]) for row in rows if row["ask"] != "walk")
    for body, name in keys:
        group = [row for row in rows if row["body"] == body and row["ask"] == name]
        measure = group[0]["measure"]
        lines.append(f"| {body} | {name} | {measure} ({MEASURE_UNITS[measure]}) | "
                     f"{_spread([r['before'] for r in group])} | {_spread([r[measure] for r in group])} | "
                     f"{sum(r['moved'] for r in group)}/{len(group)} | {sum(r['fell'] for r in group)} | "
                     f"{sum(r['walks'] for r in group)}/{len(group)} | "
                     f"{_spread([r['human_targets_met'] for r in group], '.1f')}/{group[0]['human_targets']} | "
                     f"{_spread([r['wall_s'] for r in group], '.0f')} |")
    for body, line in summarize(rows).items():
        lines.append(f"\n{body}: asks moved in every seed {line['moved_every_seed']} / {line['asks']} "
                     f"(in most seeds {line['moved_most_seeds']}); ask × seed {line['pairs_moved']} / {line['pairs']}; "
                     f"falls {line['falls']}; stopped walking {line['stopped_walking']}; wall per candidate "
                     f"{line['wall_mean_s']:.0f} s mean, {line['wall_max_s']:.0f} s max")
    return "\n".join(lines)


def _spread(values: Sequence[float], spec: str = ".3g") -> str:
    """'mean (min–max)' of values, NaN-aware; just the value when they are all equal."""
    array = np.asarray(values, dtype=float)
    if not np.isfinite(array).any():
        return "–"
    low, mean, high = np.nanmin(array), np.nanmean(array), np.nanmax(array)
    return f"{mean:{spec}}" if low == high else f"{mean:{spec}} ({low:{spec}}–{high:{spec}})"


def read_results(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The saved results (`--json` files) at `paths`, each with its `file`; a one-line UserError for a missing or
    malformed one."""
    results = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
            data["rows"], data["file"] = list(data["rows"]), str(path)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UserError(f"{path}: not a steering result ({type(error).__name__}: {error})") from None
        results.append(data)
    return results


def results_section(results: Sequence[dict[str, Any]]) -> str:
    """Markdown: per result, where it came from in one line (file, optimizer command, commit, date, machine; its
    note stays in the file and in benchmarks/results/INDEX.md) and its table."""
    parts = ["<!-- generated by `rewardloop bench --suite steer --report FILES --readme`; not typed by hand -->"]
    for result in results:
        parts.append(f"`{result['command']}` — `{result['file']}`, commit {result['commit'][:7]}, "
                     f"{result['date'][:10]}, {result['machine']}\n\n{table(result['rows'])}")
    return "\n\n".join(parts)


def provenance(command: str) -> dict[str, str]:
    """The command, commit, date and machine that made a result."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False,
                                timeout=10).stdout.strip()
    except OSError:
        commit = ""
    return {"command": command, "commit": commit or "unknown",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": " ".join(part for part in (platform.node(), platform.machine(), platform.processor(),
                                                  f"{_cores()} cores") if part)}


def _cores() -> int:
    """CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
