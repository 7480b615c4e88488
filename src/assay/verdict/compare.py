"""Condition summaries and paired per-case deltas of every condition against baseline."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.core.rubric import Rubric
from assay.verdict.bootstrap import LEVEL, RESAMPLES, SEED, FloatArray, paired_bootstrap
from assay.verdict.rows import BASELINE, ScoredTrial

WEIGHTED = "weighted_score"


@dataclass(slots=True)
class ConditionSummary:
    """Row count, mean of each metric, weighted score and blocking findings of one condition."""

    rows: int
    means: dict[str, float]
    weighted_score: float | None
    blocking_findings: int


@dataclass(slots=True)
class Delta:
    """A paired delta (other − baseline) with its bootstrap interval, over `cases` cases."""

    delta: float
    ci_low: float
    ci_high: float
    sd: float
    cases: int


@dataclass(slots=True)
class Paired:
    """Per-case deltas of one condition against baseline (cases × metrics, NaN = absent)."""

    case_ids: list[str]
    metrics: list[str]
    deltas: FloatArray
    intervals: dict[str, Delta] = field(default_factory=dict)

    def column(self, metric: str) -> FloatArray:
        result: FloatArray = self.deltas[:, self.metrics.index(metric)]
        return result


def _round(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def metric_names(rows: Iterable[ScoredTrial], rubric: Rubric) -> list[str]:
    """Weighted metrics first (in weight order), then every other metric, sorted."""
    seen: set[str] = set()
    for row in rows:
        seen.update(row.metrics)
    rest = sorted(seen - set(rubric.weights))
    return [m for m in rubric.weights if m in seen] + rest


def summarise(
    rows: Sequence[ScoredTrial], rubric: Rubric, metrics: Sequence[str]
) -> ConditionSummary:
    """Means over the rows that carry each metric (trials weigh equally).

    Columnar: one pass builds a rows × metrics table (NaN = absent); each row's weighted
    score is `Rubric.weighted`'s, computed with the same float operations in the same order
    (so the figures are bit for bit the per-row ones), and the means are exact sums."""
    names = list(dict.fromkeys([*metrics, *rubric.weights]))
    table = _table(rows, names)
    means: dict[str, float] = {}
    for column, metric in enumerate(names[: len(metrics)]):
        values = table[:, column]
        values = values[~np.isnan(values)]
        if values.size:
            means[metric] = math.fsum(values.tolist()) / values.size
    weighted = _weighted(table, names, rubric)
    weighted = weighted[~np.isnan(weighted)]
    return ConditionSummary(
        rows=len(rows),
        means=means,
        weighted_score=math.fsum(weighted.tolist()) / weighted.size if weighted.size else None,
        blocking_findings=sum(1 for r in rows if r.blocker),
    )


def _table(rows: Sequence[ScoredTrial], names: Sequence[str]) -> FloatArray:
    """rows × names: each row's value of each metric, NaN where the row does not carry it."""
    table: FloatArray = np.array(
        [[r.metrics.get(m, math.nan) for m in names] for r in rows], dtype=np.float64
    ).reshape(len(rows), len(names))
    return table


def _weighted(table: FloatArray, names: Sequence[str], rubric: Rubric) -> FloatArray:
    """Each row's `Rubric.weighted` (NaN for None), metric by metric in weight order."""
    total = np.zeros(table.shape[0])
    weight = np.zeros(table.shape[0])
    for name, w in rubric.weights.items():
        if w <= 0:
            continue
        values = table[:, names.index(name)]
        present = ~np.isnan(values)
        goodness = 1.0 - values if name in rubric.lower else values
        total = np.where(present, total + w * goodness, total)
        weight = np.where(present, weight + w, weight)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = np.where(weight > 0, total / weight, math.nan)
    return result


def case_means(
    rows: Sequence[ScoredTrial], rubric: Rubric, metrics: Sequence[str]
) -> dict[str, list[float]]:
    """Per case: the mean over its trials of each metric and of the weighted score (NaN = absent)."""
    if not rows:
        return {}
    codes: dict[str, int] = {}
    index = np.fromiter((codes.setdefault(r.case_id, len(codes)) for r in rows), dtype=np.int64)
    values = np.array(
        [[r.metrics.get(m, math.nan) for m in metrics] for r in rows], dtype=np.float64
    ).reshape(len(rows), len(metrics))
    weights = np.array([rubric.weights.get(m, 0.0) for m in metrics])
    lower = np.array([m in rubric.lower for m in metrics], dtype=bool)
    goodness = np.where(lower, 1.0 - values, values)  # lower-is-better metrics weigh 1 − value
    present = ~np.isnan(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight_sum = present.astype(np.float64) @ weights
        weighted = np.where(present, goodness, 0.0) @ weights / weight_sum
    weighted[weight_sum <= 0] = math.nan
    table = np.column_stack([values, weighted])
    sums = np.zeros((len(codes), table.shape[1]))
    counts = np.zeros((len(codes), table.shape[1]))
    seen = ~np.isnan(table)
    np.add.at(sums, index, np.where(seen, table, 0.0))
    np.add.at(counts, index, seen.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return {case: means[code].tolist() for case, code in codes.items()}


def paired_deltas(
    by_condition: Mapping[str, Sequence[ScoredTrial]],
    other: str,
    rubric: Rubric,
    metrics: Sequence[str],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Paired:
    """Per-case deltas of `other` against baseline on their common cases, with intervals."""
    base = case_means(by_condition[BASELINE], rubric, metrics)
    cand = case_means(by_condition[other], rubric, metrics)
    common = sorted(set(base) & set(cand))
    columns = [*metrics, WEIGHTED]
    deltas = (
        np.array([cand[c] for c in common]) - np.array([base[c] for c in common])
        if common
        else np.empty((0, len(columns)))
    )
    paired = Paired(case_ids=common, metrics=columns, deltas=deltas)
    paired.intervals = intervals(deltas, columns, resamples=resamples, seed=seed, level=level)
    return paired


def intervals(
    deltas: FloatArray,
    columns: Sequence[str],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Delta]:
    """Bootstrap each column; columns no case has are left out."""
    if not len(deltas):
        return {}
    result = paired_bootstrap(deltas, resamples=resamples, seed=seed, level=level)
    return {
        name: Delta(
            delta=float(result.mean[i]),
            ci_low=float(result.low[i]),
            ci_high=float(result.high[i]),
            sd=float(result.sd[i]),
            cases=int(result.n[i]),
        )
        for i, name in enumerate(columns)
        if result.n[i] > 0
    }


def by_condition(rows: Iterable[ScoredTrial]) -> dict[str, list[ScoredTrial]]:
    grouped: dict[str, list[ScoredTrial]] = {}
    for row in rows:
        grouped.setdefault(row.condition, []).append(row)
    return grouped
