"""Judging throughput with scripted judges: items/s and calls/s, first run and resumed run.

    PYTHONPATH=src python bench/judges.py --items 1000

Prints one line per run. Uses a temporary store; no network.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from assay.core.records import Case, Trial
from assay.scorers.judge import JudgeConfig, run_judging
from assay.store import Store

WORDS = [
    "the",
    "valve",
    "pump",
    "pressure",
    "check",
    "reset",
    "open",
    "close",
    "red",
    "blue",
    "manual",
    "safety",
    "step",
]


def synthetic(items: int, seed: int) -> tuple[list[Case], list[Trial]]:
    rng = random.Random(seed)
    cases, trials = [], []
    for i in range(items):
        reference = " ".join(rng.choice(WORDS) for _ in range(12))
        cases.append(
            Case(id=f"c{i}", category="g", prompt=f"Q{i}?", risk="low", criteria=["ok"],
                 reference=reference)
        )  # fmt: skip
        for condition in ("baseline", "candidate"):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
            trials.append(
                Trial(case_id=f"c{i}", trial=1, condition=condition, runner="mock", response=text)
            )
    return cases, trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--mode", choices=["direct", "pairwise"], default="pairwise")
    parser.add_argument("--judge", action="append", default=None)
    args = parser.parse_args()
    cases, trials = synthetic(args.items, 0)
    config = JudgeConfig(judges=args.judge or ["mock:fair"], mode=args.mode)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        for label in ("first run", "resumed"):
            started = time.perf_counter()
            result = run_judging(trials, cases, config, store)
            elapsed = time.perf_counter() - started
            print(
                f"{label}: {result.total} items, {result.calls} calls in {elapsed:.2f} s"
                f" ({result.total / elapsed:.0f} items/s, {result.calls / elapsed:.0f} calls/s)"
            )
        store.close()


if __name__ == "__main__":
    main()
