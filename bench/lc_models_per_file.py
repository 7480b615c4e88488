"""How far the length-controlled win rate is from AlpacaEval 2's leaderboard, by the number
of models in the file (the instructions' difficulty is fitted across the models given).

Reads the AlpacaEval 2 annotations and leaderboard from the shared data folder
(`ASSAY_EXTERNAL_DATA`, default `../shared/data`), leaves out the length-gamed entries, and
for K models per file fits `assay.measure.winrate.win_rates` on `--samples` random sets
of K models (`--all-pairs`: every pair), then prints, per K, the mean, median, 95th percentile
and largest absolute difference from the leaderboard's LC figure (points), the share of
figures within 1.3 points, and the model sets behind the largest ones; last, a JSON line.
Usage: python bench/lc_models_per_file.py [--sizes 2,3,5,10,all] [--samples 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

from datasets import alpaca_eval  # noqa: E402

from assay.core.records import Comparison  # noqa: E402
from assay.measure.winrate import win_rates  # noqa: E402


def is_gamed(name: str) -> bool:
    return name in {"gpt4_gamed", "NullModel"} or name.endswith(("_concise", "_verbose"))


def errors_for(
    by_model: dict[str, list[Comparison]], chosen: tuple[str, ...], board: dict[str, Any]
) -> dict[str, float]:
    """LC − leaderboard LC (points) of each chosen model, fitted on a file of them alone."""
    rows = [r for name in chosen for r in by_model[name]]
    rates, _ = win_rates(rows, alpaca_eval.BASELINE, length_controlled_rates=True)
    return {
        name: float(rate.length_controlled_win_rate - board[name]["length_controlled_winrate"])
        for name, rate in rates.items()
        if rate.length_controlled_win_rate is not None
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,3,5,10,all")
    parser.add_argument("--samples", type=int, default=60, help="random model sets per size")
    parser.add_argument(
        "--all-pairs", action="store_true", help="every pair of models for K = 2 (slow)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")
    board = alpaca_eval.leaderboard(data)
    by_model: dict[str, list[Comparison]] = {}
    for row in alpaca_eval.comparisons(data):
        by_model.setdefault(row["b"], []).append(Comparison.model_validate(row))
    models = sorted(
        m for m in by_model if m in board and m != alpaca_eval.BASELINE and not is_gamed(m)
    )
    rng = random.Random(args.seed)
    summary: dict[str, Any] = {"models": len(models)}
    for size_text in args.sizes.split(","):
        size = len(models) if size_text == "all" else int(size_text)
        if size == 2 and args.all_pairs:
            sets = list(itertools.combinations(models, 2))
        elif size >= len(models):
            sets = [tuple(models)]
        else:
            sets = [tuple(rng.sample(models, size)) for _ in range(args.samples)]
        found: list[tuple[float, str, tuple[str, ...]]] = []
        for chosen in sets:
            for name, error in errors_for(by_model, chosen, board).items():
                found.append((error, name, chosen))
        values = np.abs([e for e, _, _ in found])
        worst = sorted(found, key=lambda f: -abs(f[0]))[:3]
        figures = {
            "files": len(sets),
            "figures": int(values.size),
            "mean": round(float(values.mean()), 3),
            "median": round(float(np.median(values)), 3),
            "p95": round(float(np.percentile(values, 95)), 3),
            "max": round(float(values.max()), 3),
            "within_1.3": round(float(np.mean(values <= 1.3)), 3),
            "worst": [
                {
                    "model": name,
                    "error": round(error, 3),
                    "with": [m for m in chosen if m != name][:4],
                    "models_in_file": len(chosen),
                }
                for error, name, chosen in worst
            ],
        }
        summary[f"k={size_text}"] = figures
        print(
            f"{size_text:>3} models per file: {figures['files']} files, mean |LC − board|"
            f" {figures['mean']:.2f}, median {figures['median']:.2f}, p95 {figures['p95']:.2f},"
            f" max {figures['max']:.2f} points; {100 * figures['within_1.3']:.0f}% within 1.3"
        )
        for w in figures["worst"]:
            print(f"      {w['model']}: {w['error']:+.2f} (with {', '.join(w['with'][:3])})")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
