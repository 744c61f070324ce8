"""The loop against the canonical reward in a bench directory, judged without the critic.

    .venv/bin/python benchmarks/bench_rule_wins.py benchmarks/results/bench_small.json

`rewardloop bench` judges every arm with the builtin critic by default: the rules the loop's own critic optimizes
against. This reads the same bench.json and compares, seed by seed, the `loop` arm's final motion with the
`canonical` arm's by what the critic does not decide: no fall, then the task's success rule, then the human-likeness
targets met, then their shortfall, then the task metric. It prints one line per (task, body, seed) and the totals:
on how many seed pairs the loop's motion differs from the canonical one (another program and another metric
value), and on how many it is the better one. Where the loop kept the canonical program, its motion is the canonical
arm's (the same program optimized with the same seed) and neither wins.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rewardloop.errors import UserError, run_script


def rank(unit: dict[str, Any]) -> tuple[bool, bool, int, float, float]:
    """What a motion is judged by, larger better: no fall, success, targets met, -shortfall, task score."""
    return (not unit["fell"], bool(unit["achieved"]), int(unit["gait_met"]), -round(unit["gait_shortfall"], 3),
            round(unit["score"], 3))


def compare(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (task, body, seed) judged in both arms: whether the loop's motion differs and wins."""
    judged = {(u["task"], u["body"], u["arm"], u["seed"]): u for u in units if u.get("status") == "judged"}
    rows = []
    for (task, body, arm, seed), loop in sorted(judged.items()):
        base = judged.get((task, body, "canonical", seed))
        if arm != "loop" or base is None:
            continue
        same = loop["program_hash"] == base["program_hash"] or loop["value"] == base["value"]
        rows.append({"pair": f"{task}@{body}", "seed": seed, "differs": not same,  # the same program cannot win
                     "wins": not same and rank(loop) > rank(base), "loses": not same and rank(loop) < rank(base),
                     "loop": loop, "canonical": base})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_json", type=Path, help="a bench directory's bench.json")
    args = parser.parse_args()
    try:
        units = json.loads(args.bench_json.read_text())["units"]
    except (OSError, ValueError, KeyError) as error:
        raise UserError(f"{args.bench_json}: not a bench.json ({error})") from None
    rows = compare(units)
    for r in rows:
        loop, base = r["loop"], r["canonical"]
        verdict = "wins" if r["wins"] else "loses" if r["loses"] else "ties"
        print(f"{r['pair']} seed {r['seed']}: {'differs' if r['differs'] else 'the same motion'}, loop {verdict}; "
              f"loop {loop['gait_met']}/{loop['gait_targets']} targets, {loop['metric']} {loop['value']:.2f} | "
              f"canonical {base['gait_met']}/{base['gait_targets']}, {base['value']:.2f}")
    print(f"the loop's motion differs from canonical's on {sum(r['differs'] for r in rows)} of {len(rows)} seed "
          f"pairs and beats it on {sum(r['wins'] for r in rows)}")


if __name__ == "__main__":
    run_script(main, "bench_rule_wins")
