"""The report's per-case and per-trial sections: win/tie/loss counts, length against score,
calibration confusion matrices, and the drill-down of the cases that matter most.

Each section is bounded so a report over thousands of trials stays small: the length
series keeps at most `MAX_POINTS` points per condition (evenly sampled), the drill-down
keeps `limit` cases (the candidate's blocking findings first, then the worst regressions) and cuts each
response at `MAX_RESPONSE` characters and each prompt at `MAX_PROMPT` (with a note of its length).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from assay.core.records import Comparison, Trial
from assay.core.trajectory_text import shown_lines
from assay.reports.model import (
    CalibrationMatrix,
    CaseDetail,
    Evidence,
    LengthSeries,
    PairVerdict,
    TrialPair,
    TrialView,
    WinTieLoss,
)
from assay.verdict.analysis import Analysis
from assay.verdict.compare import WEIGHTED
from assay.verdict.rows import BASELINE, ScoredTrial

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult

MAX_POINTS = 1_000
MAX_RESPONSE = 20_000
MAX_PROMPT = 20_000  # characters of a case prompt in the drill-down
TIE = 1e-9
EXPECTATIONS = "rule: the case's expectations"
"""Shown as the judge of a pairwise verdict the case's expectations decided (no judge call)."""

Key = tuple[str, int, str]


def _r(value: float | None, digits: int = 6) -> float | None:
    return round(value, digits) if value is not None and math.isfinite(value) else None


def win_tie_loss(analysis: Analysis) -> list[WinTieLoss]:
    """Per compared condition and metric (weighted score first): cases won, tied, lost."""
    rows = []
    for condition, paired in analysis.paired.items():
        order = [WEIGHTED, *(m for m in paired.metrics if m != WEIGHTED)]
        for metric in order:
            column = paired.column(metric)
            column = column[~np.isnan(column)]
            if not len(column):
                continue
            wins = int(np.count_nonzero(column > TIE))
            losses = int(np.count_nonzero(column < -TIE))
            rows.append(
                WinTieLoss(
                    condition=condition,
                    metric=metric,
                    wins=wins,
                    ties=len(column) - wins - losses,
                    losses=losses,
                )
            )
    return rows


def _spearman(points: Sequence[tuple[int, float]]) -> float | None:
    if len(points) < 3:
        return None
    x = np.fromiter((p[0] for p in points), dtype=float, count=len(points))
    y = np.fromiter((p[1] for p in points), dtype=float, count=len(points))
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(stats.spearmanr(x, y).statistic)
    return _r(rho, 4)


def length_series(analysis: Analysis, trials: Mapping[Key, Trial]) -> list[LengthSeries]:
    """Per condition: (response length, weighted score) of every scored, answered trial."""
    series = []
    for condition, rows in analysis.rows.items():
        points: list[tuple[int, float]] = []
        for row in sorted(rows, key=lambda r: (r.case_id, r.trial)):
            trial = trials.get((row.case_id, row.trial, condition))
            score = analysis.rubric.weighted(row.metrics)
            if trial is not None and trial.error is None and score is not None:
                points.append((len(trial.response), round(score, 4)))
        if not points:
            continue
        shown = points
        if len(points) > MAX_POINTS:
            picks = np.linspace(0, len(points) - 1, MAX_POINTS).round().astype(int)
            shown = [points[i] for i in picks]
        series.append(
            LengthSeries(
                condition=condition, trials=len(points), rho=_spearman(points), points=shown
            )
        )
    return series


def _category(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, float | int) else str(value)


def calibration_matrices(results: Mapping[str, DimensionResult]) -> list[CalibrationMatrix]:
    """The confusion matrix of every judge on every labelled dimension (assay calibrate's)."""
    matrices = []
    for dimension, result in results.items():
        for key, judge in result.judges.items():
            confusion = judge.confusion
            if not confusion:
                continue
            matrices.append(
                CalibrationMatrix(
                    dimension=dimension,
                    judge=key,
                    kind=result.kind,
                    n=judge.n,
                    kappa=_r(judge.kappa, 4),
                    weighted_kappa=_r(judge.weighted_kappa, 4),
                    verdict=judge.verdict,
                    reasons=list(judge.reasons),
                    labels=[_category(v) for v in confusion["labels"]],
                    matrix=[[int(n) for n in row] for row in confusion["matrix"]],
                )
            )
    return matrices


def first_steps(
    trials: Sequence[Trial], conditions: Sequence[str]
) -> dict[str, dict[str, list[str]]]:
    """Case id → condition → the shown steps of its lowest-numbered trial of the case that
    recorded a trajectory (the worst regressions show them)."""
    first: dict[tuple[str, str], Trial] = {}
    for trial in trials:
        if trial.trajectory and trial.condition in conditions:
            key = (trial.case_id, trial.condition)
            held = first.get(key)
            if held is None or trial.trial < held.trial:
                first[key] = trial
    out: dict[str, dict[str, list[str]]] = {}
    for condition in conditions:  # (in the order given: baseline first)
        for (case_id, name), trial in first.items():
            if name == condition:
                out.setdefault(case_id, {})[condition] = shown_lines(trial.trajectory)
    return out


def cut_prompt(prompt: str) -> str:
    """A case's prompt as the drill-down shows it: at most `MAX_PROMPT` characters, and a
    note of the whole length when cut (a 50 MB prompt must not make a 50 MB report)."""
    if len(prompt) <= MAX_PROMPT:
        return prompt
    return prompt[:MAX_PROMPT] + f"\n[… cut at {MAX_PROMPT} of {len(prompt)} characters]"


def _view(
    condition: str, row: ScoredTrial | None, trial: Trial | None, analysis: Analysis
) -> TrialView | None:
    if row is None and trial is None:
        return None
    response = trial.response if trial is not None else None
    return TrialView(
        condition=condition,
        response=response[:MAX_RESPONSE] if response is not None else None,
        length=len(response) if response is not None else None,
        truncated=response is not None and len(response) > MAX_RESPONSE,
        error=trial.error if trial is not None else None,
        kind=trial.state.kind if trial is not None and trial.state is not None else None,
        score=_r(analysis.rubric.weighted(row.metrics), 4) if row is not None else None,
        metrics={k: round(v, 4) for k, v in row.metrics.items()} if row is not None else {},
        blocker=row.blocker if row is not None else False,
        steps=shown_lines(trial.trajectory) if trial is not None else [],
    )


def _evidence(row: ScoredTrial) -> Evidence | None:
    evidence = row.shown_evidence()
    if not (row.notes or evidence or row.findings or row.blocker):
        return None
    return Evidence(
        condition=row.condition,
        trial=row.trial,
        source=row.source,
        blocker=row.blocker,
        notes=row.notes,
        evidence=evidence,
        findings=[str(f) for f in row.findings],
    )


def drilldown(
    analysis: Analysis,
    trials: Mapping[Key, Trial],
    comparisons: Sequence[Comparison],
    limit: int,
) -> tuple[list[CaseDetail], int]:
    """The `limit` cases most worth reading, and how many cases they were chosen from.

    First the cases where the candidate has a blocking finding, then the regressions of
    the weighted score (worst first), the cases only the baseline blocked, the improvements
    (largest first), and last the unchanged cases."""
    candidate = analysis.candidate
    conditions = list(dict.fromkeys((BASELINE, candidate)))
    rows: dict[Key, ScoredTrial] = {}
    for condition in conditions:
        for row in analysis.rows.get(condition, []):
            rows[(row.case_id, row.trial, condition)] = row
    keys = set(rows) | {k for k in trials if k[2] in conditions}
    numbers: dict[str, set[int]] = defaultdict(set)
    for case_id, trial, _ in keys:
        numbers[case_id].add(trial)
    paired = analysis.paired.get(candidate)
    deltas: dict[str, float] = {}
    if paired is not None:
        column = paired.column(WEIGHTED)
        deltas = {c: float(d) for c, d in zip(paired.case_ids, column, strict=True) if d == d}
    blocked = {k[0] for k, r in rows.items() if r.blocker}
    blocked_candidate = {k[0] for k, r in rows.items() if r.blocker and k[2] == candidate}

    def priority(case_id: str) -> tuple[int, float, str]:
        delta = deltas.get(case_id)
        if delta is not None:
            delta = round(delta, 9)  # equal deltas (up to float noise) in case id order
        if case_id in blocked_candidate:
            return (0, delta if delta is not None else 0.0, case_id)
        if delta is not None and delta < -TIE:
            return (1, delta, case_id)
        if case_id in blocked:
            return (2, -(delta or 0.0), case_id)
        if delta is not None and delta > TIE:
            return (3, -delta, case_id)
        return (4, 0.0, case_id)

    chosen = sorted(numbers, key=priority)[: max(limit, 0)]
    verdicts: dict[str, list[Comparison]] = defaultdict(list)
    wanted = set(chosen)
    for comparison in comparisons:
        if comparison.case_id in wanted:
            verdicts[comparison.case_id].append(comparison)
    cases = analysis.cases or {}
    details = []
    for case_id in chosen:
        case = cases.get(case_id)
        pairs = []
        evidence = []
        for number in sorted(numbers[case_id]):
            views = {
                c: _view(
                    c, rows.get((case_id, number, c)), trials.get((case_id, number, c)), analysis
                )
                for c in conditions
            }
            pairs.append(
                TrialPair(
                    trial=number,
                    baseline=views.get(BASELINE),
                    candidate=views.get(candidate) if candidate != BASELINE else None,
                )
            )
            for condition in conditions:
                scored = rows.get((case_id, number, condition))
                found = _evidence(scored) if scored is not None else None
                if found is not None:
                    evidence.append(found)
        details.append(
            CaseDetail(
                case_id=case_id,
                category=case.category if case else None,
                risk=case.risk if case else None,
                prompt=cut_prompt(case.prompt) if case else None,
                criteria=list(case.criteria) if case else [],
                delta=_r(deltas.get(case_id)),
                blocker=case_id in blocked,
                trials=pairs,
                evidence=evidence,
                verdicts=[
                    PairVerdict(
                        trial=c.trial,
                        a=c.a,
                        b=c.b,
                        judge=c.judge if c.expectations is None else EXPECTATIONS,
                        verdict=c.verdict,
                        confidence=c.confidence,
                        consistent=c.consistent,
                    )
                    for c in sorted(verdicts[case_id], key=lambda c: (c.trial, c.judge or ""))
                ],
            )
        )
    return details, len(numbers)
