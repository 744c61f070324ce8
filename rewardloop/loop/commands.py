"""Command-line subcommands of rewardloop.loop: run, resume, runs, report, tasks; and the offline demo."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from pathlib import Path
from typing import TextIO

from rewardloop.cli_base import AddCommand, writable_directory
from rewardloop.errors import UserError, unknown_name

DEFAULT_RUNS = "runs"
"""Where runs go unless --out says otherwise."""


def register(add: AddCommand) -> None:
    """Add this package's subcommands: `add(name, handler)` returns the subparser to add arguments to."""
    from rewardloop.cli_base import scene_arguments

    run = add("run", cmd_run)
    run.add_argument("description", nargs="?", help="the motion in words (optional with --task)")
    scene_arguments(run)
    run.set_defaults(body=None)  # None: the task's body, or the humanoid
    run.add_argument("--task", help="a built-in task (see `rewardloop tasks`); --body moves it to another body")
    run.add_argument("--preset", help="run shape: movlr (1 × 15), motionvl (10 × 5) or quick")
    run.add_argument("--iterations", type=int, help="iterations at most (N)")
    run.add_argument("--candidates", type=int, help="candidates per iteration (K)")
    run.add_argument("--patience", type=int,
                     help="stop after the success verdict held through this many rounds of edits (M)")
    run.add_argument("--critic", help="critic model, e.g. builtin or openai:gpt-4o (see `rewardloop models`); "
                                      "none: no critic, the task metric selects")
    run.add_argument("--designer", help="designer model")
    run.add_argument("--context", type=int, metavar="TOKENS",
                     help="a model server's context when it reports none (llama.cpp, vLLM and Ollama report theirs)")
    run.add_argument("--model-timeout", type=float, metavar="S",
                     help="seconds a model server may take to its first token (default 120; 1800 on this machine "
                          "or network)")
    run.add_argument("--compact-prompts", action="store_true",
                     help="always send the designer's compact prompt (small contexts, slow local servers)")
    run.add_argument("--keyframes", type=int, help="keyframe moments a model critic sees (default 8)")
    run.add_argument("--keyframes-every", type=float, metavar="S",
                     help="instead, one keyframe moment every S seconds (MotionVL: 0.1)")
    run.add_argument("--executor", help="local (worker processes) or ray")
    run.add_argument("--address", help="Ray cluster address (with --executor ray)")
    run.add_argument("--workers", type=int, help="candidates evaluated at once")
    run.add_argument("--budget-usd", type=float, help="stop before model cost exceeds this")
    run.add_argument("--budget-calls", type=int, help="stop before more model calls than this")
    run.add_argument("--budget-s", type=float, help="start no iteration after this many seconds")
    run.add_argument("--duration", type=float, help="rollout length in s (default: the task's)")
    run.add_argument("--seed", type=int, help="the optimizer's seed, the same for every candidate")
    run.add_argument("--locomotion", choices=("plan", "search"),
                     help="the optimizer for locomotion: plan (default: the gait planned against each candidate's "
                          "reward) or search (policy search warm-started from the shipped gaits)")
    run.add_argument("--optimizer", choices=("ppo",),
                     help="ppo: every candidate trains a network policy with PPO against its own reward (robots, "
                          "the rl extra; fine-tunes the body's shipped base policy where there is one)")
    run.add_argument("--ppo-steps", type=int, help="with --optimizer ppo: env steps per candidate")
    run.add_argument("--ppo-minutes", type=float, help="with --optimizer ppo: training minutes per candidate "
                                                        "(default 5; 2.5 with --preset quick)")
    run.add_argument("--receding", action="store_true",
                     help="with --locomotion search: run each candidate's found gait with a receding-horizon "
                          "planner choosing its parameters online against the candidate's reward (on for the muscle "
                          "legs on stairs)")
    run.add_argument("--out", default=DEFAULT_RUNS, help="directory of runs")
    run.add_argument("--quiet", action="store_true", help="no live view")
    resume = add("resume", cmd_resume)
    resume.add_argument("run", help="a run directory")
    resume.add_argument("--quiet", action="store_true", help="no live view")
    add("runs", cmd_runs).add_argument("--out", default=DEFAULT_RUNS, help="directory of runs")
    report = add("report", cmd_report)
    report.add_argument("run", help="a run directory")
    report.add_argument("--out", help="HTML file (default RUN/report.html)")
    add("tasks", cmd_tasks)


def task_from_args(args: argparse.Namespace, spec=None):  # -> Task; spec: TaskSpec | None
    """The task --task names (moved to --body when given), or one built around the description (and its
    spec when given, else the rules' reading), on --terrain or else the ground the description names (`ground_for`:
    the two disagreeing is a UserError)."""
    from rewardloop.cli_base import scene_from_args
    from rewardloop.spec import spec_from_description
    from rewardloop.tasks import get_task, ground_for, task_from_description

    description = (args.description or "").strip()
    if args.task:
        task = get_task(args.task, body=args.body)
        return dataclasses.replace(task, description=description) if description else task
    if not description:
        raise UserError('the task description is empty; say what the body should do, e.g. rewardloop run '
                        '"walk forward on rough ground" --body myolegs --terrain rough (or pass --task)')
    spec = spec if spec is not None else spec_from_description(description)
    ground = None if spec.manipulation else ground_for(spec, args.terrain).kind  # the words' ground, unless given
    named = argparse.Namespace(**{**vars(args), "body": args.body or "humanoid", "terrain": ground})
    task = task_from_description(description, named.body, scene_from_args(named).terrain, spec=spec)
    if task.manipulation:  # a hand scene: its object and goal come from the words, no ground or start speed
        return task
    scene = scene_from_args(named, start_speed=task.scene.start_speed)  # the words' injury unless one is given
    return dataclasses.replace(task, scene=dataclasses.replace(scene, injury=scene.injury or task.scene.injury))


def config_from_args(args: argparse.Namespace):  # -> RunConfig
    """The run configuration: a preset (default: RunConfig's defaults) with the options given."""
    from rewardloop.control.config import RecedingConfig
    from rewardloop.loop.config import PRESETS, RunConfig

    if args.preset and args.preset not in PRESETS:
        raise unknown_name("preset", args.preset, PRESETS)
    base = PRESETS[args.preset] if args.preset else RunConfig()
    options = {"iterations": args.iterations, "candidates": args.candidates, "success_patience": args.patience,
               "critic": args.critic, "designer": args.designer, "executor": args.executor,
               "address": args.address, "workers": args.workers, "budget_usd": args.budget_usd,
               "budget_calls": args.budget_calls, "budget_s": args.budget_s, "duration_s": args.duration,
               "seed": args.seed, "locomotion": args.locomotion}
    base = dataclasses.replace(base, **{k: v for k, v in options.items() if v is not None})
    if args.receding:
        if base.locomotion != "search":
            raise UserError("--receding puts a planner on policy search's gaits; add --locomotion search (the gait "
                            "planner, the default, plans against the reward already)")
        base = dataclasses.replace(base, search=dataclasses.replace(base.search, receding=RecedingConfig()))
    if args.optimizer == "ppo":
        base = dataclasses.replace(base, optimizer=_ppo(args))
    elif args.ppo_steps is not None or args.ppo_minutes is not None:
        raise UserError("--ppo-steps and --ppo-minutes set PPO's training: add --optimizer ppo")
    return dataclasses.replace(base, models=models_from_args(args, base.models))


def _ppo(args: argparse.Namespace):  # -> OptimizerConfig
    """The PPO optimizer for --optimizer ppo: the preset's budget with --ppo-steps and --ppo-minutes."""
    from rewardloop.cli_base import positive_number
    from rewardloop.loop.config import ppo_optimizer

    changes: dict[str, float] = {}
    if args.ppo_steps is not None:
        changes["steps"] = args.ppo_steps
    if args.ppo_minutes is not None:
        changes["max_seconds"] = positive_number(args.ppo_minutes, flag="--ppo-minutes") * 60
    return ppo_optimizer(args.preset, **changes)


def models_from_args(args: argparse.Namespace, models):  # models: ModelSettings -> ModelSettings
    """The model settings with --context, --model-timeout, --compact-prompts and the keyframe options."""
    from rewardloop.cli_base import positive_number

    for flag, value in (("--model-timeout", args.model_timeout), ("--keyframes-every", args.keyframes_every)):
        if value is not None:
            positive_number(value, flag=flag)
    if args.keyframes is not None and args.keyframes < 1:
        raise UserError(f"--keyframes must be at least 1, got {args.keyframes}")
    timeouts = models.timeouts if args.model_timeout is None else dataclasses.replace(
        models.timeouts, first_token_s=args.model_timeout, local_first_token_s=args.model_timeout)
    critic = dataclasses.replace(models.critic, **{k: v for k, v in (
        ("keyframes", args.keyframes), ("keyframe_interval_s", args.keyframes_every)) if v is not None})
    designer = dataclasses.replace(models.designer, prompt_form="compact") if args.compact_prompts \
        else models.designer
    context = models.context_tokens if args.context is None else args.context
    return dataclasses.replace(models, context_tokens=context, timeouts=timeouts, critic=critic, designer=designer)


def cmd_run(args: argparse.Namespace) -> int:
    """Learn a reward and a controller for a described motion: the closed loop."""
    from rewardloop.loop.run import start_run

    task = task_from_args(args)
    config = config_from_args(args)
    writable_directory(args.out, flag="--out")
    check_ppo(config, task)
    preflight(config, task)
    task = understand(args, task, config)
    store = start_run(task, config, out=args.out)
    with store.lock():  # taken before the path is printed: a resume started from that line is refused
        print(f"run: {store.path}", flush=True)
        return _drive(store, quiet=args.quiet)


def understand(args: argparse.Namespace, task, config):  # task: Task, config: RunConfig -> Task
    """The task with the spec a model designer read from a free-text description (the rules' reading when the
    designer is builtin, or when the model's call fails or its answer is unusable: `understood:` then says why),
    printed before any compute is spent. The model is asked with the run's context, time limits and retries (its
    call is made before the run exists, so outside its ledger)."""
    from rewardloop.loop.design import server_options
    from rewardloop.spec import read_spec

    if not args.task and config.designer != "builtin":
        server = server_options(config.models, "designer", None)
        spec, _ = read_spec(task.description, config.designer, server=server, retry=config.models.retry)
        task = task_from_args(args, spec=spec)
    print(task.explain(), flush=True)
    return task


def cmd_resume(args: argparse.Namespace) -> int:
    """Continue an interrupted run; nothing finished is redone."""
    from rewardloop.loop.config import RunConfig
    from rewardloop.loop.store import RunStore

    store = RunStore.open(args.run)
    with store.lock():  # before anything: a second resume is refused at once, and the result read is final
        if store.result() is not None:
            print(f"{store.path} has already finished ({store.result()['stop_reason']}); "  # type: ignore[index]
                  f"see `rewardloop report {store.path}`")
            return 0
        from rewardloop.tasks import Task

        preflight(RunConfig.from_dict(store.config), Task.from_dict(store.task))
        return _drive(store, quiet=args.quiet)


def _drive(store, *, quiet: bool, stream: TextIO | None = None) -> int:  # store: RunStore
    from rewardloop.loop.live import LiveView
    from rewardloop.loop.run import run_loop
    from rewardloop.report.html import write_report
    from rewardloop.tasks import Task

    with LiveView(quiet=quiet, stream=stream or sys.stdout) as view:
        result = run_loop(store, on_event=view)
    report = write_report(store.path)
    best = result.best
    summary = (f"best: iteration {best.iteration} candidate {best.index}, {Task.from_dict(store.task).score_name} "
               f"{best.task_score:.3g}, critic {best.critic_score:.3g}" if best else "no candidate was evaluated")
    unchecked = f"; {result.not_checked}" if result.not_checked else ""
    print(f"stopped ({result.stop_reason.value}); {summary}{unchecked}; model cost ${result.cost_usd:.4f}",
          file=stream)
    print(f"reward program: {store.path / 'best_program.py'}" if best else "", file=stream)
    print(f"report: {report}", file=stream, flush=True)
    return 0


PREFLIGHT_TIMEOUTS_S = (20.0, 300.0)
"""First-token limits of the preflight call (remote, local): a local server may still be loading its model."""


def check_ppo(config, task) -> None:  # config: RunConfig, task: Task
    """Fail fast, with one line, where PPO candidates could not train: a body without joint-position servos, or
    no rl extra (checked without importing torch)."""
    import importlib.util

    from rewardloop.rl import missing_extra
    from rewardloop.sim.bodies import BODIES

    if config.optimizer is None or config.optimizer.kind != "ppo":
        return
    if BODIES[task.scene.body].actuator_kind != "servo":
        robots = ", ".join(name for name, body in BODIES.items() if body.actuator_kind == "servo")
        raise UserError(f"--optimizer ppo trains robots driven by joint-position servos ({robots}); "
                        f"{task.scene.body} is not one")
    for module in ("torch", "rsl_rl", "onnxruntime"):
        if importlib.util.find_spec(module) is None:
            raise missing_extra("--optimizer ppo", ImportError(name=module))


def preflight(config, task=None) -> None:  # config: RunConfig, task: Task | None
    """Fail fast, with one line, before any compute: a model string, key or server that cannot work, prompts that
    cannot fit a model server's context (with what to change), or an executor that is not installed. A server
    that takes the tiny call and ends its answer early is reachable: the run goes on, and its calls cope."""
    from rewardloop.loop.design import NO_CRITIC
    from rewardloop.models.base import EndedEarly, Message, Timeouts, parse_model, read_key
    from rewardloop.models.client import RetryPolicy, ServerOptions, make_backend

    remote, local = PREFLIGHT_TIMEOUTS_S
    server = ServerOptions(timeouts=Timeouts(first_token_s=remote, local_first_token_s=local, silence_s=remote),
                           context_tokens=config.models.context_tokens)
    for model in {config.designer, *([config.critic] if config.critic != NO_CRITIC else [])}:
        spec = parse_model(model)
        if spec.backend != "builtin":  # one tiny call: an unreachable server or a rejected key fails here
            read_key(spec, required=spec.backend != "openai" or spec.base_url is None)
            backend = make_backend(spec, retry=RetryPolicy(attempts=1), server=server)
            with contextlib.suppress(EndedEarly):
                backend.complete([Message.user("Reply with the word OK.")], max_tokens=5)
            if task is not None:
                _check_fit(config, task, backend, critic=model == config.critic, designer=model == config.designer)
    if config.executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError("--executor ray needs Ray: pip install 'rewardloop[ray]'") from None


CRITIC_TEXT_TOKENS = 2000
"""Tokens of a critic prompt's text (critic_v2 with the physics table and the gait regions: about 1,700)."""


def _check_fit(config, task, backend, *, critic: bool, designer: bool) -> None:  # config: RunConfig, task: Task
    """A ModelError saying what to change when the designer's starting prompt (with room for one candidate) or
    the critic's prompt with its keyframes cannot fit the server's context."""
    from rewardloop.critic import CRITIQUE_TOKENS
    from rewardloop.design_context import DesignContext
    from rewardloop.designer import Designer
    from rewardloop.loop.design import starting_program
    from rewardloop.models.base import context_is_assumed, context_window
    from rewardloop.models.context import IMAGE_TOKENS, fit_max_tokens

    window = context_window(backend)
    if window is None:
        return
    if designer:
        context = DesignContext(task.description, starting_program(task), None, body=task.scene.body,
                                spec=task.understood)
        Designer(backend, config.models.designer).plan(context, config.candidates)
    if critic and not backend.accepts_video:
        options = config.models.critic
        duration = config.duration_s or task.duration_s
        moments = options.keyframes if options.keyframe_interval_s is None else int(
            duration / options.keyframe_interval_s) + 1
        images = moments * len(options.views)
        fit_max_tokens(context=window, prompt_tokens=CRITIC_TEXT_TOKENS + images * IMAGE_TOKENS,
                       wanted=options.max_tokens, minimum=CRITIQUE_TOKENS,
                       what=f"the critic's prompt with {images} keyframe images (fewer: --keyframes)",
                       assumed=context_is_assumed(backend))


def cmd_runs(args: argparse.Namespace) -> None:
    """List runs: task, iterations done, stop reason, best score, cost."""
    from rewardloop.loop.store import list_runs

    runs = list_runs(args.out)
    if not runs:
        print(f"no runs under {args.out}/ (start one with `rewardloop run`)")
        return
    print(f"{'run':<48} {'body':<9} {'iters':>7} {'state':<11} {'best':>7} {'cost $':>8}  task")
    for r in runs:
        best = "–" if r.best_score is None else f"{r.best_score:.3g}"
        print(f"{r.path!s:<48} {r.body:<9} {r.iterations_done:>3}/{r.iterations:<3} "
              f"{r.stop_reason or 'unfinished':<11} {best:>7} {r.cost_usd:>8.4f}  {r.task[:60]}")


def cmd_report(args: argparse.Namespace) -> None:
    """Write a run's self-contained HTML report."""
    from rewardloop.report.html import write_report

    if args.out:
        writable_directory(Path(args.out).parent, flag="--out")
    print(f"report: {write_report(args.run, out=args.out)}")


def cmd_tasks(args: argparse.Namespace) -> None:
    """List the built-in tasks: description, scene, duration, metric and canonical reward."""
    from rewardloop.tasks import HAND_BODIES, TASK_BODIES, TASKS

    print(f"{'task':<20} {'body':<9} {'rollout':>7}  {'metric':<15} {'canonical':<20} {'scene':<46} description")
    for name, task in TASKS.items():
        for body in HAND_BODIES if task.manipulation else TASK_BODIES:
            scene = task.on_body(body).scene.describe().removeprefix(f"{body} on ")
            print(f"{name:<20} {body:<9} {task.duration_s:>6g}s  {task.metric:<15} {task.canonical or '-':<20} "
                  f"{scene:<46} {task.description}")
    print("Any description works too: rewardloop run \"...\" --body NAME --terrain KIND")


def demo(out_dir: Path | str) -> Path:
    """The offline main job: a short loop (humanoid walking on flat ground, builtin critic and designer,
    3 iterations of 2 candidates, 4-s rollouts; a few minutes on 2 cores) that ends by printing where its
    report is."""
    from rewardloop.loop.config import PRESETS
    from rewardloop.loop.run import start_run
    from rewardloop.tasks import get_task

    start = time.monotonic()
    store = start_run(get_task("walk-flat"), PRESETS["quick"], out=Path(out_dir) / "runs")
    print(f"run: {store.path}", flush=True)
    _drive(store, quiet=False)
    print(f"done in {time.monotonic() - start:.0f} s")
    return store.path / "report.html"
