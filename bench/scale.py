"""Scale: a million cases through the mock model (`assay run --cases` and `assay run SUITE.toml`),
and score/winrate/rank/calibrate on a million rows each, with the wall time and peak memory
(RSS) of every command.

Each command runs as a user would run it (`python -m assay ...` in a subprocess, so interpreter
start-up and imports are included) on seeded synthetic files written to a temporary folder;
its peak RSS is the child's own `ru_maxrss` (from `os.wait4`), not the benchmark's.
Targets (issues 12 and 29): `run` and `suite` under 400 MB peak RSS (the suite only runs: it
names no scorer, so nothing is evaluated after the run); each statistics command under 60 s.
Prints a table and, last, a JSON line with every figure.
Usage: python bench/scale.py [--n 1000000] [--only run,suite,score,...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from stats import ROOT, comparisons_vs_baseline, games, labels, score_rows, write

COMMANDS = ("run", "suite", "score", "winrate", "rank", "calibrate")

SUITE = (
    'name = "scale"\ncases = "cases.jsonl"\nmodel = "mock"\ntrials = 1\n[run]\nconcurrency = 64\n'
)


def cases(n: int, rng: random.Random) -> Iterator[dict[str, object]]:
    """n cases with short prompts (the mock model answers from the prompt)."""
    topics = ("refund", "password reset", "shipping delay", "invoice", "account locked")
    for i in range(n):
        topic = rng.choice(topics)
        yield {
            "id": f"case-{i}",
            "category": topic,
            "prompt": f"Customer {i} asks about a {topic}.",
            "risk": ("low", "medium", "high")[i % 3],
            "criteria": ["answers the question or routes it correctly"],
        }


def measure(args: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """Run `assay ARGS`: wall seconds, CPU seconds, peak RSS in MB and the exit code (the
    machine may be shared: CPU time shows the cost without other processes' contention)."""
    env = dict(os.environ, PYTHONPATH=os.environ.get("ASSAY_SRC", str(ROOT / "src")))
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "assay", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    stderr = child.stderr.read()  # small: the commands print their results to stdout
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(
            f"assay {' '.join(args)} failed ({child.returncode}):\n{stderr.decode()[-4000:]}"
        )
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, usage.ru_maxrss / 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="cases / rows (default 1M)")
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to run")
    options = parser.parse_args()
    n, only = options.n, options.only.split(",")
    rng = random.Random(0)
    figures: dict[str, object] = {"n": n}
    rows: list[tuple[str, str, float, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        inputs = {
            "run": ("cases.jsonl", cases),
            "score": ("scores.jsonl", score_rows),
            "winrate": ("versus.jsonl", comparisons_vs_baseline),
            "rank": ("games.jsonl", games),
            "calibrate": ("labels.jsonl", labels),
        }
        paths = {name: write(tmp / file, make(n, rng)) for name, (file, make) in inputs.items()}
        (tmp / "suite.toml").write_text(SUITE, encoding="utf-8")  # over cases.jsonl
        commands = {
            "run": (
                f"run --model mock, 1 trial, --output ({n} cases)",
                [
                    *("run", "--cases", str(paths["run"]), "--model", "mock", "--trials", "1"),
                    *("--concurrency", "64", "--store", str(tmp / "assay.db")),
                    *("--output", str(tmp / "trials.jsonl"), "--json"),
                ],
            ),
            "suite": (
                f"run SUITE.toml, mock, 1 trial ({n} cases)",
                [
                    *("run", str(tmp / "suite.toml"), "--store", str(tmp / "suite.db")),
                    *("--out", str(tmp / "suite-out"), "--json"),
                ],
            ),
            "score": (
                f"score, paired bootstrap gate ({n} score rows)",
                ["score", str(paths["score"]), "--json"],
            ),
            "winrate": (
                f"winrate, raw ({n} comparisons)",
                [
                    *("winrate", "--comparisons", str(paths["winrate"])),
                    *("--baseline", "baseline", "--json"),
                ],
            ),
            "rank": (
                f"rank, Bradley-Terry, 200 bootstrap ({n} games)",
                ["rank", "--comparisons", str(paths["rank"]), "--json"],
            ),
            "calibrate": (
                f"calibrate ({n} labels)",
                ["calibrate", "--labels", str(paths["calibrate"]), "--no-store", "--json"],
            ),
        }
        for name in COMMANDS:
            if name not in only:
                continue
            label, args = commands[name]
            elapsed, cpu, peak, code = measure(args, tmp)
            figures[f"{name}_s"] = round(elapsed, 2)
            figures[f"{name}_cpu_s"] = round(cpu, 2)
            figures[f"{name}_peak_rss_mb"] = round(peak)
            figures[f"{name}_exit"] = code
            rows.append((name, label, elapsed, cpu, peak))
            print(
                f"{label}: {elapsed:.2f} s, {cpu:.2f} s CPU, peak RSS {peak:.0f} MB",
                file=sys.stderr,
            )
    print("| command | what | wall s | CPU s | peak RSS MB |\n|---|---|---|---|---|")
    for name, label, elapsed, cpu, peak in rows:
        print(f"| {name} | {label} | {elapsed:.2f} | {cpu:.2f} | {peak:.0f} |")
    figures["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
