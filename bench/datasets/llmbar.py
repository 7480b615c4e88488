"""LLMBar judge outputs (both presentation orders) → assay Comparison records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = "llmbar/Dataset"
WINNER = {"1": "a", "2": "b"}


def result_files(root: Path) -> list[Path]:
    """Every `<subset>/evaluators/<Evaluator>/<Strategy>/result.json`."""
    return sorted((root / FOLDER).glob("**/evaluators/*/*/result.json"))


def judge_of(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"  # Evaluator/Strategy


def subset_of(root: Path, path: Path) -> str:
    return str(path.parent.parent.parent.parent.relative_to(root / FOLDER))


def comparisons(root: Path, path: Path) -> list[dict[str, Any]]:
    """One comparison per row: a = output_1, b = output_2; pass `ab` is "swap = False" and `ba`
    is "swap = True" (winners are already mapped back). Unparseable passes are left out."""
    subset = subset_of(root, path)
    rows: list[dict[str, Any]] = []
    for index, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        result = row["results"][0]
        passes = []
        for key, order in (("swap = False", "ab"), ("swap = True", "ba")):
            winner = WINNER.get(result[key]["winner"] or "")
            if winner is not None:
                passes.append({"order": order, "winner": winner})
        winners = {p["winner"] for p in passes}
        verdict = winners.pop() if len(winners) == 1 else "tie"
        rows.append(
            {
                "case_id": f"{subset}#{index}",
                "a": "output_1",
                "b": "output_2",
                "judge": judge_of(path),
                "passes": passes,
                "verdict": verdict,
                "consistent": len(passes) == 2 and passes[0]["winner"] == passes[1]["winner"],
                "len_a": len(row["output_1"]),
                "len_b": len(row["output_2"]),
            }
        )
    return rows
