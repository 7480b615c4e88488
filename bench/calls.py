"""Calls-phase benchmark: the CPU `assay run SUITE.toml` spends making its calls.

The workloads of bench/process.py (W1: one completion and a `contains` check per sample; W2:
the same plus a direct judge call per trial, pipelined with the run), each rep in a fresh
process. Only `Engine.run` is measured (the run's calls and, in W2, the judge calls that
follow it): the process CPU time (`time.process_time`) from its start to its end, so start-up
and the evaluation after the run are left out. Prints the medians over the repetitions of
CPU ms per call (per request the server saw) and the calls-phase wall time; the last line is
one JSON object with the figures. `--profile FILE` writes a cProfile of one more rep's
`Engine.run` to FILE.WORKLOAD. `--against SRC` compares with another copy of assay's source
(e.g. `git archive HEAD~3 src | tar -x -C /tmp/before`, then `--against /tmp/before/src`):
the reps alternate between the two, so both see the same load on a shared machine.

    python bench/calls.py [--n 2000] [--reps 5] [--workloads W1,W2] [--profile /tmp/prof]
        [--against /tmp/before/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from engine import Server
from process import write_suite

# Runs `assay run` in this child with `Engine.run` timed (and profiled when asked); prints
# one JSON line with the calls phase's CPU and wall seconds on stderr's last line.
DRIVER = """
import cProfile, json, sys, time
from assay.engine import runner

profile_to = sys.argv.pop(1)
original = runner.Engine.run

async def timed(self, *args, **kwargs):
    profiler = cProfile.Profile() if profile_to else None
    cpu, wall = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        return await original(self, *args, **kwargs)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile_to)
        figures = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}
        sys.stderr.write("\\nCALLS " + json.dumps(figures) + "\\n")

runner.Engine.run = timed
sys.argv[0] = "assay"
from assay.cli import main
main()
"""


ARGS = ("run", "suite.toml", "--store", "store.db", "--out", "out")


def one(
    folder: Path, server: Server, profile: str = "", src: str | None = None
) -> dict[str, float]:
    """One cold run in a fresh process (assay from `src` when given); the calls phase's CPU
    and wall seconds."""
    for name in ("store.db", "store.db-wal", "store.db-shm"):
        (folder / name).unlink(missing_ok=True)
    server.reset()
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, profile, *ARGS],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": src} if src else None,
    )
    if proc.returncode not in (0, 1):  # 1: the gate did not pass, fine here
        raise SystemExit(f"assay run failed in {folder}:\n{proc.stderr}")
    line = [x for x in proc.stderr.splitlines() if x.startswith("CALLS ")][-1]
    figures: dict[str, float] = json.loads(line.removeprefix("CALLS "))
    figures["requests"] = server.stats()["requests"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="samples (completions)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workloads", default="W1,W2")
    parser.add_argument("--profile", default="", help="write a cProfile of one more rep here")
    parser.add_argument("--against", default="", help="another src folder to compare with")
    opts = parser.parse_args()
    figures: dict[str, Any] = {}
    server = Server("--latency", str(opts.latency), "--judge-reply", "schema")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for workload in opts.workloads.split(","):
                folder = Path(tmp) / workload
                folder.mkdir()
                write_suite(folder, workload, opts.n, server.url, opts.concurrency)
                runs: dict[str, list[dict[str, float]]] = {"this": [], "against": []}
                for _ in range(opts.reps):
                    runs["this"].append(one(folder, server))
                    if opts.against:
                        runs["against"].append(one(folder, server, src=opts.against))
                for name, done in runs.items():
                    if not done:
                        continue
                    per_call = [1000 * r["cpu_s"] / r["requests"] for r in done]
                    row = {
                        "cpu_ms_per_call": round(statistics.median(per_call), 3),
                        "cpu_ms_per_call_all": [round(x, 3) for x in per_call],
                        "calls_wall_s": round(statistics.median(r["wall_s"] for r in done), 3),
                        "requests": statistics.median(r["requests"] for r in done),
                    }
                    figures[workload if name == "this" else f"{workload} against"] = row
                    print(
                        f"{workload}{' against' if name == 'against' else ''}: calls phase"
                        f" {row['cpu_ms_per_call']} CPU ms/call (reps"
                        f" {row['cpu_ms_per_call_all']}), wall {row['calls_wall_s']} s,"
                        f" {row['requests']:g} requests"
                    )
                if opts.profile:
                    one(folder, server, f"{opts.profile}.{workload}")
    finally:
        server.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
