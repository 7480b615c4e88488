"""A suite run's evaluation recorded in the store (`store/results.py`), so `assay view` shows
the run, its cases and its scores after the output folder has moved on to the next run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from assay.core.jsonl import json_line, model_line
from assay.core.records import Case, ScoreRow
from assay.reports.build import weighted_by_case
from assay.reports.model import Report
from assay.reports.render import render_json
from assay.store import Store
from assay.store.results import CaseEntry, Cell, ScoreEntry, save_results
from assay.verdict.pipeline import Evaluation


def record_results(
    store: Store,
    run_id: str,
    suite: str,
    cases: Sequence[Case],
    evaluation: Evaluation,
    report: Report,
    judge_rows: Sequence[ScoreRow] = (),
) -> None:
    """Record the run's suite, verdict, report, cases, score rows (the judges' `judge_rows`
    and the scorers') and per-cell figures."""
    save_results(
        store,
        run_id,
        suite=suite,
        verdict=evaluation.verdict,
        report=render_json(report),
        cases=(
            CaseEntry(c.id, c.category, c.risk, c.model_dump_json(exclude_none=True)) for c in cases
        ),
        scores=_scores(evaluation, judge_rows),
        cells=_cells(evaluation, report),
    )


def _scores(evaluation: Evaluation, judge_rows: Sequence[ScoreRow]) -> Iterator[ScoreEntry]:
    inputs = evaluation.inputs
    for row in judge_rows:
        yield ScoreEntry("judge", row.case_id, row.trial, row.condition, model_line(row))
    for score in evaluation.results:
        yield ScoreEntry(
            "scorer", score.case_id, score.trial, score.condition, json_line(score.as_json())
        )
    for comparison in inputs.comparisons:
        yield ScoreEntry(
            "comparison",
            comparison.case_id,
            comparison.trial,
            comparison.b,
            model_line(comparison),
        )


def _cells(evaluation: Evaluation, report: Report) -> Iterator[Cell]:
    blocked = {(b.case_id, b.condition) for b in report.blockers}
    analysis = evaluation.analysis
    conditions = sorted({t.condition for t in evaluation.inputs.trials})
    for condition in conditions:
        weighted = weighted_by_case(analysis, condition)
        keys = {t.case_id for t in evaluation.inputs.trials if t.condition == condition}
        for case_id in sorted(keys | set(weighted)):
            yield Cell(case_id, condition, weighted.get(case_id), (case_id, condition) in blocked)
