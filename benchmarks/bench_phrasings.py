"""A battery of phrasings a newcomer might type (issue 87): how each is read, and with --run, what a run of it does.

    .venv/bin/python benchmarks/bench_phrasings.py --json benchmarks/results/phrasings.json          # readings only
    .venv/bin/python benchmarks/bench_phrasings.py --run --bodies humanoid myolegs --json out/phrasings.json

Each phrasing carries what it asks, written here from its words (`Phrasing.asks`: task-spec fields, or that no field
holds it), not from what the reader makes of it. Its reading by the rules (`spec.spec_from_description`) is then:
- `read`: every field asked holds and no word is left unread;
- `unread`: the reader says what it did not understand (`TaskSpec.unread`) and the rest is right, or the ask is one
  no field holds and the reader says so: a run of it cannot claim a success;
- `misread`: a field asked does not hold (the words read as another motion; a direction 'none' asked without a side
  holds only when nothing travels), or an ask no field holds was read without a word left unread: a run of it would
  claim a motion that was not asked. Words left unread do not excuse a field read wrong: "squat down and stand back
  up" read as a backward travel is misread, though 'squat' is unread.
A phrasing the tool refuses (a one-line UserError, e.g. an object for a body without hands) is `refused`.

With --run, each phrasing is run on each body as the README says (`rewardloop run "..." --body B --preset quick`, in
a process of its own) and its best motion judged as the bench judges (`bench.judge.judge_run` with the builtin
critic): the task's success rule measured from the trajectory (`achieved`, never with words unread: `unchecked`),
the fall, the critic's score, and the loop's own stop. Without --run only the readings are made (no simulation) and
each body's run is null.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardloop.bench.steer import provenance
from rewardloop.errors import UserError, run_script
from rewardloop.spec import TaskSpec, spec_from_description
from rewardloop.tasks import task_from_description

NO_FIELD = "no field"
"""`Phrasing.asks` of an ask that no task-spec field holds (a hop, a kick, a sequence): read honestly, words unread."""


@dataclass(frozen=True)
class Phrasing:
    """One phrasing and what its words ask."""

    kind: str
    """The class of motion it asks for (a row group of the table)."""
    text: str
    asks: dict[str, Any] = field(default_factory=dict)
    """Task-spec field -> the value the words ask (`styles`: a style among those read); {NO_FIELD: True} where no
    field holds the ask, with the direction where the words state one (a squat or a kick on the spot travels
    nowhere)."""


PHRASINGS = (
    Phrasing("sideways", "walk sideways to the left", {"direction": "none", "lateral": "left"}),
    Phrasing("sideways", "shuffle sideways to your right", {"direction": "none", "lateral": "right"}),
    Phrasing("sideways", "take side steps to the left", {"direction": "none", "lateral": "left"}),
    Phrasing("sideways", "strafe right", {"direction": "none", "lateral": "right"}),
    Phrasing("sideways", "move to your left without turning", {"direction": "none", "lateral": "left"}),
    Phrasing("sideways", "sidestep to the right", {"direction": "none", "lateral": "right"}),
    Phrasing("sideways", "walk to your right while facing forward", {"direction": "none", "lateral": "right"}),
    Phrasing("facing kept", "walk without turning towards the left",
             {"direction": "forward", "lateral": None, "turn": None}),
    Phrasing("facing kept", "walk without turning your head to the left", {"direction": "forward", "lateral": None}),
    Phrasing("facing kept", "walk past the left wall without turning", {"direction": "forward", "lateral": None}),
    Phrasing("facing kept", "walk along the right edge without turning", {"direction": "forward", "lateral": None}),
    Phrasing("diagonal", "walk diagonally forward and to the right", {"direction": "forward", "lateral": "right"}),
    Phrasing("diagonal", "walk forward and to the left at 45 degrees", {"direction": "forward", "lateral": "left"}),
    Phrasing("diagonal", "step back and to the left diagonally", {"direction": "backward", "lateral": "left"}),
    Phrasing("turn on the spot", "turn left on the spot", {"turn": "left", "direction": "none", "turn_deg": 90.0}),
    Phrasing("turn on the spot", "turn around in place", {"direction": "none", "turn_deg": 180.0}),
    Phrasing("turn on the spot", "turn around", {"direction": "none", "turn_deg": 180.0}),
    Phrasing("turn on the spot", "face the other way", {"direction": "none", "turn_deg": 180.0}),
    Phrasing("turn on the spot", "turn around to the right", {"turn": "right", "direction": "none", "turn_deg": 180.0}),
    Phrasing("turn on the spot", "rotate 90 degrees to the right without moving from where you stand",
             {"turn": "right", "direction": "none", "turn_deg": 90.0}),
    Phrasing("turn on the spot", "turn around twice to the right",
             {"turn": "right", "direction": "none", "turn_deg": 360.0}),
    Phrasing("go round a thing", "turn around it", {NO_FIELD: True}),
    Phrasing("go round a thing", "turn around this corner", {NO_FIELD: True}),
    Phrasing("go round a thing", "turn around obstacles", {NO_FIELD: True}),
    Phrasing("go round a thing", "turn around each cone", {NO_FIELD: True}),
    Phrasing("turn while walking", "walk in a circle to the left", {"turn": "left", "direction": "forward"}),
    Phrasing("turn while walking", "walk forward and turn right", {"turn": "right", "direction": "forward"}),
    Phrasing("one-leg stand", "stand on your left leg", {"stance_leg": "left", "direction": "none"}),
    Phrasing("one-leg stand", "lift your right foot and hold your balance",
             {"stance_leg": "left", "direction": "none"}),
    Phrasing("one-leg stand", "balance on one foot", {"stance_leg": "either", "direction": "none"}),
    Phrasing("one-leg stand", "stand like a flamingo on the right leg", {"stance_leg": "right", "direction": "none"}),
    Phrasing("high knees", "march in place lifting your knees high",
             {"step_in_place": True, "styles": "high-knees", "direction": "none"}),
    Phrasing("high knees", "do high knees", {"styles": "high-knees", "direction": "none"}),
    Phrasing("high knees", "march forward with high knees", {"styles": "high-knees", "direction": "forward"}),
    Phrasing("jog / run", "jog forward", {"direction": "forward", "pace": "run"}),
    Phrasing("jog / run", "run as fast as you can", {"direction": "forward", "pace": "run"}),
    Phrasing("jog / run", "jog on the spot", {"step_in_place": True, "pace": "run", "direction": "none"}),
    Phrasing("hop", "hop forward on both feet", {NO_FIELD: True, "direction": "forward"}),
    Phrasing("hop", "hop on your right leg", {NO_FIELD: True}),
    Phrasing("squat", "squat down and stand back up", {NO_FIELD: True, "direction": "none"}),
    Phrasing("squat", "squat and stand up again", {NO_FIELD: True, "direction": "none"}),
    Phrasing("squat", "do ten squats", {NO_FIELD: True, "direction": "none"}),
    Phrasing("kick", "kick a ball with your right foot", {NO_FIELD: True, "direction": "none"}),
    Phrasing("kick", "stand and kick your left leg forward", {NO_FIELD: True, "direction": "none"}),
    Phrasing("tiptoes / heels", "walk on your tiptoes", {NO_FIELD: True}),
    Phrasing("tiptoes / heels", "walk forward on your heels", {NO_FIELD: True, "direction": "forward"}),
    Phrasing("step length / rate", "walk forward with long strides", {NO_FIELD: True, "direction": "forward"}),
    Phrasing("step length / rate", "walk forward taking two steps per second",
             {NO_FIELD: True, "direction": "forward"}),
    Phrasing("step length / rate", "walk forward with short quick steps",
             {"direction": "forward", "styles": "shuffle"}),
    Phrasing("sequence", "walk forward, then stop and stand still", {NO_FIELD: True}),
    Phrasing("sequence", "walk 3 metres forward and then turn left", {NO_FIELD: True}),
    Phrasing("sequence", "turn around and walk back", {NO_FIELD: True}),
    Phrasing("sequence", "turn around and walk forward", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "walk forward and turn around", {NO_FIELD: True, "direction": "forward"}),
    Phrasing("sequence", "turn around and walk backward", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "face backward and walk backward", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "turn around to the right and walk back", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "do an about-face and walk forward", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "turn left and turn around", {NO_FIELD: True, "direction": "none"}),
    Phrasing("sequence", "turn left and face the other way", {NO_FIELD: True, "direction": "none"}),
    Phrasing("ordinary", "walk forward", {"direction": "forward"}),
    Phrasing("ordinary", "walk backward at 0.5 m/s", {"direction": "backward", "speed_mps": 0.5}),
    Phrasing("ordinary", "step back", {"direction": "backward"}),
    Phrasing("ordinary", "back up slowly", {"direction": "backward", "pace": "slow"}),
    Phrasing("ordinary", "turn right while walking", {"turn": "right", "direction": "forward"}),
    Phrasing("ordinary", "walk forward with straight knees", {"direction": "forward", "straight_knees": True}),
    Phrasing("ordinary", "climb up the stairs", {"direction": "forward", "terrain": "stairs"}),
    Phrasing("ordinary", "walk slowly on rough ground", {"direction": "forward", "terrain": "rough", "pace": "slow"}),
)
"""The battery: every class the issue names, the motions the reader knows and those it does not."""


def wrong_fields(spec: TaskSpec, asks: dict[str, Any]) -> list[str]:
    """The fields asked that the spec does not hold, as 'field: read X, asked Y'. A direction 'none' asked without a
    side asks for no travel at all: a sideways reading of it is wrong too."""
    wrong = []
    if asks.get("direction") == "none" and "lateral" not in asks and spec.lateral is not None:
        wrong.append(f"lateral: read {spec.lateral!r}, asked no travel")
    for name, asked in asks.items():
        if name == NO_FIELD:
            continue
        read = getattr(spec, name)
        holds = asked in read if name == "styles" else read == asked
        if not holds:
            wrong.append(f"{name}: read {read!r}, asked {asked!r}")
    return wrong


def reading(phrasing: Phrasing) -> dict[str, Any]:
    """How the rules read a phrasing: `read`, `unread` or `misread` (see the module's docstring), with the spec's
    own line, its unread words and the fields it got wrong."""
    spec = spec_from_description(phrasing.text)
    wrong = wrong_fields(spec, phrasing.asks)
    if wrong:  # words left unread do not excuse a field read wrong
        verdict = "misread"
    elif phrasing.asks.get(NO_FIELD):
        verdict = "unread" if spec.unread else "misread"
    else:
        verdict = "unread" if spec.unread else "read"
    return {"reading": verdict, "understood": spec.describe(), "unread": list(spec.unread), "wrong": wrong}


def task_facts(text: str, body: str) -> dict[str, Any]:
    """What a run on `body` would start from and be judged by, or why the tool refuses it."""
    try:
        task = task_from_description(text, body)
    except UserError as error:
        return {"refused": str(error)}
    return {"canonical": task.canonical, "success_rule": task.success_rule(), "ground": task.scene.terrain.kind}


def run_phrasing(text: str, body: str, folder: Path) -> dict[str, Any]:
    """`rewardloop run TEXT --body BODY --preset quick` in its own process, its best motion judged as the bench
    judges it (the task's rule from the trajectory, the builtin critic)."""
    from rewardloop.bench.judge import judge_run
    from rewardloop.critic import BuiltinCritic
    from rewardloop.loop.store import RunStore

    command = [sys.executable, "-m", "rewardloop.cli", "run", text, "--body", body, "--preset", "quick",
               "--out", str(folder), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    runs = [p for p in folder.iterdir() if (p / "config.json").is_file()] if folder.is_dir() else []
    if not runs:
        return {"exit": done.returncode, "error": (done.stderr.strip().splitlines() or [""])[-1]}
    verdict = judge_run(RunStore.open(runs[0]), BuiltinCritic(), root=folder)
    keep = ("status", "stop_reason", "metric", "value", "achieved", "unchecked", "not_understood", "fell",
            "judged_score", "critic_score", "gait_met", "gait_targets", "wall_s")
    return {"exit": done.returncode, **{k: verdict[k] for k in keep if k in verdict}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bodies", nargs="+", default=["humanoid", "myolegs"])
    parser.add_argument("--run", action="store_true", help="run each phrasing on each body (minutes each)")
    parser.add_argument("--json", required=True, help="the results file written")
    args = parser.parse_args()
    command = "benchmarks/bench_phrasings.py " + " ".join(
        [f"--bodies {' '.join(args.bodies)}", *(["--run"] if args.run else []), f"--json {args.json}"])
    note = "" if args.run else "readings only (no simulation): the runs were not made, so every body's run is null"
    result: dict[str, Any] = {**provenance(command), "note": note, "bodies": args.bodies, "phrasings": []}
    with tempfile.TemporaryDirectory() as scratch:
        for number, phrasing in enumerate(PHRASINGS):
            row = {"kind": phrasing.kind, "text": phrasing.text, "asks": phrasing.asks, **reading(phrasing),
                   "tasks": {body: task_facts(phrasing.text, body) for body in args.bodies},
                   "runs": {body: run_phrasing(phrasing.text, body, Path(scratch) / f"{number}-{body}")
                            if args.run else None for body in args.bodies}}
            result["phrasings"].append(row)
            print(f"{row['reading']:8} {phrasing.text!r}: {row['understood']}", flush=True)
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n")  # every finished row kept


if __name__ == "__main__":
    run_script(main, "bench_phrasings.py")
