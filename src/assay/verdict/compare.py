"""Condition summaries and paired per-case deltas of every condition against baseline."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.core.rubric import TOLERANCE, Rubric
from assay.verdict.clusters import Unit, unit_means, units_of
from assay.verdict.interval import LEVEL, FloatArray, paired_intervals
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
    """A paired delta (other − baseline) of `metric` with its interval (`verdict.interval`),
    over `cases` cases; with declared clusters, over their `clusters` (`verdict.clusters`:
    `delta` and `sd` are then the mean and spread of the clusters' mean deltas)."""

    metric: str
    delta: float
    ci_low: float
    ci_high: float
    sd: float
    cases: int
    span: float
    """The widest a delta of this column can be (`delta_spans`)."""
    clusters: int | None = None
    """Clusters the cases fall in, when the catalogue declares any (None: every case is
    its own unit)."""
    better: int = 0
    """Units (cases, or clusters when declared) whose delta is above 0 (beyond 1e-9): with
    `worse`, what a margin of 0 decides on when its interval cannot (`gate.non_inferiority`)."""
    worse: int = 0
    """Units whose delta is below 0 (beyond 1e-9)."""

    @property
    def units(self) -> int:
        """The independent units the interval rests on: clusters, else cases."""
        return self.cases if self.clusters is None else self.clusters


@dataclass(slots=True)
class Paired:
    """Per-case deltas of one condition against baseline (cases × metrics, NaN = absent)."""

    case_ids: list[str]
    metrics: list[str]
    deltas: FloatArray
    spans: FloatArray
    """Per column, the widest a delta can be (`delta_spans`): it bounds the interval of a
    column whose cases all share one delta."""
    intervals: dict[str, Delta] = field(default_factory=dict)
    units: list[Unit] | None = None
    """Each case's unit of evidence (`verdict.clusters`), None when no cluster is declared."""

    @property
    def clusters(self) -> int | None:
        """How many clusters the paired cases fall in (None: none declared)."""
        return None if self.units is None else len(set(self.units))

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


def delta_spans(rubric: Rubric, *tables: FloatArray) -> FloatArray:
    """Per column of `tables` (cases × columns of values, NaN = absent), the widest its
    delta can be: 1 when every value lies in [0, 1] (a share: a deterministic scorer's
    metric), else the width of [min(low, 0), max(high, 1)] (the rubric's scale, which holds
    the shares too)."""
    low, high = rubric.bounds
    wide = max(high, 1.0) - min(low, 0.0)
    values = np.vstack(tables) if tables else np.empty((0, 0))
    with np.errstate(invalid="ignore"):
        share = np.all(np.isnan(values) | ((values >= 0.0) & (values <= 1.0)), axis=0)
    spans: FloatArray = np.where(share, 1.0, wide)
    return spans


def summarise(
    rows: Sequence[ScoredTrial], rubric: Rubric, metrics: Sequence[str]
) -> ConditionSummary:
    """Means over cases, as the paired deltas take them (`case_means`): each metric's mean
    over the cases that carry it of the case's mean over its trials (with uneven trials a
    case run five times weighs what a case run once does, so a condition's mean minus
    baseline's is the paired mean delta on the same cases, not a second figure), and the
    weighted score made from those means (`weigh`)."""
    names = list(dict.fromkeys([*metrics, *rubric.weights]))
    per_case = case_means(rows, rubric, names)
    table = np.array(list(per_case.values()), dtype=np.float64).reshape(
        len(per_case), len(names) + 1
    )
    means: dict[str, float] = {}
    every: list[float] = []
    for column, metric in enumerate(names):
        values = table[:, column]
        values = values[~np.isnan(values)]
        mean = math.fsum(values.tolist()) / values.size if values.size else math.nan
        every.append(mean)
        if values.size and column < len(metrics):
            means[metric] = mean
    weighted = float(weigh(np.array([every]), names, rubric)[0])
    return ConditionSummary(
        rows=len(rows),
        means=means,
        weighted_score=weighted if math.isfinite(weighted) else None,
        blocking_findings=sum(1 for r in rows if r.blocker),
    )


def _table(rows: Sequence[ScoredTrial], names: Sequence[str]) -> FloatArray:
    """rows × names: each row's value of each metric, NaN where the row does not carry it."""
    table: FloatArray = np.array(
        [[r.metrics.get(m, math.nan) for m in names] for r in rows], dtype=np.float64
    ).reshape(len(rows), len(names))
    return table


def weigh(means: FloatArray, names: Sequence[str], rubric: Rubric) -> FloatArray:
    """The weighted score of each row of `means` (rows × names of metric means, NaN =
    absent): Σ weight × metric mean over the weighted metrics, a lower-is-better metric
    counted as 1 − mean. A weighted metric the row lacks leaves the sum, and the weights of
    the metrics it has are renormalised to sum to 1 (`Rubric.weighted`, for one trial); NaN
    when it has none. A row is a condition (`summarise`), a case (`case_means`) or a group
    of cases (the reports' risk and category tables)."""
    total = np.zeros(means.shape[0])
    weight = np.zeros(means.shape[0])
    for name, w in rubric.weights.items():
        if w <= 0 or name not in names:
            continue
        values = means[:, names.index(name)]
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
    """Per case: the mean over its trials of each metric, then the case's weighted score
    made from those means (`weigh`), last (NaN = absent)."""
    if not rows:
        return {}
    ids = [r.case_id for r in rows]
    means = unit_means(_table(rows, metrics), ids)  # cases in the order they first appear
    means = np.column_stack([means, weigh(means, metrics, rubric)])
    return {case: means[code].tolist() for code, case in enumerate(dict.fromkeys(ids))}


def paired_deltas(
    by_condition: Mapping[str, Sequence[ScoredTrial]],
    other: str,
    rubric: Rubric,
    metrics: Sequence[str],
    *,
    level: float = LEVEL,
    clusters: Mapping[str, str] | None = None,
) -> Paired:
    """Per-case deltas of `other` against baseline on their common cases, with intervals
    over cases, or over `clusters` (case id → cluster) when any is declared."""
    base = case_means(by_condition[BASELINE], rubric, metrics)
    cand = case_means(by_condition[other], rubric, metrics)
    common = sorted(set(base) & set(cand))
    columns = [*metrics, WEIGHTED]
    before = np.array([base[c] for c in common]).reshape(len(common), len(columns))
    after = np.array([cand[c] for c in common]).reshape(len(common), len(columns))
    deltas = after - before
    spans = delta_spans(rubric, before, after)
    units = units_of(common, clusters)
    paired = Paired(case_ids=common, metrics=columns, deltas=deltas, spans=spans, units=units)
    paired.intervals = intervals(deltas, columns, level=level, spans=spans, units=units)
    return paired


def intervals(
    deltas: FloatArray,
    columns: Sequence[str],
    *,
    level: float = LEVEL,
    spans: FloatArray,
    units: Sequence[Unit] | None = None,
) -> dict[str, Delta]:
    """Each column's mean delta and interval (`paired_intervals`: every column from the same
    cases, one deterministic rule); columns no case has are left out. With `units` (each
    row's cluster, `verdict.clusters`) the interval runs over the clusters' mean deltas."""
    if not len(deltas):
        return {}
    values = deltas if units is None else unit_means(deltas, units)
    result = paired_intervals(values, level=level, span=spans)
    cases = (~np.isnan(deltas)).sum(axis=0)
    with np.errstate(invalid="ignore"):
        better = (values > TOLERANCE).sum(axis=0)
        worse = (values < -TOLERANCE).sum(axis=0)
    return {
        name: Delta(
            metric=name,
            delta=float(result.mean[i]),
            ci_low=float(result.low[i]),
            ci_high=float(result.high[i]),
            sd=float(result.sd[i]),
            cases=int(cases[i]),
            span=float(spans[i]),
            clusters=None if units is None else int(result.n[i]),
            better=int(better[i]),
            worse=int(worse[i]),
        )
        for i, name in enumerate(columns)
        if result.n[i] > 0
    }


def by_condition(rows: Iterable[ScoredTrial]) -> dict[str, list[ScoredTrial]]:
    grouped: dict[str, list[ScoredTrial]] = {}
    for row in rows:
        grouped.setdefault(row.condition, []).append(row)
    return grouped
