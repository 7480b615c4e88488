"""LLMFAO crowd votes (and evalica's toy sets) → assay Comparison records."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

FOLDER = "llmfao"
VERDICT = {"left": "a", "right": "b", "tie": "tie"}


def comparisons(root: Path, name: str = "llmfao.csv") -> list[dict[str, Any]]:
    """One game per vote: a = left, b = right, winner left/right/tie → a/b/tie."""
    rows: list[dict[str, Any]] = []
    with (root / FOLDER / name).open(encoding="utf-8") as handle:
        for number, row in enumerate(csv.DictReader(handle)):
            rows.append(
                {
                    "case_id": row.get("id") or str(number),
                    "a": row["left"],
                    "b": row["right"],
                    "judge": f"crowd:{row['worker']}" if "worker" in row else "crowd",
                    "verdict": VERDICT[row["winner"]],
                }
            )
    return rows
