"""From validated rows to the summary: condition means, paired deltas with CIs, the gate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.core.errors import InputError
from assay.core.records import Case
from assay.core.rubric import Rubric
from assay.core.suite import GateSection
from assay.verdict.checks import Check, ConditionMeans, Interval, ScoreSummary, rounded
from assay.verdict.clusters import cluster_map
from assay.verdict.compare import (
    WEIGHTED,
    ConditionSummary,
    Paired,
    by_condition,
    metric_names,
    paired_deltas,
    summarise,
)
from assay.verdict.gate import GateResult, decide
from assay.verdict.rows import BASELINE, ScoredTrial


@dataclass(slots=True)
class Analysis:
    """Everything the summary, the gate and the reports are made from."""

    rubric: Rubric
    config: GateSection
    candidate: str
    metrics: list[str]
    rows: dict[str, list[ScoredTrial]]
    summaries: dict[str, ConditionSummary]
    paired: dict[str, Paired]
    gate: GateResult
    cases: dict[str, Case] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def conditions(self) -> list[str]:
        return list(self.summaries)

    def summary(self) -> ScoreSummary:
        """The documented summary of `assay score --json` and summary.json."""
        conditions = {name: condition_means(s) for name, s in self.summaries.items()}
        return ScoreSummary(
            weights={k: round(v, 6) for k, v in self.rubric.weights.items()},
            scale=list(self.rubric.bounds),
            baseline=conditions.get(BASELINE),
            candidate=conditions.get(self.candidate),
            candidate_condition=self.candidate,
            conditions=conditions,
            comparisons={
                name: {
                    metric: Interval(
                        delta=d.delta,
                        ci_low=d.ci_low,
                        ci_high=d.ci_high,
                        cases=d.cases,
                        clusters=d.clusters,
                    )
                    for metric, d in p.intervals.items()
                }
                for name, p in self.paired.items()
            },
            release_gate=self.gate.summary(),
        )


def condition_means(summary: ConditionSummary) -> ConditionMeans:
    """A condition's figures as the summary prints them: rows, per-metric means, weighted
    score, blocking findings."""
    return ConditionMeans.model_validate(
        {
            "rows": summary.rows,
            **{m: rounded(v) for m, v in summary.means.items()},
            WEIGHTED: rounded(summary.weighted_score),
            "blocking_findings": summary.blocking_findings,
        }
    )


def join_cases(
    rows: Sequence[ScoredTrial], cases: Sequence[Case], where: object
) -> dict[str, Case]:
    """Index the catalogue by id; a scored case the catalogue lacks is an input error."""
    index = {case.id: case for case in cases}
    unknown = [r for r in rows if r.case_id not in index]
    if unknown:
        raise InputError(
            [
                f"ERROR: {where}:{r.line}: case_id: {r.case_id!r} is not in the case catalogue"
                if r.line
                else f"ERROR: {where}: case_id: {r.case_id!r} is not in the case catalogue"
                for r in unknown[:20]
            ]
        )
    return index


def analyse(
    rows: Sequence[ScoredTrial],
    rubric: Rubric,
    config: GateSection,
    *,
    candidate: str | None = None,
    cases: dict[str, Case] | None = None,
    failures: Sequence[Check] = (),
) -> Analysis:
    """Summarise each condition, compare each with baseline, and gate the candidate."""
    name = candidate or config.candidate
    grouped = by_condition(rows)
    order = (
        [BASELINE, *sorted(c for c in grouped if c != BASELINE)]
        if BASELINE in grouped
        else sorted(grouped)
    )
    grouped = {c: grouped[c] for c in order}
    metrics = metric_names(rows, rubric)
    clusters = cluster_map(cases.values()) if cases is not None else None
    summaries = {c: summarise(r, rubric, metrics) for c, r in grouped.items()}
    paired: dict[str, Paired] = {}
    if BASELINE in grouped:
        for other in order[1:]:
            paired[other] = paired_deltas(
                grouped,
                other,
                rubric,
                metrics,
                level=config.level,
                clusters=clusters,
            )
    risks = {c.id: c.risk for c in cases.values()} if cases is not None else None
    gate = decide(
        summaries,
        grouped,
        paired.get(name),
        config,
        candidate=name,
        risks=risks,
        failures=failures,
        lower=rubric.lower,
    )
    return Analysis(
        rubric=rubric,
        config=config,
        candidate=name,
        metrics=metrics,
        rows=grouped,
        summaries=summaries,
        paired=paired,
        gate=gate,
        cases=cases,
    )
