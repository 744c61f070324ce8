"""Command-line subcommands of rewardloop.critic, registered into `rewardloop` by cli.build_parser."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rewardloop.cli_base import AddCommand


def cmd_critique(args: argparse.Namespace) -> None:
    """Critique a saved trajectory against a description: its gait analysis against people's walking, then the
    critic's verdict (builtin: rules over physics measurements)."""
    from pathlib import Path

    from rewardloop.cli_base import scene_from_args
    from rewardloop.critic import make_critic, observe
    from rewardloop.critic.gait import format_gait_table
    from rewardloop.critic.media import Media
    from rewardloop.errors import UserError
    from rewardloop.models.cache import ResponseCache
    from rewardloop.sim.rollout import Rollouts
    from rewardloop.sim.scene import compile_scene

    scene = compile_scene(scene_from_args(args))
    rollouts = Rollouts.load(args.trajectory)
    if rollouts.state.shape[-1] != scene.nstate:
        raise UserError(f"{args.trajectory} was recorded in a different scene than {scene.scene.describe()}")
    options: dict[str, Any] = {"cache": ResponseCache(args.cache)} if args.cache else {}
    critic = make_critic(args.model, **options)
    media = Media(video=Path(args.video)) if args.video else None
    observation = observe(scene, rollouts, media)
    critique = critic.critique(args.description, scene, rollouts, media)
    if args.json:
        print(json.dumps(critique.to_dict(), indent=2))
        return
    assert observation.gait is not None  # observe analyses the gait
    print(format_gait_table(observation.gait), end="\n\n")
    print(format_critique(critique))


def format_critique(critique: Any) -> str:
    """A Critique as text: verdict and score, issues (part, time, problem), suggested reward edits, summary."""
    lines = [f"Critique by {critique.critic}: {'SUCCESS' if critique.success else 'not a success'}, "
             f"score {critique.score:.1f}/10"]
    lines += ["", "issues:", *(f"  - {issue.part}: {issue.problem}" for issue in critique.issues)] if critique.issues \
        else []
    lines += ["", "suggested reward edits:", *(
        f"  - {s.action} {s.term}" + (f" {json.dumps(s.params)}" if s.params else "") + f": {s.reason}"
        for s in critique.suggestions)] if critique.suggestions else []
    lines += [f"  (physics override: {note})" for note in critique.overrides]
    return "\n".join([*lines, "", critique.summary])


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
    from rewardloop.cli_base import scene_arguments

    critique = add("critique", cmd_critique)
    scene_arguments(critique)
    critique.add_argument("--trajectory", required=True,
                          help="a saved trajectory (.npz from rewardloop, or a candidate's trajectory folder)")
    critique.add_argument("--description", required=True, help="what the motion should be")
    critique.add_argument("--model", default="builtin", help="critic model string (see `rewardloop models`)")
    critique.add_argument("--video", help="an .mp4 of the motion, for critics that take video")
    critique.add_argument("--cache", help="response cache directory (replays identical requests at no cost)")
    critique.add_argument("--json", action="store_true", help="print only the critique as JSON")
