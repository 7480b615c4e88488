"""Figures comparing one judge's values with the human reference, item by item.

Numbers on an integer scale get Cohen's kappa with quadratic weights over the values of the
scale (scikit-learn's `cohen_kappa_score(weights="quadratic")` with `labels=` every point of
the scale): a judge answering 9 where people say 5 is penalised (9 − 5)² = 16 times as much as
one answering 6. Points of the scale nobody used change nothing (quadratic κ depends only on
the distances between the values), so the scale from the lowest to the highest value seen on
the dimension gives the same κ as the declared one. A human reference that is the median of an
even number of raters can fall half-way between two points: the scale is then counted in half
points, which keeps the weights on the values. Numbers that are not on an integer scale
(continuous scores), or whole numbers spread over `MAX_SCALE_POINTS` points or more (counts,
lengths: no rating scale), get Lin's concordance correlation coefficient instead, the
statistic made for agreement on a continuous scale (quadratic κ's continuous counterpart: 1
for exact agreement, lowered by any shift, scaling or scatter). Pearson, Spearman and Kendall
correlations (scipy) come with both.

Categories (PASS/FAIL and others) get precision, recall and F1 per class, with the human
reference as the truth, and their macro (mean over classes) and micro (pooled over items)
averages (scikit-learn); a class the judge never answers has precision 0, one never in the
reference recall 0 (scikit-learn's `zero_division=0`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

from assay.measure.alpha import MAX_SCALE_POINTS, integer_scale

__all__ = ["MAX_SCALE_POINTS", "integer_scale"]


def finite(value: float) -> float | None:
    """The value as a float, None when it is NaN or infinite (undefined)."""
    return float(value) if math.isfinite(value) else None


def quadratic_kappa(
    judge: Sequence[float], human: Sequence[float], scale: tuple[float, float]
) -> float | None:
    """Cohen's kappa with quadratic weights over the points of `scale` (half points when a
    value lies between two of them); None when undefined (a single value everywhere)."""
    low, high = scale
    values = [*judge, *human]
    step = 1.0 if all(float(v).is_integer() for v in values) else 0.5
    if not all(float((v - low) / step).is_integer() for v in values):
        raise ValueError("values off the scale's points")
    points = list(range(round((high - low) / step) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(
            [round((v - low) / step) for v in human],
            [round((v - low) / step) for v in judge],
            labels=points,
            weights="quadratic",
        )
    return finite(kappa)


def lin_ccc(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Lin's concordance correlation coefficient, 2·s_xy / (s_x² + s_y² + (x̄ − ȳ)²) with
    population moments (Lin 1989); None when undefined (both constant at the same value)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 2:
        return None
    denominator = a.var() + b.var() + (a.mean() - b.mean()) ** 2
    if denominator == 0:
        return None
    return finite(2.0 * float(np.mean((a - a.mean()) * (b - b.mean()))) / float(denominator))


def correlation(x: np.ndarray, y: np.ndarray, kind: str) -> dict[str, float | None] | None:
    """Pearson r, Spearman ρ or Kendall τ-b with its p-value (scipy); None when undefined."""
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "pearson":
            result = stats.pearsonr(x, y)
            return {"r": finite(result.statistic), "p": finite(result.pvalue)}
        if kind == "spearman":
            result = stats.spearmanr(x, y)
            return {"rho": finite(result.statistic), "p": finite(result.pvalue)}
        result = stats.kendalltau(x, y)
        return {"tau": finite(result.statistic), "p": finite(result.pvalue)}


@dataclass
class NumericFigures:
    """The agreement figures of numeric values: the chance-corrected statistic the verdict
    rests on (quadratic κ on an integer scale, Lin's CCC otherwise) and the correlations."""

    weighted_kappa: float | None
    lin_ccc: float | None
    pearson: dict[str, float | None] | None
    spearman: dict[str, float | None] | None
    kendall: dict[str, float | None] | None


def numeric_figures(
    judge: Sequence[float], human: Sequence[float], scale: tuple[float, float] | None
) -> NumericFigures:
    """Quadratic κ over `scale` (an integer scale) or Lin's CCC (scale None: continuous)."""
    x, y = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    return NumericFigures(
        weighted_kappa=quadratic_kappa(judge, human, scale) if scale is not None else None,
        lin_ccc=lin_ccc(judge, human) if scale is None else None,
        pearson=correlation(x, y, "pearson"),
        spearman=correlation(x, y, "spearman"),
        kendall=correlation(x, y, "kendall"),
    )


def _rates(
    judge: Sequence[str], human: Sequence[str], labels: list[str], average: str | None
) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return precision_recall_fscore_support(
            human, judge, labels=labels, average=average, zero_division=0.0
        )


def class_figures(judge: Sequence[str], human: Sequence[str]) -> dict[str, Any]:
    """Precision, recall, F1 and support per class (every class either side answered), with
    their macro and micro averages; the human reference is the truth."""
    labels = sorted({*judge, *human})
    precision, recall, f1, support = _rates(judge, human, labels, None)
    per_class = {
        label: {
            "precision": float(precision[k]),
            "recall": float(recall[k]),
            "f1": float(f1[k]),
            "support": int(support[k]),
        }
        for k, label in enumerate(labels)
    }
    averages: dict[str, Any] = {"per_class": per_class}
    for average in ("macro", "micro"):
        p, r, f, _ = _rates(judge, human, labels, average)
        averages[average] = {"precision": float(p), "recall": float(r), "f1": float(f)}
    return averages
