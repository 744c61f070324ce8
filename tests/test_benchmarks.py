"""The benchmark scripts run end to end on tiny budgets and write the figures they promise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_control_benchmark_runs_every_seed_and_writes_json(tmp_path):
    out = tmp_path / "control.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_control.py"), "--bodies", "humanoid",
                    "--terrains", "flat", "--duration", "0.05", "--seeds", "0", "1", "--json", str(out)],
                   check=True, timeout=300, capture_output=True)
    figures = json.loads(out.read_text())
    assert [row["seed"] for row in figures["results"]] == [0, 1]
    (summary,) = figures["summaries"]
    assert summary["seeds"] == [0, 1] and summary["falls"] == 0
    for row in figures["results"]:
        assert row["efficiency"] > 0 and row["wall_s"] > 0 and not row["fell"]


def test_fidelity_benchmark_agrees_perfectly_with_the_bodys_own_step(tmp_path):
    out = tmp_path / "fidelity.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_fidelity.py"), "--body", "myolegs",
                    "--settings", "0.002:0.008", "0.004:0.008", "--times", "0", "--json", str(out)],
                   check=True, timeout=300, capture_output=True)
    same, coarse = json.loads(out.read_text())["rows"]
    assert same["planning_dt"] == 0.002 and same["spearman"] == 1.0 and same["top_shared"] == same["top"]
    assert coarse["planning_dt"] == 0.004 and -1.0 <= coarse["spearman"] < 1.0


def test_benchmark_bad_input_is_one_line_and_exit_code_2():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_control.py"), "--bodies", "robot",
                             "--samples", "8", "--duration", "0.05"], timeout=120, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "bench_control: error: unknown body 'robot'; choose one of: berkeley_humanoid, humanoid, myofullbody, "
        "myohand, myolegs, unitree_g1"]


def test_find_gait_writes_a_gait_file_with_its_lineage(tmp_path):
    # One generation of four from the shipped gait over 0.2-s trials on rough ground (two bump patterns): the file
    # holds the parameters, the command, the objective, the ground and the shipped gait's own lineage
    # (found_by.previous), and what the gait measured over 10 s on flat ground.
    out = tmp_path / "gait.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--generations", "1",
                    "--population", "4", "--duration", "0.2", "--flat-foot", "5", "--terrain", "rough",
                    "--terrain-seeds", "11", "--grounds", "slope:3", "--target", "max_hip_flexion_deg=35",
                    "cadence=95:125", "--human-first", "--out", str(out)], check=True, timeout=300,
                   capture_output=True)
    gait = json.loads(out.read_text())
    assert gait["found_by"]["human_first"]  # the human-gait term held as a constraint
    assert gait["controller"] == "gait_tracker" and gait["body"] == "humanoid"
    assert gait["found_by"]["generations"] == 1 and gait["found_by"]["previous"]["script"] == "benchmarks/find_gait.py"
    assert gait["measured"]["metrics"]["duration"] > 9.9 and set(gait["measured"]["human_like_met"]) >= {"cadence"}
    assert '"flat_foot": 5.0' in gait["found_by"]["objective"]  # the objective as run, with --flat-foot's term
    targets = gait["found_by"]["human_targets"]  # the human-like targets the search aimed at, --target's applied
    assert targets["max_hip_flexion_deg"] == 35.0 and targets["cadence"] == [95.0, 125.0]
    assert targets["max_trunk_lean_deg"] == 10.0
    # (the start + 4 candidates) × (the scene's own rough ground + bump pattern 11 + a 3° slope) = 15 runs
    assert gait["found_by"]["terrain"].startswith("rough") and gait["found_by"]["evaluations"] == (1 + 4) * 3


def test_gait_benchmark_row_and_robustness(tmp_path):
    out = tmp_path / "gait.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gait.py"), "--rows", "walk", "--seeds", "0",
                    "--generations", "1", "--robust-seeds", "1", "--json", str(out)],
                   check=True, timeout=300, capture_output=True)
    figures = json.loads(out.read_text())
    (row,) = figures["rows"]
    assert row["row"] == "walk" and row["distance"] > 0 and 0 < row["wall_s"] < 120
    assert row["receding"] is None  # the planner runs only where the ground asks for it (or --receding-rows)
    (robust,) = figures["robustness"]
    assert 0 <= robust["rough"] <= 1 and 0 <= robust["physics"] <= 1


def test_gait_benchmark_replays_a_gait_file_without_search(tmp_path):
    # The shipped humanoid gait replayed on the four grounds with one unseen rough ground, one physics draw and
    # one noise draw: deterministic replays, so flat ground gives exactly the distance the gait file measured.
    out = tmp_path / "replay.json"
    policy = ROOT / "rewardloop" / "control" / "gaits" / "humanoid.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gait.py"), "--policy", str(policy),
                    "--robust-seeds", "1", "--json", str(out)], check=True, timeout=300, capture_output=True)
    figures = json.loads(out.read_text())
    assert [row["row"] for row in figures["rows"]] == ["walk", "rough", "slope 5°", "stairs"]
    walk = figures["rows"][0]
    assert walk["distance"] == json.loads(policy.read_text())["measured"]["metrics"]["distance"]
    (robust,) = figures["robustness"]
    assert {robust["rough"], robust["physics"], robust["noise_3pct"]} <= {0.0, 1.0}
    assert robust["pushes"] * 20 == round(robust["pushes"] * 20) and robust["distance_30s"] > walk["distance"]


def test_gait_benchmark_robustness_with_the_receding_horizon_planner(monkeypatch):
    # Unseen rough ground 104: the humanoid's flat-trained main gait falls there at 2.4 s as found and walks 10 s
    # with the planner; physics draw 204 fells it either way.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bench_gait import _reward, robustness

    from rewardloop.control.search.policy import shipped_gait

    rates = robustness(shipped_gait("humanoid"), "humanoid", seeds=[4], receding=_reward("walk"))
    assert rates == {"rough": 0.0, "rough_receding": 1.0, "physics": 0.0, "physics_receding": 0.0}


def test_gait_benchmark_push_trials_are_the_replays_pushes_batched(monkeypatch):
    # The 20 push trials run as one batch give what `rewardloop replay --push T:V` gives trial by trial.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bench_gait import PUSH_SPEEDS, PUSH_TIMES_S, push_survival

    from rewardloop.control.controllers.base import make_controller
    from rewardloop.control.metrics import batch_metrics
    from rewardloop.control.search.cmaes import pushed_motion
    from rewardloop.control.search.policy import shipped_gait
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene

    policy = shipped_gait("humanoid")
    scene = compile_scene(Scene("humanoid", start_speed=WALKING_START_SPEED))
    controller = make_controller(policy.controller, scene)
    with Simulator(scene) as sim:
        walked = [not batch_metrics(pushed_motion(sim, controller, policy.vector(controller), duration_s=10.0,
                                                  pushes=[(at, speed)]).features(scene))[0].fell
                  for at in PUSH_TIMES_S for speed in PUSH_SPEEDS]
    assert 0 < sum(walked) < len(walked)  # the pushes matter: some trials fall, some walk on
    assert push_survival(policy) == sum(walked) / len(walked)


def test_gait_benchmark_push_trials_with_the_receding_horizon_planner(monkeypatch):
    # One trial, the humanoid's main gait kicked 0.1 m/s to the left at 5 s: it falls at 7.4 s as found and walks
    # on with the planner pursuing the canonical walk.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_gait

    from rewardloop.control.search.policy import shipped_gait

    monkeypatch.setattr(bench_gait, "PUSH_TIMES_S", (5.0,))
    monkeypatch.setattr(bench_gait, "PUSH_SPEEDS", (0.1,))
    policy = shipped_gait("humanoid")
    assert bench_gait.push_survival(policy) == 0.0
    assert bench_gait.push_survival(policy, bench_gait._reward("walk")) == 1.0


def test_receding_benchmark_replays_a_gait_as_found_and_with_the_planner(tmp_path):
    out = tmp_path / "receding.json"
    policy = ROOT / "rewardloop" / "control" / "gaits" / "humanoid.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_receding.py"), "--policy", str(policy),
                    "--grounds", "1", "--seeds", "0", "--json", str(out)], check=True, timeout=300,
                   capture_output=True)
    figures = json.loads(out.read_text())
    found, planned = figures["summary"]
    assert found["planner"] == "as found" and planned["planner"] == "receding, seed 0"
    assert (found["rough_walked"], planned["rough_walked"], found["rough_grounds"]) == (0, 1, 1)  # ground 100
    assert found["flat_distance"] == json.loads(policy.read_text())["measured"]["metrics"]["distance"]
    assert len(figures["replays"]) == 4  # flat and one rough ground, each both ways


def test_find_gait_validate_writes_the_gait_that_walked_the_validation_grounds_best(tmp_path, monkeypatch):
    # One generation of four over 0.2-s trials on flat ground plus a fresh rough one, from the shipped rough gait;
    # --validate 2 --validate-human: the start and the search's best are walked 10 s on rough grounds 500 and 501
    # and 10 s on flat ground, and the file holds the one meeting most human-like targets, then walking most
    # grounds, with every validation made and each offered gait's parameters (the written one's among them);
    # replaying the written gait reproduces its validation, the targets it missed named.
    out = tmp_path / "gait.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--generations", "1",
                    "--population", "4", "--duration", "0.2", "--sigma", "0.3", "--fresh-grounds", "1",
                    "--start", str(ROOT / "rewardloop/control/gaits/humanoid-rough.json"), "--validate", "2",
                    "--validate-human", "--out", str(out)], check=True, timeout=300, capture_output=True)
    found = json.loads(out.read_text())["found_by"]["validation"]
    offered = found.pop("offered")
    assert found["seeds"] == [500, 501] and found["roughness"] == 0.04 and len(offered) == 2
    assert found == max(offered, key=lambda v: (v["human_like_met"], v["walked"], v["distance"]))
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from find_gait import measure, validation

    from rewardloop.control.controllers.base import make_controller
    from rewardloop.control.search.policy import Policy
    from rewardloop.sim.scene import Scene, compile_scene
    start = Policy.load(ROOT / "rewardloop/control/gaits/humanoid-rough.json")
    for policy, result in ((Policy.load(out), found), (start, offered[0])):
        vector = policy.vector(make_controller(policy.controller, compile_scene(Scene("humanoid"))))
        human = measure(policy.controller, "humanoid", vector)["human_like_met"]
        assert {**validation(policy.controller, "humanoid", vector, 2, 0.04), "human_like_met": sum(human.values()),
                "human_like_missed": [name for name, ok in human.items() if not ok],
                "params": vector.tolist()} == result


def test_find_gait_validates_each_offered_gait_once(monkeypatch):
    # A checkpoint offers the search's best so far; offered again (the search found nothing better since), it is
    # not walked again, whether it was kept or not.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import find_gait

    walks = []

    def walked(_kind, _body, vector, _count, _roughness):
        walks.append(vector[0])
        return {"walked": int(vector[0]), "distance": 1.0}

    monkeypatch.setattr(find_gait, "validation", walked)
    validated = find_gait.Validated("gait_tracker", "humanoid", 2, 0.04)
    kept = [validated.offer(np.array([float(v)])) for v in (2, 1, 1, 2, 3, 1)]
    assert walks == [2.0, 1.0, 3.0] and [k[0] for k in kept] == [2.0, 2.0, 2.0, 2.0, 3.0, 3.0]


def test_find_gait_bad_target_is_one_line_and_exit_code_2(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--target", "max_hip=30",
                             "--out", str(tmp_path / "gait.json")], timeout=120, capture_output=True, text=True)
    assert result.returncode == 2 and not (tmp_path / "gait.json").exists()
    assert result.stderr.strip().splitlines() == ["find_gait.py: error: --target: unknown target 'max_hip'; known: "
                                                  "min_correlation, max_knee_midstance_deg, knee_swing_deg, "
                                                  "max_hip_flexion_deg, max_clearance_m, min_clearance_m, cadence, "
                                                  "max_pelvis_yaw_deg, max_trunk_lean_deg"]


def test_bench_gait_rows_set_the_speed_target_in_both_the_speed_and_the_balance_terms(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bench_gait import ROWS

    from rewardloop.tasks import task_from_description
    slow = ROWS["slow 0.6 m/s"][0]
    assert "start + 0.6 * f.time" not in slow and slow.count("target = 0.6\n") == 2
    fast = task_from_description("walk fast", "myolegs").canonical_program()  # what a user's "walk fast" gets
    assert fast is not None and ROWS["fast"][0] == fast.source and fast.source.count("np.minimum(1.8, start") == 2
    turn = ROWS["turn left 90°"][0]
    assert "f.forward_vel - np.minimum(target, 0.8)" in turn and "speed=np.minimum(target, 0.8))" in turn


def test_find_gait_reward_puts_a_canonical_reward_in_place_of_its_walking_objective(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from find_gait import OBJECTIVE, objective_source

    from rewardloop.errors import UserError
    from rewardloop.reward.canonical import CANONICAL
    assert objective_source(1.3, 0.0, "walk") == CANONICAL["walk"] != objective_source(1.3, 0.0)
    assert objective_source(1.3, 0.0) == OBJECTIVE.replace("TARGET_SPEED", "1.3")
    with pytest.raises(UserError, match="does not go with --reward"):
        objective_source(1.3, 0.5, "walk")
    with pytest.raises(UserError, match="does not go with --reward"):
        objective_source(1.3, 0.0, "walk", arm_swing=0.2)
    arms = objective_source(1.3, 0.5, arm_swing=0.2)  # both added terms, each in WEIGHTS at its weight
    assert "lib.arm_swing(f, amplitude=0.1)" in arms and '"arms": 0.2' in arms and '"flat_foot": 0.5' in arms
    fast = objective_source(1.3, 0.0, "walk", 1.8)  # --reward-speed: the top of the canonical walk's speed ramp
    assert "np.minimum(1.8, start + 0.6 * f.time)" in fast and "np.minimum(1.5 * f.standing_height" not in fast
    with pytest.raises(UserError, match="built-in objective takes --speed"):
        objective_source(1.3, 0.0, None, 1.8)
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--reward", "wlak",
                             "--out", str(tmp_path / "gait.json")], timeout=120, capture_output=True, text=True)
    assert result.returncode == 2 and not (tmp_path / "gait.json").exists()
    assert result.stderr.strip().splitlines() == [
        f"find_gait.py: error: unknown canonical reward 'wlak'; choose one of: {', '.join(sorted(CANONICAL))}"]


@pytest.mark.parametrize(("option", "spec"), [("--grounds", "hill"), ("--grounds", "flat:2"),
                                              ("--grounds", "slope:steep"), ("--grounds", "rough:1.5"),
                                              ("--grounds", "stairs:0.1:2"), ("--terrain", "stairs:high")])
def test_find_gait_bad_ground_is_one_line_and_exit_code_2(tmp_path, option, spec):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), option, spec,
                             "--out", str(tmp_path / "gait.json")], timeout=120, capture_output=True, text=True)
    assert result.returncode == 2 and not (tmp_path / "gait.json").exists()
    assert result.stderr.strip().splitlines() == [f"find_gait.py: error: {option} takes flat, rough[:SEED], "
                                                  f"slope[:DEGREES] or stairs[:RISE_M], got {spec!r}"]


def test_find_gait_validate_human_without_validate_is_one_line_and_exit_code_2(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--validate-human",
                             "--out", str(tmp_path / "gait.json")], timeout=120, capture_output=True, text=True)
    assert result.returncode == 2 and not (tmp_path / "gait.json").exists()
    assert result.stderr.strip().splitlines() == ["find_gait.py: error: --validate-human ranks the gaits --validate "
                                                  "walks: give --validate N too"]


def test_find_gait_goes_on_with_the_start_files_controller(tmp_path):
    # A stage started from a gait file searches that file's controller (here the gait machine's stage-4 gait),
    # not the body's default walker.
    out = tmp_path / "gait.json"
    start = ROOT / "rewardloop" / "control" / "gaits" / "humanoid-gait_machine.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "find_gait.py"), "--start", str(start),
                    "--generations", "1", "--population", "4", "--duration", "0.2", "--out", str(out)],
                   check=True, timeout=300, capture_output=True)
    assert json.loads(out.read_text())["controller"] == "gait_machine"


def test_a_killed_find_gait_leaves_its_best_gait_so_far(tmp_path, monkeypatch):
    # The search is killed (here: interrupted) after its generations, before the file's final write; the
    # checkpoint written after each generation (every 0 s here) is there, marked unfinished, and loads.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import find_gait

    from rewardloop.control.search.policy import Policy

    def killed(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(find_gait, "CHECKPOINT_S", -1.0)
    monkeypatch.setattr(find_gait, "measure", killed)
    out = tmp_path / "gait.json"
    with pytest.raises(KeyboardInterrupt):
        find_gait.main(["--generations", "2", "--population", "4", "--duration", "0.2", "--out", str(out)])
    gait = json.loads(out.read_text())
    assert gait["found_by"]["checkpoint"].startswith("unfinished: the best after 2 generations")
    assert Policy.load(out).controller == "gait_tracker" and not list(tmp_path.glob("*.partial"))


def test_find_gait_human_term_on_flat_ground_only(monkeypatch):
    # --human-on-flat: the human-gait term scores trials on flat ground and is 0 on uneven ground.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from find_gait import GaitObjective, objective_source

    from rewardloop.control.controllers.base import make_controller
    from rewardloop.control.search.cmaes import pushed_motion
    from rewardloop.control.search.policy import shipped_gait
    from rewardloop.critic.likeness import NO_GAIT, HumanLikeTargets
    from rewardloop.reward.program import RewardProgram
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
    from rewardloop.sim.terrain import Terrain

    program, gait = RewardProgram.from_source(objective_source(1.3, 0.0)), shipped_gait("humanoid")
    terms = {}
    for kind in ("flat", "rough"):
        scene = compile_scene(Scene("humanoid", Terrain(kind), start_speed=WALKING_START_SPEED))
        controller = make_controller(gait.controller, scene)
        with Simulator(scene, nthread=1) as sim:
            features = pushed_motion(sim, controller, gait.vector(controller), duration_s=1.0).features(scene)
        terms[kind] = [GaitObjective(program, 1.0, HumanLikeTargets(), flat_only=only)(features).terms["human_gait"]
                       for only in (False, True)]
    assert (terms["flat"][0] == terms["flat"][1]).all() and terms["flat"][0].min() < 0  # 1 s: too few strides
    assert terms["rough"][0].min() < 0 and (terms["rough"][1] == 0).all()
    # With a duration (--human-first), a trial that ends before it misses by NO_GAIT × the unlived fraction more:
    # this 1-s motion scored as a fall at half of a 2-s trial.
    scene = compile_scene(Scene("humanoid", start_speed=WALKING_START_SPEED))
    controller = make_controller(gait.controller, scene)
    with Simulator(scene, nthread=1) as sim:
        features = pushed_motion(sim, controller, gait.vector(controller), duration_s=1.0).features(scene)
    lived, fell = (GaitObjective(program, 1.0, HumanLikeTargets(), flat_only=True, duration_s=duration)(features)
                   .terms["human_gait"] for duration in (1.0, 2.0))
    np.testing.assert_allclose(fell, lived - 0.5 * NO_GAIT)


def test_walk_grounds_walks_a_gait_and_every_gait_its_search_offered_on_each_ground(tmp_path):
    # A search's gait (the uneven-table search of seed 1702) and the distinct gaits it offered for validation, 0.3 s
    # on rough grounds 200 and 201, all in one batch per ground: each gait walks there what it walks alone.
    from rewardloop.control.controllers.base import make_controller, run_controller
    from rewardloop.control.metrics import batch_metrics
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
    from rewardloop.sim.terrain import Terrain
    gait = ROOT / "benchmarks/results/gait_myolegs_tracker_uneven_table_s1702.json"
    out = tmp_path / "grounds.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "walk_grounds.py"), str(gait), "--offered", "--first",
                    "200", "--grounds", "2", "--duration", "0.3", "--out", str(out)],
                   check=True, timeout=300, capture_output=True)
    found = json.loads(out.read_text())
    offered = json.loads(gait.read_text())["found_by"]["validation"]["offered"]
    assert found["grounds"] == [200, 201] and 1 < len(found["results"]) <= 1 + len(offered)
    last = found["results"][-1]
    distances = []
    for seed in (200, 201):
        scene = compile_scene(Scene("myolegs", Terrain("rough", seed=seed), start_speed=WALKING_START_SPEED))
        with Simulator(scene, nthread=1) as sim:
            rollouts = run_controller(sim, make_controller("muscle_tracker", scene), np.array([last["params"]]),
                                      nstep=round(0.3 / scene.dt))
        distances.append(batch_metrics(rollouts.features(scene))[0].distance)
    assert last["distance"] == pytest.approx(np.mean(distances), abs=1e-9)
    assert last["walked"] == 2 and last["fell_on"] == [] and "#offered" in last["gait"]


def test_walk_grounds_bad_input_is_one_line_and_exit_code_2(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "walk_grounds.py"),
                             str(ROOT / "rewardloop/control/gaits/myolegs.json"),
                             str(ROOT / "rewardloop/control/gaits/humanoid.json")],
                            timeout=120, capture_output=True, text=True)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "is a gait_tracker gait of humanoid, not a muscle_tracker gait of myolegs" in result.stderr


def test_grid_gait_walks_every_setting_and_noise_draw_as_that_gait_alone(tmp_path, monkeypatch):
    # Two settings of turn_rate × one of path_steer, 2 draws each (as set, then ±1 % noise), 0.3 s on flat ground:
    # each row of the grid is the gait with those values (noise drawn per draw, the same for every setting), and
    # what the script reports for a setting is what its rows walk alone.
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from grid_gait import grid_rows

    from rewardloop.control.controllers.base import make_controller, run_controller
    from rewardloop.control.metrics import batch_metrics
    from rewardloop.control.search.policy import Policy
    from rewardloop.critic.gait import analyze_gait
    from rewardloop.critic.likeness import met
    from rewardloop.reward.canonical import canonical
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
    gait, out = ROOT / "rewardloop/control/gaits/myolegs.json", tmp_path / "grid.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "grid_gait.py"), "--gait", str(gait), "--grid",
                    "turn_rate=-0.5:0.5", "path_steer=0.15", "--draws", "2", "--duration", "0.3", "--reward", "walk",
                    "--reward-speed", "1.8", "--out", str(out)],
                   check=True, timeout=300, capture_output=True)
    found = json.loads(out.read_text())["results"]
    assert [r["set"] for r in found] == [{"turn_rate": rate, "path_steer": 0.15} for rate in (-0.5, 0.5)]
    scene = compile_scene(Scene("myolegs", start_speed=WALKING_START_SPEED))
    controller = make_controller("muscle_tracker", scene)
    vector = Policy.load(gait).vector(controller)
    columns = [controller.space.index("turn_rate"), controller.space.index("path_steer")]
    rows = grid_rows(vector, columns, [(-0.5, 0.15), (0.5, 0.15)], 2, 0.01)
    assert rows[0, columns].tolist() == [-0.5, 0.15] and rows[2, columns].tolist() == [0.5, 0.15]
    assert np.allclose(rows[3, columns] / rows[2, columns], rows[1, columns] / rows[0, columns])
    assert 0 < np.abs(rows[1, columns] / rows[0, columns] - 1).max() <= 0.01
    assert np.array_equal(np.delete(rows, columns, axis=1), np.repeat(np.delete(vector, columns)[None], 4, axis=0))
    # --noise-all: draw d scales every parameter by 1 + U(±noise) from generator seed d, the setting included
    everything = grid_rows(vector, columns, [(-0.5, 0.15)], 2, 0.01, list(range(len(vector))))
    setting = vector.copy()
    setting[columns] = [-0.5, 0.15]
    assert np.array_equal(everything[0], setting)
    draw = 1 + np.random.default_rng(1).uniform(-0.01, 0.01, len(vector))
    np.testing.assert_allclose(everything[1], setting * draw)
    with Simulator(scene, nthread=1) as sim:
        features = run_controller(sim, controller, rows[2:], nstep=round(0.3 / scene.dt)).features(scene)
    metrics, analysis = batch_metrics(features), analyze_gait(features)
    assert found[1]["walked"] == 2 and found[1]["distance"] == pytest.approx(np.mean([m.distance for m in metrics]))
    assert found[1]["turned_deg"] == pytest.approx([round(np.degrees(m.heading_change), 1) for m in metrics])
    assert found[1]["lateral_drift_m"] == pytest.approx(np.mean([abs(m.lateral_drift) for m in metrics]))
    returns = canonical("walk", speed=1.8).evaluate_trusted(features).returns()
    assert found[1]["return"] == pytest.approx(returns.mean())
    assert found[1]["returns"] == pytest.approx(returns, abs=5e-4)
    # 0.3 s holds no stride: no pelvis yaw range to report, and no human-like walk
    assert np.isnan(analysis.measures.pelvis_yaw_range).all() and found[1]["pelvis_yaw_deg"] is None
    assert found[1]["human_like"] == int(np.logical_and.reduce(list(met(analysis).values())).sum()) == 0


def test_grid_gait_with_the_planner_runs_each_draw_as_run_receding_does(tmp_path):
    # --receding: each draw's motion is the receding-horizon planner's on that row (the ground's settings, the
    # planner seed given), one after another; 0.3 s on flat ground, as set and one ±1 % draw on every parameter. The
    # muscle tracker's defaults (a few steps at most): the planner leaves them at once, so its motion differs.
    from rewardloop.control.config import RecedingConfig
    from rewardloop.control.controllers.base import make_controller, run_controller
    from rewardloop.control.metrics import batch_metrics
    from rewardloop.control.planners.receding import run_receding
    from rewardloop.control.search.policy import Policy
    from rewardloop.reward.canonical import canonical
    from rewardloop.sim.rollout import Simulator
    from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
    scene = compile_scene(Scene("myolegs", start_speed=WALKING_START_SPEED))
    controller = make_controller("muscle_tracker", scene)
    gait, out = Policy.of(controller, "myolegs", controller.space.default).save(tmp_path / "defaults.json"), \
        tmp_path / "grid.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "grid_gait.py"), "--gait", str(gait), "--grid",
                    "path_steer=0.2", "--noise-all", "--draws", "2", "--duration", "0.3", "--reward", "walk",
                    "--receding", "--planner-seed", "3", "--out", str(out)],
                   check=True, timeout=300, capture_output=True)
    found = json.loads(out.read_text())["results"][0]
    vector = controller.space.default.copy()
    vector[controller.space.index("path_steer")] = 0.2
    draw = np.clip(vector * (1 + np.random.default_rng(1).uniform(-0.01, 0.01, len(vector))), controller.space.low,
                   controller.space.high)
    walk = canonical("walk").evaluate_trusted
    motions = [run_receding(scene, controller, row, walk, RecedingConfig(), duration_s=0.3, seed=3) for row in
               (vector, draw)]
    assert found["distances"] == pytest.approx([round(batch_metrics(m.features(scene))[0].distance, 2)
                                                for m in motions])
    assert found["returns"] == pytest.approx([walk(m.features(scene)).returns()[0] for m in motions], abs=5e-4)
    with Simulator(scene) as sim:
        plain = run_controller(sim, controller, vector[None], nstep=round(0.3 / scene.dt)).features(scene)
    assert found["returns"][0] != pytest.approx(walk(plain).returns()[0], abs=5e-4)  # the planner drove


def test_grid_gait_bad_input_is_one_line_and_exit_code_2():
    for grid in (["turn_rate=9"], ["no_such=1"], ["turn_rate=a:b"], ["turn_rate=0", "--reward", "no_such"],
                 ["turn_rate=0", "--reward-speed", "1.8"], ["turn_rate=0", "--receding"]):
        result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "grid_gait.py"), "--gait",
                                 str(ROOT / "rewardloop/control/gaits/myolegs.json"), "--grid", *grid],
                                timeout=120, capture_output=True, text=True)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_grid_gait_bad_planner_settings_are_one_line_and_exit_code_2():
    for planner in (["--planner", "screen=1"], ["--receding", "--reward", "walk", "--planner", "no_such=1"],
                    ["--receding", "--reward", "walk", "--planner", "samples=a"],
                    ["--receding", "--reward", "walk", "--planner", "samples=4:8"]):
        result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "grid_gait.py"), "--gait",
                                 str(ROOT / "rewardloop/control/gaits/myolegs.json"), "--grid", "turn_rate=0",
                                 *planner], timeout=120, capture_output=True, text=True)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_start_picks_shows_each_start_and_the_one_the_search_runs_from(tmp_path):
    # The humanoid's slow walk at 0.6 m/s, seed 2: its slow gait is the pick (about 2.9 as set and as the median
    # under noise). Of the other two, the gait machine is better as set (about 2.07 against 1.90), but the main
    # tracker's median under noise (about 1.97) beats the machine's (1.78). A second, emulated CPU scores every start
    # again with its parameters a hair off.
    out = tmp_path / "picks.json"
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "start_picks.py"), "--body", "humanoid",
                             "--rows", "slow 0.6 m/s", "--seeds", "2", "--cpus", "2", "--json", str(out)],
                            check=True, timeout=300, capture_output=True, text=True)
    entry, other = json.loads(out.read_text())["entries"]
    assert entry["picked"] == "humanoid-slow.json" and entry["row"] == "slow 0.6 m/s"
    assert list(entry["starts"]) == ["humanoid.json", "humanoid-gait_machine.json", "humanoid-slow.json"]
    machine, tracker = entry["starts"]["humanoid-gait_machine.json"], entry["starts"]["humanoid.json"]
    assert machine["as_set"][2] > tracker["as_set"][2] and tracker["median"][2] > machine["median"][2]
    assert entry["starts"]["humanoid-slow.json"]["median"][2] > tracker["median"][2]
    assert tracker["median"] != tracker["as_set"]  # the median of its runs under noise, not the run as set
    assert 0 <= machine["falls"] <= 9
    assert result.stdout.startswith("slow 0.6 m/s, seed 2: humanoid-slow.json")
    assert (entry["cpu"], other["cpu"]) == (0, 1)
    assert other["starts"]["humanoid-gait_machine.json"]["as_set"] != machine["as_set"]
    assert "seed 2, CPU 1: " in result.stdout
    for wrong in (["--rows", "sprint"], ["--rows", "walk", "--gaits", "humanoid-sprint.json"], ["--cpus", "0"]):
        bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "start_picks.py"), "--body", "humanoid",
                              *wrong], timeout=120, capture_output=True, text=True)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_the_phrasing_battery_calls_a_reading_read_unread_or_misread_from_what_the_words_ask(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bench_phrasings import NO_FIELD, PHRASINGS, Phrasing, reading

    assert len(PHRASINGS) >= 30
    assert reading(Phrasing("sideways", "walk sideways to the left", {"lateral": "left"}))["reading"] == "read"
    hop = reading(Phrasing("hop", "hop forward", {NO_FIELD: True}))  # no field holds a hop, and the reader says so
    assert hop["reading"] == "unread" and hop["unread"] == ["hop"]
    wrong = reading(Phrasing("sideways", "walk to the left", {"direction": "none", "lateral": "left"}))
    assert wrong["reading"] == "misread" and "lateral: read None, asked 'left'" in wrong["wrong"]
    silent = reading(Phrasing("walk", "walk forward", {NO_FIELD: True}))  # an ask no field holds, nothing unread
    assert silent["reading"] == "misread"
    # unread words do not excuse a field read wrong: a hop asked on the spot, read as a forward travel
    hop_here = reading(Phrasing("hop", "hop forward", {NO_FIELD: True, "direction": "none"}))
    assert hop_here["reading"] == "misread" and hop_here["wrong"] == ["direction: read 'forward', asked 'none'"]
    # a direction 'none' asked without a side is no travel at all: a sideways reading is wrong
    aside = reading(Phrasing("stand", "walk sideways to the left", {"direction": "none"}))
    assert aside["reading"] == "misread" and aside["wrong"] == ["lateral: read 'left', asked no travel"]
