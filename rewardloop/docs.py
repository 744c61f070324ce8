"""The generated parts of the documentation: written from the code's own registries and the results files, never typed.

    python -m rewardloop.docs            # write docs/reference.md, the tables in docs/ and README.md, the results index
    python -m rewardloop.docs --check    # exit 1 (and name the files) when any of them is out of date

What it writes:
- `docs/reference.md`: the feature vocabulary, the reward library, the canonical rewards, tasks, metrics, bodies,
  terrains, optimizers, controllers, presets, run settings and CLI commands, from their registries and docstrings;
- the tables between `<!-- results:NAME -->` and `<!-- /results:NAME -->` in `docs/*.md` and `README.md`, each from
  one file of `benchmarks/results/` named in the table's heading with the command, commit, date and machine that
  made it; the steering tables between `<!-- steer:tables -->` markers (`rewardloop bench --suite steer --report`);
- `benchmarks/results/INDEX.md`: every results file, its provenance, and the pages and tables that show it.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import itertools
import json
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path("benchmarks/results")
"""Where the results files live, relative to the repository root."""


# --- sections between markers ------------------------------------------------------------------------------------

def fill_section(text: str, marker: str, body: str) -> str:
    """`text` with the lines between `<!-- MARKER -->` and `<!-- /MARKER -->` replaced by `body`."""
    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ValueError(f"needs one line {start} and, after it, one line {end}")
    before, rest = text.split(start)
    return f"{before}{start}\n{body}\n{end}{rest.split(end)[1]}"


def markers(text: str) -> list[str]:
    """The names of the generated sections in a page, in order (`results:NAME`, `steer:tables`)."""
    return re.findall(r"<!-- ((?:results:[\w-]+)|(?:steer:tables)) -->", text)


# --- the results tables ---------------------------------------------------------------------------------------------

def read_result(name: str, root: Path = ROOT) -> dict[str, Any]:
    """A results file by its name in benchmarks/results/."""
    return json.loads((root / RESULTS / name).read_text())


def command_of(result: dict[str, Any]) -> str:
    """The command that made a result: a script's own invocation where the file records one (`script`, `argv`),
    else its `command`."""
    if "script" in result and "argv" in result:
        return " ".join([result["script"], *map(str, result["argv"])])
    return str(result["command"])


def provenance_line(name: str, result: dict[str, Any]) -> str:
    """Which file, command, commit, date and machine a table comes from (one Markdown line)."""
    return (f"Data: `{RESULTS / name}` · command `{command_of(result)}` · commit {str(result['commit'])[:7]} · "
            f"{str(result['date'])[:10]} · {result['machine']}")


def provenance_list(names: Sequence[str], results: Sequence[dict[str, Any]]) -> list[str]:
    """One Markdown list item per results file: its provenance line only (a file's note stays in the file and in
    INDEX.md, `index_page`)."""
    return [f"- {provenance_line(name, result)}" for name, result in zip(names, results, strict=True)]


def runs_provenance(name: str, result: dict[str, Any]) -> list[str]:
    """One Markdown list item per run of a results file that holds several (`runs`): its provenance line."""
    return [f"- run {i}: {provenance_line(name, run)}" for i, run in enumerate(result["runs"])]


def _spread(values: Sequence[float | None], spec: str = ".2f") -> str:
    """'mean (min–max)' over seeds; just the value when all are equal; '–' when none is a number."""
    array = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    if not np.isfinite(array).any():
        return "–"
    low, mean, high = np.nanmin(array), np.nanmean(array), np.nanmax(array)
    return f"{mean:{spec}}" if f"{low:{spec}}" == f"{high:{spec}}" else \
        f"{mean:{spec}} ({low:{spec}}–{high:{spec}})"


def walking_table(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: one line per asked motion (`row`) over its seeds: distance, falls, speed, cadence, knee and hip
    angles, human-like gait, wall time and the controller kept."""
    lines = ["| motion | seeds | distance in 10 s (m) | falls | speed (m/s) | cadence (steps/min) | "
             "knee mid-stance / swing peak (°) | human-like | wall per motion (s) | controller |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["row"] for r in rows):
        group = [r for r in rows if r["row"] == name]
        knees = " / ".join(_spread([r[k] for r in group], ".0f") for k in ("knee_midstance", "knee_swing"))
        controllers = ", ".join(sorted({str(r.get("controller")) for r in group}))
        lines.append(f"| {name} | {len(group)} | {_spread([r['distance'] for r in group])} | "
                     f"{sum(bool(r['fell']) for r in group)} | {_spread([r['speed'] for r in group])} | "
                     f"{_spread([r['cadence'] for r in group], '.0f')} | {knees} | "
                     f"{sum(bool(r['human_like']) for r in group)}/{len(group)} | "
                     f"{_spread([r['wall_s'] for r in group], '.0f')} | {controllers} |")
    return "\n".join(lines)


def walking_section(names: Sequence[str], root: Path = ROOT, *, only: Sequence[str] = ()) -> str:
    """Per results file of bench_gait.py: its provenance line and its walking table (the rows in `only` when
    given); the file's note stays in INDEX.md."""
    parts = []
    for name in names:
        result = read_result(name, root)
        rows = [r for r in result["rows"] if not only or r["row"] in only]
        parts.append(f"**{result['body']}** — {provenance_line(name, result)}\n\n{walking_table(rows)}")
    return "\n\n".join(parts)


def steering_summary(names: Sequence[str], root: Path = ROOT) -> str:
    """Markdown: one line per steering result and body: asks moved in every seed and in most, falls, wall time."""
    lines = ["| body | optimizer | seeds | asks | moved in every seed | moved in most seeds | falls | data |",
             "|---|---|---|---|---|---|---|---|"]
    for name in names:
        result = read_result(name, root)
        optimizer = "gait planner" if "--optimizer plan" in result["command"] else "policy search"
        for body, line in result["summary"].items():
            seeds = len({r["seed"] for r in result["rows"] if r["body"] == body})
            lines.append(f"| {body} | {optimizer} | {seeds} | {line['asks']} | {line['moved_every_seed']} | "
                         f"{line['moved_most_seeds']} | {line['falls']} | `{RESULTS / name}` |")
    dates = sorted({str(read_result(n, root)["date"])[:10] for n in names})
    made = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return "\n".join(lines) + f"\n\nCommand: `rewardloop bench --suite steer --bodies BODY --seeds N --optimizer " \
                              f"plan|search --json FILE` (each file holds its own); made {made}."


def steering_tables(names: Sequence[str], root: Path = ROOT) -> str:
    """The full steering tables, as `rewardloop bench --suite steer --report FILES --readme` writes them."""
    from rewardloop.bench.steer import read_results, results_section

    section = results_section(read_results([root / RESULTS / n for n in names]))
    return section.replace(str(root) + "/", "")


def beyond_table(names: Sequence[str], root: Path = ROOT) -> str:
    """Markdown: motions that are not forward walks as the loop makes them (bench_beyond.py), one line per body and
    row over its seeds, under the provenance of each results file."""
    results = [read_result(name, root) for name in names]
    lines = [*provenance_list(names, results), "",
             "| body | motion | optimizer | seeds | falls | steps/s within 0.25 m | time within 0.25 m | "
             "backward (m) | furthest from start (m) | cadence (steps/min) | knee mid-stance (°) | wall (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = [row for result in results for row in result["rows"]]
    for body, row in dict.fromkeys((r["body"], r["row"]) for r in rows):
        group = [r for r in rows if (r["body"], r["row"]) == (body, row)]
        lines.append(f"| {body} | {row} | {group[0]['optimizer']} | {len(group)} | {sum(r['fell'] for r in group)} | "
                     f"{_spread([r['step_rate_in_place'] for r in group])} | "
                     f"{_spread([r['stay_fraction'] for r in group])} | "
                     f"{_spread([r['backward_distance'] for r in group])} | "
                     f"{_spread([r['furthest_m'] for r in group])} | {_spread([r['cadence'] for r in group], '.0f')} | "
                     f"{_spread([r['knee_midstance'] for r in group], '.0f')} | "
                     f"{_spread([r['wall_s'] for r in group], '.0f')} |")
    return "\n".join(lines)


def manipulation_table(names: Sequence[str], root: Path = ROOT) -> str:
    """Markdown: the muscle hand's object tasks (bench_manipulation.py), one line per task over its seeds, under the
    provenance of each results file."""
    results = [read_result(name, root) for name in names]
    lines = [*provenance_list(names, results), "",
             "| task | success rule | seeds met | orientation error (°) | position error (cm) | tilt (°) | dropped | "
             "wall per 5-s motion (s) |", "|---|---|---|---|---|---|---|---|"]
    for result in results:
        rows = result["rows"]
        met = f"{sum(r['achieved'] for r in rows)}/{len(rows)}"
        side = f" (to the {result['side']})" if result.get("side") == "right" else ""
        side += f" (turned {result['turn_deg']:g}°)" if result.get("turn_deg", 90.0) != 90.0 else ""
        lines.append(f"| {result['task']}{side} | {result['success_rule']} | {met} | "
                     f"{_spread([r['orientation_error_deg'] for r in rows], '.1f')} | "
                     f"{_spread([r['position_error_cm'] for r in rows], '.1f')} | "
                     f"{_spread([r['tilt_deg'] for r in rows], '.0f')} | {sum(r['dropped'] for r in rows)} | "
                     f"{_spread([r['wall_s'] for r in rows], '.0f')} |")
    return "\n".join(lines)


def motions_table(name: str, root: Path = ROOT) -> str:
    """Markdown: the motions beyond walking forward (bench_motions.py), one line per body and description over its
    seeds and run, under the provenance of each run of the file."""
    result = read_result(name, root)
    lines = runs_provenance(name, result)
    lines += ["", "| body | description | run | seeds | optimizer | success rule | met | metric | heading change (°) | "
              "hip flexion peak (°) | flight (%) | falls | critic success | critic score | wall per motion (s) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = result["rows"]
    for key in dict.fromkeys((r["body"], r["description"], r["run"]) for r in rows):
        group = [r for r in rows if (r["body"], r["description"], r["run"]) == key]
        first = group[0]
        flight = [100 * r["flight_fraction"] if "flight_fraction" in r else None for r in group]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(group)} | {first['optimizer']} | "
                     f"{first['success_rule']} | {sum(r['achieved'] for r in group)}/{len(group)} | "
                     f"{first['metric']} {_spread([r['metric_value'] for r in group])} | "
                     f"{_spread([r['heading_change_deg'] for r in group], '.0f')} | "
                     f"{_spread([r.get('hip_flexion_peak_deg') for r in group], '.0f')} | "
                     f"{_spread(flight, '.1f')} | {sum(r['fell'] for r in group)} | "
                     f"{sum(r['critic_success'] for r in group)}/{len(group)} | "
                     f"{_spread([r['critic_score'] for r in group], '.1f')} | "
                     f"{_spread([r['wall_s'] for r in group], '.0f')} |")
    return "\n".join(lines)


def fullbody_table(name: str, root: Path = ROOT) -> str:
    """Markdown: the full body's walks (bench_fullbody.py), one line per ground and run over its seeds, under the
    provenance of each run of the file."""
    result = read_result(name, root)
    lines = runs_provenance(name, result)
    lines += ["", "| ground | run | seeds | optimizer | distance in 10 s (m) | falls | hip r | knee r | "
              "hand swing against the thigh (m) | trunk pitch range (°) | cadence (steps/min) | wall per motion (s) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for index, run in enumerate(result["runs"]):
        for ground in dict.fromkeys(r["ground"] for r in run["rows"]):
            group = [r for r in run["rows"] if r["ground"] == ground]
            lines.append(f"| {ground} | {index} | {len(group)} | {group[0]['optimizer']} | "
                         f"{_spread([r['distance_m'] for r in group])} | {sum(r['fell'] for r in group)} | "
                         f"{_spread([r['hip_flexion_r'] for r in group])} | "
                         f"{_spread([r['knee_flexion_r'] for r in group])} | "
                         f"{_spread([r['arm_swing'] for r in group], '.3f')} | "
                         f"{_spread([r['trunk_pitch_range'] for r in group], '.0f')} | "
                         f"{_spread([r['cadence'] for r in group], '.0f')} | "
                         f"{_spread([r['wall_time_s'] for r in group], '.0f')} |")
    return "\n".join(lines)


def fullbody_steering_table(name: str, root: Path = ROOT) -> str:
    """Markdown: the full body's steering probes, one line per motion of each run: the ask, the gait planner's
    settings, the ask's measure before (the plain walk's, where the run made it) and after, whether it moved, the
    fall, the distance and the wall time; under the provenance of each run."""
    result = read_result(name, root)
    lines = runs_provenance(name, result)
    lines += ["", "| run | ask | planner | measure | before | after | moved | fell (at s) | distance (m) | wall (s) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for index, run in enumerate(result["runs"]):
        for r in run["rows"]:
            fell = ("yes" if r.get("fall_time_s") is None else f"{r['fall_time_s']:.1f}") if r["fell"] else "no"
            moved = {True: "yes", False: "no", None: "–"}[r.get("moved")]
            lines.append(f"| {index} | {r['ask']} | {r['planner']} | {r.get('measure') or '–'} | "
                         f"{_measure_cell(r.get('before'))} | {_measure_cell(r.get('after'))} | {moved} | {fell} | "
                         f"{_measure_cell(r.get('distance'))} | {r['wall_s']:.0f} |")
    return "\n".join(lines)


def _measure_cell(value: float | None) -> str:
    """A measure to three significant figures; '–' for none."""
    return "–" if value is None else f"{value:.3g}"


def phrasings_table(name: str, root: Path = ROOT) -> str:
    """Markdown: the phrasing battery (bench_phrasings.py), a count of its readings per class, then one line per
    phrasing: how the rules read it, what they left unread or got wrong, and each body's run (or that none was made)."""
    result = read_result(name, root)
    rows, bodies = result["phrasings"], result["bodies"]
    verdicts = ("read", "unread", "misread")
    lines = [provenance_line(name, result), "", "| class | phrasings | " + " | ".join(verdicts) + " |",
             "|---|---|---|---|---|"]
    for kind in dict.fromkeys(r["kind"] for r in rows):
        group = [r for r in rows if r["kind"] == kind]
        lines.append(f"| {kind} | {len(group)} | " + " | ".join(str(sum(r["reading"] == v for r in group))
                                                               for v in verdicts) + " |")
    lines.append(f"| all | {len(rows)} | " + " | ".join(str(sum(r["reading"] == v for r in rows))
                                                        for v in verdicts) + " |")
    lines += ["", "| class | phrasing | reading | understood | fields read wrong | "
              + " | ".join(f"run on {body}" for body in bodies) + " |", "|---|---|---|---|---|" + "---|" * len(bodies)]
    for r in rows:
        runs = " | ".join(_phrasing_run(r["runs"][body]) for body in bodies)
        lines.append(f"| {r['kind']} | {r['text']} | {r['reading']} | {_cell(r['understood'])} | "
                     f"{_cell('; '.join(r['wrong'])) or '–'} | {runs} |")
    return "\n".join(lines)


def _phrasing_run(run: dict[str, Any] | None) -> str:
    """A phrasing's run on one body in a few words: 'not run', its error, or the rule's verdict, fall and critic."""
    if run is None:
        return "not run"
    if "error" in run:
        return _cell(f"exit {run['exit']}: {run['error']}")
    verdict = "achieved" if run.get("achieved") else "unchecked" if run.get("unchecked") else "not achieved"
    fell = ", fell" if run.get("fell") else ""
    value = run.get("value", float("nan"))
    return f"{verdict}{fell}; {run.get('metric')} {value:.3g}; critic {run.get('judged_score')}"


def mpc_table(name: str, root: Path = ROOT) -> str:
    """Markdown: posture-space MPC walking per body and ground (bench_control.py's summaries)."""
    result = read_result(name, root)
    lines = [provenance_line(name, result), "",
             "| body | ground | seeds | distance in 10 s (m) | falls | wall per 10-s motion (s, max) |",
             "|---|---|---|---|---|---|"]
    for s in result["summaries"]:
        lines.append(f"| {s['body']} | {s['terrain']} | {len(s['seeds'])} | {s['distance_m_mean']:.2f} "
                     f"({s['distance_m_min']:.2f}–{s['distance_m_max']:.2f}) | {s['falls']} | "
                     f"{s['wall_s_per_10s_max']:.0f} |")
    return "\n".join(lines)


def local_server_table(names: Sequence[str], root: Path = ROOT) -> str:
    """Markdown: the loop against a small local model server (bench_local_server.py), one line per run."""
    lines = ["| server | exit code | wall (s) | iterations | data |", "|---|---|---|---|---|"]
    for name in names:
        r = read_result(name, root)
        server = r["server"] if isinstance(r["server"], str) else ", ".join(
            f"{k} {v}" for k, v in r["server"].items() if isinstance(v, str | int | float))
        iterations = "; ".join(f"{i.get('iteration', '?')}: {i.get('status', i.get('stop', ''))}"
                               for i in r.get("iterations", []) if isinstance(i, dict)) or "–"
        lines.append(f"| {server} | {r['exit_code']} | {r['wall_s']:.0f} | {iterations} | `{RESULTS / name}` |")
    provenance = [f"- {provenance_line(name, read_result(name, root))}" for name in names]
    return "\n".join(lines) + "\n\n" + "\n".join(provenance)


def calibration_table(root: Path = ROOT) -> str:
    """Markdown: the critic's calibration motions with their labels (tests/data/calibration/motions.json)."""
    data = json.loads((root / "tests/data/calibration/motions.json").read_text())
    lines = [f"Data: `tests/data/calibration/motions.json` (made by `{data['made_by']}`); labels: {data['labels']}.",
             "", "| motion | label | controller |", "|---|---|---|"]
    lines += [f"| {m['name'].replace('_', ' ')} | {m['label']} | {m.get('kind', '–')} |" for m in data["motions"]]
    beyond = json.loads((root / "tests/data/calibration/beyond.json").read_text())
    asked = list(beyond["labels"])
    lines += ["", f"Beyond forward walks: `tests/data/calibration/beyond.json` (made by `{beyond['made_by']}`), "
              "labelled per description (5 as asked ... 0 not at all; gross faults 0-1).", "",
              "| motion | " + " | ".join(asked) + " |", "|---|" + "---|" * len(asked)]
    for name in dict.fromkeys(name for labels in beyond["labels"].values() for name in labels):
        lines.append(f"| {name.replace('_', ' ')} | "
                     + " | ".join(str(beyond["labels"][a].get(name, "–")) for a in asked) + " |")
    return "\n".join(lines)


def gaits_table(root: Path = ROOT) -> str:
    """Markdown: every shipped gait with its controller, ground, where it was found from and what it measured."""
    lines = ["Data: `rewardloop/control/gaits/*.json` (each file's `found_by` and `measured`: a 10-s motion on flat "
             "ground from the walking start, made when the gait was found).", "",
             "| gait | controller | a start on | found on | found by | from | date | distance (m) | fell | human-like "
             "|",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted((root / "rewardloop/control/gaits").glob("*.json")):
        gait = json.loads(path.read_text())
        found, measured = gait.get("found_by", {}), gait.get("measured", {})
        argv = found.get("argv", [])
        argv = ast.literal_eval(argv) if isinstance(argv, str) else argv
        start = found.get("from") or next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--start", "--gait")),
                                          "–")
        metrics = measured.get("metrics", {})
        distance = f"{metrics['distance']:.2f}" if "distance" in metrics else "–"
        human = measured.get("human_like_met", {})
        lines.append(f"| `{path.name}` | {gait['controller']} | {gait.get('for_terrain') or 'every ground'} | "
                     f"{found.get('terrain', 'flat ground')} | `{Path(found.get('script', '–')).name}` | "
                     f"`{Path(str(start)).name}` | {found.get('date', '–')} | {distance} | "
                     f"{'yes' if metrics.get('fell') else 'no'} | {sum(human.values())}/{len(human)} |")
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[Path], str]] = {
    "results:walking-plan": lambda root: walking_section(
        ["walking_humanoid_plan.json", "walking_myolegs_plan.json"], root),
    "results:walking-search": lambda root: walking_section(
        ["walking_humanoid_search.json", "walking_myolegs_search.json"], root),
    "results:walking-headline": lambda root: walking_section(
        ["walking_humanoid_plan.json", "walking_myolegs_plan.json"], root, only=("walk", "rough")),
    "results:steering-headline": lambda root: steering_summary(
        ["steering_humanoid_plan.json", "steering_myolegs_plan.json", "steering_berkeley_humanoid.json",
         "steering_humanoid_search.json"], root),
    "steer:tables": lambda root: steering_tables(
        ["steering_humanoid_plan.json", "steering_myolegs_plan.json", "steering_humanoid_search.json",
         "steering_humanoid_search_four_asks.json"], root),
    "results:mpc": lambda root: mpc_table("mpc_walking.json", root),
    "results:motions": lambda root: motions_table("motions_beyond.json", root),
    "results:phrasings": lambda root: phrasings_table("phrasings.json", root),
    "results:fullbody": lambda root: fullbody_table("fullbody_walk.json", root),
    "results:fullbody-steering": lambda root: fullbody_steering_table("steering_myofullbody_probes.json", root),
    "results:manipulation": lambda root: manipulation_table(
        ["manipulation_cube-rotate.json", "manipulation_cube-rotate_right.json", "manipulation_bottle-pour.json",
         "manipulation_bottle-pour_right.json"],
        root),
    "results:beyond": lambda root: beyond_table(["beyond_forward_humanoid.json", "beyond_forward_myolegs.json"], root),
    "results:local-server": lambda root: local_server_table(
        ["local_server_gemma3_270m_ctx4096.json", "local_server_gemma3_270m_ctx2048.json"], root),
    "results:calibration": calibration_table,
    "results:gaits": gaits_table,
}
"""Every generated section by marker name -> its body, from the repository root."""


# --- the reference page -----------------------------------------------------------------------------------------

def field_docs(cls: type) -> dict[str, str]:
    """A dataclass's attribute docstrings (the string literal after each field), by field name."""
    import inspect

    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, after in itertools.pairwise(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr) \
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _cell(text: object) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def config_table(cls: type) -> str:
    """Markdown: a config dataclass's fields with their defaults and docstrings."""
    docs = field_docs(cls)
    lines = ["| field | default | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = repr(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = f"{getattr(f.default_factory, '__name__', 'factory')}()"
        else:
            default = "required"
        lines.append(f"| `{f.name}` | `{_cell(default)}` | {_cell(docs.get(f.name, ''))} |")
    return "\n".join(lines)


def cli_table() -> str:
    """Markdown: every `rewardloop` subcommand with its one-line help."""
    from rewardloop.cli import build_parser

    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = ["| command | what it does |", "|---|---|"]
    for action in actions:
        for choice in action._choices_actions:
            lines.append(f"| `rewardloop {choice.dest}` | {_cell((choice.help or '').split(chr(10))[0])} |")
    return "\n".join(lines)


def reference_page() -> str:
    """docs/reference.md: the vocabulary a reward program reads and the registries, from the code."""
    from rewardloop.control.config import SearchConfig
    from rewardloop.control.controllers.base import CONTROLLERS
    from rewardloop.control.optimizer import OPTIMIZERS
    from rewardloop.loop.config import PRESETS, RunConfig
    from rewardloop.reward.canonical import CANONICAL
    from rewardloop.reward.library import library_reference
    from rewardloop.sim.bodies import BODIES
    from rewardloop.sim.features import reference_table
    from rewardloop.sim.scene import RANDOMIZATION, Physics
    from rewardloop.sim.terrain import TERRAINS, Terrain
    from rewardloop.tasks import METRICS, TASKS

    tasks = ["| task | description | body | terrain | duration (s) | metric | success at | canonical reward |",
             "|---|---|---|---|---|---|---|---|"]
    tasks += [f"| `{t.name}` | {_cell(t.description)} | {t.scene.body} | {t.scene.terrain.kind} | {t.duration_s:g} | "
              f"{t.metric} | {t.success:g} | {f'`{t.canonical}`' if t.canonical else '–'} |" for t in TASKS.values()]
    canonical = "\n\n".join(f'??? example "`{name}`"\n\n    ```python\n' + textwrap.indent(source.strip(), "    ")
                              + "\n    ```" for name, source in CANONICAL.items())
    parts = [
        "# Reference",
        "<!-- generated by `python -m rewardloop.docs` from the code's registries and docstrings; not typed -->",
        "Everything on this page is written by `python -m rewardloop.docs` (run by `make docs`) from the code, so it "
        "cannot drift from it: a test fails when this page is out of date.",
        "## Features\n\nWhat a reward program may read: `f.NAME`, arrays of shape `[B, T, ...]` (B trajectories, "
        "T samples), and per-body scalars (`rewardloop/sim/features.py`).\n\n" + reference_table(),
        "## Library terms\n\nVetted terms a program calls as `lib.NAME(f, ...)`, each returning `[B, T]` "
        "(`rewardloop/reward/library.py`). Sign `+`: a reward; `-`: a penalty (≤ 0); both take positive weights."
        "\n\n" + library_reference(),
        "## Task metrics\n\n| metric | what it measures |\n|---|---|\n" +
        "\n".join(f"| `{name}` | {_cell(meaning)} |" for name, meaning in METRICS.items()),
        "## Tasks\n\n`rewardloop tasks` lists them; `rewardloop run --task NAME` runs one "
        "(`rewardloop/tasks.py`).\n\n" + "\n".join(tasks),
        "## Bodies\n\n| body | actuators | summary |\n|---|---|---|\n" +
        "\n".join(f"| `{b.name}` | {b.actuator_kind} | {_cell(b.summary)} |" for b in BODIES.values()),
        "## Terrains\n\nKinds: " + ", ".join(f"`{k}`" for k in TERRAINS) + " (`rewardloop/sim/terrain.py`). "
        "A terrain's settings:\n\n" + config_table(Terrain),
        "## Physics\n\nChanged physics for robustness tests (`Scene.physics`, `rewardloop/sim/scene.py`); "
        "`--randomize SEED` draws each field uniformly from its range: "
        + ", ".join(f"{k} {lo:g}–{hi:g}" for k, (lo, hi) in RANDOMIZATION.items()) + ".\n\n" + config_table(Physics),
        "## Optimizers\n\n| kind | what it is | locomotion only |\n|---|---|---|\n" +
        "\n".join(f"| `{k}` | {_cell(o.summary)} | {'yes' if o.locomotion_only else 'no'} |"
                  for k, o in OPTIMIZERS.items()),
        "## Controllers\n\n| controller | actuators | summary | module |\n|---|---|---|---|\n" +
        "\n".join(f"| `{k}` | {c.actuator_kind} | {_cell(c.summary)} | `{c.module}` |" for k, c in CONTROLLERS.items()),
        "## Run settings\n\n`RunConfig` (`rewardloop/loop/config.py`), saved as `config.json` in every run "
        "directory. Presets (`--preset`): " +
        ", ".join(f"`{name}` ({p.iterations} iterations × {p.candidates} candidates)" for name, p in PRESETS.items())
        + ".\n\n" + config_table(RunConfig),
        "## Policy search settings\n\n`SearchConfig` (`rewardloop/control/config.py`).\n\n"
        + config_table(SearchConfig),
        "## Canonical rewards\n\nThe hand-written programs tasks start from (`rewardloop/reward/canonical.py`).\n\n"
        + canonical,
        "## Commands\n\n" + cli_table(),
    ]
    return "\n\n".join(parts) + "\n"


# --- the results index ----------------------------------------------------------------------------------------

def _pages(root: Path) -> dict[str, str]:
    """Page path (relative to the root) -> its text, README.md and every docs page."""
    paths = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return {str(p.relative_to(root)): p.read_text() for p in paths if p.is_file()}


def _notes(names: Sequence[str], root: Path) -> list[str]:
    """INDEX.md's section of the shown files' notes (how each was made and read), one paragraph per file with one."""
    notes = [(name, read_result(name, root).get("note")) for name in names]
    lines = ["", "## Notes of the shown files", ""]
    return lines + [f"- `{name}`: {note}" for name, note in notes if note] if any(n for _, n in notes) else []


def index_page(root: Path = ROOT, pages: dict[str, str] | None = None) -> str:
    """benchmarks/results/INDEX.md: every results file, what made it, and where the docs show it."""
    pages = _pages(root) if pages is None else pages
    shown: dict[str, list[str]] = {}
    for marker, make in SECTIONS.items():
        body = make(root)
        for page, text in pages.items():
            if f"<!-- {marker} -->" in text:
                for name in set(re.findall(r"benchmarks/results/([\w.-]+\.json)", body)):
                    shown.setdefault(name, []).append(f"{page} (`{marker}`)")
    cited: dict[str, list[str]] = {}
    for name in (p.name for p in sorted((root / RESULTS).glob("*.json"))):
        cited[name] = [str(p.relative_to(root)) for p in sorted([*root.glob("rewardloop/control/gaits/*.json"),
                                                                   *root.glob("tests/**/*.py"),
                                                                   *root.glob("tests/data/**/*.json"),
                                                                   *root.glob("benchmarks/*.py")])
                       if name in p.read_text()]
    lines = ["# Results index", "",
             "<!-- generated by `python -m rewardloop.docs`; not typed by hand -->", "",
             "Every file in `benchmarks/results/`, what made it and where it is used. Tables in the docs are generated "
             "from these files (`python -m rewardloop.docs`, run by `make docs`); each names its file, command, "
             "commit, date and machine.", "",
             "## Shown in the docs", "", "| file | command | commit | date | machine | shown in |",
             "|---|---|---|---|---|---|"]
    for name in sorted(shown):
        r = read_result(name, root)
        r = r["runs"][-1] if "runs" in r else r  # a file of several runs: its latest
        lines.append(f"| `{name}` | `{_cell(command_of(r))}` | {str(r['commit'])[:7]} | {str(r['date'])[:10]} | "
                     f"{_cell(r['machine'])} | {'; '.join(sorted(set(shown[name])))} |")
    lines += _notes(sorted(shown), root)
    lines += ["", "## Kept because code, tests or shipped gaits name them", "",
              "Records of how the shipped gaits were found (their `found_by`), and inputs of tests and scripts.", "",
              "| file | named by |", "|---|---|"]
    for name in sorted(set(cited) - set(shown)):
        lines.append(f"| `{name}` | {', '.join(f'`{p}`' for p in cited[name]) or '–'} |")
    lines += ["", "Superseded experiments are not kept in the tree; `git log -- benchmarks/results` finds them."]
    return "\n".join(lines) + "\n"


# --- writing and checking -------------------------------------------------------------------------------------

def generated_files(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file -> its up-to-date text."""
    out: dict[Path, str] = {root / "docs/reference.md": reference_page()}
    pages = _pages(root)
    for page, text in pages.items():
        filled = text
        for marker in markers(text):
            if marker not in SECTIONS:
                raise ValueError(f"{page}: no generator for the section {marker!r}; known: {', '.join(SECTIONS)}")
            filled = fill_section(filled, marker, SECTIONS[marker](root))
        if filled != text:
            out[root / page] = filled
            pages[page] = filled
    out[root / RESULTS / "INDEX.md"] = index_page(root, pages)
    return out


def stale_files(root: Path = ROOT) -> list[Path]:
    """The generated files whose text on disk differs from what `python -m rewardloop.docs` would write."""
    return [path for path, text in generated_files(root).items()
            if not path.is_file() or path.read_text() != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rewardloop.docs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated file is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.root)
        for path in stale:
            print(f"out of date: {path.relative_to(args.root)} (run `python -m rewardloop.docs`)", file=sys.stderr)
        return 1 if stale else 0
    for path, text in generated_files(args.root).items():
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
