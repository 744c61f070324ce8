"""Make the builtin critic's calibration set: real humanoid motions, each labelled with how a person rates it as
"walk forward on flat ground" (5 = people's walk ... 0 = no walk at all).

    .venv/bin/python benchmarks/make_calibration.py --out tests/data/calibration     # about 4 minutes on 2 cores
    .venv/bin/python benchmarks/make_calibration.py --beyond --out tests/data/calibration   # beyond.json

The motions (4 s each) are made by the project itself:
- good_walk (4): the gait machine's stage-4 gait (rewardloop/control/gaits/humanoid-gait_machine.json, the
  shipped gait when this set was made) from the walking start (quick, short steps, but a walk a person recognises);
- shuffle (2): that gait with the swing knee lifting less (knee_swing 0.8 rad, from 1.3) and reaching
  bent (knee_reach 0.4, from 0.76): tiny quick steps, feet barely off the ground;
- bent_over_walk (2): the stage-7 search gait (benchmarks/results/gait_humanoid_stage7_hunched.json): meets most
  human-like joint targets but walks bent over, the trunk leaning about 40° forward;
- crouch_walk (2): policy search (find_gait.py's walking objective with its human-gait term) with the stance knee
  held at 0.7-1.0 rad (40-57°);
- stiff_knee_walk (2): policy search (the walking objective alone) with the swing knee held at 0.45-0.6 rad
  (26-34°) while lifting and at most 0.2 rad while reaching;
- kicking_walk (1): the posture MPC (MPPI) on the canonical walk reward from standing, the demo's kicking walk
  of issue 15 (`rewardloop optimize --reward walk --optimizer mppi --duration 4 --start-speed 0 --seed 0
  --threads 1`): kicks, lurches, arms flailing;
- fall (0): the gait machine's hand-set default parameters (before any search) from the walking start;
- flailing_stand (0): the posture MPC on a standing reward (height, upright, balance, no velocity) from standing,
  with the walking planner settings: it does not walk, and it does not stand either (it swings its arms, pitches its
  trunk to 76° and kicks a foot 1.2 m up).

With --beyond it makes the set beyond forward walks instead (beyond.json), labelled per description ("step in
place", "walk backward", "stand still"; `BEYOND_LABELS`): 4-s motions from standing by the gait planner on the
canonical step_in_place and walk_backward rewards (`marching`, `backward_walk`), by the posture MPC on
step_in_place (`flailing_march`: the loop's march of issue 56, arms flailing and drifting), and by the posture MPC
with the standing settings (`defaults.STANDING_PLANNERS`) on the canonical stand reward (`fidgety_stand`,
FIDGETY_STAND: up all the time, 3 steps, arms waving, the trunk pitching through 37°) and on
CALM_STAND (`calm_stand`: 1 step, a steadier trunk and quieter arms), judged beside the walk set's flailing stand,
good walk and fall.

Gait-machine motions are stored as parameter sets in motions.json (replayed by the test in about a second);
the two MPC motions as float32 states and controls (`NAME.npz`), their sensors recomputed when loaded
(`Rollouts.resensed`). The labels and the commands that made each motion are in motions.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.control.controllers.base import make_controller
from rewardloop.control.defaults import default_config, planner_for
from rewardloop.control.optimizer import optimize
from rewardloop.control.search.policy import Policy
from rewardloop.errors import run_script
from rewardloop.reward import load_reward
from rewardloop.reward.canonical import canonical
from rewardloop.reward.program import RewardProgram
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene

DESCRIPTION = "walk forward on flat ground"
DURATION_S = 4.0

STAND = '''
def height(f):
    return lib.height(f)

def upright(f):
    return lib.upright(f, part="torso")

def balance(f):
    return lib.balance(f)

def still(f):
    return lib.velocity_tracking(f, forward=0.0, lateral=0.0, sigma=0.2)

WEIGHTS = {"height": 2.0, "upright": 1.0, "balance": 3.0, "still": 1.0}
'''
"""The standing reward the `flailing_stand` motion is planned for."""

FIDGETY_STAND = canonical("stand")
"""The canonical stand reward: the `fidgety_stand`."""

CALM_STAND = FIDGETY_STAND.source.replace("WEIGHTS = {", '''def feet_down(f):
    """Both feet on the ground: the mean of the two contacts."""
    return 0.5 * (f.left_foot_contact + f.right_foot_contact)

def calm_arms(f):
    """-mean squared speed of the hands relative to the torso (m²/s²)."""
    out = 0.0
    for side in ("left", "right"):
        rel = f[side + "_hand_pos"] - f.torso_pos
        v = np.diff(rel, axis=1, prepend=rel[:, :1]) / f.dt
        out = out + np.sum(v ** 2, axis=-1)
    return -0.5 * out

def steady_trunk(f):
    """-(1 - z of the torso's up axis), about half the squared tilt (rad²)."""
    return -(1.0 - f.torso_up[..., 2])

WEIGHTS = {
    "feet_down": 1.0,
    "calm_arms": 0.5,
    "steady_trunk": 5.0,''', 1)
"""FIDGETY_STAND with both feet down, quiet hands and a steady trunk asked for, written out by hand: the `calm_stand`
(`lib.feet_down`, `lib.hands_still` and upright at 6 ask the same; steady_trunk at 5 beside upright at 1 is upright
at 6, a constant apart)."""

ROOT = Path(__file__).resolve().parent.parent
BENT_OVER = ROOT / "benchmarks/results/gait_humanoid_stage7_hunched.json"
MACHINE_GAIT = ROOT / "rewardloop/control/gaits/humanoid-gait_machine.json"
"""The gait machine's stage-4 gait, the humanoid's shipped gait when this set was made."""
"""A searched gait that walks bent over (its file holds how it was found)."""

SEARCHES = {  # name -> (label, find_gait.py options of its own)
    "crouch_walk": (2, ["--human-weight", "0.3", "--seed", "1", "--bounds", "knee_stance=0.7:1.0"]),
    "stiff_knee_walk": (2, ["--human-weight", "0", "--seed", "2", "--bounds", "knee_swing=0.45:0.6",
                            "knee_reach=0.0:0.2"]),
}
SEARCH_ARGS = ["--controller", "gait_machine", "--start", str(MACHINE_GAIT.relative_to(ROOT)), "--speed", "0.8",
               "--duration", "5", "--population", "12", "--sigma", "0.1",
               "--generations", "150", "--threads", "1"]
"""find_gait.py options both searches share (about a minute each)."""


def gait_machine_motions(searched: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The motions replayed from gait-machine parameters: shipped, changed by hand, searched, defaults."""
    scene = compile_scene(Scene("humanoid", start_speed=WALKING_START_SPEED))
    controller = make_controller("gait_machine", scene)
    shipped = controller.space.named(Policy.load(MACHINE_GAIT).vector(controller))
    rows = [("good_walk", 4, shipped, f"the gait machine's stage-4 gait ({MACHINE_GAIT.relative_to(ROOT)})"),
            ("shuffle", 2, {**shipped, "knee_swing": 0.8, "knee_reach": 0.4},
             "the stage-4 gait with knee_swing 0.8 and knee_reach 0.4"),
            ("bent_over_walk", 2, Policy.load(BENT_OVER).params, f"the gait in {BENT_OVER.relative_to(ROOT)}"),
            *((name, SEARCHES[name][0], params, " ".join(["benchmarks/find_gait.py", *SEARCH_ARGS, *SEARCHES[name][1]]))
              for name, params in searched.items()),
            ("fall", 0, controller.space.named(controller.space.default), "the gait machine's hand-set defaults")]
    return [{"name": name, "label": label, "kind": "gait_machine", "start_speed": WALKING_START_SPEED,
             "params": params, "made_by": made_by} for name, label, params, made_by in rows]


def search(name: str) -> dict[str, float]:
    """Run find_gait.py's search for one of SEARCHES; its parameters."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    find_gait = importlib.import_module("find_gait")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"{name}.json"
        find_gait.main([*SEARCH_ARGS, *SEARCHES[name][1], "--out", str(out)])
        return Policy.load(out).params


def planned(name: str, label: int, program: RewardProgram, command: str, out: Path, *,
            kind: str = "mppi", standing: bool = False) -> dict[str, Any]:
    """A motion of optimizer `kind` (the posture MPC, MPPI, by default; seed 0, one thread) from standing, stored as
    float32 states; `standing`: with the planner's settings for standing still (`defaults.planner_for`)."""
    scene = compile_scene(Scene("humanoid", start_speed=0.0))
    config = default_config(scene, kind=kind, duration_s=DURATION_S, nthread=1)
    if standing:
        config = dataclasses.replace(config, planner=planner_for("torque", "flat", standing=True))
    with load_reward(program, trusted=True) as reward:
        trajectory = optimize(scene, reward, config, seed=0)
    rollouts = trajectory.rollouts
    np.savez_compressed(out / f"{name}.npz", initial_state=rollouts.initial_state,
                        state=rollouts.state.astype(np.float32), control=rollouts.control.astype(np.float32))
    return {"name": name, "label": label, "kind": "states", "start_speed": 0.0, "file": f"{name}.npz",
            "made_by": command}


BEYOND_LABELS = {
    "step in place": {"marching": 4, "flailing_march": 0, "flailing_stand": 0, "backward_walk": 1, "good_walk": 0,
                      "fall": 0},
    "walk backward": {"backward_walk": 4, "marching": 1, "flailing_march": 0, "flailing_stand": 0, "good_walk": 0,
                      "fall": 0},
    "stand still": {"calm_stand": 4, "fidgety_stand": 2, "flailing_stand": 0, "marching": 1, "flailing_march": 0,
                    "backward_walk": 0, "good_walk": 0, "fall": 0},
}
"""How a person rates each motion as each description that is not a forward walk (5 as asked ... 0 not at all):
stepping about when asked to stand, travelling when asked to step in place, not travelling when asked to walk
backward, kicking, pitching over and falling are gross faults (0-1). The flailing march kicks to 104° of hip
flexion, bends over and falls at 3.9 s; the flailing stand tips its trunk to 76°. The calm stand is not a person's
perfect standing (its trunk pitches through 22°, a hand moves 0.31 m), hence 4."""


def beyond(out: Path) -> None:
    """The set beyond forward walks (beyond.json): motions from standing made by the gait planner (stepping in
    place, walking backward) and by the posture MPC (its flailing, drifting march), with the walk set's standing,
    good walk and fall, labelled per description."""
    plan = "rewardloop optimize --body humanoid --reward {} --optimizer plan --duration 4 --start-speed 0 --seed 0 " \
           "--threads 1"
    motions = [planned("marching", 0, canonical("step_in_place"), plan.format("step_in_place"), out, kind="plan"),
               planned("backward_walk", 0, canonical("walk_backward"), plan.format("walk_backward"), out, kind="plan"),
               planned("flailing_march", 0, canonical("step_in_place"),
                       plan.format("step_in_place").replace("plan", "mppi", 1), out),
               planned("fidgety_stand", 0, FIDGETY_STAND, "the posture MPC (mppi, standing settings, seed 0, 1 "
                       "thread) on benchmarks/make_calibration.py's FIDGETY_STAND, from standing", out, standing=True),
               planned("calm_stand", 0, RewardProgram.from_source(CALM_STAND), "the posture MPC (mppi, standing "
                       "settings, seed 0, 1 thread) on benchmarks/make_calibration.py's CALM_STAND, from standing", out,
                       standing=True)]
    for motion in motions:
        del motion["label"]
    data = {"duration_s": DURATION_S, "body": "humanoid", "terrain": "flat", "labels": BEYOND_LABELS,
            "also": "good_walk, fall and flailing_stand from motions.json", "made_by": "benchmarks/make_calibration.py "
            "--beyond", "motions": motions}
    (out / "beyond.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(motions)} motions to {out / 'beyond.json'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="tests/data/calibration", help="folder for motions.json and the .npz files")
    parser.add_argument("--beyond", action="store_true", help="make only the set beyond forward walks (beyond.json)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.beyond:
        beyond(out)
        return
    searched = {name: search(name) for name in SEARCHES}
    kick = planned("kicking_walk", 1, canonical("walk"), "rewardloop optimize --body humanoid --reward walk "
                   "--optimizer mppi --duration 4 --start-speed 0 --seed 0 --threads 1", out)
    stand = planned("flailing_stand", 0, RewardProgram.from_source(STAND), "posture MPC (mppi, seed 0, 1 thread) on "
                    "benchmarks/make_calibration.py's STAND reward, from standing", out)
    motions = [*gait_machine_motions(searched), kick, stand]
    data = {"description": DESCRIPTION, "duration_s": DURATION_S, "body": "humanoid", "terrain": "flat",
            "labels": "how a person rates each motion as the description: 5 people's walk ... 0 no walk",
            "made_by": "benchmarks/make_calibration.py", "motions": motions}
    (out / "motions.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(motions)} motions to {out}")


if __name__ == "__main__":
    run_script(main, "make_calibration.py")
