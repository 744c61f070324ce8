"""The bench's outputs: aggregates over seeds, bench.json, the markdown table (bench.md) and bench.html.

Per (pair, arm): the judged score, the task metric, successes, falls and gait targets met, as mean ± spread
(the sample standard deviation over seeds; '–' with one seed). Per arm: how often it beats `canonical` on the
judged score — on pairs (mean over seeds) and on single seeds (same seed, same pair).
"""

from __future__ import annotations

import base64
import math
from html import escape
from pathlib import Path
from typing import Any

from rewardloop.bench.arms import ARMS, BASELINE
from rewardloop.bench.runner import BenchStore
from rewardloop.loop.store import write_atomic, write_json
from rewardloop.tasks import UNITS, Task


def write_outputs(bench: BenchStore, *, html: bool = True) -> list[Path]:
    """Write bench.json, bench.md and (with `html`) bench.html from the judged units; their paths."""
    summary = summarize(bench)
    paths = [write_json(bench.path / "bench.json", summary),
             write_atomic(bench.path / "bench.md", (markdown(summary) + "\n").encode())]
    if html:
        paths.append(write_atomic(bench.path / "bench.html", page(summary, bench.path).encode()))
    return paths


def summarize(bench: BenchStore) -> dict[str, Any]:
    """bench.json: the plan's facts, every unit's verdict, per-pair aggregates and per-arm wins over canonical."""
    units = [{**(bench.judged(u) or {"task": u.pair.task_name, "body": u.pair.body, "arm": u.arm, "seed": u.seed,
                                     "status": "pending"})} for u in bench.units()]
    pairs = [_pair_summary(p.key, p.task_name, p.body, p.task, bench.arms,
                           [u for u in units if (u["task"], u["body"]) == (p.task_name, p.body)])
             for p in bench.suite.pairs]
    return {"format": bench.plan["format"], "suite": bench.suite.name, "about": bench.suite.about,
            "command": bench.plan["command"], "created": bench.plan["created"], "machine": bench.plan["machine"],
            "seeds": bench.seeds, "arms": list(bench.arms), "options": bench.plan["options"],
            "done": sum(u["status"] != "pending" for u in units), "total": len(units),
            "wall_s": round(sum(u.get("wall_s", 0.0) for u in units), 1),
            "cost_usd": sum(u.get("cost_usd", 0.0) for u in units),
            "wins": _wins(pairs, bench.arms), "pairs": pairs, "units": units}


def _pair_summary(key: str, name: str, body: str, task: Task, arms: tuple[str, ...],
                  units: list[dict[str, Any]]) -> dict[str, Any]:
    by_arm = {}
    for arm in arms:
        judged = sorted((u for u in units if u["arm"] == arm and u["status"] == "judged"), key=lambda u: u["seed"])
        by_arm[arm] = {"n": len(judged), "seeds": [u["seed"] for u in judged],
                       "judged_score": _spread([u["judged_score"] for u in judged]),
                       "score": _spread([u["score"] for u in judged]),
                       "value": _spread([u["value"] for u in judged]),
                       "gait_met": _spread([u["gait_met"] for u in judged]),
                       "gait_targets": max((u["gait_targets"] for u in judged), default=0),
                       "achieved": sum(bool(u["achieved"]) for u in judged),
                       "unchecked": sum(bool(u.get("unchecked")) for u in judged),
                       "fell": sum(bool(u["fell"]) for u in judged),
                       "no_motion": sum(u["arm"] == arm and u["status"] == "no_motion" for u in units),
                       "best_video": _best_video(judged),
                       "skipped": next((u["reason"] for u in units if u["arm"] == arm and u["status"] == "skipped"),
                                       None)}
    return {"pair": key, "task": name, "body": body, "metric": task.metric, "target": task.target, "arms": by_arm,
            "not_understood": list(task.understood.unread), "seed_wins": _seed_wins(units, arms)}


def _spread(values: list[float]) -> dict[str, float | None]:
    """Mean and sample standard deviation (None when there are fewer than 1 or 2 values)."""
    if not values:
        return {"mean": None, "std": None}
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else None
    return {"mean": mean, "std": std}


def _best_video(judged: list[dict[str, Any]]) -> str | None:
    """The video of the arm's best motion over seeds (highest judged score)."""
    ranked = sorted((u for u in judged if u.get("video")), key=lambda u: -u["judged_score"])
    return ranked[0]["video"] if ranked else None


def _seed_wins(units: list[dict[str, Any]], arms: tuple[str, ...]) -> dict[str, list[int]]:
    """Arm -> [wins, comparisons]: seeds where the arm's judged score beats canonical's on the same seed."""
    score = {(u["arm"], u["seed"]): u["judged_score"] for u in units if u["status"] == "judged"}
    wins = {}
    for arm in arms:
        if arm == BASELINE:
            continue
        seeds = [s for (a, s) in score if a == arm and (BASELINE, s) in score]
        wins[arm] = [sum(score[(arm, s)] > score[(BASELINE, s)] for s in seeds), len(seeds)]
    return wins


def _wins(pairs: list[dict[str, Any]], arms: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Arm -> pairs where its mean judged score beats canonical's (of pairs with both), and seed-level wins."""
    wins = {}
    for arm in (a for a in arms if a != BASELINE):
        compared = [p for p in pairs if p["arms"][arm]["n"] and p["arms"].get(BASELINE, {}).get("n")]
        won = [p for p in compared if p["arms"][arm]["judged_score"]["mean"]
               > p["arms"][BASELINE]["judged_score"]["mean"]]
        wins[arm] = {"pairs_won": len(won), "pairs": len(compared),
                     "seeds_won": sum(p["seed_wins"][arm][0] for p in pairs),
                     "seeds": sum(p["seed_wins"][arm][1] for p in pairs)}
    return wins


# ---- markdown ------------------------------------------------------------------------------------------------


def markdown(summary: dict[str, Any]) -> str:
    """The headline table: one row per pair, one column per arm, then wins over canonical and the legend."""
    arms = summary["arms"]
    seeds = f"{summary['seeds']} seed{'s' if summary['seeds'] > 1 else ''}"
    lines = [f"`{summary['command']}` · {summary['created']} · {summary['machine']} · {seeds} · "
             f"{summary['done']}/{summary['total']} runs done, {summary['wall_s'] / 60:.0f} min of runs, "
             f"model cost ${summary['cost_usd']:.2f}", "",
             "| task | body | " + " | ".join(arms) + " |", "|---|---|" + "---|" * len(arms)]
    for pair in summary["pairs"]:
        cells = [_cell(pair["arms"][arm], pair) for arm in arms]
        lines.append(f"| {pair['task']}{_unread_words(pair)} | {pair['body']} | " + " | ".join(cells) + " |")
    lines.append("")
    for arm, won in summary["wins"].items():
        lines.append(f"- **{arm}** beats {BASELINE} on the judged score on {won['pairs_won']} of {won['pairs']} "
                     f"pairs (seed by seed: {won['seeds_won']} of {won['seeds']}).")
    judge = summary["options"]["judge"]
    lines += ["", f"Each cell: judged score (0-10, by the {judge} judge) mean ± standard deviation over seeds; the "
              "task metric's mean ± standard deviation; successes (the task's rule) of seeds, none where the "
              "description had words not understood (the rule met there is 'unchecked'); falls; human-gait targets "
              "met (mean). " + " ".join(f"*{a}*: {ARMS[a]}." for a in arms)]
    return "\n".join(lines)


def _unread_words(pair: dict[str, Any]) -> str:
    """" (not understood: 'juggle')" after a pair's task whose description had unread words; '' otherwise."""
    from rewardloop.spec import quoted

    words = tuple(pair.get("not_understood") or ())
    return f" (not understood: {quoted(words)})" if words else ""


def _cell(arm: dict[str, Any], pair: dict[str, Any]) -> str:
    """An arm's facts on a pair: judged score, the task metric's value (and its target), successes, falls, gait."""
    if not arm["n"]:
        if arm["no_motion"]:
            return f"no motion ({arm['no_motion']} runs evaluated no candidate)"
        return f"n/a ({arm['skipped']})" if arm["skipped"] else "pending"
    score, value, gait = arm["judged_score"], arm["value"], arm["gait_met"]["mean"]
    spread = "" if score["std"] is None else f" ± {score['std']:.2f}"
    value_spread = "" if value["std"] is None else f" ± {value['std']:.2g}"
    unit = f" {UNITS.get(pair['metric'], '')}".rstrip()
    target = "" if pair["target"] is None else f" (target {pair['target']:g})"
    falls = f", {arm['fell']} fell" if arm["fell"] else ""
    unchecked = f", {arm['unchecked']} unchecked" if arm.get("unchecked") else ""
    return (f"**{score['mean']:.2f}**{spread} · {pair['metric']} {value['mean']:.3g}{value_spread}{unit}{target} · "
            f"{arm['achieved']}/{arm['n']} ok{unchecked}"
            f"{falls} · gait {gait:.1f}/{arm['gait_targets']}")


# ---- HTML ----------------------------------------------------------------------------------------------------


def page(summary: dict[str, Any], root: Path) -> str:
    """bench.html: self-contained (videos as data URIs, bars as inline SVG), in the run report's template."""
    from rewardloop.report.html import page_html

    facts = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(summary[k]))}</td></tr>"
                    for k in ("command", "created", "machine", "seeds", "about"))
    wins = "".join(f"<li><b>{escape(arm)}</b> beats {BASELINE} on {w['pairs_won']} of {w['pairs']} pairs "
                   f"(seeds: {w['seeds_won']} of {w['seeds']})</li>" for arm, w in summary["wins"].items())
    body = (f"<h1>rewardloop bench: {escape(summary['suite'])}</h1><table class='facts'>{facts}</table>"
            f"<h2>Against {BASELINE}, on the judged score</h2><ul>{wins}</ul>"
            f"<h2>Table</h2>{_html_table(summary)}"
            + "".join(_pair_section(pair, summary["arms"], root) for pair in summary["pairs"]))
    return page_html(f"rewardloop bench {summary['suite']}", body)


def _html_table(summary: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(a)}</th>" for a in summary["arms"])
    rows = "".join(f"<tr><td>{escape(p['task'])}</td><td>{escape(p['body'])}</td>"
                   + "".join(f"<td>{escape(_cell(p['arms'][a], p).replace('**', ''))}</td>"
                             for a in summary["arms"]) + "</tr>" for p in summary["pairs"])
    return f"<table class='costs'><tr><th>task</th><th>body</th>{head}</tr>{rows}</table>"


def _pair_section(pair: dict[str, Any], arms: list[str], root: Path) -> str:
    cards = "".join(_video_card(arm, pair, root) for arm in arms)
    return (f"<h2>{escape(pair['task'])} on {escape(pair['body'])}</h2>"
            f"<div class='row'>{bars_svg(pair, arms)}</div><div class='row'>{cards}</div>")


def _video_card(arm: str, pair: dict[str, Any], root: Path) -> str:
    data = pair["arms"][arm]
    video = root / data["best_video"] if data["best_video"] else None
    media = (f"<video controls muted loop playsinline src='data:video/mp4;base64,"
             f"{base64.b64encode(video.read_bytes()).decode()}'></video>" if video and video.is_file()
             else "<div class='novideo'>no video</div>")
    facts = escape(_cell(data, pair).replace("**", ""))
    return (f"<div class='card'><h3>{escape(arm)}</h3>{media}<p>{facts}</p>"
            f"<p>the video: the best of {data['n']} seed(s) by the judged score</p></div>")


def bars_svg(pair: dict[str, Any], arms: list[str]) -> str:
    """Bars of each arm's mean judged score (0-10) with a whisker of ± one standard deviation."""
    width, height, left, bottom, bar = 90 + 80 * len(arms), 200, 40, 30, 44
    scale = (height - bottom - 20) / 10.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot bars" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="judged score per arm">',
             '<text x="4" y="14" font-size="13" font-weight="bold">judged score (0-10)</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="#444"/>']
    for i, arm in enumerate(arms):
        x, score = left + 10 + 80 * i, pair["arms"][arm]["judged_score"]
        parts.append(f'<text x="{x + bar / 2}" y="{height - 10}" font-size="11" text-anchor="middle">'
                     f'{escape(arm)}</text>')
        if score["mean"] is None:
            continue
        top = height - bottom - score["mean"] * scale
        parts.append(f'<rect x="{x}" y="{top:.1f}" width="{bar}" height="{score["mean"] * scale:.1f}" '
                     f'fill="{"#888" if arm == BASELINE else "#1f77b4"}"><title>{score["mean"]:.2f}</title></rect>'
                     f'<text x="{x + bar / 2}" y="{top - 4:.1f}" font-size="11" text-anchor="middle">'
                     f'{score["mean"]:.2f}</text>')
        if score["std"]:
            low, high = (height - bottom - (score["mean"] + s) * scale for s in (-score["std"], score["std"]))
            parts.append(f'<line x1="{x + bar / 2}" y1="{low:.1f}" x2="{x + bar / 2}" y2="{high:.1f}" '
                         f'stroke="#000"/>')
    return "".join(parts) + "</svg>"


def update_readme(path: Path, summary: dict[str, Any]) -> Path:
    """Replace the text between `<!-- bench:SUITE -->` and `<!-- /bench:SUITE -->` in a README with the section."""
    return replace_section(path, f"bench:{summary['suite']}", readme_section(summary))


def replace_section(path: Path, marker: str, body: str) -> Path:
    """Replace the text between the lines `<!-- MARKER -->` and `<!-- /MARKER -->` of a file with `body`; a
    UserError unless it has one of each, in that order."""
    from rewardloop.errors import UserError

    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    text = path.read_text() if path.is_file() else ""
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise UserError(f"{path} needs one line {start} and, after it, one line {end} around the section")
    before, rest = text.split(start)
    return write_atomic(path, f"{before}{start}\n{body}\n{end}{rest.split(end)[1]}".encode())


def readme_section(summary: dict[str, Any]) -> str:
    """The README's bench section body, generated (paste it between the README's bench markers)."""
    note = f"<!-- generated by `rewardloop bench --report DIR --readme` ({summary['suite']}); not typed by hand -->"
    return f"{note}\n{markdown(summary)}"
