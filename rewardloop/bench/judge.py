"""One judgement of a finished run's best motion, the same for every arm.

The judge measures the task metric, the task's success rule (`Task.achieved`), the fall, the gait analysis
against human walking (`analyze_gait`, the human-like targets of `critic.likeness`), and scores the motion with a
critic: the builtin rules by default, or a model that is not the arm's critic. Its verdict is a plain dict,
stored as `judged.json` beside the run. A task whose description had words its spec did not read
(`TaskSpec.unread`) is never achieved: what they ask was not measured, so meeting the rule is 'unchecked', as the
loop's own stop is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardloop.errors import UserError
from rewardloop.loop.store import RunStore

JUDGED_FILE = "judged.json"
"""The judgement of one (pair, arm, seed), next to its run directory; its presence means the unit is done."""


def make_judge(model: str, *, critic: str, cache: Path) -> Any:
    """The critic that judges every arm: `model` ('builtin' or a model string), never the arms' own model critic.
    Its calls are journaled and cached beside `cache`, so a resumed bench replays them at no cost."""
    from rewardloop.critic import make_critic
    from rewardloop.models.accounting import Ledger
    from rewardloop.models.cache import ResponseCache

    if model != "builtin" and model == critic:
        raise UserError(f"the judge must not be the loop's critic ({critic}); pass another --judge, or builtin")
    return make_critic(model, ledger=Ledger(journal=cache.parent / "judge_calls.jsonl"), cache=ResponseCache(cache))


def judge_run(store: RunStore, judge: Any, *, root: Path) -> dict[str, Any]:
    """The judgement of a finished run's best motion (paths relative to `root`, the bench directory).

    A run that evaluated no candidate gives {"status": "no_motion"}."""
    from rewardloop.control.trajectory import Trajectory
    from rewardloop.critic import observe
    from rewardloop.critic.gait import analyze_gait
    from rewardloop.critic.likeness import met, shortfall
    from rewardloop.critic.media import Media
    from rewardloop.loop.candidate import TRAJECTORY_DIR, VIDEO_FILE
    from rewardloop.sim.scene import compile_scene
    from rewardloop.tasks import Task

    result = store.result() or {}
    facts = _run_facts(store, root, result)
    if not result.get("best"):
        return {**facts, "status": "no_motion"}
    key = (int(result["best"][0]), int(result["best"][1]))
    task, folder = Task.from_dict(store.task), store.candidate_dir(*key)
    record = store.candidate(*key)
    trajectory = Trajectory.load(folder / TRAJECTORY_DIR)
    scene = compile_scene(task.scene)
    video = folder / VIDEO_FILE
    observation = observe(scene, trajectory, Media(video=video if video.is_file() else None))
    critique = judge.critique(task.description, scene, trajectory, observation.media, spec=task.understood)
    gait = None if task.manipulation else observation.gait or analyze_gait(observation.features)
    targets = {name: bool(value[0]) for name, value in met(gait).items()} if gait is not None else {}
    metrics = trajectory.metrics
    return {**facts, "status": "judged", "best": list(key), "program_hash": record.program_hash if record else None,
            "metric": task.metric, "value": task.value(metrics), "target": task.target,
            "score": task.score(metrics), **success_facts(task, metrics),
            "fell": bool(metrics.fell), "gait_met": sum(targets.values()), "gait_targets": len(targets),
            "gait_missed": sorted(n for n, ok in targets.items() if not ok),
            "gait_shortfall": float(shortfall(gait)[0]) if gait is not None else None,
            "judged_score": float(critique.score), "judge": critique.critic or judge.name,
            "critic_score": record.critic_score if record else None,
            "video": str(video.relative_to(root)) if video.is_file() else None}


def success_facts(task: Any, metrics: Any) -> dict[str, Any]:
    """Whether a motion (its `metrics`, a TaskMetrics) achieved a `task` (a Task): 'achieved' only where the rule is
    met and the whole description was read; 'unchecked' where the rule is met but words were not understood, listed
    in 'not_understood' (whatever the motion did)."""
    met, unread = task.achieved(metrics), list(task.understood.unread)
    return {"achieved": met and not unread, "unchecked": met and bool(unread), "not_understood": unread}


def _run_facts(store: RunStore, root: Path, result: dict[str, Any]) -> dict[str, Any]:
    """Where the run is and what it cost: iterations, wall time (s), model cost (USD), stop reason."""
    done = store.iterations()
    return {"run": str(store.path.relative_to(root)), "iterations": len(done),
            "wall_s": round(sum(r.wall_s for r in done), 2), "cost_usd": float(result.get("cost_usd", 0.0)),
            "stop_reason": result.get("stop_reason")}
