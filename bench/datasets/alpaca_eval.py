"""AlpacaEval 2.0 annotations → assay Comparison records, and the published leaderboard."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

BASELINE = "gpt4_1106_preview"
COMPACT = "alpaca_eval/annotations_compact_alpaca_eval_2.csv"
LEADERBOARD = "alpaca_eval/leaderboard_alpaca_eval_2.csv"


def comparisons(root: Path) -> list[dict[str, Any]]:
    """One comparison per annotation: a = the baseline (output_1), b = the model (output_2),
    preference = P(b better) = AlpacaEval's preference − 1 (0 is a draw); one pass of unknown order."""
    rows: list[dict[str, Any]] = []
    with (root / COMPACT).open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            raw = float(row["preference"])
            raw = 1.5 if raw == 0 else raw
            if not 1.0 <= raw <= 2.0:
                continue
            preference = raw - 1.0
            verdict = "tie" if preference == 0.5 else ("b" if preference > 0.5 else "a")
            rows.append(
                {
                    "case_id": f"alpaca-{row['instruction_index']}",
                    "trial": 1,
                    "a": row["generator_1"],
                    "b": row["model_dir"],
                    "judge": row["annotator"],
                    "verdict": verdict,
                    "preference": preference,
                    "len_a": int(row["len_output_1"]),
                    "len_b": int(row["len_output_2"]),
                }
            )
    return rows


def leaderboard(root: Path) -> dict[str, dict[str, float]]:
    """The published leaderboard: model → {win_rate, standard_error, avg_length, lc, ...}."""
    table: dict[str, dict[str, float]] = {}
    with (root / LEADERBOARD).open(encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        for row in reader:
            values: dict[str, float] = {}
            for key, value in zip(header[1:], row[1:], strict=True):
                try:
                    values[key] = float(value)
                except ValueError:
                    continue
            table[row[0]] = values
    return table
