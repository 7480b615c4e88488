"""Whole-process benchmark: `assay run SUITE.toml` from spawn to exit, where the time goes.

The workloads of the peers harness (`../shared/peers/assay_driver.sh`), on bench/mock_server.py:
W1 = N/2 cases x 2 conditions, one completion and a `contains` check each, the gate and a JSON
report; W2 = the same plus a direct judge call per trial. Mock latency 100 ms, concurrency 64:
the limit is 640 calls/s. For each workload it prints the medians over the repetitions of the
whole process (wall, calls/s and % of the limit, CPU ms per call, peak RSS) and its phases as the
server saw them: spawn -> first request (start-up), first request -> last reply (the calls), last
reply -> exit (the evaluation after the run). The last line is one JSON object with the figures.

    python bench/process.py [--n 2000] [--reps 3] [--workloads W1,W2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine import Server

SUITE = """name = "process-{workload}"
cases = "cases.jsonl"
model = "openai:mock"
trials = 1
[run]
base_url = "{url}"
concurrency = {concurrency}
price = "0,0"
[[conditions]]
name = "baseline"
[[conditions]]
name = "candidate"
system = "Answer briefly."
[scoring]
scorers = ["contains"]
[report]
formats = ["json"]
"""

JUDGE = """[judge]
judges = ["openai:mock"]
base_url = "{url}"
price = "0,0"
"""


def write_suite(folder: Path, workload: str, n: int, url: str, concurrency: int) -> None:
    with (folder / "cases.jsonl").open("w") as f:
        for i in range(n // 2):
            case = {
                "id": f"q{i}",
                "category": "bench",
                "risk": "low",
                "prompt": f"Question {i}: what is {i} + 5?",
                "criteria": ["answers correctly"],
                "expect": {"contains": ["mock"]},
            }
            f.write(json.dumps(case) + "\n")
    text = SUITE.format(workload=workload, url=url, concurrency=concurrency)
    if workload == "W2":
        text += JUDGE.format(url=url)
    (folder / "suite.toml").write_text(text)


def one(folder: Path, server: Server) -> dict[str, float]:
    """One cold whole-process run; its figures (seconds, and the server's request count)."""
    for name in ("store.db", "store.db-wal", "store.db-shm"):
        (folder / name).unlink(missing_ok=True)
    server.reset()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", "suite.toml", "--store", "store.db", "--out", "out"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.perf_counter()
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: the gate did not pass, fine here
        raise SystemExit(f"assay run failed in {folder}")
    stats = server.stats()
    return {
        "wall_s": ended - started,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "requests": stats["requests"],
        "startup_s": stats["first_request"] - started,
        "calls_s": stats["last_reply"] - stats["first_request"],
        "after_s": ended - stats["last_reply"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="samples (completions)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workloads", default="W1,W2")
    opts = parser.parse_args()
    limit = opts.concurrency / opts.latency
    figures: dict[str, Any] = {"limit_calls_per_s": limit}
    server = Server("--latency", str(opts.latency), "--judge-reply", "schema")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for workload in opts.workloads.split(","):
                folder = Path(tmp) / workload
                folder.mkdir()
                write_suite(folder, workload, opts.n, server.url, opts.concurrency)
                runs = [one(folder, server) for _ in range(opts.reps)]
                med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                rate = med["requests"] / med["wall_s"]
                row = {
                    **{k: round(v, 3) for k, v in med.items()},
                    "calls_per_s": round(rate, 1),
                    "pct_of_limit": round(100 * rate / limit, 1),
                    "cpu_ms_per_call": round(1000 * med["cpu_s"] / med["requests"], 3),
                }
                figures[workload] = row
                print(
                    f"{workload}: {row['calls_per_s']} calls/s ({row['pct_of_limit']}% of"
                    f" {limit:g}), {row['cpu_ms_per_call']} CPU ms/call, wall {row['wall_s']} s ="
                    f" start-up {row['startup_s']} + calls {row['calls_s']} + after"
                    f" {row['after_s']}; {row['requests']:g} requests, peak {row['rss_mb']:.0f} MB"
                )
    finally:
        server.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
