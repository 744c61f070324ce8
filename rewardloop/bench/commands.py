"""`rewardloop bench`: run a suite of (task, body) pairs × seeds × arms, resume one, or rebuild its table and page."""

from __future__ import annotations

import argparse
from pathlib import Path

from rewardloop.cli_base import AddCommand, writable_directory
from rewardloop.errors import UserError

DEFAULT_BENCHES = "benches"
"""Where bench directories go unless --out says otherwise."""


def register(add: AddCommand) -> None:
    """Add `rewardloop bench`."""
    from rewardloop.bench.arms import ARMS
    from rewardloop.bench.suite import SUITES

    bench = add("bench", cmd_bench)
    bench.add_argument("--suite", help=f"{', '.join(SUITES)}, steer (the steering benchmark), or a suite file "
                                       "(.json); default small")
    bench.add_argument("--out", default=DEFAULT_BENCHES, help="directory of bench directories")
    bench.add_argument("--seeds", type=int, help="seeds per pair and arm (default: the suite's)")
    bench.add_argument("--arms", help=f"comma-separated arms (default: the suite's): {', '.join(ARMS)}")
    bench.add_argument("--designer", default="builtin", help="designer model string (see `rewardloop models`)")
    bench.add_argument("--critic", default="builtin", help="critic model string of the loop arm")
    bench.add_argument("--judge", default="builtin",
                       help="who scores every arm's final motion: builtin, or a model other than --critic")
    bench.add_argument("--executor", help="local (worker processes) or ray (default: the suite's)")
    bench.add_argument("--address", help="Ray cluster address (with --executor ray)")
    bench.add_argument("--workers", type=int, help="candidates evaluated at once (default: the suite's)")
    bench.add_argument("--resume", metavar="DIR", help="continue a bench directory; nothing finished is redone")
    bench.add_argument("--report", metavar="DIR", help="rebuild a bench directory's bench.json, .md and .html")
    bench.add_argument("--readme", nargs="?", const="-", metavar="FILE",
                       help="with --report: print the README's bench section, or with FILE write it between FILE's "
                            "<!-- bench:SUITE --> and <!-- /bench:SUITE --> lines")
    bench.add_argument("--quiet", action="store_true", help="no progress lines")
    steer = bench.add_argument_group("steer suite (rewardloop.bench.steer)")
    steer.add_argument("--bodies", default="humanoid,myolegs", help="comma-separated bodies (default: both)")
    steer.add_argument("--asks", help="comma-separated asks (default: all that apply to the body)")
    steer.add_argument("--optimizer", default="plan", choices=("search", "plan"),
                       help="plan: the gait planned against the reward (the loop's default); search: policy search")
    steer.add_argument("--receding", action="store_true",
                       help="with --optimizer search: run each found policy with the receding-horizon planner on top")
    steer.add_argument("--planner", nargs="+", default=[], metavar="NAME=VALUE",
                       help="changes to the receding planner's settings (RecedingConfig fields, e.g. sigma=0.05) of "
                            "--receding, or of --optimizer plan on each body's own settings")
    steer.add_argument("--first-seed", type=int, default=0, help="seeds run from this one (default 0)")
    steer.add_argument("--json", metavar="FILE", help="write the rows, summary and provenance here")


def cmd_bench(args: argparse.Namespace) -> int:
    """Measure whether the loop pays: canonical reward vs designer alone vs the full loop vs a transferred program."""
    from rewardloop.bench.report import readme_section, summarize, update_readme, write_outputs
    from rewardloop.bench.runner import BenchStore

    if args.suite == "steer":
        return cmd_steer_report(args) if args.report else cmd_steer(args)
    if args.readme and not args.report:
        raise UserError("--readme goes with --report DIR: it prints the README's bench section of that bench")
    if args.report and args.resume:
        raise UserError("give --report DIR or --resume DIR, not both")
    if args.report:
        bench = BenchStore.open(args.report)
        paths = write_outputs(bench)
        if args.readme == "-":
            print(readme_section(summarize(bench)))
        elif args.readme:
            print(f"readme: {update_readme(Path(args.readme), summarize(bench))}")
        else:
            print("\n".join(str(p) for p in paths))
        return 0
    if args.resume:
        _no_new_options(args)
    bench = _reopened(args.resume) if args.resume else _create(args)
    print(f"bench: {bench.path}", flush=True)
    _run(bench, quiet=args.quiet)
    return 0


def cmd_steer(args: argparse.Namespace) -> int:
    """The steering benchmark: the canonical walk and each ask on each body and seed; a table, and --json."""
    import json
    import sys

    from rewardloop.bench.steer import (
        asks_for,
        body_has_arms,
        locomotion_optimizer,
        provenance,
        steer_body,
        summarize,
        table,
    )
    from rewardloop.control.config import RecedingConfig
    from rewardloop.control.defaults import receding_changed
    from rewardloop.control.planners.gait_planning import STEERING_PLANNER
    from rewardloop.sim.bodies import get_body

    bodies = [name.strip() for name in args.bodies.split(",") if name.strip()]
    for body in bodies:
        get_body(body)  # an unknown body is one line before any compute
    names = [name.strip() for name in args.asks.split(",") if name.strip()] if args.asks else None
    plans = {body: asks_for(body_has_arms(body), names) for body in bodies}
    if args.json:
        writable_directory(str(Path(args.json).parent), flag="--json")
    if args.planner and not (args.receding or args.optimizer == "plan"):
        raise UserError("--planner changes the receding-horizon planner's settings; add --receding or --optimizer plan")
    if args.receding and args.optimizer == "plan":
        raise UserError("--receding puts a planner on a policy search's gait (--optimizer search); the gait planner "
                        "(--optimizer plan, the default) plans already")
    if args.optimizer == "plan":
        receding_changed(STEERING_PLANNER, args.planner)  # a bad NAME=VALUE is one line before any compute
        optimizer = locomotion_optimizer("plan", planner=args.planner or ())
    else:
        receding = receding_changed(RecedingConfig(), args.planner) if args.receding else None
        optimizer = locomotion_optimizer(search={"receding": receding} if receding else None)
    say = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    made = provenance(" ".join(["rewardloop", *sys.argv[1:]]))  # the commit the run starts from
    seeds = range(args.first_seed, args.first_seed + (args.seeds or 3))
    rows = [row for body in bodies for row in steer_body(body, seeds, plans[body], optimizer, say)]
    print(table(rows))
    if args.json:
        data = {**made, "summary": summarize(rows), "rows": rows}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
        print(f"json: {args.json}")
    return 0


def cmd_steer_report(args: argparse.Namespace) -> int:
    """The steering tables of saved results (--report A.json,B.json), printed or written into --readme FILE."""
    from rewardloop.bench.report import replace_section
    from rewardloop.bench.steer import read_results, results_section

    section = results_section(read_results([Path(p.strip()) for p in args.report.split(",") if p.strip()]))
    if args.readme and args.readme != "-":
        print(f"readme: {replace_section(Path(args.readme), 'steer:tables', section)}")
    else:
        print(section)
    return 0


def _create(args: argparse.Namespace):  # -> BenchStore
    """A new bench directory for the suite and options given, checked before any compute."""
    from rewardloop.bench.runner import BenchOptions, BenchStore
    from rewardloop.bench.suite import load_suite

    suite = load_suite(args.suite or "small")
    arms = tuple(a.strip() for a in args.arms.split(",") if a.strip()) if args.arms else None
    options = BenchOptions(designer=args.designer, critic=args.critic, judge=args.judge, executor=args.executor,
                           address=args.address, workers=args.workers, seeds=args.seeds, arms=arms)
    shape = options.shape(suite.loop)  # a bad executor or workers count fails here
    writable_directory(args.out, flag="--out")
    _preflight(options, shape)
    return BenchStore.create(args.out, suite, options)


STORED_OPTIONS = ("suite", "seeds", "arms", "designer", "critic", "judge", "executor", "address", "workers")
"""Options a bench keeps from its start (plan.json): a resume may not change them."""


def _no_new_options(args: argparse.Namespace) -> None:
    defaults = {"designer": "builtin", "critic": "builtin", "judge": "builtin"}
    changed = [name for name in STORED_OPTIONS if getattr(args, name) not in (None, defaults.get(name))]
    if changed:
        raise UserError(f"--resume continues a bench with the options it was started with (its plan.json); "
                        f"drop --{changed[0]}")


def _reopened(path: str):  # -> BenchStore
    """A bench directory to continue (its stored suite and options), checked as a new one is."""
    from rewardloop.bench.runner import BenchStore

    bench = BenchStore.open(path)
    _preflight(bench.options, bench.shape())
    return bench


def _preflight(options, shape) -> None:  # options: BenchOptions, shape: RunConfig
    """Model strings, keys, servers and Ray, before any compute (the judge's model too)."""
    import dataclasses

    from rewardloop.loop.commands import preflight

    preflight(shape)
    if options.judge != "builtin":
        preflight(dataclasses.replace(shape, critic=options.judge))


def _run(bench, *, quiet: bool) -> None:  # bench: BenchStore
    from rewardloop.bench.report import write_outputs
    from rewardloop.bench.runner import run_bench

    def say(line: str) -> None:
        if not quiet:
            print(line, flush=True)
        write_outputs(bench, html=False)  # the table so far, after every step

    run_bench(bench, say=say)
    for path in write_outputs(bench):
        print(f"{path.suffix[1:]}: {path}", flush=True)
