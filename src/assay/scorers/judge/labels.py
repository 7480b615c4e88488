"""Judge outputs as calibration Labels (`assay judge --labels FILE`).

The same items, dimensions and values as `assay review export --labels` writes for humans
(see `assay.core.raters`), so `assay calibrate` over both files compares the judge with the
humans item by item: direct mode gives one label per rubric metric plus `blocker` (0/1) per
response; pairwise mode gives `winner` (a, b or tie) per comparison the judge decided (not
the ones the case's expectations decided without a call). The rater is the row's
`source` (`judge:<model>`) and every label carries the row's `judge_prompt_sha256` as
`prompt_sha256`: the judge configuration `assay calibrate` stores and a suite's
`require_calibrated_judge` looks up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.core.raters import item_id, judge_rater, pair_item_id
from assay.core.records import Label


def _sha(row: dict[str, Any]) -> dict[str, str]:
    sha = row.get("judge_prompt_sha256")
    return {"prompt_sha256": sha} if isinstance(sha, str) and sha else {}


def _scale(row: dict[str, Any]) -> dict[str, str]:
    """The judge's declared rating scale (`1-5`), which calibrate reports and uses."""
    scale = row.get("scale")
    return {"scale": scale} if isinstance(scale, str) and scale else {}


def direct_labels(rows: Sequence[dict[str, Any]], metrics: Sequence[str]) -> list[Label]:
    """One label per rubric metric and one `blocker` label per judged response."""
    labels = []
    for row in rows:
        rater = row.get("source") or judge_rater(str(row.get("judge_model")))
        item = item_id(row["case_id"], row["trial"], row["condition"])
        for metric in metrics:
            value = row.get(metric)
            if isinstance(value, int | float) and not isinstance(value, bool):
                labels.append(
                    Label.model_validate(
                        {
                            "item_id": item,
                            "dimension": metric,
                            "rater": rater,
                            "value": value,
                            **_sha(row),
                            **_scale(row),
                        }
                    )
                )
        labels.append(
            Label.model_validate(
                {
                    "item_id": item,
                    "dimension": "blocker",
                    "rater": rater,
                    "value": 1 if row.get("blocker") else 0,
                    **_sha(row),
                }
            )
        )
    return labels


def pairwise_labels(rows: Sequence[dict[str, Any]]) -> list[Label]:
    """One `winner` label (a, b or tie) per comparison the judge decided: a verdict by the
    case's expectations is no judgment of the judge to calibrate."""
    return [
        Label.model_validate(
            {
                "item_id": pair_item_id(row["case_id"], row["trial"], row["a"], row["b"]),
                "dimension": "winner",
                "rater": judge_rater(row["judge"]),
                "value": row["verdict"],
                **_sha(row),
            }
        )
        for row in rows
        if row.get("expectations") is None
    ]
