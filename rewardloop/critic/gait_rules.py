"""The builtin critic's gait checks: a walking motion's gait analysis judged against people's walking.

Every detector of `rewardloop.critic.gait` (kick, shuffling, crouch, stiff legs, limp, trunk wobble, trunk lean,
scuffing, flailing arms, standing still) and the shape of the hip and knee curves over a stride become checks. Each is
graded the same way, in fault units u: 0 at the human-like target (`HumanLikeTargets`, or people's normal
range where the targets have none), 1 at the detector's fault threshold (`GaitThresholds`), and so on linearly;
the check scores 2^-u (full marks at the target, half at the fault threshold), at least 2^-MAX_FAULT_UNITS.
`rules.judge` combines the gait checks by their weighted geometric mean, so that one gross fault pulls the gait
down as it does a person's impression. A check that misses its human-like target says so in an issue (body
part, value, people's range, the moment where it is an instant) and suggests library terms with parameters
that address it. Gait styles the description asks for (`Targets.styles`) waive the checks they contradict.
Rules over physics measurements, not a learned model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rewardloop.critic.critique import Issue, Suggestion
from rewardloop.critic.gait import GaitAnalysis, GaitThresholds, normal_ranges
from rewardloop.critic.likeness import HumanLikeTargets
from rewardloop.critic.physics import Targets
from rewardloop.critic.rules import Finding, is_standing, is_walking
from rewardloop.sim.bodies import SIDES

GaitRow = dict[str, float | int | bool]
"""One trajectory's similarity, measures and detections (`GaitAnalysis.row`)."""

GAIT_WEIGHTS: dict[str, float] = {
    "kick": 1.5, "shuffling": 1.5, "crouch": 1.0, "stiff_legged": 1.0, "hip_shape": 1.0, "knee_shape": 1.0,
    "limp": 0.75, "trunk_wobble": 0.75, "trunk_lean": 1.5, "scuffing": 0.5, "flailing_arms": 0.5,
    "arm_swing": 0.5,
}
"""Weight of each gait check in the overall score; together a little more than the physics checks of a walk (8.5),
so a walk that travels well but unlike people scores about half marks."""

WAIVERS: dict[str, tuple[str, ...]] = {
    "kick": ("goose-step", "high-knees"),
    "hip_shape": ("goose-step", "high-knees"),  # neither swings the thigh like people's walking
    "limp": ("limp",),
    "crouch": ("crouch",),
    "shuffling": ("shuffle",),
    "stiff_legged": ("stiff-knee",),
    "knee_shape": ("stiff-knee",),
}
"""Gait check -> the styles (`Targets.styles`) that ask for what the check would fault."""


@dataclass(frozen=True)
class GaitFacts:
    """What the gait checks read about one trajectory."""

    row: GaitRow
    normal: dict[str, tuple[float, float]]
    """People's normal ranges (`normal_ranges`) for this body's leg length."""
    human: HumanLikeTargets
    faults: GaitThresholds
    in_place: bool
    """The task asks to step on the spot: no progress, no step length and no walking hip curve expected."""
    backward: bool = False
    """The task asks to walk backward: people's forward-walking joint curves are not the reference."""
    pace: float = 1.0
    """Asked speed / people's free speed (at most 1): slower walking takes shorter steps (step length ∝ √pace)."""

    def value(self, name: str, missing: float = float("nan")) -> float:
        value = float(self.row[name])
        return value if np.isfinite(value) else missing


def gait_facts(targets: Targets, analysis: GaitAnalysis, index: int = 0) -> GaitFacts:
    """The facts of trajectory `index` of a gait analysis, with the default targets and thresholds."""
    pace = 1.0 if targets.speed_mps is None else float(np.clip(abs(targets.speed_mps) / FREE_SPEED_MPS, 0.2, 1.0))
    return GaitFacts(analysis.row(index), normal_ranges(analysis.leg_length), HumanLikeTargets(), GaitThresholds(),
                     targets.step_in_place, targets.direction < 0, pace)


def gait_findings(targets: Targets, facts: GaitFacts) -> tuple[Finding, ...]:
    """The gait checks of a walking task, without the ones the description's styles waive; a task asking to stand
    still gets the checks of a person's composure (STANDING_CHECKS); none otherwise."""
    if is_standing(targets):
        return tuple(_composed(GAIT_CHECKS[name](facts)) for name in STANDING_CHECKS)
    if not is_walking(targets):
        return ()
    if facts.row["stride_count"] == 0:
        return (_no_gait(facts),)
    asked = set(targets.styles)
    return tuple(check(facts) for name, check in GAIT_CHECKS.items()
                 if not asked & set(WAIVERS.get(name, ())) and not (facts.in_place and name in _NOT_IN_PLACE)
                 and not (facts.backward and name in _NOT_BACKWARD))


ARM_SWING_M = 0.1
"""People's hand swing in walking, half its fore-aft excursion (m): about 10 cm at an ordinary pace."""
ARM_SWING_BAND_M = 0.02
"""Hands swinging with their own legs by less than this (m) are hands held still, not a fault."""
FREE_SPEED_MPS = 1.25
"""People's free walking speed (m/s), the pace the normal step lengths are for."""

MAX_FAULT_UNITS = 10.0
"""A check counts at most this many fault units (its score is at least 2^-10, about 0.001)."""


def _grade(value: float, target: float, fault: float) -> float:
    """2^-u for u = (value - target) / (fault - target) fault units past the target (either direction; none on
    the good side): 1 at `target`, 0.5 at `fault`, 0.25 at twice that distance; the least score for NaN."""
    units = (value - target) / (fault - target) if np.isfinite(value) else MAX_FAULT_UNITS
    return float(2.0 ** -np.clip(units, 0.0, MAX_FAULT_UNITS))


def _finding(name: str, score: float, fired: bool, meets: bool, issue: Issue,
             suggestions: tuple[Suggestion, ...]) -> Finding:
    """A gait check's Finding: capped at half marks when its detector fired; issue and edits unless human-like."""
    score = min(score, 0.5) if fired else score
    if meets and not fired:
        return Finding(name, score, GAIT_WEIGHTS[name])
    return Finding(name, score, GAIT_WEIGHTS[name], issue, suggestions, meets=False)


def _range(facts: GaitFacts, name: str, fmt: str = "{:.0f}") -> str:
    low, high = facts.normal[name]
    return f"{fmt.format(max(low, 0.0))}-{fmt.format(high)}"


def _side(facts: GaitFacts, name: str) -> str:
    side = facts.value(name)
    return SIDES[int(side)] if np.isfinite(side) else "either"


_TRACK_HIP_KNEE = Suggestion("human_gait_tracking", "add", "follow people's hip and knee curves over each stride",
                             {"joints": ["hip_flexion", "knee_flexion"]})


def _kick(facts: GaitFacts) -> Finding:
    hip, foot = facts.value("peak_hip_flexion"), facts.value("peak_swing_foot", 0.0)
    human, faults = facts.human, facts.faults
    score = min(_grade(hip, human.max_hip_flexion_deg, faults.kick_hip_deg),
                _grade(foot, human.max_clearance_m, faults.kick_foot_m))
    meets = hip <= human.max_hip_flexion_deg and facts.value("swing_clearance", 0.0) <= human.max_clearance_m
    by_hip = hip > faults.kick_hip_deg or foot <= faults.kick_foot_m
    at = facts.value("peak_hip_time") if by_hip else facts.value("peak_swing_foot_time")
    part = f"{_side(facts, 'peak_hip_side')} hip" if by_hip else f"{_side(facts, 'peak_swing_foot_side')} leg"
    what = "kick" if facts.row["kick"] else "high swing"
    issue = Issue(part, f"{what}: peak hip flexion {hip:.0f}° at {at:.2f} s, swing foot up to {foot:.2f} m "
                  f"(human-like: at most {human.max_hip_flexion_deg:g}° and {human.max_clearance_m:g} m; people's "
                  f"peak hip flexion {_range(facts, 'peak_hip_flexion')}°)", at)
    limit = round(float(np.radians(human.max_hip_flexion_deg)), 2)
    return _finding("kick", score, bool(facts.row["kick"]), meets, issue, (
        Suggestion("swing_height_limit", "add", "keep the swing foot low", {"limit": 0.15}),
        Suggestion("joint_limits", "add", f"cap hip flexion near {human.max_hip_flexion_deg:g}°",
                   {"limits": {"hip_flexion": [-0.5, limit]}, "margin": 0.0}),
        _TRACK_HIP_KNEE))


def _shuffling(facts: GaitFacts) -> Finding:
    cadence, step = facts.value("cadence"), facts.value("step_length")
    faults, (low, high) = facts.faults, facts.human.cadence
    score = _grade(cadence, high, faults.shuffle_cadence)
    if not facts.in_place:
        shorter = np.sqrt(facts.pace)
        score = min(score, _grade(-step, -facts.normal["step_length"][0] * shorter, -faults.shuffle_step * shorter))
    meets = cadence <= high  # slower steps are no fault here (standing still has its own check)
    issue = Issue("feet", f"{'shuffling' if facts.row['shuffling'] else 'quick steps'}: {cadence:.0f} steps/min of "
                  f"{step:.2f} leg lengths (people: {low:.0f}-{high:.0f} steps/min of "
                  f"{_range(facts, 'step_length', '{:.2f}')})")
    fired = bool(facts.row["shuffling"]) and not (facts.in_place and cadence <= faults.shuffle_cadence)
    aim = (low + high) / 2  # a band ending at people's limit barely pulls a walk just above it
    return _finding("shuffling", score, fired, meets, issue, (
        Suggestion("cadence_band", "add", f"step at {low:.0f}-{aim:.0f} steps/min, inside people's range",
                   {"low": round(low / 60, 2), "high": round(aim / 60, 2)}),
        Suggestion("feet_air_time", "add", "longer swings, longer steps", {"target": 0.4})))


def _crouch(facts: GaitFacts) -> Finding:
    knee, target = facts.value("knee_midstance"), facts.human.max_knee_midstance_deg
    what = "crouch, knees bent" if facts.row["crouch"] else "knees stay bent"
    issue = Issue("knees", f"{what} {knee:.0f}° in mid-stance (human-like: at most {target:g}°, nearly straight; "
                  f"people's normal {_range(facts, 'knee_midstance')}°)")
    return _finding("crouch", _grade(knee, target, facts.faults.crouch_knee_deg), bool(facts.row["crouch"]),
                    knee <= target, issue, (
                        Suggestion("knee_extension", "add", "straighten the stance knee", {"stance_only": True}),
                        _TRACK_HIP_KNEE))


def _stiff_legged(facts: GaitFacts) -> Finding:
    knee, (low, high) = facts.value("peak_knee_swing"), facts.human.knee_swing_deg
    stiff = facts.faults.stiff_knee_deg  # as far below the human-like range as a fault above it
    score = min(_grade(-knee, -low, -stiff), _grade(knee, high, high + low - stiff))
    what = "stiff legs, knees bend" if facts.row["stiff_legged"] else "knees bend"
    issue = Issue("knees", f"{what} only {knee:.0f}° in swing (people: {low:.0f}-{high:.0f}°)" if knee < low
                  else f"knees bend {knee:.0f}° in swing (people: {low:.0f}-{high:.0f}°)")
    return _finding("stiff_legged", score, bool(facts.row["stiff_legged"]), low <= knee <= high, issue, (
        Suggestion("human_gait_tracking", "add", "bend the knee in swing as people do", {"joints": ["knee_flexion"]}),
        Suggestion("foot_clearance", "add", "lift the swing foot clear", {"target": 0.05})))


def _shape(joint: str, part: str) -> Callable[[GaitFacts], Finding]:
    def check(facts: GaitFacts) -> Finding:
        r, target = facts.value(f"{joint}_flexion_r"), facts.human.min_correlation
        rmse = facts.value(f"{joint}_flexion_rmse_deg")
        issue = Issue(part, f"{joint} flexion over a stride is unlike people's: r = {r:.2f} with the human curve "
                      f"(human-like: at least {target:g}), RMS difference {rmse:.0f}°")
        return _finding(f"{joint}_shape", _grade(-r, -target, -0.5), False, r >= target, issue, (
            Suggestion("human_gait_tracking", "add", f"follow people's {joint} curve over each stride",
                       {"joints": [f"{joint}_flexion"]}),))
    return check


def _limp(facts: GaitFacts) -> Finding:
    asymmetry = facts.value("step_time_asymmetry", 0.0)
    issue = Issue("legs", f"{'limp' if facts.row['limp'] else 'uneven steps'}: left and right step times differ by "
                  f"{100 * asymmetry:.0f} % (people: a few %)")
    return _finding("limp", _grade(asymmetry, 0.1, facts.faults.limp_asymmetry), bool(facts.row["limp"]),
                    asymmetry <= 0.1, issue, (Suggestion("gait_symmetry", "add", "make both legs step alike"),))


def _trunk_wobble(facts: GaitFacts) -> Finding:
    spread = max(facts.value("trunk_pitch_range", 0.0), facts.value("trunk_roll_range", 0.0))
    at = facts.value("trunk_worst_time")
    issue = Issue("torso", f"trunk wobbles: pitch or roll spans {spread:.0f}° (5-95 %), worst at {at:.2f} s "
                  "(people: a few degrees)", at)
    return _finding("trunk_wobble", _grade(spread, 10.0, facts.faults.wobble_deg),
                    bool(facts.row["trunk_wobble"]), spread <= 10.0, issue,
                    (Suggestion("upright", "increase", "keep the torso steady and vertical"),))


def _trunk_lean(facts: GaitFacts) -> Finding:
    lean, upright = facts.value("trunk_pitch_mean", 0.0), facts.human.max_trunk_lean_deg
    fired = bool(facts.row["trunk_lean"])
    way = ("bent over: " if lean > 0 else "leaning back: ") if fired else ""
    issue = Issue("torso", f"{way}the trunk leans {abs(lean):.0f}° {'forward' if lean > 0 else 'backward'} on "
                  f"average (people: within {upright:.0f}° of vertical, slightly forward)")
    return _finding("trunk_lean", _grade(abs(lean), upright, facts.faults.lean_deg), fired, abs(lean) <= upright,
                    issue, (Suggestion("upright", "increase", "keep the torso vertical"),))


def _scuffing(facts: GaitFacts) -> Finding:
    clearance, toe = facts.value("swing_clearance", 0.0), 0.02
    issue = Issue("feet", f"feet scuff: swing feet rise {100 * clearance:.1f} cm (95th percentile; people clear the "
                  "ground by about 2 cm at the lowest point of the swing)")
    return _finding("scuffing", _grade(-clearance, -toe, -facts.faults.scuff_clearance_m),
                    bool(facts.row["scuffing"]), clearance >= facts.faults.scuff_clearance_m, issue,
                    (Suggestion("foot_clearance", "add", "lift the swing foot clear", {"target": 0.05}),))


def _flailing_arms(facts: GaitFacts) -> Finding:
    excursion = facts.value("arm_excursion")
    if not np.isfinite(excursion):
        return Finding("flailing_arms", 1.0, 0.0)  # a body without arms
    at = facts.value("flailing_arms_time")
    issue = Issue("arms", f"arms flail: a hand moves {excursion:.2f} m sideways or up-down relative to the torso "
                  f"(worst at {at:.2f} s; people's hands swing fore-aft, a few cm across)", at)
    fault = facts.faults.flail_m
    return _finding("flailing_arms", _grade(excursion, fault / 2, fault), bool(facts.row["flailing_arms"]),
                    excursion <= fault / 2, issue, (
                        Suggestion("hands_still", "add", "quiet the hands: less swing across and up-down"),
                        Suggestion("action_smoothness", "add", "calm the arm commands")))


def _arm_swing(facts: GaitFacts) -> Finding:
    """Each hand swings against its own thigh, as people's do, less at a slower pace. Hands that hang still cost a
    little; hands swinging with their own leg (beyond ARM_SWING_BAND_M), which people do not do, miss the human-like
    target."""
    swing = facts.value("arm_swing")
    if not np.isfinite(swing):
        return Finding("arm_swing", 1.0, 0.0)  # a body without arms
    people = ARM_SWING_M * facts.pace
    score, weight = _grade(-swing, -people / 2, 0.0), GAIT_WEIGHTS["arm_swing"]
    if swing >= people / 2:
        return Finding("arm_swing", score, weight)
    way = f"with their own legs, {-100 * swing:.0f} cm" if swing < 0 else f"little, {100 * swing:.0f} cm against them"
    issue = Issue("arms", f"arms swing {way} (people's hands swing about {100 * people:.0f} cm opposite the "
                  "same-side leg)")
    edit = Suggestion("arm_swing", "add", "swing each arm against its own leg", {"amplitude": round(people, 3)})
    return Finding("arm_swing", score, weight, issue, (edit,), meets=swing >= -ARM_SWING_BAND_M)


def _no_gait(facts: GaitFacts) -> Finding:
    """No stride at all: the body stands, slides or falls instead of stepping."""
    speed = facts.value("speed", 0.0)
    return Finding("standing_still", 2.0 ** -MAX_FAULT_UNITS, sum(GAIT_WEIGHTS.values()), Issue(
        "legs", f"no strides (net speed {speed:.2f} m/s): the body does not walk, so nothing is like people's "
        "walking"), (Suggestion("feet_air_time", "add", "reward lifting each foot for a swing", {"target": 0.4}),
                     Suggestion("cadence_band", "add", "step at people's rate", {"low": 1.5, "high": 2.2})),
        meets=False)


GAIT_CHECKS: dict[str, Callable[[GaitFacts], Finding]] = {
    "kick": _kick, "shuffling": _shuffling, "crouch": _crouch, "stiff_legged": _stiff_legged,
    "hip_shape": _shape("hip", "hips"), "knee_shape": _shape("knee", "knees"), "limp": _limp,
    "trunk_wobble": _trunk_wobble, "trunk_lean": _trunk_lean, "scuffing": _scuffing, "flailing_arms": _flailing_arms,
    "arm_swing": _arm_swing,
}
"""The gait checks, by name (a trajectory without strides gets the single `standing_still` check instead)."""


STANDING_CHECKS = ("trunk_wobble", "flailing_arms")
"""The gait checks that also judge standing still: a person standing still keeps the trunk steady and the arms quiet
(the posture MPC's fidgety stand pitches its trunk through 37° and moves a hand 0.43 m; the calm one 22° and 0.31 m)."""
STANDING_WEIGHT = 3.0
"""Weight of each standing check where the body has the part it judges (the physics checks of standing weigh 8.5):
the calibration set's calm stand scores 7.7, the fidgety one 6.4 (`tests/test_critic_calibration.py`)."""


def _composed(finding: Finding) -> Finding:
    """A gait check re-weighted as a check of standing still (STANDING_WEIGHT; none where its part is missing)."""
    return dataclasses.replace(finding, weight=STANDING_WEIGHT if finding.weight else 0.0,
                               suggestions=finding.suggestions if finding.issue else ())


_NOT_IN_PLACE = ("hip_shape", "scuffing", "arm_swing")
"""Checks that do not apply to stepping on the spot (no walking hip swing; no travel to scuff along; no arm swing
to balance one)."""
_NOT_BACKWARD = ("hip_shape", "knee_shape")
"""Checks that do not apply to walking backward (the reference curves are people's forward walking)."""
