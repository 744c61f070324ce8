"""One self-contained HTML page per run: videos as data URIs, plots as inline SVG, no network at all.

Sections: the task and the outcome; the final reward program and its diff from the start; task metric and
critic score over iterations; a heatmap of term weights across iterations; each iteration's candidates side
by side (video, scores, the gait and its change from the program the designer edited, or an object's errors,
a PPO policy's learning curve, critique, why kept or dropped); cost and time.
"""

from __future__ import annotations

import base64
import difflib
import json
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rewardloop.critic.gait import GAIT_FACTS
from rewardloop.loop.records import CandidateRecord, CandidateStatus, IterationRecord
from rewardloop.loop.store import RunStore, write_atomic
from rewardloop.report.plots import heatmap_svg, line_plot_svg
from rewardloop.tasks import Task

REPORT_FILE = "report.html"
"""Name of the report inside a run directory."""
CURVE_POINTS = 60
"""About how many of a PPO learning curve's iterations the plot marks."""


def write_report(run_dir: Path | str, *, out: Path | str | None = None) -> Path:
    """Write the run's report (default RUN/report.html) and return its path."""
    store = RunStore.open(run_dir)
    iterations = store.iterations()
    candidates = {r.index: store.candidates(r.index) for r in iterations}
    body = "".join([
        _header(store, iterations, candidates),
        _programs(store, iterations),
        _plots(store, iterations, candidates),
        "".join(_iteration(store, r, candidates[r.index], _parent(store, iterations, r.index)) for r in iterations),
        _costs(iterations, candidates),
    ])
    page = page_html(f"rewardloop run {store.path.name}", body)
    return write_atomic(Path(out) if out else store.path / REPORT_FILE, page.encode())


def page_html(title: str, body: str) -> str:
    """A self-contained page: the report template (styles inline) around `body` (HTML) with `title` (text)."""
    template = resources.files("rewardloop.report").joinpath("template.html").read_text()
    return template.replace("{{title}}", escape(title)).replace("{{body}}", body)


def _best(store: RunStore, iterations: list[IterationRecord]) -> CandidateRecord | None:
    best = iterations[-1].best if iterations else None
    return store.candidate(*best) if best else None


def _header(store: RunStore, iterations: list[IterationRecord], candidates: dict[int, list[CandidateRecord]]) -> str:
    task, config, result = store.task, store.config, store.result()
    terrain = task["scene"]["terrain"]
    injury = ", ".join(f"{g} at {f:.0%}" for g, f in task["scene"]["injury"]) or "none"
    best = _best(store, iterations)
    state = f"stopped: {result['stop_reason']}" if result else "unfinished (resume with `rewardloop resume`)"
    duration = config.get("duration_s") or task["duration_s"]
    spec = Task.from_dict(task).understood
    rows = [("task", f"{task['name']}: {task['description']}"), ("body", task["scene"]["body"]),
            ("terrain", terrain["kind"]), ("injury", injury), ("rollout", f"{duration:g} s"),
            ("understood", spec.describe()),
            *([("not checked", f"{spec.not_checked().removeprefix('not checked: ')}: neither the critic nor the "
                               "success rule measured it, so the run does not call itself a success")]
              if spec.unread else []),
            ("success", Task.from_dict(task).success_rule()),
            ("loop", f"{len(iterations)} of {config.get('iterations')} iterations × "
                     f"{config.get('candidates')} candidates, {state}"),
            ("models", f"critic {config.get('critic')}, designer {config.get('designer')}"),
            ("executor", str(config.get("executor")))]
    if best:
        rows.append(("best", f"iteration {best.iteration}, candidate {best.index}: {Task.from_dict(task).score_name} "
                             f"{_number(best.task_score)}, critic score {_number(best.critic_score)}, "
                             f"{'fell' if best.fell else 'no fall'}"))
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows)
    return f"<h1>{escape(task['description'])}</h1><table class='facts'>{table}</table>"


def _program_text(store: RunStore, key: tuple[int, int] | None) -> str:
    if key is None:
        return ""
    path = store.candidate_dir(*key) / "program.py"
    return path.read_text() if path.is_file() else ""


def _programs(store: RunStore, iterations: list[IterationRecord]) -> str:
    if not iterations:
        return "<h2>Reward program</h2><p>No iteration has finished yet.</p>"
    start, final = _program_text(store, iterations[0].best), _program_text(store, iterations[-1].best)
    diff = list(difflib.unified_diff(start.splitlines(), final.splitlines(), "start", "final", lineterm=""))
    lines = "".join(f"<span class='{_diff_class(line)}'>{escape(line)}</span>\n" for line in diff[2:])
    diff_html = f"<pre class='diff'>{lines}</pre>" if diff else "<p>The final program is the starting one.</p>"
    return (f"<h2>Final reward program</h2><pre class='program'>{escape(final)}</pre>"
            f"<h2>Changes from the start (iteration 0's best)</h2>{diff_html}")


def _diff_class(line: str) -> str:
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")


def _plots(store: RunStore, iterations: list[IterationRecord], candidates: dict[int, list[CandidateRecord]]) -> str:
    metric = Task.from_dict(store.task).score_name
    best = [store.candidate(*r.best) if r.best else None for r in iterations]
    tried = [(c.iteration, c.task_score) for cs in candidates.values() for c in cs if c.task_score is not None]
    best_metric = [(r.index, b.task_score) for r, b in zip(iterations, best, strict=True)
                   if b and b.task_score is not None]
    scores = [(c.iteration, c.critic_score) for cs in candidates.values() for c in cs if c.critic_score is not None]
    best_score = [(r.index, b.critic_score) for r, b in zip(iterations, best, strict=True)
                  if b and b.critic_score is not None]
    metric_plot = line_plot_svg({"best": best_metric, "candidates": tried}, title=f"Task metric: {metric}",
                                x_label="iteration", y_label=metric, markers_only=("candidates",))
    score_plot = line_plot_svg({"best": best_score, "candidates": scores}, title="Critic score (0-10)",
                               x_label="iteration", y_label="score", markers_only=("candidates",))
    return (f"<h2>Progress</h2><div class='row'>{metric_plot}{score_plot}</div>"
            f"<h2>Term weights of the best program</h2>{_weight_heatmap(iterations, best)}")


def _weight_heatmap(iterations: list[IterationRecord], best: list[CandidateRecord | None]) -> str:
    terms = sorted({name for b in best if b for name in b.weights})
    if not terms:
        return "<p>No weights yet.</p>"
    values = np.full((len(terms), len(iterations)), np.nan)
    for j, record in enumerate(best):
        for i, name in enumerate(terms):
            if record and name in record.weights:
                values[i, j] = record.weights[name]
    return heatmap_svg(terms, [f"it {r.index}" for r in iterations], values,
                       title="weight per term (each row scaled to its largest |weight|; red +, blue −)")


def _parent(store: RunStore, iterations: list[IterationRecord], index: int) -> CandidateRecord | None:
    """The best candidate before iteration `index`: the one whose program the designer edited."""
    before = [r.best for r in iterations if r.index < index and r.best is not None]
    return store.candidate(*before[-1]) if before else None


def _iteration(store: RunStore, record: IterationRecord, candidates: list[CandidateRecord],
               parent: CandidateRecord | None) -> str:
    cards = "".join(_candidate(store, c, record, parent) for c in candidates)
    return (f"<h2>Iteration {record.index}: {escape(record.status.value)}</h2>"
            f"<p class='reason'>{escape(record.reason)}</p><div class='row'>{cards}</div>")


def _candidate(store: RunStore, c: CandidateRecord, iteration: IterationRecord, parent: CandidateRecord | None) -> str:
    folder = store.candidate_dir(c.iteration, c.index)
    verdict = "best" if iteration.best == c.key else ("dropped" if c.status == CandidateStatus.EVALUATED
                                                      else c.status.value)
    video = folder / "video.mp4"
    media = (f"<video controls muted loop playsinline src='data:video/mp4;base64,"
             f"{base64.b64encode(video.read_bytes()).decode()}'></video>" if video.is_file()
             else "<div class='novideo'>no video</div>")
    task = Task.from_dict(store.task)
    fall = "dropped the object" if task.manipulation else "fell"
    facts = (f"<p>{escape(task.score_name)} {_number(c.task_score)} · critic {_number(c.critic_score)}"
             f"{_success_tag(c, task)}{f' · <b>{fall}</b>' if c.fell else ''}</p>"
             f"{_object_facts(c) if task.manipulation else _gait_facts(c, parent)}")
    return (f"<div class='card {verdict}'><h3>candidate {c.index} <span class='tag'>{verdict}</span></h3>{media}"
            f"{facts}{f'<p class=same>{escape(c.unchanged)}</p>' if c.unchanged else ''}{_learning_curve(folder)}"
            f"{_critique(folder)}"
            f"<details><summary>designer's rationale</summary>"
            f"<p>{escape(c.rationale)}</p></details>"
            f"{f'<p class=error>{escape(c.error)}</p>' if c.error else ''}</div>")


def _learning_curve(folder: Path) -> str:
    """A PPO candidate's learning curve (trajectory/policy/curve.json): its mean step reward over env steps, and
    where it ended; nothing for other optimizers."""
    path = folder / "trajectory" / "policy" / "curve.json"
    try:
        curve = json.loads(path.read_text())
        shown = curve[:: max(1, len(curve) // CURVE_POINTS)]  # a 5-minute training has about 600 iterations
        points = [(float(r["env_steps"]), float(r["reward"])) for r in shown]
        last = curve[-1]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return ""
    plot = line_plot_svg({"mean step reward": points}, title="PPO learning curve", x_label="env steps",
                         y_label="reward")
    return (f"<div class='curve'>{plot}<p>{len(curve)} PPO iterations, {last['env_steps']} env steps; last rollout "
            f"{last['speed']:.2f} m/s, {last['falls']} falls</p></div>")


def _success_tag(c: CandidateRecord, task: Task) -> str:
    """' · success' for the critic's success verdict; with parts of the description not understood, it covers only
    what was, and says so."""
    if not c.success:
        return ""
    return " · success on what was understood (unchecked)" if task.understood.unread else " · success"


def _gait_facts(c: CandidateRecord, parent: CandidateRecord | None) -> str:
    """The motion's gait measures, one line, each with its change from the parent's (the candidate whose program
    the designer edited): what the edit did to the motion."""
    shown = []
    for name, label, unit, factor in GAIT_FACTS:
        if name not in c.gait:
            continue
        value = c.gait[name] * factor
        change = (f" ({value - parent.gait[name] * factor:+.{_digits(unit)}f})"
                  if parent is not None and name in parent.gait else "")
        shown.append(f"{label} {value:.{_digits(unit)}f} {unit}{change}")
    if not shown:
        return ""
    against = (f" (±: change from iteration {parent.iteration} candidate {parent.index}, the program edited)"
               if parent is not None else "")
    return f"<p class='gait'>{escape(f'gait{against}: ' + ' · '.join(shown))}</p>"


def _digits(unit: str) -> int:
    return 2 if unit == "leg lengths" else 0


OBJECT_FACTS = (("object_position_error_cm", "position error", "cm"), ("object_orientation_error_deg",
                "orientation error", "°"), ("object_tilt_deg", "tilt", "°"), ("object_turn_deg", "turn", "°"),
                ("time_at_goal_s", "at goal", "s"))
"""An object task's metrics shown on each candidate: (metric, label, unit)."""


def _object_facts(c: CandidateRecord) -> str:
    """The object's errors at the end of a candidate's motion, one line."""
    metrics = c.metrics or {}
    shown = [f"{label} {_number(metrics.get(name))} {unit}" for name, label, unit in OBJECT_FACTS]
    return f"<p class='object'>{escape(' · '.join(shown))}</p>"


def _critique(folder: Path) -> str:
    path = folder / "critique.json"
    if not path.is_file():
        return ""
    critique: dict[str, Any] = json.loads(path.read_text())
    issues = "".join(f"<li><b>{escape(str(i.get('part', '')))}</b>: {escape(str(i.get('problem', '')))}</li>"
                     for i in critique.get("issues", []))
    return (f"<p class='critique'>{escape(str(critique.get('summary', '')))}</p>"
            f"{f'<ul>{issues}</ul>' if issues else ''}")


def _costs(iterations: list[IterationRecord], candidates: dict[int, list[CandidateRecord]]) -> str:
    rows = []
    for r in iterations:
        compute = sum(c.timings.get("optimize", 0.0) for c in candidates[r.index])
        rows.append(f"<tr><td>{r.index}</td><td>{len(candidates[r.index])}</td><td>{r.tokens}</td>"
                    f"<td>${r.cost_usd:.4f}</td><td>{compute:.1f}</td><td>{r.wall_s:.1f}</td></tr>")
    total_cost = sum(r.cost_usd for r in iterations)
    total_wall = sum(r.wall_s for r in iterations)
    return ("<h2>Cost and time</h2><table class='costs'><tr><th>iteration</th><th>candidates</th><th>tokens</th>"
            "<th>model cost</th><th>optimizer s (sum over candidates)</th><th>wall s</th></tr>"
            f"{''.join(rows)}<tr><th>total</th><td></td><td>{sum(r.tokens for r in iterations)}</td>"
            f"<td>${total_cost:.4f}</td><td></td><td>{total_wall:.1f}</td></tr></table>")


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
