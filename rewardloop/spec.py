"""One reading of a task description: the task spec that the metric, success rule, canonical reward and critic share.

`spec_from_description(text)` reads it with rules (regular expressions over lower-case text): the offline
default and the fallback. `spec_from_model(text, backend)` asks a language model for the same fields as JSON
validated against SPEC_SCHEMA, and falls back to the rules when the call fails or its answer is unusable (the
spec then says why: `model_failure`); `read_spec(text, model)` picks between them by model string. Everything
else (`rewardloop.tasks`, the critic's `Targets`) derives from the spec, so a description is understood once.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from rewardloop.errors import UserError

DIRECTIONS = ("forward", "backward", "none")
"""Ways to travel: along the start heading, against it, or not at all."""
TURNS = ("left", "right")
LATERALS = ("left", "right", "either")
"""Sideways parts of a travel: toward the body's left, its right, or either side ("walk sideways")."""
PACES: dict[str, float] = {"slow": 0.4, "fast": 1.8, "run": 2.0}
"""Words for a pace without a number, and the speed each stands for (m/s): a fast walk is people's brisk one, well
above their free speed (about 1.25-1.4 m/s; until 2026-11-27 'fast' stood for 1.2 m/s, slower than a plain walk's
canonical target)."""
TERRAINS = ("stairs", "rough", "slope")
"""Grounds a description can name, in the order they are looked for."""
POSTURE = ("upright", "straight_knees", "high_steps", "straight_line", "efficient", "symmetric")
"""Posture and manner flags of a spec (boolean fields of TaskSpec)."""
OBJECTS = ("cube", "bottle")
"""Objects a description can ask a hand to manipulate."""
DEFAULT_TURN_DEG = 90.0
"""How far a turn goes when the description names no angle (degrees)."""
PICKED_TURN = "left"
"""The side a half turn that names none ("turn around") is read as: left, counter-clockwise from above, as a cube's
turn without a side. A half turn ends facing the same way whichever side it goes, so a side can be picked; a quarter
turn without one ("turn 90 degrees") names no end facing and stays unread."""

GAIT_STYLES: dict[str, str] = {
    "goose-step": r"\bgoose[- ]?step",
    "limp": r"\blimp(s|ing)?\b|\bhobbl",
    "crouch": r"\bcrouch\w*(?: down)?|\bsquat\w*[- ]walk|\b(?:walk\w*|mov(?:e|es|ed|ing)|go(?:es|ing)?|travel\w*)"
              r"\s+(?:in\s+a\s+(?:deep\s+|low\s+)?)?squat\w*|\bbent[- ]knee",
    "shuffle": r"\bshuffl|\bshort (quick )?steps\b|\btiny steps\b",
    "high-knees": r"\bhigh knees?\b|\bmarch",
    "stiff-knee": r"\bstiff[- ]?(knee|leg)|\bstraight(ened)? (knees?|legs?)\b|\blocked knees?\b",
}
"""Gait styles a description may ask for, by the words that ask (regular expressions over lower-case text). A squat
is a crouch only as a way of walking ("walk in a squat"); alone it is the exercise, down and up again, which no field
holds."""


@dataclass(frozen=True)
class TaskSpec:
    """What a description asks the body to do, read once; every consumer derives from it."""

    direction: str = "forward"
    """'forward', 'backward' or 'none' (no travel: staying, stepping or turning on the spot, or an unknown
    motion)."""
    speed_mps: float | None = None
    """The speed the description states (m/s), e.g. 0.6 for "walk at 0.6 m/s"; None when it states none."""
    pace: str | None = None
    """A pace in words without a number: a key of PACES ('slow', 'fast', 'run') or None."""
    distance_m: float | None = None
    """The distance the description states (m), e.g. 3 for "walk 3 metres"; None when it states none."""
    turn: str | None = None
    """'left' or 'right' when asked to turn, else None."""
    lateral: str | None = None
    """The travel's sideways part, one of LATERALS, facing kept: with direction 'none' a sideways walk ("side-step to
    the left"), with 'forward' or 'backward' a diagonal one ("walk diagonally forward and to the right"); None for
    travel along the heading only."""
    turn_deg: float = DEFAULT_TURN_DEG
    """How far to turn (degrees); DEFAULT_TURN_DEG unless stated."""
    turn_side_picked: bool = False
    """The description names no side of its turn ("turn around"): `turn` is PICKED_TURN, and the success rule checks
    that side; `describe` says so."""
    stay_in_place: bool = False
    """Stand or balance without travelling ("stand still", "hold your balance without moving")."""
    stance_leg: str | None = None
    """A balance pose on one leg, one of LATERALS, while staying in place: the leg stood on ("stand on your right
    leg": 'right'; "lift your left foot and balance": 'right'), 'either' for "balance on one leg"; None on both."""
    step_in_place: bool = False
    """Step without travelling ("jog on the spot", "march in place")."""
    styles: tuple[str, ...] = ()
    """Gait styles asked for (names in GAIT_STYLES); each waives the critic's checks it contradicts."""
    upright: bool = False
    straight_knees: bool = False
    high_steps: bool = False
    """Lift the feet: asked for, or implied by rough ground or stairs."""
    straight_line: bool = False
    """Asked explicitly to keep a straight line."""
    efficient: bool = False
    symmetric: bool = False
    injured: bool = False
    """The body is weakened or limps ("despite an injured ankle", "with a weak leg")."""
    terrain: str | None = None
    """A ground in TERRAINS the description names, else None."""
    manipulation: str | None = None
    """An object to manipulate with a hand, one of OBJECTS ('cube': turn it, by `turn` and `turn_deg`; 'bottle': pour
    from it), else None (a motion of the body)."""
    side: str | None = None
    """'left' or 'right': where a bottle is poured (the cup's side); None when not stated."""
    understood: tuple[str, ...] = ()
    """The phrases recognised, for summaries."""
    unread: tuple[str, ...] = ()
    """Phrases of the description that no field above holds, in the words written (e.g. ('sideways to the left',)
    for "walk sideways to the left", read as plain forward travel): what they ask is not measured, so a run of this
    spec cannot call itself a success (`not_checked`). Filler ("please", "the", "forward") is never listed."""
    reader: str = "rules"
    """Who read the description: 'rules', or the model string that wrote the spec."""
    model_failure: str | None = None
    """Why a model's reading was not used and the rules read the description instead (its call failed or its
    answer was unusable); None when no model failed."""

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise UserError(f"a task spec is inconsistent: {'; '.join(problems)}")

    @property
    def locomotion(self) -> bool:
        """The body should travel (forward, backward, sideways or diagonally)."""
        return self.direction != "none" or self.lateral is not None

    @property
    def sign(self) -> int:
        """+1 forward, -1 backward, 0 no travel."""
        return {"forward": 1, "backward": -1, "none": 0}[self.direction]

    @property
    def pace_mps(self) -> float | None:
        """The wanted speed (m/s): the stated one, else the pace's, else None."""
        return self.speed_mps if self.speed_mps is not None else PACES.get(self.pace or "")

    def describe(self) -> str:
        """One readable line, e.g. 'travel backward at 0.6 m/s; upright (read by rules)', or '... (read by rules:
        the model's reading failed: WHY)', ending '; not understood: 'sideways to the left'' when parts were
        unread."""
        failure = f": the model's reading failed: {self.model_failure}" if self.model_failure else ""
        unread = f"; not understood: {quoted(self.unread)}" if self.unread else ""
        return "; ".join([_motion_words(self), *_manner_words(self)]) + f" (read by {self.reader}{failure})" + unread

    def not_checked(self) -> str:
        """What a run of this spec cannot check, in one line ('' when the whole description was read), e.g.
        "not checked: 'sideways to the left' was not understood"."""
        if not self.unread:
            return ""
        verb = "was" if len(self.unread) == 1 else "were"
        return f"not checked: {quoted(self.unread)} {verb} not understood"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskSpec:
        """Inverse of to_dict (lists back to tuples; unknown keys refused with a UserError)."""
        unknown = set(data) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise UserError(f"a task spec has unknown fields: {', '.join(sorted(unknown))}")
        tuples: dict[str, tuple[str, ...]] = {k: tuple(data[k]) for k in ("styles", "understood", "unread")
                                              if k in data}
        return cls(**{**data, **tuples})


def quoted(phrases: tuple[str, ...]) -> str:
    """Phrases in quotes, comma-separated: "'sideways to the left', 'right leg'"."""
    return ", ".join(f"'{phrase}'" for phrase in phrases)


def _problems(spec: TaskSpec) -> list[str]:
    """What makes a spec self-contradictory or out of range (empty when it is fine)."""
    checks = [
        (spec.direction in DIRECTIONS, f"direction must be one of {', '.join(DIRECTIONS)}, got {spec.direction!r}"),
        (spec.turn in (None, *TURNS), f"turn must be left, right or None, got {spec.turn!r}"),
        (spec.turn is not None or not spec.turn_side_picked, "a turn side is picked only for a turn"),
        (spec.pace in (None, *PACES), f"pace must be one of {', '.join(PACES)} or None, got {spec.pace!r}"),
        (spec.terrain in (None, *TERRAINS), f"terrain must be one of {', '.join(TERRAINS)} or None"),
        (0.0 < spec.turn_deg <= 720.0, f"turn_deg must be in (0, 720], got {spec.turn_deg}"),
        (spec.speed_mps is None or 0.0 < spec.speed_mps <= 10.0, f"speed_mps must be in (0, 10], got {spec.speed_mps}"),
        (spec.distance_m is None or spec.distance_m > 0.0, f"distance_m must be > 0, got {spec.distance_m}"),
        (not (spec.stay_in_place and spec.step_in_place), "stay_in_place and step_in_place exclude each other"),
        (spec.direction == "none" or not (spec.stay_in_place or spec.step_in_place),
         "a spec that stays or steps in place has direction 'none'"),
        (spec.lateral in (None, *LATERALS), f"lateral must be one of {', '.join(LATERALS)} or None"),
        (spec.stance_leg in (None, *LATERALS), f"stance_leg must be one of {', '.join(LATERALS)} or None"),
        (spec.stance_leg is None or spec.stay_in_place, "a stance on one leg stays in place"),
        (spec.lateral is None or not (spec.stay_in_place or spec.step_in_place or spec.manipulation),
         "a sideways travel neither stays in place nor holds an object"),
        (set(spec.styles) <= set(GAIT_STYLES), f"styles must be among {', '.join(GAIT_STYLES)}"),
        (spec.manipulation in (None, *OBJECTS), f"manipulation must be one of {', '.join(OBJECTS)} or None"),
        (spec.side in (None, *TURNS), f"side must be left, right or None, got {spec.side!r}"),
        (spec.manipulation is None or spec.direction == "none", "an object task does not travel (direction 'none')"),
    ]
    return [message for ok, message in checks if not ok]


def _motion_words(spec: TaskSpec) -> str:
    if spec.manipulation == "cube":
        return f"turn the cube {spec.turn_deg:g}° {spec.turn or 'left'} in the hand"
    if spec.manipulation == "bottle":
        return f"pour from the bottle to the {spec.side or 'left'}"
    if spec.stance_leg is not None:
        leg = "one leg (either)" if spec.stance_leg == "either" else f"the {spec.stance_leg} leg"
        motion = f"stand on {leg}"
    elif spec.stay_in_place:
        motion = "stay in place"
    elif spec.step_in_place:
        motion = "step in place"
    elif spec.lateral is not None:
        motion = f"travel {_course_words(spec)}"
    elif spec.locomotion:
        motion = f"travel {spec.direction}"
    else:
        motion = "no travel"
    if spec.speed_mps is not None:
        motion += f" at {spec.speed_mps:g} m/s"
    elif spec.pace:
        motion += f" ({spec.pace} pace)"
    if spec.distance_m is not None:
        motion += f" for {spec.distance_m:g} m"
    picked = f" (no side stated: {spec.turn} picked)" if spec.turn_side_picked else ""
    return motion + (f", turn {spec.turn} {spec.turn_deg:g}°{picked}" if spec.turn else "")


def _course_words(spec: TaskSpec) -> str:
    """'sideways to the left', 'sideways (either side)', 'diagonally forward and to the right'."""
    side = "(either side)" if spec.lateral == "either" else f"to the {spec.lateral}"
    return f"sideways {side}" if spec.direction == "none" else f"diagonally {spec.direction} and {side}"


def _manner_words(spec: TaskSpec) -> list[str]:
    flags = [name.replace("_", " ") for name in POSTURE if getattr(spec, name)]
    return ([", ".join(flags)] if flags else []) + ([f"styles: {', '.join(spec.styles)}"] if spec.styles else []) + \
        (["injured"] if spec.injured else []) + ([f"terrain {spec.terrain}"] if spec.terrain else [])


# ---- the rules ---------------------------------------------------------------------------------------------

_LIMB = r"(?:arms?|hands?|head|neck|legs?|feet|foot|hips?|torso|trunk|knees?|shoulders?)\b"
_OWNED = r"(?:the |its |your |both |one |his |her |their )?"
_UP_ONTO = r"\s+(?:the|a|an|onto|on|to)\b(?!\s+(?:your|its|their|his|her) feet\b)"
"""What follows a 'get up' that climbs ("get up the stairs", "get up onto the box"), not one that stands up ("get up
on your feet")."""
_TRAVEL = (r"\bwalk|\bruns?\b|\brunning\b|\bjog|\bgo(es|ing)?\b|\btravel|\bclimb|\bstrid|\bsteps?\b|\bstepping\b|"
           rf"\bmov(e|es|ing)\b(?!\s+{_OWNED}{_LIMB})|\bstroll|\bmarch|\bhike|\bget(?:s|ting)?\s+up(?={_UP_ONTO})|"
           r"\bproceed|\badvanc|\bwander|\bsprint|\bascend|\bcrawl|\bhop|\bgallop|\bskip|\btrek|\blocomot|\bpace\b|"
           r"\b(?:jump|leap|bound)\w*\s+(?:forwards?|ahead)\b|\bhobbl|\bwaddl|\btiptoe|\bamble|\bsaunter|\btrudg|"
           r"\b(?:limp|shuffl|crouch|sneak|creep|goose[- ]?step)\w*\s+(?:forwards?|ahead|across|along|around|"
           r"to|toward)\b")
_STEPPING = r"\bstep|\bmarch|\bjog|\bruns?\b|\brunning\b|\bwalk|\btread|\bstomp|\bstamp|\bhigh knees?\b|\bhop"
_RULES: dict[str, str] = {
    "backward": r"\bbackwards?\b|\breverse\b|\bbackpedal|\bretreat|\bback(ing)? up\b|"
                r"\b(walk|step|move|go|jog|run)(s|ing|ped)?\s+back\b(?!\s+(straight|upright|and forth))",
    "stay": r"\bstand(s|ing)?\b(?: (?:back )?up\b(?: again\b)?)?|"
            rf"\bget(s|ting)? (?:back )?up\b(?!{_UP_ONTO})(?: again\b)?|"
            r"\bbalanc|\bstance\b|\bflamingo\b|\bstay(s|ing)?\b|\bstill\b|\bremain|"
            r"\bstationary\b|\bmotionless\b|"
            rf"\bwithout (moving\b(?!\s+{_OWNED}{_LIMB})|travel\w*|walking|going anywhere)|"
            rf"\b(do not|don't|not) (move\b(?!\s+{_OWNED}{_LIMB})|walk|travel)|"
            r"\bhold (your |its |the |a )?(balance|position|pose|posture|ground)",
    "in_place": r"\bin place\b|\bon the spot\b|\bon the same spot\b|\bin one place\b|\bstationary\b|"
                rf"\bwithout (moving\b(?!\s+{_OWNED}{_LIMB})|travel\w*|going anywhere)",
    "travel": _TRAVEL,
    "stepping": _STEPPING,
    "run": r"\bruns?\b|\brunning\b|\bsprint|\bjog",
    "fast": r"\bfast\b|\bquick(ly)?\b|\brapid(ly)?\b|\bbrisk(ly)?\b|\bhurr(y|ied)\b",
    "slow": r"\bslow(ly)?\b|\bcareful(ly)?\b|\bgentl[ey]\b|\bleisurely\b|\bstroll",
    "upright": r"\bupright\b|\berect\b|\bstraight (back|trunk|torso|posture)\b|\bwithout lean|\bnot lean|\btall\b",
    "straight_knees": r"\bstraight(ened)? (knees?|legs?)\b|\bknees? straight\b|\bstiff[- ]legged\b|"
                      r"\bextended knees?\b|\bwithout bending the knees?\b|\blocked knees?\b",
    "high_steps": r"\bhigh (knees?|steps?)\b|\blift (the |its |their |your )?(feet|legs|knees)\b|\bmarch",
    "rough": r"\brough\b|\buneven\b|\bbumpy\b",
    "stairs": r"\bstairs?\b|\bstaircase\b|\bsteps up\b",
    "slope": r"\bslope\b|\bhill\b|\bincline\b|\buphill\b|\bramp\b",
    "straight_line": r"\bstraight line\b|\bstraight ahead\b|\bwithout drift|\bno drift",
    "efficient": r"\befficient(ly)?\b|\benergy\b|\brelaxed\b|\bsmooth(ly)?\b|\beffortless",
    "symmetric": r"\bsymmetric(al)?\b|\beven gait\b|\bwithout limping\b|\bno limp",
    "injured": r"\binjur|\bweak|\blimp|\bhobbl|\bwounded|\bimpaired",
}
"""What each word group looks like (regular expressions over lower-case text)."""
_NEGATABLE = frozenset({"backward", "travel", "stepping", "run", "fast", "slow", "injured"})
"""Groups read from the text with negated words dropped: "without moving" is no travel, "without limping" no
injury (the others read the negation itself, e.g. "without leaning" asks for an upright trunk)."""
_NEGATED = re.compile(r"\b(without|no|not|never|don't|avoid(ing)?)\s+(a\s+|any\s+)?[\w-]+")
_PART = r"[- ]?(?:arm|leg|foot|feet|hand|knee|hip|shoulder|ankle)s?\b"
_TURN_VERB = r"(?:turn|veer|curv|rotat|spin|steer|circl)\w*"
_NOT_A_BODY_TURN = (r"(?!(?:and|then|while|but|with|twice|again|times|head|neck|arms?|legs?|foot|feet|knees?|hips?|"
                    r"torso|trunk|toes?)\b)")
_TURN = re.compile(rf"\b{_TURN_VERB}(?:\W+{_NOT_A_BODY_TURN}[\w°-]+){{0,5}}?\W+(left|right)\b(?!{_PART})|"
                   r"\b(left|right)(?:[- ]hand(?:ed)?)?[- ](?:turn|curve)|"
                   r"\b(counter[- ]?clockwise|anti[- ]?clockwise|clockwise)\b")
_DEGREES = re.compile(r"(\d+(?:\.\d+)?)\s*(?:°|deg\b|degrees?)")
_SLOPE_ANGLE = re.compile(r"^\W*(slope|incline|hill|ramp|grade|uphill|downhill)|(slope|incline|grade) of\W*$")
_AFTER_HALF_TURN = (r"\s*(?:$|[,;:.!?)]|\d|(?:and|then|while|in place|on the spot|slowly|quickly|again|twice|"
                    r"to (?:face|look|walk|go|head|return|come)|(?:to (?:the |your )?)?(?:left|right)|"
                    r"(?:counter|anti)?[- ]?clockwise)\b)")
"""What may follow "turn around" in a half turn: the end, the next phase, a manner, a purpose, a side, an angle."""
_HALF_TURN = re.compile(rf"\bturn(?:s|ed|ing)?\s+a?round\b(?={_AFTER_HALF_TURN})|\babout[- ]?(?:face|turn)\b|"
                        r"\bhalf[- ]turn|"
                        r"\bface\s+(?:the\s+other\s+way|the\s+opposite\s+(?:way|direction)|backwards?)\b")
"""A half turn, named by its words ("turn around", "face the other way"), not by its side. "Turn around" is one only
where what follows may follow a half turn (the end, a side, a manner, an angle, the next phase): "turn around the
corner", "turn around each cone" go round a thing."""
_NOT_BACKWARD = re.compile(r"\b(?:stand|get|rise|come)\w*\s+(?P<up>back)\s+up\b|\bface\s+(?P<facing>backwards?)\b|"
                           rf"(?:{_HALF_TURN.pattern})\W+(?:(?:and|then|and then)\s+)?\w+\s+(?P<returning>back)\b")
"""A 'back' or 'backward' that is no backward travel: getting back up ("squat and stand back up": up again), facing
backward (a half turn), going back after a half turn ("turn around and walk back": a return, facing the new way)."""
_NAMED_ANGLES = ((r"\bquarter[- ]turn|\bright angle", 90.0), (rf"{_HALF_TURN.pattern}|\bhalf (a )?circle", 180.0),
                 (r"\bfull (turn|circle)|\bcomplete circle|\bwhole circle", 360.0))
_SPEED = re.compile(r"(\d+(?:\.\d+)?|\.\d+)\s*(m/s|m s-1|ms-1|mps\b|met(?:er|re)s?\s*(?:per|a|/|each)\s*sec(?:ond)?|"
                    r"km/h|kmh\b|kph\b|kilomet(?:er|re)s?\s*(?:per|an|/)\s*hour|mph\b|miles?\s*(?:per|an)\s*hour)")
_SPEED_UNIT_MPS = (("k", 1 / 3.6), ("mi", 0.44704), ("mph", 0.44704))
_DISTANCE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:m|metres?|meters?)\b"
                       r"(?!\s*(?:high|tall|wide|long|deep|steps?|stairs?|bumps?|rough))")
"""A stated distance, not a size ("0.08 m steps", "1 m wide")."""


def spec_from_description(text: str) -> TaskSpec:
    """The spec read from a description by keyword rules (see _RULES); the words no rule turned into a field are
    listed in `unread` (see `_unread`).

    Travel words give forward travel ("backward" words backward); stay words without travel, or "in place" /
    "on the spot" without stepping words, stay in place; "in place" with stepping words ("jog on the spot")
    steps in place; a turn without travel words turns on the spot. A description with none of these words
    (e.g. "wave both arms") does not travel.
    """
    if not text.strip():
        raise UserError('the task description is empty; say what the body should do, e.g. "walk forward"')
    raw = " ".join(text.lower().split())
    held = _object(raw)
    if held is not None:
        return _object_spec(raw, held)
    plain = _NEGATED.sub(lambda m: " " * len(m.group()), raw)  # same length: a match's place is its place in raw
    said, cut = raw, _later_phase_start(plain)
    raw, plain = raw[:cut].ljust(len(said)), plain[:cut].ljust(len(said))  # a later phase is left unread
    turn, turn_deg, turn_spans, turn_side_picked = _turn(plain)
    plain = _blank_named_groups(_NOT_BACKWARD, plain)
    hit = {name: re.search(pattern, plain if name in _NEGATABLE else raw) is not None
           for name, pattern in _RULES.items()}
    if turn is not None and turn_deg % 360 == 180 and hit["backward"]:  # no metric checks a backward half turn
        hit = {**hit, "backward": False, "travel": False}
    kept = _facing_kept(raw, plain, travel=hit["travel"], backward=hit["backward"])
    lateral, diagonal, lateral_spans = (None, False, []) if turn or hit["in_place"] else _lateral(plain, kept)
    speed, rest, speed_span = _speed(raw)
    if lateral is not None:  # a sideways speed is not a forward one; the metric reads distance (left unread)
        speed, speed_span = None, None
    step_in_place = hit["in_place"] and hit["stepping"] and turn is None
    stay_in_place = not step_in_place and turn is None and lateral is None and (hit["in_place"] or (
        hit["stay"] and not (hit["travel"] or hit["backward"])))
    stance_leg, stance_spans = _stance_leg(raw) if stay_in_place else (None, [])
    direction = _direction(hit, in_place=step_in_place or stay_in_place or (lateral is not None and not diagonal))
    terrain = next((name for name in TERRAINS if hit[name]), None)
    styles = _styles(plain)
    distance, distance_span = _distance(rest)
    spec = TaskSpec(
        direction=direction, lateral=lateral, stance_leg=stance_leg, speed_mps=speed,
        pace="run" if hit["run"] else "fast" if hit["fast"] else "slow" if hit["slow"] else None,
        distance_m=distance, turn=turn, turn_deg=turn_deg, turn_side_picked=turn_side_picked,
        stay_in_place=stay_in_place, step_in_place=step_in_place, styles=styles, upright=hit["upright"],
        straight_knees=hit["straight_knees"], high_steps=hit["high_steps"] or terrain in ("rough", "stairs"),
        straight_line=hit["straight_line"], efficient=hit["efficient"], symmetric=hit["symmetric"],
        injured=hit["injured"], terrain=terrain,
        understood=_understood(hit, turn, speed, step_in_place, stay_in_place) + styles)
    if lateral is not None:
        spec = dataclasses.replace(spec, understood=(*spec.understood, _course_words(spec)))
    if stance_leg is not None:
        spec = dataclasses.replace(spec, understood=(*spec.understood, _motion_words(spec)))
    if lateral is not None:  # a sideways part keeps the facing: words that say so are read with it
        lateral_spans += [m.span() for m in _FACING_KEPT.finditer(raw)]
    read = _read_spans(spec, raw, plain) + turn_spans + lateral_spans + stance_spans
    read += [s for s in (speed_span, distance_span) if s is not None]
    unread = _unread(said, read)
    return dataclasses.replace(spec, unread=unread + _later_phases(said, unread))


_CUBE = re.compile(r"\b(cube|die|dice|block)\b")
_BOTTLE = re.compile(r"\b(pour\w*|bottle|jug|pitcher)\b")
_OBJECT_SIDE = re.compile(r"\b(left|right)\b")
_CLOCKWISE = re.compile(r"\b(counter|anti)[- ]?clockwise\b|\bclockwise\b")


def _object(text: str) -> str | None:
    """The object the text asks a hand to manipulate (a key of OBJECTS), or None."""
    return "bottle" if _BOTTLE.search(text) else "cube" if _CUBE.search(text) else None


def _object_spec(text: str, held: str) -> TaskSpec:
    """The spec of an object task: the cube's turn (its side and angle; left, counter-clockwise from above, by
    default) or the side a bottle pours to."""
    read = [m.span() for m in re.finditer(_HAND_WORDS[held], text)]
    if held == "bottle":
        side = _OBJECT_SIDE.search(text)
        return TaskSpec(direction="none", manipulation="bottle", side=side.group(1) if side else None,
                        understood=("pour",) + ((f"to the {side.group(1)}",) if side else ()),
                        unread=_unread(text, read + ([side.span()] if side else [])))
    turn, turn_deg, turn_spans, _ = _turn(text)
    clock = _CLOCKWISE.search(text)
    if turn is None:
        side = _OBJECT_SIDE.search(text)
        turn = side.group(1) if side else ("right" if clock and clock.group(1) is None else "left")
        turn_deg = next((deg for pattern, deg in _NAMED_ANGLES if re.search(pattern, text)), DEFAULT_TURN_DEG)
        angle = _DEGREES.search(text)
        turn_deg = float(angle.group(1)) if angle else turn_deg
        turn_spans = [m.span() for m in (side, clock, angle) if m is not None] + _named_angle_spans(text)
    return TaskSpec(direction="none", manipulation="cube", turn=turn, turn_deg=turn_deg,
                    understood=("turn the cube", f"{turn} {turn_deg:g}°"), unread=_unread(text, read + turn_spans))


_HAND_WORDS = {
    "cube": r"\b(cube|die|dice|block|turn\w*|rotat\w*|spin\w*|twist\w*|vertical|axis|held|hold\w*|hands?|palm|"
            r"fingers?|grip\w*|grasp\w*)\b",
    "bottle": r"\b(pour\w*|bottle|jug|pitcher|cup|glass|mug|container|tip\w*|tilt\w*|past|horizontal|held|"
              r"hold\w*|hands?|grip\w*|grasp\w*)\b"}
"""Words an object task's success rule checks (the object, its goal, the hand holding it), by object: read."""


def _direction(hit: dict[str, bool], *, in_place: bool) -> str:
    if in_place or hit["in_place"]:
        return "none"
    if hit["backward"]:
        return "backward"
    return "forward" if hit["travel"] else "none"


Span = tuple[int, int]
"""Where a phrase lies in the lower-case description: [start, end) in characters."""


_NO_TURN: tuple[None, float, list[Span], bool] = (None, DEFAULT_TURN_DEG, [], False)
_REPEATED = re.compile(r"\s+(?:(twice)|(two|three|four|\d) times)\b(?:\s+(?:to (?:the |your )?)?(left|right)\b)?")
"""A turn made more than once ("turn around twice", "turn left three times"), and the side said after the count
("turn around twice to the right")."""
_TIMES = {"twice": 2, "two": 2, "three": 3, "four": 4}
NAMED_ANGLE_REACH = 12
"""Characters between a turn and a named angle of it ("rotate clockwise a quarter turn", "turn left by a right
angle"): one further off, or past a join, is another phase's."""


def _turn(text: str) -> tuple[str | None, float, list[Span], bool]:
    """(side, degrees, where the turn and its angle were read, whether the side was picked) of the turn the text
    asks for, its angle times the turns counted ("turn around twice to the right": 360°): a half turn without a
    side ("turn around") is PICKED_TURN's; _NO_TURN without one, or for a turn without a side that ends facing
    no way a half turn does ("turn around 90 degrees", "turn around twice")."""
    match = _TURN.search(text) or _HALF_TURN.search(text)
    if match is None:
        return _NO_TURN
    picked = match.re is _HALF_TURN
    side = PICKED_TURN if picked else match.group(1) or match.group(2) or (
        "right" if match.group(3) == "clockwise" else "left")
    # a circle is more than the 90° a turn reads without an angle: "circle" stays unread, its side is read
    read = [(match.start(1), match.end()) if match.group().startswith("circl") else match.span()]
    degrees, angle_spans = _turn_angle(text, match)
    repeat = _REPEATED.match(text, match.end())
    if repeat is not None:
        count = repeat.group(1) or repeat.group(2)
        degrees *= _TIMES[count] if count in _TIMES else int(count)
        side, picked = (repeat.group(3), False) if repeat.group(3) and picked else (side, picked)
        read.append(repeat.span())
    if degrees > 720 or (picked and degrees % 360 != 180):  # only a half turn ends facing the same way either side
        return _NO_TURN
    return side, degrees, [*read, *angle_spans], picked


def _turn_angle(text: str, turn: re.Match[str]) -> tuple[float, list[Span]]:
    """(degrees, where they were read) of a turn: the stated angle nearest it that is no slope's, else a named angle
    inside or next to it ("a quarter turn"), else DEFAULT_TURN_DEG."""
    angles = [(abs(m.start() - turn.start()), float(m.group(1)), m.span()) for m in _DEGREES.finditer(text)
              if not _slope_angle(text, m)]
    if angles:
        _, degrees, span = min(angles)
        return degrees, [span]
    named = [(degrees, m.span()) for pattern, degrees in _NAMED_ANGLES for m in re.finditer(pattern, text)
             if _next_to(text, m.span(), turn.span())]
    return (named[0][0], [span for _, span in named]) if named else (DEFAULT_TURN_DEG, [])


def _next_to(text: str, one: Span, other: Span) -> bool:
    """The two spans overlap, or lie within NAMED_ANGLE_REACH characters of each other with no join between."""
    between = text[min(one[1], other[1]):max(one[0], other[0])]
    return len(between) <= NAMED_ANGLE_REACH and not _JOIN.search(between)


_JOIN = re.compile(r"\s*[,;]\s*(?:and\s+)?(?:then\b)?|\s+(?:and\s+then|and|then)\b")
"""Words that join two phases of a motion: a comma, 'and', 'then', 'and then'."""


def _later_phase_start(text: str) -> int:
    """Where the later phase of a sequence with a half turn begins ("turn around | and walk forward", "turn left |
    and turn around"), len(text) without one: a spec holds one motion, and no metric checks a travel or a second
    turn before or after a half turn, so the first phase is read and the later one left unread."""
    joins = list(_JOIN.finditer(text))
    bounds = [0, *(m.end() for m in joins)]
    phases = [text[start:end] for start, end in zip(bounds, [*(m.start() for m in joins), len(text)], strict=True)]
    half = next((i for i, phase in enumerate(phases) if _HALF_TURN.search(phase)), None)
    moving = [i for i, phase in enumerate(phases) if i != half and (
        re.search(_TRAVEL, phase) or _TURN.search(phase) or _HALF_TURN.search(phase))]
    if half is None or not moving:
        return len(text)
    return joins[max(half, min(moving)) - 1].start()


def _blank_named_groups(pattern: re.Pattern[str], text: str) -> str:
    """The text with the named group each match of `pattern` holds blanked out (same length); groups of a pattern
    embedded in it are unnamed, and kept."""
    chars = list(text)
    for match in pattern.finditer(text):
        for name in (name for name, words in match.groupdict().items() if words is not None):
            start, end = match.span(name)
            chars[start:end] = " " * (end - start)
    return "".join(chars)


_SIDEWAYS = re.compile(r"\bsideways\b|\bsidewards?\b|\bside[- ]?(?:step|shuffl|walk)\w*|\blaterally\b|"
                       r"\bstraf(?:e|es|ed|ing)\b|\bcrab[- ]?walk\w*|\blike a crab\b|\bgrapevine\b")
_DIAGONAL = re.compile(r"\bdiagonal(?:ly)?\b|\b(?:forwards?|ahead|backwards?)(?:\s+and)?(?:\s+(?:to|towards?)\s+"
                       rf"(?:the |your |its )?|[- ])(?:left|right)\b(?!{_PART})")
_LATERAL_SIDE = re.compile(r"(?:\b(?:to|towards?|on)\s+(?:the |your |its |their |his |her )?)?\b(left|right)(?:wards?)?"
                   rf"(?:[- ]hand)?(?:\s+side)?\b(?!{_PART})")
_FACING_KEPT = re.compile(
    r"\bwithout (?:turning\b(?!(?:\s+a?round)?\W+(?:(?:to|towards?)\W+)?(?:the\W+|your\W+)?(?:left|right)\b)"
    rf"(?!\s+{_OWNED}{_LIMB})(?:\s+a?round\b)?|"
    r"changing (?:your |its |the )?(?:facing|heading|direction)\b)|"
    r"\b(?:while |still |keep(?:ing)? )?facing (?:forward|ahead|the front)\b")
"""Words that keep the facing: a travel toward a side with them goes sideways ("move to your left without
turning"); without them it may be a turn ("walk to the left"), and the side is left unread. "Without turning
(towards) the left" is a turn not made and "without turning your head" a head kept still: neither keeps a facing."""
_KEPT_SIDE = re.compile(r"\b(?:walk\w*|mov(?:e|es|ed|ing)|go(?:es|ing)?|step(?:s|ped|ping)?)\s+(?:(?:to|towards?)\s+)?"
                        r"(?:the |your )?(left|right)\b(?!\s+(?:side|wall|edge|of)\b)")
"""The side a travel with the facing kept goes to: right after its verb ("walk to your left"), not a place passed on
the way ("walk past the left wall", "walk along the right edge")."""
SIDE_REACH = 30
"""Characters between a sideways word and the side it names ("step sideways, slowly, to the left")."""


def _facing_kept(raw: str, plain: str, *, travel: bool, backward: bool) -> re.Match[str] | None:
    """The words that keep the facing of a travel toward a side (a _FACING_KEPT match in `raw`), or None: without a
    travel word, or with a travel along the heading ("walk forward, to your left, without turning": its side is a
    diagonal's or unread)."""
    kept = _FACING_KEPT.search(raw)
    if kept is None or not travel or backward:
        return None
    along = _FORWARD.search(plain, 0, kept.start()) or _FORWARD.search(plain, kept.end())
    return None if along else kept


def _lateral(text: str, kept: re.Match[str] | None) -> tuple[str | None, bool, list[Span]]:
    """(side, diagonal, where they were read) of a sideways or diagonal travel the text asks for: the side nearest
    the sideways word, or the words that keep the facing of a travel (`kept`, a _FACING_KEPT match); 'either' when a
    sideways word names none; (None, False, []) without one."""
    word = _DIAGONAL.search(text) or _SIDEWAYS.search(text) or kept
    if word is None:
        return None, False, []
    named = _KEPT_SIDE if word is kept else _LATERAL_SIDE
    sides = [(max(m.start() - word.end(), word.start() - m.end(), 0), m) for m in named.finditer(text)]
    near = [(gap, m) for gap, m in sides if gap <= SIDE_REACH or word.start() <= m.start() < word.end()]
    if not near:  # "walk sideways": either side will do; "walk diagonally" says too little (left unread)
        return ("either", False, [word.span()]) if word.re is _SIDEWAYS else (None, False, [])
    side = min(near, key=lambda pair: pair[0])[1]
    return side.group(1), word.re is _DIAGONAL, [word.span(), side.span()]


_LEG = r"(?:leg|foot)\b"
_ON_ONE_LEG = re.compile(rf"\bon (?:the |your |its |his |her |their |a )?(left|right|one|single|1) {_LEG}|"
                         r"(?:\bhold\w* (?:a |an |the |your )?)?\b(?:one|single)[- ]leg(?:ged)?\b(?: stance| pose)?|"
                         r"\b(?:like )?a flamingo\b")
_LIFTED = re.compile(rf"\b(?:lift|rais|hold|pick)\w*(?: up)? (?:the |your |its |his |her |their )?(left|right) "
                     rf"(?:{_LEG}|knee\b)(?: up| off the (?:ground|floor))?")


def _stance_leg(text: str) -> tuple[str | None, list[Span]]:
    """(the leg a balance pose stands on: 'left', 'right' or 'either', where it was read) for a stay in place;
    (None, []) when none is said. A lifted leg ("raise your left foot") means standing on the other one."""
    said = [m.span() for pattern in (_ON_ONE_LEG, _LIFTED) for m in pattern.finditer(text)]
    named = next((m.group(1) for m in _ON_ONE_LEG.finditer(text) if m.group(1) in ("left", "right")), None)
    lifted = _LIFTED.search(text)
    if named is None and lifted is not None:
        named = "right" if lifted.group(1) == "left" else "left"
    return (named or ("either" if said else None)), said


def _slope_angle(text: str, angle: re.Match[str]) -> bool:
    """The stated angle is a slope's ("a 5 degree slope", "an incline of 5°"), not a turn's."""
    after, before = text[angle.end():angle.end() + 12], text[:angle.start()][-12:]
    return bool(_SLOPE_ANGLE.search(after) or _SLOPE_ANGLE.search(before))


def _named_angle_spans(text: str) -> list[Span]:
    return [m.span() for pattern, _ in _NAMED_ANGLES for m in re.finditer(pattern, text)]


def _speed(text: str) -> tuple[float | None, str, Span | None]:
    """(stated speed in m/s or None, the text with it blanked out, where it was read)."""
    match = _SPEED.search(text)
    if match is None:
        return None, text, None
    unit = match.group(2)
    factor = next((f for prefix, f in _SPEED_UNIT_MPS if unit.startswith(prefix)), 1.0)
    value = float(match.group(1)) * factor
    blanked = text[:match.start()] + " " * (match.end() - match.start()) + text[match.end():]
    return (round(value, 3) if value > 0 else None), blanked, match.span()


def _distance(text: str) -> tuple[float | None, Span | None]:
    """(stated distance in m or None, where it was read)."""
    match = _DISTANCE.search(text)
    if match is None or float(match.group(1)) <= 0:
        return None, None
    return float(match.group(1)), match.span()


def _styles(text: str) -> tuple[str, ...]:
    """The GAIT_STYLES the text (negated words already dropped) asks for."""
    return tuple(name for name, pattern in GAIT_STYLES.items() if re.search(pattern, text))


def _understood(hit: dict[str, bool], turn: str | None, speed: float | None, step: bool, stay: bool) -> tuple[str, ...]:
    ignored = {"in_place", "stepping", "stay", "travel"} if step or stay else {"in_place", "stepping"}
    words = [name for name, found in hit.items() if found and name not in ignored]
    extra = [label for label, found in ((f"turn {turn}", turn is not None), (f"{speed} m/s", speed is not None),
                                         ("step in place", step), ("stay in place", stay)) if found]
    return tuple(words + extra)


# ---- what the rules did not read ----------------------------------------------------------------------------

_MANNER = re.compile(r"(?:hop|skip|gallop|crawl|tiptoe|waddl|sneak|creep|trudg|jump|leap|bound|sidestep)\w*")
"""Travel words whose manner no spec field holds ("hop forward" travels, but nothing checks the hop): unread."""
_ALWAYS_CHECKED = re.compile(
    r"\bbalanc\w*|\b(?:without|not|never|no|don't|avoid\w*)\s+(?:fall\w*|trip\w*|stumbl\w*|collaps\w*|tipping over)"
    r"(?:\s+(?:over|down))?|\b(?:stay\w*|remain\w*) on (?:its|your|the|their|his|her) feet\b|\bsafely\b")
"""Phrases every success rule checks whatever the spec (a fall is never a success): read."""
_GROUND_SIZE = re.compile(r"\d*\.?\d+\s*(?:cm|mm|m|centimet\w+|millimet\w+|met(?:er|re)s?)\s*"
                          r"(?:high|tall|deep|steps?|stairs?|bumps?)\b")
_FORWARD = re.compile(r"\b(?:forwards?|ahead|onwards?|straight on)\b")
_TOKEN = re.compile(r"\d*\.\d+|[\w°]+(?:['’\-/][\w°]+)*")
_BREAK = re.compile(r"[,;:.!?()\"]")
"""Punctuation that ends an unread phrase."""
_HEADS = frozenset({"leg", "legs", "knee", "knees", "foot", "feet", "ankle", "ankles", "hip", "hips", "steps",
                    "stride", "strides"})
"""Nouns read with the word read just before them ("a weakened leg", "an upright trunk")."""
_FILLER_WORDS = """
    a an the this that these those it its it's itself you your yours yourself he she him her his they them their
    i me my we us our please kindly can could would should will shall may might must let lets let's just now also
    then and or but so as while whilst when where here there with within to of in on at by for from into onto up
    along across through toward towards over past via is are am be been being was were do does doing did have has
    get gets getting keep keeps keeping kept maintain maintains maintaining try tries trying make makes making
    want need like some any all both each every very really quite bit more much rather fairly too nice nicely good
    well properly correctly natural naturally normal normally human humanlike human-like person people robot
    humanoid character agent model figure ground floor flat level surface take takes taking took
    terrain direction way manner motion movement gait posture stance trunk torso body speed pace time start starts about
    starting begin begins despite throughout during whole entire same
"""
_FILLER = frozenset(_FILLER_WORDS.split())
"""Words that carry no motion of their own: never listed as unread, and only inside a phrase between unread
words ("sideways to the left")."""


def _read_spans(spec: TaskSpec, raw: str, plain: str) -> list[Span]:
    """Where the rules read the description into the spec: each word group that set a field (a group overruled, as
    "stand" is by "walk", is not read), the styles, the negations read ("without limping", "do not walk"), and what
    every success rule checks (`_ALWAYS_CHECKED`)."""
    spans = [m.span() for m in _ALWAYS_CHECKED.finditer(raw)]
    if spec.direction != "backward":  # "forward" says no more than travel does; against "backward" it is overruled
        spans += [m.span() for m in _FORWARD.finditer(raw)]
    for name in (name for name, kept in _kept_groups(spec).items() if kept):
        text = plain if name in _NEGATABLE else raw
        spans += [m.span() for m in re.finditer(_RULES[name], text) if not _MANNER.match(text, m.start())]
    spans += [m.span() for name in spec.styles for m in re.finditer(GAIT_STYLES[name], plain)]
    if spec.terrain == "slope":  # "a 5 degree slope": the scene's slope holds the angle
        spans += [m.span() for m in _DEGREES.finditer(raw) if _slope_angle(raw, m)]
    if spec.terrain is not None:  # "0.08 m steps", "4 cm bumps": the scene's ground holds the size
        spans += [m.span() for m in _GROUND_SIZE.finditer(raw)]
    if spec.turn is not None:  # "rotate clockwise": the verb of a turn read by its sense; a circle is more than 90°
        spans += [m.span() for m in re.finditer(rf"\b{_TURN_VERB}", raw) if not m.group().startswith("circl")]
    return spans + [m.span() for m in _NEGATED.finditer(raw) if _negation_read(raw, m)]


def _kept_groups(spec: TaskSpec) -> dict[str, bool]:
    """Each word group of _RULES -> whether the spec holds what it says."""
    moves = spec.locomotion or spec.step_in_place
    return {"backward": spec.direction == "backward", "in_place": spec.direction == "none" and spec.lateral is None,
            "stay": spec.stay_in_place or not moves, "travel": moves, "stepping": moves,
            **{pace: spec.pace == pace for pace in PACES}, **{name: getattr(spec, name) for name in POSTURE},
            "injured": spec.injured, **{name: spec.terrain == name for name in TERRAINS}}


def _negation_read(raw: str, negation: re.Match[str]) -> bool:
    """A negation the rules read by dropping it: what it negates is a word group they read ("do not walk", "without
    limping"); one they do not ("without swinging the arms") is left unread."""
    for name in _NEGATABLE:
        found = re.compile(_RULES[name]).search(raw, negation.start())
        if found is not None and found.start() < negation.end():
            return True
    return False


_LATER_PHASE = re.compile(r"\b(?:then|afterwards|after that|followed by)\b[^,;:.!?]*")
"""A later phase of the motion and its words, up to the next punctuation ("then turn left")."""


def _later_phases(text: str, unread: tuple[str, ...]) -> tuple[str, ...]:
    """The later phases of a sequence ("walk 3 metres, then turn left") whose words were all read: a spec holds one
    motion, so they were read as happening throughout, and the order asked is unread. A phase with words already
    unread is not listed again."""
    phases = (m.group().strip() for m in _LATER_PHASE.finditer(text))
    return tuple(phase for phase in phases if not any(words in phase for words in unread))


def _unread(text: str, read: list[Span]) -> tuple[str, ...]:
    """The phrases of `text` (lower case) outside the `read` spans: runs of words not read, cut at punctuation and
    at read words, trimmed of filler at both ends, kept when a word that carries meaning is left."""
    phrases: list[str] = []
    current: list[str] = []
    after_read, last_end = False, 0
    for match in _TOKEN.finditer(text):
        word = match.group()
        taken = any(start < match.end() and match.start() < end for start, end in read)
        taken = taken or (after_read and word in _HEADS)
        if taken or _BREAK.search(text, last_end, match.start()):
            phrases += _phrase(current)
            current = []
        if not taken:
            current.append(word)
        after_read, last_end = taken, match.end()
    phrases += _phrase(current)
    return tuple(dict.fromkeys(phrases))


def _phrase(words: list[str]) -> list[str]:
    """The words as one phrase without the filler at its ends; [] when only filler is left."""
    content = [i for i, word in enumerate(words) if word not in _FILLER]
    return [" ".join(words[content[0]:content[-1] + 1])] if content else []


# ---- the model reader ----------------------------------------------------------------------------------------

MAX_UNREAD = 8
"""Unread phrases a model's spec may list."""
UNREAD_CHARS = 80
"""Characters kept of each unread phrase a model lists (a phrase of the description, usually a few words)."""

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "direction": {"type": "string", "enum": list(DIRECTIONS)},
        "speed_mps": {"type": ["number", "null"], "minimum": 0.01, "maximum": 10.0},
        "pace": {"type": ["string", "null"], "enum": [*PACES, None]},
        "distance_m": {"type": ["number", "null"], "minimum": 0.01, "maximum": 1000.0},
        "turn": {"type": ["string", "null"], "enum": [*TURNS, None]},
        "turn_deg": {"type": "number", "minimum": 1.0, "maximum": 720.0},
        "lateral": {"type": ["string", "null"], "enum": [*LATERALS, None]},
        "stance_leg": {"type": ["string", "null"], "enum": [*LATERALS, None]},
        "stay_in_place": {"type": "boolean"},
        "step_in_place": {"type": "boolean"},
        "styles": {"type": "array", "items": {"type": "string", "enum": list(GAIT_STYLES)}, "maxItems": 6},
        "posture": {"type": "array", "items": {"type": "string", "enum": list(POSTURE)}, "maxItems": 6},
        "injured": {"type": "boolean"},
        "terrain": {"type": ["string", "null"], "enum": [*TERRAINS, None]},
        "unread": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_UNREAD},
    },
    "required": ["direction", "speed_mps", "pace", "distance_m", "turn", "turn_deg", "stay_in_place",
                 "step_in_place", "styles", "posture", "injured", "terrain", "unread"],
    "additionalProperties": False,
}
"""The JSON a model writes a spec as (SPEC_PROMPT); `unread` lists the description's phrases no field holds; `lateral`
and `stance_leg` may be left out (None: no sideways part, no one-leg pose)."""

SPEC_PROMPT = "taskspec_v2"
"""The prompt template a model reads a description with (v2 asks for the unread phrases)."""
SPEC_MAX_TOKENS = 400
"""Room for the model's answer (the JSON is about 100 tokens, and its unread phrases)."""
FAILURE_CHARS = 300
"""Characters of a failed reading's reason kept in the spec (a model error is one line, usually shorter)."""


def spec_from_json(data: dict[str, Any], *, reader: str) -> TaskSpec:
    """A spec from a model's JSON answer (already validated against SPEC_SCHEMA); UserError if inconsistent."""
    posture = set(data["posture"])
    fields = {k: v for k, v in data.items() if k not in ("posture", "unread")}
    flags = {name: name in posture for name in POSTURE}
    understood = tuple(f"{k}={v}" for k, v in fields.items() if v not in (None, False, [], "none"))
    phrases = (" ".join(str(phrase).lower().split())[:UNREAD_CHARS] for phrase in data["unread"])
    unread = tuple(dict.fromkeys(p for p in phrases if _phrase(p.split())))  # filler alone is not a gap
    return TaskSpec(**{**fields, **flags, "styles": tuple(data["styles"]), "understood": understood,
                       "turn_deg": float(data["turn_deg"]), "reader": reader, "unread": unread})


def spec_from_model(text: str, backend: Any) -> tuple[TaskSpec, str | None]:
    """(spec, None) as the model read it; (the rules' spec, why the model's reading failed) otherwise, the spec's
    `model_failure` saying the same.

    backend: a `rewardloop.models.base.ModelBackend`. Any failure of the call (a server that ends its answer
    early, times out or errs) or of the answer falls back.
    """
    from rewardloop.models.base import Message
    from rewardloop.prompts import render_prompt

    prompt = render_prompt(SPEC_PROMPT, description=text.strip(), schema=json.dumps(SPEC_SCHEMA))
    try:
        answer = backend.complete([Message.user(prompt)], schema=SPEC_SCHEMA, temperature=0.0,
                                  max_tokens=SPEC_MAX_TOKENS)
        return spec_from_json(answer.parsed, reader=backend.name), None
    except (UserError, KeyError, TypeError) as error:  # ModelError is a UserError
        why = str(error)[:FAILURE_CHARS]
        spec = dataclasses.replace(spec_from_description(text), model_failure=why)
        return spec, f"{backend.name} gave no usable task spec ({why})"


def read_spec(text: str, model: str = "builtin", **backend_options: Any) -> tuple[TaskSpec, str | None]:
    """The spec of a description: by the rules for 'builtin', else by that model with the rules as fallback.

    Returns (spec, note): the note says why the model's reading was not used, None when nothing failed.
    backend_options go to `rewardloop.models.client.make_backend` (ledger, cache, retry, server).
    """
    if model == "builtin":
        return spec_from_description(text), None
    from rewardloop.models.client import make_backend

    return spec_from_model(text, make_backend(model, role="designer", **backend_options))
