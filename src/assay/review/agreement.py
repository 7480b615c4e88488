"""Agreement between human reviewers: Krippendorff's alpha per rubric metric or verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.measure.alpha import alpha_level, krippendorff_alpha
from assay.store.review import Answer

Level = Literal["nominal", "ordinal", "interval", "ratio"]
VERDICT_CODES = {"a": 0.0, "tie": 1.0, "b": 2.0}


@dataclass(frozen=True)
class Agreement:
    """Alpha on one dimension over the units two or more reviewers rated (None: undefined)."""

    dimension: str
    level: Level
    alpha: float | None
    units: int
    reviewers: int
    note: str = ""


def _alpha(
    dimension: str, level: Level, ratings: dict[str, dict[tuple[object, ...], float]]
) -> Agreement:
    reviewers = sorted(ratings)
    counts: dict[tuple[object, ...], int] = {}
    for by_unit in ratings.values():
        for unit in by_unit:
            counts[unit] = counts.get(unit, 0) + 1
    units = sorted((u for u, n in counts.items() if n >= 2), key=repr)
    if len(reviewers) < 2 or not units:
        return Agreement(
            dimension,
            level,
            None,
            len(units),
            len(reviewers),
            "needs two reviewers on the same items",
        )
    matrix = [[ratings[r].get(u) for u in units] for r in reviewers]
    alpha = krippendorff_alpha(matrix, level)
    note = "" if alpha is not None else "every rating is the same value"
    return Agreement(dimension, level, alpha, len(units), len(reviewers), note)


def score_agreement(answers: Sequence[Answer], metrics: Sequence[str]) -> list[Agreement]:
    """Alpha per rubric metric (units: case × trial × condition) and for blockers, at the
    level `alpha_level` gives a rating scale (ordinal; the blocker's 0/1 is the same)."""
    per_metric: dict[str, dict[str, dict[tuple[object, ...], float]]] = {
        m: {} for m in [*metrics, "blocker"]
    }
    for answer in answers:
        for condition, scored in answer.answer.get("responses", {}).items():
            unit = (answer.key.case_id, answer.key.trial, condition)
            for metric in metrics:
                if metric in scored.get("scores", {}):
                    per_metric[metric].setdefault(answer.reviewer, {})[unit] = float(
                        scored["scores"][metric]
                    )
            per_metric["blocker"].setdefault(answer.reviewer, {})[unit] = float(
                bool(scored.get("blocker"))
            )
    return [
        _alpha(name, alpha_level(numeric=True, rating_scale=True), ratings)
        for name, ratings in per_metric.items()
    ]


def pairwise_agreement(answers: Sequence[Answer]) -> list[Agreement]:
    """Nominal alpha on the verdict (a, tie, b) per case × trial × pair."""
    ratings: dict[str, dict[tuple[object, ...], float]] = {}
    for answer in answers:
        winner = answer.answer.get("winner")
        if winner in VERDICT_CODES:
            unit = (answer.key.case_id, answer.key.trial, answer.key.a, answer.key.b)
            ratings.setdefault(answer.reviewer, {})[unit] = VERDICT_CODES[winner]
    return [_alpha("winner", alpha_level(numeric=False, rating_scale=False), ratings)]
