"""PandaLM test set v1 → assay Label records (3 human annotators, 2 judges)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = "pandalm"
HUMAN = {0: "tie", 1: "1", 2: "2"}
GPT = {"1": "1", "2": "2", "Tie": "tie", "garbage": "unparseable"}


def _load(root: Path, name: str) -> list[dict[str, Any]]:
    value = json.loads((root / FOLDER / name).read_text(encoding="utf-8"))
    assert isinstance(value, list)
    return value


def labels(root: Path) -> list[dict[str, Any]]:
    """Labels on dimension `preference` (categories 1, 2, tie): the three annotators as humans,
    gpt-3.5-turbo and PandaLM-7B as judges (an unparseable verdict is its own category)."""
    rows: list[dict[str, Any]] = []
    for item in _load(root, "testset-v1.json"):
        for n in (1, 2, 3):
            value = HUMAN[item[f"annotator{n}"]]
            rows.append(
                {
                    "item_id": str(item["idx"]),
                    "dimension": "preference",
                    "rater": f"human:annotator{n}",
                    "value": value,
                }
            )
    for item in _load(root, "gpt-3.5-turbo-testset-v1.json"):
        value = GPT[item["gpt_result"]]
        rows.append(
            {
                "item_id": str(item["idx"]),
                "dimension": "preference",
                "rater": "judge:gpt-3.5-turbo",
                "value": value,
            }
        )
    for item in _load(root, "pandalm-7b-testset-v1.json"):
        value = HUMAN[item["pandalm_result"]]
        rows.append(
            {
                "item_id": str(item["idx"]),
                "dimension": "preference",
                "rater": "judge:pandalm-7b",
                "value": value,
            }
        )
    return rows


def annotator_matrix(root: Path) -> list[list[int]]:
    """The raw annotator labels, one [a1, a2, a3] list per item (for independent checks)."""
    return [
        [item["annotator1"], item["annotator2"], item["annotator3"]]
        for item in _load(root, "testset-v1.json")
    ]
