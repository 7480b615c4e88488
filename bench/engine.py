"""Run-engine benchmark: `assay run` against the mock OpenAI-compatible server.

Prints calls/s next to the physical limit (concurrency / latency) measured at the server from
the first request to the last reply, harness CPU ms per call, peak RSS, the time of a fully
cached re-run, peak RSS for 100,000 cases through the mock model, and what a run with 20%
faulty responses recorded. The last line is one JSON object with those figures.

    python bench/engine.py [--calls 2000] [--latency 0.1] [--concurrency 64] [--big 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def write_cases(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "id": f"b{i}",
                        "category": "bench",
                        "risk": "low",
                        "prompt": f"Benchmark question number {i}: what is {i} + {i}?",
                        "criteria": ["correct"],
                    }
                )
                + "\n"
            )


class Server:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "mock_server.py"), *args], stdout=subprocess.PIPE, text=True
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as reply:
            return dict(json.load(reply))

    def reset(self) -> None:
        urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{self.port}/reset", method="POST")
        ).read()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def run_assay(args: list[str]) -> tuple[float, float, float, int]:
    """Run `assay` as a child; return (wall s, CPU s, peak RSS MB, exit code)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return (
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        os.waitstatus_to_exitcode(status),
    )


def startup_cpu() -> float:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import assay.cli, assay.models.openai, assay.engine"]
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--big", type=int, default=100_000)
    opts = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cases = tmp / "cases.jsonl"
        write_cases(cases, opts.calls)
        server = Server("--latency", str(opts.latency))
        try:
            common = [
                "run",
                "--cases",
                str(cases),
                "--model",
                "openai:bench",
                "--base-url",
                server.url,
                "--price",
                "0,0",
                "--trials",
                "1",
                "--concurrency",
                str(opts.concurrency),
                "--output",
                str(tmp / "trials.jsonl"),
                "--store",
                str(tmp / "s.db"),
            ]
            wall, cpu, rss, code = run_assay(common)
            stats = server.stats()
            span = stats["last_reply"] - stats["first_request"]
            limit = opts.concurrency / opts.latency
            rate = stats["replies"] / span
            base_cpu = startup_cpu()
            figures.update(
                calls=stats["replies"],
                exit_code=code,
                calls_per_s=round(rate, 1),
                limit_calls_per_s=round(limit, 1),
                share_of_limit=round(rate / limit, 3),
                harness_cpu_ms_per_call=round(
                    (cpu - base_cpu) * 1000 / max(1, stats["replies"]), 3
                ),
                harness_cpu_s_total=round(cpu, 2),
                startup_cpu_s=round(base_cpu, 2),
                peak_rss_mb=round(rss, 1),
                wall_s=round(wall, 2),
            )
            print(
                f"{stats['replies']} calls at {opts.latency * 1000:.0f} ms, concurrency {opts.concurrency}: "
                f"{rate:.0f} calls/s of a {limit:.0f} calls/s limit ({rate / limit:.1%})"
            )
            print(
                f"harness CPU: {figures['harness_cpu_ms_per_call']} ms per call "
                f"(total {cpu:.2f} s, startup {base_cpu:.2f} s); peak RSS {rss:.0f} MB"
            )
            server.reset()
            wall, _, _, code = run_assay(common)
            cached_calls = server.stats()["requests"]
            figures.update(cached_rerun_s=round(wall, 2), cached_rerun_calls=cached_calls)
            print(f"cached re-run: {wall:.2f} s, {cached_calls} calls reached the server")
        finally:
            server.stop()

        faulty = Server(
            "--rate-500",
            "0.05",
            "--rate-429",
            "0.05",
            "--rate-truncated",
            "0.05",
            "--rate-non-json",
            "0.05",
            "--retry-after",
            "0.01",
            "--seed",
            "3",
        )
        try:
            out = tmp / "faulty.jsonl"
            _, _, _, code = run_assay(
                [
                    "run",
                    "--cases",
                    str(cases),
                    "--model",
                    "openai:bench",
                    "--base-url",
                    faulty.url,
                    "--price",
                    "0,0",
                    "--trials",
                    "1",
                    "--retries",
                    "0",
                    "--concurrency",
                    str(opts.concurrency),
                    "--output",
                    str(out),
                    "--store",
                    str(tmp / "f.db"),
                ]
            )
            rows = [json.loads(line) for line in out.read_text().splitlines()]
            keys = {(r["case_id"], r["condition"], r["trial"]) for r in rows}
            errored = sum(1 for r in rows if r["error"])
            figures.update(
                faulty_recorded=len(rows),
                faulty_unique=len(keys),
                faulty_errored=errored,
                faulty_exit_code=code,
                faulty_all_recorded=len(rows) == len(keys) == opts.calls,
            )
            print(
                f"20% faults: {len(rows)} of {opts.calls} trials recorded ({errored} as errors), "
                f"{len(rows) - len(keys)} duplicated, exit {code}"
            )
        finally:
            faulty.stop()

        if opts.big:
            big = tmp / "big.jsonl"
            write_cases(big, opts.big)
            wall, cpu, rss, code = run_assay(
                [
                    "run",
                    "--cases",
                    str(big),
                    "--model",
                    "mock",
                    "--trials",
                    "1",
                    "--concurrency",
                    "64",
                    "--output",
                    str(tmp / "big.out.jsonl"),
                    "--store",
                    str(tmp / "big.db"),
                ]
            )
            figures.update(
                big_cases=opts.big,
                big_peak_rss_mb=round(rss, 1),
                big_wall_s=round(wall, 1),
                big_exit_code=code,
            )
            print(
                f"{opts.big} cases through the mock model: {wall:.1f} s, peak RSS {rss:.0f} MB, exit {code}"
            )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
