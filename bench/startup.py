"""Start-up benchmark: how long the command line takes before it does anything.

Prints the median (and min/max) wall and CPU time over N spawns of `assay --help`, `assay validate`
and `assay schema case`, and for `assay run` the time from spawning the process to the first
request reaching the mock OpenAI-compatible server (bench/mock_server.py, no latency). Times
are of the whole process, interpreter start-up included. `assay run SUITE: first call` is
the same for a suite run (the W1 workload of bench/process.py: two conditions, a `contains`
check, a JSON report), which checks its scorers and metrics before its first call. The last
line is one JSON object with the figures (seconds).

    python bench/startup.py [--spawns 10]
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

from engine import Server, write_cases
from process import write_suite

ASSAY = [sys.executable, "-m", "assay"]


def spawn(args: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one `assay ARGS` process, from spawn to exit.

    CPU time depends much less on what else the machine runs than wall time does."""
    started = time.perf_counter()
    proc = subprocess.Popen([*ASSAY, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"assay {' '.join(args)} failed")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def first_call(args: list[str], server: Server, cwd: Path | None = None) -> float:
    """Seconds from spawning `assay run ARGS` to its first request reaching the server.

    Both sides read the same monotonic clock (time.perf_counter is CLOCK_MONOTONIC on Linux
    and macOS), so the server's arrival time is comparable with the spawn time here."""
    server.reset()
    started = time.perf_counter()
    done = subprocess.run([*ASSAY, *args], capture_output=True, cwd=cwd)
    if done.returncode not in (0, 1):  # 1: a suite's gate did not pass, fine here
        raise SystemExit(f"assay {' '.join(args)} failed: {done.stderr.decode()}")
    first = server.stats()["first_request"]
    return float(first) - started


def summary(name: str, times: list[float]) -> dict[str, float]:
    median = statistics.median(times)
    print(f"{name:<28} median {median:.3f} s  (min {min(times):.3f}, max {max(times):.3f})")
    return {"median": round(median, 3), "min": round(min(times), 3), "max": round(max(times), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spawns", type=int, default=10, help="spawns per command")
    opts = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cases = tmp / "cases.jsonl"
        write_cases(cases, 20)
        commands = {
            "assay --help": ["--help"],
            "assay validate": ["validate", "--cases", str(cases)],
            "assay schema case": ["schema", "case"],
        }
        for name, args in commands.items():
            runs = [spawn(args) for _ in range(opts.spawns)]
            figures[name] = summary(name, [wall for wall, _ in runs])
            figures[f"{name} (CPU)"] = summary(f"{name} (CPU)", [cpu for _, cpu in runs])
        server = Server("--latency", "0")
        try:
            times = []
            for i in range(opts.spawns):
                run = ["run", "--cases", str(cases), "--model", "openai:bench", "--price", "0,0"]
                run += ["--base-url", server.url, "--store", str(tmp / f"s{i}.db")]
                times.append(first_call(run, server))
            figures["assay run: first call"] = summary("assay run: first call", times)
            suite = tmp / "suite"
            suite.mkdir()
            write_suite(suite, "W1", 40, server.url, 64)
            times = []
            for i in range(opts.spawns):
                run = ["run", "suite.toml", "--store", f"s{i}.db", "--out", f"out{i}"]
                times.append(first_call(run, server, cwd=suite))
            figures["assay run SUITE: first call"] = summary("assay run SUITE: first call", times)
        finally:
            server.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
