"""Corpus thresholds: a bound on the mean over the gated condition's cases, with its interval.

`[scoring.corpus]` (or `--corpus hallucination<=0.2`, or a grounding scorer's `threshold`)
bounds the corpus figure of a metric: the mean over the gated condition's cases of each
case's mean over its trials (`thresholds.case_metric_means`), so every case weighs the same
whatever its trial count. Each bound is one gate `Check` (`corpus:METRIC:min|max`) with the
estimate (`value`), its confidence interval over the case means (`ci_low`, `ci_high`: the
comparison gate's t interval, `verdict.interval`, at the gate's level), the `bound`, the
`cases`, the `method` that made the figure (`lexical`, `judge:<model>`, `scorer:NAME`) and
how it was decided (`decide`):

- `interval` (the default): `min` passes when the lower bound is at or above it, `max` when
  the upper bound is at or below it, and only on at least `MIN_CASES` (5) cases; FAIL when
  the interval lies wholly on the wrong side; otherwise INCONCLUSIVE, with the cases that
  would likely settle it (`cases_needed`, `interval.cases_to_clear`). One case has no
  interval: INCONCLUSIVE.
- `estimate`: the mean alone decides (PASS or FAIL, whatever the case count), as corpus
  bounds were decided before; the interval is shown all the same.

`decide` comes from the bound (`hallucination = {max = 0.2, decide = "estimate"}`), else
`[scoring] corpus_decide`. A metric no case carries skips its bound (listed, never passed).

A column whose cases all share one value gets the interval's distribution-free bound, which
needs the values' range: [0, 1] for a deterministic scorer's share, else the rubric's scale
widened to hold 0, 1 and every value seen (a judge's score, a latency).

At a sequential run's look before the last (`interim`), the interval is the wider of the t
interval and Hall's skewness-corrected one (`interval.skew_corrected`): at a look's strict
level the t interval's far tail on skewed case means errs too often (docs/design.md,
"Sequential gate"). The last look, and every run of all cases, use the t interval alone.

When the catalogue declares clusters (`verdict.clusters`), the figure is the mean over
clusters of each cluster's mean over its cases, its interval runs over the clusters' means,
`MIN_CASES` counts clusters, and `cases_needed` is the clusters needed times the mean
cluster size.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from assay.core.suite import CorpusDecision, CorpusThreshold, Threshold
from assay.scorers.base import Score
from assay.verdict.checks import Check, Status, interval_text
from assay.verdict.clusters import cases_from_units, clusters_text, unit_means, units_of
from assay.verdict.interval import (
    LEVEL,
    MIN_CASES,
    cases_to_clear,
    paired_intervals,
    skew_corrected,
)
from assay.verdict.rows import ScoredTrial
from assay.verdict.thresholds import TOLERANCE, case_metric_means, figure_method, scorer_methods

Side = Literal["min", "max"]


@dataclass(frozen=True, slots=True)
class Figure:
    """A corpus figure: the mean of the case means, its interval and what it rests on."""

    metric: str
    method: str
    condition: str
    mean: float
    low: float
    high: float
    sd: float
    cases: int
    floor: float
    ceiling: float
    """The lowest and highest a case's value can be (`value_range`)."""
    clusters: int | None = None
    """The clusters the cases fall in, when declared: the interval's units."""

    @property
    def units(self) -> int:
        """The independent units the interval rests on: clusters, else cases."""
        return self.cases if self.clusters is None else self.clusters

    @property
    def text(self) -> str:
        """`corpus mean 4.200 [3.636, 4.764] over 10 cases of prod` (`over 30 cases in 10
        clusters of prod` with clusters)."""
        bounds = interval_text(self.low, self.high, self.units, signed=False)
        if self.clusters is not None:
            bounds = bounds.replace(" case]", " cluster]").replace(" cases]", " clusters]")
        plural = "" if self.cases == 1 else "s"
        over = f"{self.cases} case{plural}{clusters_text(self.clusters)}"
        return f"corpus mean {self.mean:.3f} {bounds} over {over} of {self.condition}"


def value_range(
    values: Sequence[float], share: bool, scale: tuple[float, float]
) -> tuple[float, float]:
    """The lowest and highest a case's value of a metric can be: [0, 1] for a share (a
    deterministic scorer's metric whose values all lie there), else the scale widened to
    hold 0, 1 and every value seen."""
    if share and all(0.0 <= v <= 1.0 for v in values):
        return 0.0, 1.0
    return min(scale[0], 0.0, min(values)), max(scale[1], 1.0, max(values))


def corpus_checks(
    results: Sequence[Score],
    corpus: Mapping[str, Threshold],
    condition: str,
    rows: Iterable[ScoredTrial] = (),
    *,
    decide: CorpusDecision = "interval",
    level: float = LEVEL,
    scale: tuple[float, float] = (1.0, 5.0),
    interim: bool = False,
    clusters: Mapping[str, str] | None = None,
) -> list[Check]:
    """One check per corpus bound on `condition`'s case means (`decide`: how a bound that
    does not say is decided; `level`: the interval's confidence; `scale`: the rubric's, for
    the range of a metric that is not a share; `interim`: a sequential run's look before the
    last, `figure_of`; `clusters`: case id → declared cluster, the interval's units)."""
    if not corpus:
        return []  # nothing to check: skip the per-case means (a million rows cost seconds)
    means = case_metric_means(results, condition, rows)
    methods = scorer_methods(results)
    scorers = {r.scorer for r in results}
    checks = []
    for metric, bound in corpus.items():
        carrying = [case for case, figures in means.items() if metric in figures]
        found = [means[case][metric][1] for case in carrying]
        sources = {figures[metric][0] for figures in means.values() if metric in figures}
        if not found:
            checks.append(
                Check(
                    name=f"corpus:{metric}",
                    status="skipped",
                    metric=metric,
                    cases=0,
                    reason=f"{metric}: not scored on any case of {condition}, so its corpus"
                    " threshold was skipped",
                )
            )
            continue
        method = ", ".join(sorted({figure_method(s, condition, methods, scorers) for s in sources}))
        floor, ceiling = value_range(found, sources <= scorers, scale)
        units = units_of(carrying, clusters)
        figure = figure_of(
            found if units is None else unit_means(np.asarray(found), units)[:, 0].tolist(),
            metric,
            method,
            condition,
            (floor, ceiling),
            level=level,
            interim=interim,
            cases=None if units is None else len(found),
        )
        way = bound.decide if isinstance(bound, CorpusThreshold) and bound.decide else decide
        sides: tuple[tuple[Side, float | None], ...] = (("min", bound.min), ("max", bound.max))
        for side, limit in sides:
            if limit is not None:
                checks.append(corpus_check(figure, side, limit, way, level))
    return checks


def figure_of(
    found: Sequence[float],
    metric: str,
    method: str,
    condition: str,
    limits: tuple[float, float],
    *,
    level: float,
    interim: bool = False,
    cases: int | None = None,
) -> Figure:
    """The corpus figure of these case means (`limits`: the lowest and highest a case's
    value can be), its interval at `level`; at a sequential run's look before the last
    (`interim`) the wider of the t interval and Hall's skewness-corrected one
    (`interval.skew_corrected`). With clusters, `found` holds the clusters' means and
    `cases` the cases they hold."""
    floor, ceiling = limits
    values = np.asarray(found, dtype=np.float64)
    interval = paired_intervals(values, level=level, span=ceiling, floor=floor)
    low, high, sd = float(interval.low[0]), float(interval.high[0]), float(interval.sd[0])
    if interim and len(values) >= 2 and sd > 0:
        hall_low, hall_high = skew_corrected(values, level)
        low, high = min(low, hall_low), max(high, hall_high)
    return Figure(
        metric=metric,
        method=method,
        condition=condition,
        mean=math.fsum(found) / len(found),
        low=low,
        high=high,
        sd=sd,
        cases=len(found) if cases is None else cases,
        floor=floor,
        ceiling=ceiling,
        clusters=None if cases is None else len(found),
    )


def corpus_check(
    figure: Figure, side: Side, limit: float, decide: CorpusDecision, level: float
) -> Check:
    """One bound on one figure, decided on its interval or on its estimate."""
    head = f"{figure.metric} ({figure.method}): {figure.text}"
    if decide == "estimate":
        ok = figure.mean >= limit - TOLERANCE if side == "min" else figure.mean <= limit + TOLERANCE
        if side == "min":
            verb = "is at or above" if ok else "is below"
        else:
            verb = "is at or below" if ok else "is above"
        reason = f"{head} {verb} {side} {limit:g} (decided on the estimate)"
        return _check(figure, side, limit, decide, "pass" if ok else "fail", reason)
    near, far = (figure.low, figure.high) if side == "min" else (figure.high, figure.low)
    known = math.isfinite(near) and math.isfinite(far)
    wrong = known and (far < limit - TOLERANCE if side == "min" else far > limit + TOLERANCE)
    if wrong:
        verb = "lies wholly below" if side == "min" else "lies wholly above"
        return _check(figure, side, limit, decide, "fail", f"{head} {verb} {side} {limit:g}")
    cleared = known and (near >= limit - TOLERANCE if side == "min" else near <= limit + TOLERANCE)
    if cleared and figure.units >= MIN_CASES:
        verb = "is at or above" if side == "min" else "is at or below"
        return _check(figure, side, limit, decide, "pass", f"{head} {verb} {side} {limit:g}")
    need = (
        cases_from_units(MIN_CASES, figure.cases, figure.units)
        if cleared
        else cases_to_settle(figure, limit, level)
    )
    verb = "is undecided against" if not known else "clears" if cleared else "straddles"
    hint = (
        f"about {need} cases would likely settle it"
        if need
        else "more cases are unlikely to settle it at this mean"
    )
    if figure.units < MIN_CASES:
        unit = "case" if figure.clusters is None else "cluster"
        plural = "" if figure.units == 1 else "s"
        hint = f"{figure.units} {unit}{plural} cannot pass (it takes {MIN_CASES}); {hint}"
    reason = f"{head} {verb} {side} {limit:g}; {hint} (have {figure.cases}"
    reason += f"{clusters_text(figure.clusters)})"
    return _check(figure, side, limit, decide, "inconclusive", reason, need)


def cases_to_settle(figure: Figure, limit: float, level: float) -> int | None:
    """About how many cases would put the interval wholly on one side of `limit` (its lower
    bound above a limit below the mean, its upper bound below a limit above it), at the
    observed spread, and never fewer than `MIN_CASES` or the cases there are plus one. None
    when the mean sits on the limit (no count of cases settles it). With clusters, the
    clusters needed times the mean cluster size."""
    distance = abs(figure.mean - limit)
    if distance <= TOLERANCE:
        return None
    floor = max(MIN_CASES, figure.units + 1)
    if figure.units < 2:
        return cases_from_units(floor, figure.cases, figure.units)  # no spread to go on yet
    if figure.mean > limit:
        estimate = cases_to_clear(
            figure.mean, figure.sd, distance, level=level, span=figure.ceiling, floor=figure.floor
        )
    else:  # the upper bound must come below: the same question on the negated values
        estimate = cases_to_clear(
            -figure.mean,
            figure.sd,
            distance,
            level=level,
            span=-figure.floor,
            floor=-figure.ceiling,
        )
    return cases_from_units(max(estimate or floor, floor), figure.cases, figure.units)


def _check(
    figure: Figure,
    side: Side,
    limit: float,
    decide: CorpusDecision,
    status: Status,
    reason: str,
    cases_needed: int | None = None,
) -> Check:
    return Check(
        name=f"corpus:{figure.metric}:{side}",
        status=status,
        metric=figure.metric,
        value=figure.mean,
        ci_low=figure.low,
        ci_high=figure.high,
        bound=limit,
        cases=figure.cases,
        clusters=figure.clusters,
        cases_needed=cases_needed,
        method=figure.method,
        decide=decide,
        reason=reason,
    )
