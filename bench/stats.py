"""Benchmark the statistics commands on 100,000 rows each: score, winrate (raw), rank,
calibrate.

Each command runs as a user would run it (`python -m assay ...` in a subprocess, so interpreter
start-up and imports are included) on synthetic files written to a temporary folder.
Prints one line per command and, last, a JSON line with every figure.
Usage: python bench/stats.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write(path: Path, rows: Iterable[dict[str, object]]) -> Path:
    """Write rows as JSONL, one at a time (a million rows never sit in memory at once)."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def score_rows(n: int, rng: random.Random) -> Iterator[dict[str, object]]:
    """n Score rows: baseline and candidate, 3 trials of n/6 cases, the rubric's 5 metrics."""
    for i in range(n):
        condition = ("baseline", "candidate")[i % 2]
        shift = 0.2 if condition == "candidate" else 0.0
        yield (
            {
                "case_id": f"case-{i // 6}",
                "trial": (i // 2) % 3 + 1,
                "condition": condition,
                **{m: min(5.0, rng.randint(1, 5) + shift) for m in METRICS},
                "source": "judge:bench",
            }
        )


def comparisons_vs_baseline(n: int, rng: random.Random) -> Iterator[dict[str, object]]:
    models = [f"model-{k}" for k in range(10)]
    for i in range(n):
        model = models[i % len(models)]
        yield (
            {
                "case_id": f"case-{i // len(models)}",
                "a": "baseline",
                "b": model,
                "judge": "judge-1",
                "verdict": rng.choice(["a", "b", "tie"]),
                "len_a": rng.randint(100, 3000),
                "len_b": rng.randint(100, 3000),
            }
        )


def games(n: int, rng: random.Random) -> Iterator[dict[str, object]]:
    players = [f"model-{k}" for k in range(12)]
    strength = {p: 1.0 + k for k, p in enumerate(players)}
    for i in range(n):
        a, b = rng.sample(players, 2)
        u = rng.random()
        p_a = strength[a] / (strength[a] + strength[b])
        verdict = "tie" if u > 0.9 else ("a" if u < 0.9 * p_a else "b")
        yield (
            {"case_id": f"case-{i}", "a": a, "b": b, "judge": f"judge-{i % 3}", "verdict": verdict}
        )


def labels(n: int, rng: random.Random) -> Iterator[dict[str, object]]:
    items = n // 5
    for i in range(items):
        dim = "escalation" if i % 2 else "correctness"
        truth: object = (
            ("FAIL" if rng.random() < 0.3 else "PASS") if dim == "escalation" else rng.randint(1, 5)
        )
        for rater in ("human:a", "human:b", "human:c", "judge:one", "judge:two"):
            yield ({"item_id": f"item-{i}", "dimension": dim, "rater": rater, "value": truth})


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], cwd: Path, figures: dict[str, object], name: str, label: str) -> None:
    """Run `assay ARGS`; record wall-clock and CPU seconds (the machine is shared: CPU time
    shows the cost without other processes' contention)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    cpu = cpu_children()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"assay {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    figures[f"{name}_s"] = round(elapsed, 2)
    figures[f"{name}_cpu_s"] = round(cpu_children() - cpu, 2)
    print(f"{label}: {elapsed:.2f} s wall, {figures[f'{name}_cpu_s']:.2f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    options = parser.parse_args()
    n = options.rows
    rng = random.Random(0)
    figures: dict[str, object] = {"rows": n}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        scored = write(tmp / "scores.jsonl", score_rows(n, rng))
        versus = write(tmp / "versus.jsonl", comparisons_vs_baseline(n, rng))
        pairs = write(tmp / "games.jsonl", games(n, rng))
        labelled = write(tmp / "labels.jsonl", labels(n, rng))
        base = ["--baseline", "baseline", "--json"]
        timed(
            ["score", str(scored), "--json"],
            tmp, figures, "score", f"score (paired bootstrap gate), {n} score rows",
        )  # fmt: skip
        timed(
            ["winrate", "--comparisons", str(versus), *base],
            tmp,
            figures,
            "winrate",
            f"winrate (raw), {n} comparisons",
        )
        timed(
            ["winrate", "--comparisons", str(versus), *base, "--length-controlled"],
            tmp, figures, "winrate_lc", f"winrate --length-controlled, {n} comparisons",
        )  # fmt: skip
        timed(
            ["rank", "--comparisons", str(pairs), "--json"],
            tmp,
            figures,
            "rank",
            f"rank (Bradley-Terry, 200 bootstrap), {n} games",
        )
        timed(
            ["calibrate", "--labels", str(labelled), "--no-store", "--json"],
            tmp,
            figures,
            "calibrate",
            f"calibrate, {n} labels",
        )
    figures["load_average"] = round(os.getloadavg()[0], 2)
    figures["under_10s"] = all(
        float(v) < 10
        for k, v in figures.items()
        if k in ("score_s", "winrate_s", "rank_s") and isinstance(v, float)
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
