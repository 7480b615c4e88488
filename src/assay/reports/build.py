"""Build the report's data model from an analysis, trials, scorer results and comparisons."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from assay.core.records import Case, Comparison, Trial
from assay.core.suite import Threshold
from assay.measure.inputs import prob_b_wins
from assay.reports.detail import (
    calibration_matrices,
    drilldown,
    first_steps,
    length_series,
    win_tie_loss,
)
from assay.reports.model import (
    Blocker,
    CaseCheck,
    ConditionComparison,
    ConditionRow,
    GroupRow,
    JudgeProvenance,
    MetricDelta,
    PairwiseRow,
    Regression,
    Report,
    ScorerSummary,
    TrialCounts,
)
from assay.scorers import Score, Scorer
from assay.verdict.analysis import Analysis
from assay.verdict.checks import Coverage, Gap, JudgeStatus, Sequential, SpendFigures
from assay.verdict.compare import WEIGHTED, case_means
from assay.verdict.deterministic import aggregates
from assay.verdict.rows import BASELINE, ScoredTrial
from assay.verdict.thresholds import case_metric_means, scorer_methods, threshold_misses

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult

DRILLDOWN = 20


def _r(value: float | None) -> float | None:
    return round(value, 6) if value is not None and math.isfinite(value) else None


def weighted_by_case(analysis: Analysis, condition: str) -> dict[str, float]:
    """Each scored case's weighted score under `condition` (the mean over its trials)."""
    rows = analysis.rows.get(condition, [])
    means = case_means(rows, analysis.rubric, analysis.metrics)
    return {case: values[-1] for case, values in means.items() if not math.isnan(values[-1])}


def _groups(
    weighted: tuple[dict[str, float], dict[str, float]],
    key: Callable[[Case], str],
    cases: Mapping[str, Case],
) -> list[GroupRow]:
    """Per group of cases (a risk, a category): the mean weighted scores and their delta;
    `weighted` is each case's weighted score under baseline and under the candidate."""
    base, cand = weighted
    members: dict[str, list[str]] = {}
    for case_id in sorted(set(base) | set(cand)):
        if case_id in cases:
            members.setdefault(key(cases[case_id]), []).append(case_id)

    def mean(values: list[float]) -> float | None:
        return math.fsum(values) / len(values) if values else None

    order = {"low": 0, "medium": 1, "high": 2}
    rows = []
    for group, ids in sorted(members.items(), key=lambda kv: (order.get(kv[0], 3), kv[0])):
        both = [c for c in ids if c in base and c in cand]
        rows.append(
            GroupRow(
                group=group,
                cases=len(ids),
                baseline=_r(mean([base[c] for c in ids if c in base])),
                candidate=_r(mean([cand[c] for c in ids if c in cand])),
                delta=_r(mean([cand[c] - base[c] for c in both])),
            )
        )
    return rows


def _regressions(analysis: Analysis, worst: int, trials: Sequence[Trial] = ()) -> list[Regression]:
    paired = analysis.paired.get(analysis.candidate)
    if paired is None or worst <= 0:
        return []
    steps = first_steps(trials, (BASELINE, analysis.candidate))
    cases = analysis.cases or {}
    column = paired.metrics.index(WEIGHTED)
    found = []
    for index, case_id in enumerate(paired.case_ids):
        delta = paired.deltas[index, column]
        if not math.isnan(delta) and delta < -1e-9:
            found.append((float(delta), case_id, index))
    found.sort()
    out = []
    for delta, case_id, index in found[:worst]:
        case = cases.get(case_id)
        out.append(
            Regression(
                case_id=case_id,
                category=case.category if case else None,
                risk=case.risk if case else None,
                delta=round(delta, 6),
                metrics={
                    m: _r(float(paired.deltas[index, i]))
                    for i, m in enumerate(paired.metrics)
                    if m != WEIGHTED
                },
                steps=steps.get(case_id, {}),
            )
        )
    return out


def _case_checks(
    analysis: Analysis,
    results: Sequence[Score],
    thresholds: Mapping[str, Threshold],
) -> list[CaseCheck]:
    """Per case of the candidate: a blockers check, one check per scorer that ran, and one
    per other source (a judge) of a metric that misses a per-case threshold."""
    candidate = analysis.candidate
    rows = analysis.rows.get(candidate, [])
    misses: dict[tuple[str, str], list[str]] = {}
    for case, scorer, _metric, message in threshold_misses(results, thresholds, candidate, rows):
        misses.setdefault((case, scorer), []).append(message)
    means = case_metric_means(results, candidate)
    methods = scorer_methods(results)
    # Indexed by case once (not searched per case: a corpus has thousands of cases).
    blocked_rows: dict[str, list[ScoredTrial]] = {}
    for row in rows:
        if row.blocker:
            blocked_rows.setdefault(row.case_id, []).append(row)
    blocking = {
        (r.case_id, r.scorer)
        for r in results
        if r.condition == candidate and r.metrics.get("blocker", 0) > 0
    }
    case_misses: dict[str, list[tuple[str, list[str]]]] = {}
    for (case, source), missed in sorted(misses.items()):
        case_misses.setdefault(case, []).append((source, missed))
    checks = []
    for case_id in sorted({r.case_id for r in rows} | set(means) | {c for c, _ in misses}):
        blocked = blocked_rows.get(case_id, [])
        detail = "; ".join(
            f"trial {r.trial}: {', '.join([*map(str, r.findings), *([r.notes] if r.notes else [])]) or 'blocker'}"
            for r in blocked
        )
        checks.append(
            CaseCheck(
                case_id=case_id,
                check="blockers",
                passed=not blocked,
                message=detail or "no blocking findings",
            )
        )
        scorers: dict[str, list[str]] = {}
        for metric, (scorer, value) in sorted(means.get(case_id, {}).items()):
            scorers.setdefault(scorer, []).append(f"{metric}={value:.3g}")
        for scorer, figures in sorted(scorers.items()):
            missed = misses.get((case_id, scorer), [])
            problems = missed + (["blocking finding"] if (case_id, scorer) in blocking else [])
            method = methods.get((candidate, scorer))
            checks.append(
                CaseCheck(
                    case_id=case_id,
                    check=scorer,
                    passed=not problems,
                    message=("; ".join(problems) if problems else ", ".join(figures))
                    + (f" ({method})" if method else ""),
                )
            )
        checks.extend(
            CaseCheck(case_id=case_id, check=source, passed=False, message="; ".join(missed))
            for source, missed in case_misses.get(case_id, [])
            if source not in scorers
        )
    return checks


def not_looked(stop: Sequential | None, cases: Mapping[str, Case] | None) -> list[str]:
    """The catalogue's cases a sequential run never ran (neither looked at nor checked: none
    for a run of every case or without the catalogue), in catalogue order."""
    if stop is None or cases is None or stop.cases >= stop.total_cases:
        return []
    looked = set(stop.case_ids) | set(stop.checked_ids)
    return [case_id for case_id in cases if case_id not in looked]


def gap_checks(coverage: Coverage | None) -> list[CaseCheck]:
    """One `coverage` check per case without a scored answer (errored, not run, not scored):
    failed unless `[gate] max_errored` tolerated it, errored either way (JUnit `<error>`)."""
    if coverage is None:
        return []
    by_case: dict[str, list[Gap]] = {}
    for gap in coverage.gaps:
        by_case.setdefault(gap.case_id, []).append(gap)
    return [
        CaseCheck(
            case_id=case_id,
            check="coverage",
            passed=gaps[0].allowed,
            errored=True,
            message="; ".join(g.label for g in gaps)
            + (" (allowed by [gate] max_errored)" if gaps[0].allowed else ""),
        )
        for case_id, gaps in by_case.items()
    ]


def _pairwise(comparisons: Sequence[Comparison]) -> list[PairwiseRow]:
    grouped: dict[tuple[str, str], Counter[str]] = {}
    b_share: dict[tuple[str, str], float] = {}
    for comparison in comparisons:
        counter = grouped.setdefault((comparison.a, comparison.b), Counter())
        counter[comparison.verdict] += 1
        pair = (comparison.a, comparison.b)
        b_share[pair] = b_share.get(pair, 0.0) + prob_b_wins(comparison)  # as winrate does
        counter["n"] += 1
        if comparison.consistent is False:
            counter["inconsistent"] += 1
    rows = []
    for (a, b), counts in sorted(grouped.items()):
        decided = counts["a"] + counts["b"] + counts["tie"]
        rows.append(
            PairwiseRow(
                a=a,
                b=b,
                comparisons=counts["n"],
                wins_a=counts["a"],
                wins_b=counts["b"],
                ties=counts["tie"],
                win_rate_b=_r(b_share[(a, b)] / decided) if decided else None,
                inconsistent=counts["inconsistent"],
            )
        )
    return rows


def _judges(analysis: Analysis, comparisons: Sequence[Comparison]) -> list[JudgeProvenance]:
    """Each judge configuration (model, prompt hash) with how many rows it produced; rows
    without judge provenance (human scores, hand-written comparisons) are not counted."""
    counts: Counter[tuple[Literal["scores", "comparisons"], str, str | None]] = Counter()
    for rows in analysis.rows.values():
        for row in rows:
            if row.judge_model or row.judge_prompt_sha256:
                judge = row.judge_model or row.source or "unknown"
                counts["scores", judge, row.judge_prompt_sha256] += 1
    for comparison in comparisons:
        extra = comparison.model_extra or {}
        model = extra.get("judge_model")
        sha = extra.get("judge_prompt_sha256")
        name = model if isinstance(model, str) and model else comparison.judge
        prompt = sha if isinstance(sha, str) and sha else None
        if name or prompt:
            counts["comparisons", name or "unknown", prompt] += 1
    return [
        JudgeProvenance(source=source, judge=judge, prompt_sha256=prompt, rows=n)
        for (source, judge, prompt), n in sorted(
            counts.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")
        )
    ]


def blockers(analysis: Analysis) -> list[Blocker]:
    """Every blocking finding, credited to what raised it: the score row's source (a judge or
    a person) for `blocker: true`, `scorer:NAME` for a deterministic scorer's finding."""
    found = []
    for rows in analysis.rows.values():
        for r in rows:
            if not r.blocker:
                continue
            where = {"case_id": r.case_id, "trial": r.trial, "condition": r.condition}
            if r.flagged or not r.findings:
                found.append(Blocker(**where, source=r.source, notes=r.notes))
            found.extend(
                Blocker(**where, source=f"scorer:{f.scorer}", notes=None, findings=[str(f)])
                for f in r.findings
            )
    return found


def build_report(
    analysis: Analysis,
    *,
    title: str = "assay report",
    trials: Sequence[Trial] = (),
    results: Sequence[Score] = (),
    scorers: Sequence[Scorer] = (),
    thresholds: Mapping[str, Threshold] | None = None,
    comparisons: Sequence[Comparison] = (),
    worst: int = 10,
    notes: Sequence[str] = (),
    calibration: Mapping[str, DimensionResult] | None = None,
    cases_shown: int = DRILLDOWN,
    judge: JudgeStatus | None = None,
    spend: SpendFigures | None = None,
) -> Report:
    """Assemble the report, verdict first; the renderers add nothing but layout.

    `calibration` is `assay calibrate`'s result on labels, for the confusion matrices;
    `cases_shown` bounds the per-case drill-down; `judge` says whether the suite's judges
    ran; `spend` is what the suite's run has cost in all, by role."""
    gate = analysis.gate
    cases = analysis.cases
    all_notes = list(notes) + list(analysis.notes)
    if cases is None:
        all_notes.append("per-risk and per-category tables need the case catalogue (--cases)")
    trial_counts: dict[str, list[int]] = {}
    for trial in trials:
        counts = trial_counts.setdefault(trial.condition, [0, 0])
        counts[0] += 1
        counts[1] += trial.error is not None
    by_key = {(t.case_id, t.trial, t.condition): t for t in trials}
    methods = scorer_methods(results)
    details, detail_pool = drilldown(analysis, by_key, comparisons, cases_shown)
    weighted = (
        (weighted_by_case(analysis, BASELINE), weighted_by_case(analysis, analysis.candidate))
        if cases
        else ({}, {})
    )  # once for both tables
    return Report(
        title=title,
        baseline=BASELINE,
        candidate=analysis.candidate,
        baseline_compared=gate.compared,
        mode=gate.mode,
        verdict=gate.verdict,
        passed=gate.passed,
        reasons=gate.explanation,
        cases_needed=gate.cases_needed,
        clusters=gate.clusters,
        paired_cases=gate.cases if gate.clusters is not None else None,
        coverage=gate.coverage,
        sequential=gate.sequential,
        not_looked=not_looked(gate.sequential, cases),
        judge=judge,
        weights={k: round(v, 6) for k, v in analysis.rubric.weights.items()},
        conditions=[
            ConditionRow(
                name=name,
                rows=s.rows,
                means={m: _r(v) for m, v in s.means.items()},
                weighted_score=_r(s.weighted_score),
                blocking_findings=s.blocking_findings,
            )
            for name, s in analysis.summaries.items()
        ],
        comparisons=[
            ConditionComparison(
                condition=name,
                deltas=[
                    MetricDelta(
                        metric=metric,
                        delta=_r(d.delta),
                        ci_low=_r(d.ci_low),
                        ci_high=_r(d.ci_high),
                        cases=d.cases,
                    )
                    for metric, d in paired.intervals.items()
                ],
            )
            for name, paired in analysis.paired.items()
        ],
        checks=list(gate.checks),
        worst_regressions=_regressions(analysis, worst, trials),
        blockers=blockers(analysis),
        by_risk=_groups(weighted, lambda c: c.risk, cases) if cases else [],
        by_category=_groups(weighted, lambda c: c.category, cases) if cases else [],
        case_checks=gap_checks(gate.coverage) + _case_checks(analysis, results, thresholds or {}),
        scorers=[
            ScorerSummary(
                condition=condition,
                scorer=name,
                metrics={k: round(v, 6) for k, v in figures.items()},
                method=methods.get((condition, name)),
            )
            for condition, by_scorer in aggregates(results, scorers).items()
            for name, figures in by_scorer.items()
        ],
        trials=[
            TrialCounts(condition=c, trials=n, errored=e) for c, (n, e) in trial_counts.items()
        ],
        pairwise=_pairwise(comparisons),
        judges=_judges(analysis, comparisons),
        win_tie_loss=win_tie_loss(analysis),
        lengths=length_series(analysis, by_key),
        spend=spend,
        calibration=calibration_matrices(calibration) if calibration else [],
        drilldown=details,
        drilldown_of=detail_pool,
        notes=all_notes,
    )
