"""Turn stored review answers into records (docs/design.md): Score rows, Labels, Comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from assay.core.jsonl import write_jsonl
from assay.core.raters import human_rater, item_id, pair_item_id
from assay.core.records import Comparison, Label, Pass, ScoreRow
from assay.scorers.base import Score
from assay.store.review import Answer

HUMAN = "human"  # the scorer of reviewers' Scores
rater_id = human_rater  # names shared with `assay judge --labels` (see assay.core.raters)


def score_rows(answers: Sequence[Answer]) -> list[ScoreRow]:
    """One Score row per scored response of every scores-mode answer (through the Score
    record every scorer produces, so human and judge rows are built alike)."""
    rows = []
    for answer in answers:
        if answer.mode != "scores":
            continue
        for condition, scored in sorted(answer.answer.get("responses", {}).items()):
            score = Score(
                answer.key.case_id,
                answer.key.trial,
                condition,
                HUMAN,
                {m: float(int(v)) for m, v in scored["scores"].items()},
                {
                    "blocker": bool(scored.get("blocker", False)),
                    "notes": scored.get("notes") or None,
                    "source": rater_id(answer.reviewer),
                },
            )
            rows.append(score.to_row())
    return rows


def labels(answers: Sequence[Answer]) -> list[Label]:
    """Labels for calibration: each metric and the blocker flag (0/1) per response, and
    the winner of each pairwise answer."""
    out = []
    for answer in answers:
        key, rater = answer.key, rater_id(answer.reviewer)
        if answer.mode == "scores":
            for condition, scored in sorted(answer.answer.get("responses", {}).items()):
                item = item_id(key.case_id, key.trial, condition)
                for metric, value in scored["scores"].items():
                    out.append(Label(item_id=item, dimension=metric, rater=rater, value=int(value)))
                blocker = 1 if scored.get("blocker") else 0
                out.append(Label(item_id=item, dimension="blocker", rater=rater, value=blocker))
        elif answer.mode == "pairwise":
            item = pair_item_id(key.case_id, key.trial, key.a, key.b)
            out.append(
                Label(item_id=item, dimension="winner", rater=rater, value=answer.answer["winner"])
            )
    return out


def comparisons(answers: Sequence[Answer]) -> list[Comparison]:
    """One Comparison per pairwise answer, its single pass in the order the reviewer saw."""
    out = []
    for answer in answers:
        if answer.mode != "pairwise":
            continue
        key, data = answer.key, answer.answer
        order: Literal["ab", "ba"] = "ab" if data.get("first") == key.a else "ba"
        out.append(
            Comparison.model_validate(
                {
                    "case_id": key.case_id,
                    "trial": key.trial,
                    "a": key.a,
                    "b": key.b,
                    "judge": rater_id(answer.reviewer),
                    "passes": [Pass(order=order, winner=data["winner"])],
                    "verdict": data["winner"],
                    "len_a": data.get("len_a"),
                    "len_b": data.get("len_b"),
                    "notes": data.get("notes") or None,
                }
            )
        )
    return out


@dataclass(frozen=True)
class ExportSummary:
    answers: int
    scores: int
    labels: int | None
    comparisons: int | None


def export(
    answers: Sequence[Answer],
    output: Path,
    labels_path: Path | None = None,
    comparisons_path: Path | None = None,
) -> ExportSummary:
    """Build every record first, then write each file atomically."""
    planned: list[tuple[Path, list[ScoreRow] | list[Label] | list[Comparison]]] = [
        (output, score_rows(answers))
    ]
    if labels_path is not None:
        planned.append((labels_path, labels(answers)))
    if comparisons_path is not None:
        planned.append((comparisons_path, comparisons(answers)))
    counts: dict[Path, int] = {}
    for path, rows in planned:
        counts[path] = write_jsonl(path, _dump(rows))
    return ExportSummary(
        answers=len(answers),
        scores=counts[output],
        labels=counts.get(labels_path) if labels_path is not None else None,
        comparisons=counts.get(comparisons_path) if comparisons_path is not None else None,
    )


def _dump(rows: Sequence[BaseModel]) -> list[dict[str, object]]:
    return [row.model_dump(mode="json", exclude_none=True) for row in rows]
