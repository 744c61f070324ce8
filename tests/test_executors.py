"""Executors: real MuJoCo jobs in local worker processes and in Ray; killed and crashing workers fail alone."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from rewardloop.errors import UserError
from rewardloop.loop.executors import Job, LocalExecutor, RayExecutor, make_executor


def rollout_job(payload: dict, directory: Path, report) -> dict:
    """Roll the humanoid out under random controls (seeded) and save the trajectory."""
    from rewardloop.sim.rollout import Simulator, random_controls
    from rewardloop.sim.scene import Scene, compile_scene

    scene = compile_scene(Scene("humanoid"))
    report({"fraction": 0.5})
    with Simulator(scene, nthread=1) as sim:
        rollouts = sim.open_loop(random_controls(scene, 1, payload["steps"], seed=payload["seed"]))
    directory.mkdir(parents=True, exist_ok=True)
    rollouts.save(directory / "trajectory.npz")
    return {"final_height": float(rollouts.features(scene).root_height[0, -1])}


def killed_job(payload: dict, directory: Path, report) -> dict:
    """Dies as a worker killed by the kernel would: SIGKILL, no answer."""
    report({"fraction": 0.1})
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def failing_job(payload: dict, directory: Path, report) -> dict:
    raise RuntimeError("reward exploded\nsecond line")


def _jobs(tmp_path: Path, seeds: list[int]) -> list[Job]:
    return [Job(key=seed, directory=tmp_path / f"job{seed}", payload={"steps": 40, "seed": seed}) for seed in seeds]


def test_local_executor_runs_jobs_in_parallel_processes(tmp_path):
    done, progress = [], []
    outcomes = LocalExecutor(workers=2).run(rollout_job, _jobs(tmp_path, [0, 1, 2]), on_done=done.append,
                                            on_progress=lambda key, fields: progress.append(key))
    assert [o.key for o in outcomes] == [0, 1, 2] and all(o.ok for o in outcomes)
    assert sorted(o.key for o in done) == [0, 1, 2]  # each reported once, as it finished
    assert sorted(progress) == [0, 1, 2]
    for seed in (0, 1, 2):
        assert (tmp_path / f"job{seed}" / "trajectory.npz").is_file()
    # Different seeds, different motions; the same seed in this process gives the same motion (deterministic).
    heights = [o.value["final_height"] for o in outcomes]
    assert len(set(heights)) == 3
    assert heights[1] == rollout_job({"steps": 40, "seed": 1}, tmp_path / "here", lambda fields: None)["final_height"]


def test_a_killed_or_crashing_worker_fails_only_its_own_job(tmp_path):
    jobs = [Job("killed", tmp_path / "k", {}), Job("fine", tmp_path / "f", {"steps": 20, "seed": 0}),
            Job("raises", tmp_path / "r", {})]
    functions = {"killed": killed_job, "fine": rollout_job, "raises": failing_job}
    outcomes = {}
    for job in jobs:  # one executor call per function; the killed worker must not take the others down
        (outcome,) = LocalExecutor(workers=2).run(functions[job.key], [job])
        outcomes[job.key] = outcome
    assert not outcomes["killed"].ok and "SIGKILL" in outcomes["killed"].error
    assert outcomes["fine"].ok and (tmp_path / "f" / "trajectory.npz").is_file()
    assert not outcomes["raises"].ok and outcomes["raises"].error == "RuntimeError: reward exploded"


def test_killed_worker_among_running_jobs(tmp_path):
    # A job function that kills itself for one seed only, run beside healthy ones in the same call.
    jobs = _jobs(tmp_path, [0, 7, 1])
    outcomes = LocalExecutor(workers=2).run(kill_seed_seven, jobs)
    assert [o.ok for o in outcomes] == [True, False, True]
    assert "SIGKILL" in outcomes[1].error


def kill_seed_seven(payload: dict, directory: Path, report) -> dict:
    if payload["seed"] == 7:
        os.kill(os.getpid(), signal.SIGKILL)
    return rollout_job(payload, directory, report)


def test_timeout_kills_a_stuck_worker(tmp_path):
    (outcome,) = LocalExecutor(workers=1, timeout_s=0.5).run(sleeping_job, [Job("s", tmp_path, {})])
    assert not outcome.ok and outcome.error == "timed out after 0.5 s"


def sleeping_job(payload: dict, directory: Path, report) -> dict:
    import time

    time.sleep(60)
    return {}


def test_unknown_executor_lists_choices():
    with pytest.raises(UserError, match="choose one of: local, ray"):
        make_executor("slurm")


def test_ray_gives_the_same_results_as_local(tmp_path):
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers cannot import tests/
    local = LocalExecutor(workers=2).run(rollout_job, _jobs(tmp_path / "local", [3, 4]))
    executor = RayExecutor(num_cpus=2)
    try:
        remote = executor.run(rollout_job, _jobs(tmp_path / "ray", [3, 4]))
    finally:
        executor.close()
    assert [o.value for o in remote] == [o.value for o in local]
    for seed in (3, 4):  # the files came back from the Ray workers into the job directories
        with np.load(tmp_path / "local" / f"job{seed}" / "trajectory.npz") as a, \
                np.load(tmp_path / "ray" / f"job{seed}" / "trajectory.npz") as b:
            np.testing.assert_array_equal(a["state"], b["state"])


def cleanup_job(payload: dict, directory: Path, report) -> dict:
    """Holds a scratch file that only its `finally` removes, as the sandbox holds its temporary directory."""
    import time

    marker = directory / "scratch"
    directory.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(os.getpid()))
    try:
        time.sleep(60)
    finally:
        marker.unlink()
    return {}


def test_a_stopped_worker_runs_its_cleanup(tmp_path):
    # The timeout stops the worker with SIGTERM, which the worker turns into SystemExit: `finally` runs.
    (outcome,) = LocalExecutor(workers=1, timeout_s=1.0).run(cleanup_job, [Job("c", tmp_path / "c", {})])
    assert not outcome.ok and "timed out" in outcome.error
    assert not (tmp_path / "c" / "scratch").exists()


def quick_job(payload: dict, directory: Path, report) -> dict:
    import time

    time.sleep(payload["sleep"])
    return {"slept": payload["sleep"]}


def test_a_failing_on_done_lets_running_jobs_finish_then_raises(tmp_path):
    # Jobs a (0.1 s) and b (1.5 s) run at once; on_done raises for a. b still finishes and is handed to
    # on_done; c (pending) never starts; then the error comes out.
    seen = []

    def on_done(outcome):
        seen.append(outcome.key)
        if outcome.key == "a":
            raise RuntimeError("critic down")

    jobs = [Job("a", tmp_path, {"sleep": 0.1}), Job("b", tmp_path, {"sleep": 1.5}), Job("c", tmp_path, {"sleep": 0})]
    with pytest.raises(RuntimeError, match="critic down"):
        LocalExecutor(workers=2).run(quick_job, jobs, on_done=on_done)
    assert seen == ["a", "b"]


ORPHAN_PARENT = """
import sys
from pathlib import Path
from tests.test_executors import cleanup_job
from rewardloop.loop.executors import Job, LocalExecutor
LocalExecutor(workers=1).run(cleanup_job, [Job("o", Path(sys.argv[1]), {})])
"""


def test_workers_die_with_a_killed_parent(tmp_path):
    import subprocess
    import time

    parent = subprocess.Popen([sys.executable, "-c", ORPHAN_PARENT, str(tmp_path)], cwd=Path(__file__).parent.parent)
    marker = tmp_path / "scratch"
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert parent.poll() is None and time.monotonic() < deadline, "the worker never started"
        time.sleep(0.05)
    worker = int(marker.read_text())
    parent.kill()  # SIGKILL: the parent runs no cleanup of its own
    parent.wait()
    deadline = time.monotonic() + 10
    while marker.exists() and time.monotonic() < deadline:  # the worker unwinds: its finally removes it
        time.sleep(0.05)
    assert not marker.exists()
    time.sleep(0.5)
    assert _gone_or_zombie(worker)  # an exited orphan is a zombie until whoever adopted it reaps it


def _gone_or_zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")
