"""Turning scorer results (`Score`s, from `assay.scorers.runner`) into gate input.

How deterministic results feed the release gate:
- every per-trial result is written (`deterministic.jsonl`: case, trial, condition, scorer,
  metrics) and aggregated per condition and scorer;
- each scorer's `primary` metrics (e.g. `citation_coverage`, `refusal_correct`) join the
  trial's row, so they are compared with baseline (paired deltas with CIs) and can be
  weighted or guarded in the suite; with no judge scores, the weighted score is the equal-
  weight mean of the primary metrics present;
- a `blocker` metric above 0 (a missed escalation) is a blocking finding on that trial;
- `[scoring.thresholds]` and `[scoring.corpus]` are checked on the gated condition over
  every metric its trials carry (`assay.verdict.thresholds`).
Errored trials are never scored. A scorer's error row (no figure, an `error`: a library
metric's value outside its range, an input the trial lacked) fails the gate (`error_checks`):
a figure that could not be measured is never left out silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assay.core.records import Trial
from assay.scorers.base import Score, Scorer
from assay.scorers.runner import primary_metrics
from assay.verdict.checks import Check
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
            notes = result.fields.get("notes")
            row.findings.append(
                Finding(result.scorer, notes)
                if isinstance(notes, str) and notes
                else Finding(result.scorer)
            )
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


def error_checks(results: Sequence[Score], scorers: Sequence[Scorer]) -> list[Check]:
    """A failed check per scorer with error rows, naming how many and the first."""
    errored: dict[str, list[Score]] = {}
    for result in results:
        if result.fields.get("error"):
            errored.setdefault(result.scorer, []).append(result)
    metrics = {s.name: tuple(s.metrics) for s in scorers}
    checks = []
    for name, rows in errored.items():
        first = rows[0]
        own = metrics.get(name, ())
        checks.append(
            Check(
                name=f"scorer:{name}",
                metric=own[0] if len(own) == 1 else None,
                status="fail",
                reason=f"{name}: {len(rows)} row(s) errored, so their figures are missing"
                f" (first: case {first.case_id}#{first.trial} {first.condition}:"
                f" {first.fields['error']})",
                cases=len({r.case_id for r in rows}),
            )
        )
    return checks
