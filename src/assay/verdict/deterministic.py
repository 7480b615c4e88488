"""Turning scorer results (`Score`s, from `assay.scorers.runner`) into gate input.

How deterministic results feed the release gate:
- every per-trial result is written (`deterministic.jsonl`: case, trial, condition, scorer,
  metrics) and aggregated per condition and scorer;
- each scorer's `primary` metrics (e.g. `citation_coverage`, `refusal_correct`) join the
  trial's row, so they are compared with baseline (paired deltas with CIs) and can be
  weighted or guarded in the suite; with no judge scores, the weighted score is the equal-
  weight mean of the primary metrics present;
- a `blocker` metric above 0 (a missed escalation) is a blocking finding on that trial;
- `[scoring.thresholds]` are checked per case on the candidate (the mean over the case's
  trials): each case that misses one is a FAIL of the per-case gate.
Errored trials are never scored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from assay.core.records import Trial
from assay.core.suite import Threshold
from assay.scorers.base import Score, Scorer
from assay.scorers.runner import primary_metrics
from assay.verdict.checks import Check
from assay.verdict.gate import LIST_LIMIT
from assay.verdict.rows import Finding, ScoredTrial


def scored_trials(
    results: Sequence[Score], scorers: Sequence[Scorer], trials: Iterable[Trial]
) -> list[ScoredTrial]:
    """One gate row per answered trial: primary metrics, and a blocker from any scorer."""
    primary = {s.name: primary_metrics(s) for s in scorers}
    rows: dict[tuple[str, int, str], ScoredTrial] = {}
    for trial in trials:
        if trial.error is None:
            key = (trial.case_id, trial.trial, trial.condition)
            rows[key] = ScoredTrial(trial.case_id, trial.trial, trial.condition)
    for result in results:
        row = rows.get((result.case_id, result.trial, result.condition))
        if row is None:
            continue
        for metric in primary.get(result.scorer, ()):
            if metric in result.metrics:
                row.metrics[metric] = result.metrics[metric]
        if result.blocker:
            row.blocker = True
            row.findings.append(Finding(result.scorer))
    return list(rows.values())


def merge_rows(
    judged: Sequence[ScoredTrial], deterministic: Sequence[ScoredTrial]
) -> list[ScoredTrial]:
    """Add deterministic metrics and blockers to judge/human rows of the same trial."""
    by_key = {(r.case_id, r.trial, r.condition): r for r in judged}
    merged = list(judged)
    for row in deterministic:
        mine = by_key.get((row.case_id, row.trial, row.condition))
        if mine is None:
            merged.append(row)
            continue
        for name, value in row.metrics.items():
            mine.metrics.setdefault(name, value)
        mine.blocker = mine.blocker or row.blocker
        mine.findings.extend(row.findings)
    return merged


def aggregates(
    results: Sequence[Score], scorers: Sequence[Scorer]
) -> dict[str, dict[str, dict[str, float]]]:
    """Corpus figures per condition and scorer."""
    grouped: dict[tuple[str, str], list[dict[str, float]]] = {}
    for result in results:
        grouped.setdefault((result.condition, result.scorer), []).append(result.metrics)
    by_name = {s.name: s for s in scorers}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (condition, name), rows in sorted(grouped.items()):
        out.setdefault(condition, {})[name] = by_name[name].aggregate(rows)
    return out


def case_metric_means(
    results: Sequence[Score], condition: str
) -> dict[str, dict[str, tuple[str, float]]]:
    """case → metric → (scorer, mean over the case's trials) for one condition."""
    sums: dict[tuple[str, str, str], list[float]] = {}
    for result in results:
        if result.condition != condition:
            continue
        for metric, value in result.metrics.items():
            sums.setdefault((result.case_id, metric, result.scorer), []).append(value)
    out: dict[str, dict[str, tuple[str, float]]] = {}
    for (case, metric, scorer), values in sums.items():
        out.setdefault(case, {})[metric] = (scorer, math.fsum(values) / len(values))
    return out


def threshold_misses(
    results: Sequence[Score], thresholds: Mapping[str, Threshold], condition: str
) -> list[tuple[str, str, str, str]]:
    """(case, scorer, metric, message) for every case whose mean misses a threshold."""
    misses = []
    for case, metrics in sorted(case_metric_means(results, condition).items()):
        for metric, bound in thresholds.items():
            if metric not in metrics:
                continue
            scorer, value = metrics[metric]
            if bound.min is not None and value < bound.min - 1e-9:
                misses.append((case, scorer, metric, f"{metric} {value:.3g} < min {bound.min:g}"))
            if bound.max is not None and value > bound.max + 1e-9:
                misses.append((case, scorer, metric, f"{metric} {value:.3g} > max {bound.max:g}"))
    return misses


def threshold_checks(
    results: Sequence[Score], thresholds: Mapping[str, Threshold], condition: str
) -> list[Check]:
    """The deterministic per-case gate: one check, FAIL naming the cases that miss."""
    if not thresholds:
        return []
    misses = threshold_misses(results, thresholds, condition)
    if not misses:
        return [
            Check(
                name="thresholds", status="pass", reason="every case meets the per-case thresholds"
            )
        ]
    shown = "; ".join(f"{case}: {msg}" for case, _, _, msg in misses[:LIST_LIMIT])
    more = f" ... and {len(misses) - LIST_LIMIT} more" if len(misses) > LIST_LIMIT else ""
    return [
        Check(
            name="thresholds",
            status="fail",
            reason=f"{len(misses)} per-case threshold miss(es) in {condition}: {shown}{more}",
        )
    ]
