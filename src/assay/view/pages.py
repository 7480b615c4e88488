"""What each page of the viewer shows, gathered from the read-only store (no HTML here)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from assay.store.views import CaseRow, CaseScores, ReadOnlyStore, TrialRow
from assay.view.diff import Segment, word_diff
from assay.view.matrix import PAGE_TEXT, Matrix

PLACE = ("case_id", "trial", "condition")  # a score row's key, shown as its heading


@dataclass(slots=True)
class Column:
    """One condition's answer to one trial of a case."""

    condition: str
    trial: TrialRow | None
    diff: list[Segment] | None = None
    """Word diff against the baseline's answer to the same trial (None: baseline itself, or
    either side has no answer)."""


@dataclass(slots=True)
class TrialLine:
    trial: int
    columns: list[Column] = field(default_factory=list)


@dataclass(slots=True)
class ScoreView:
    kind: str
    condition: str
    trial: int
    title: str
    fields: list[tuple[str, Any]]
    blocker: bool


def stop_line(matrix: Matrix) -> str:
    """What a sequential run's stop means for its cases: `Sequential run: verdict after 20 of
    60 cases, look 1 of 3; 40 cases not run (neither looked at nor checked); per-case checks
    on 20 of 60 cases.` (the cases not run are the report's `not_looked`)."""
    stop = matrix.sequential or {}
    cases, total = _count(stop.get("cases")), _count(stop.get("total_cases"))
    look, looks = _count(stop.get("look")), _count(stop.get("looks"))
    reached = stop.get("stopped_early") is True or look == looks
    what = "verdict" if reached else "stopped without a settled verdict"
    after = f"every case ({total})" if cases >= total else f"{cases} of {total} cases"
    line = f"Sequential run: {what} after {after}, look {look} of {looks}"
    unrun = sum(matrix.unlooked)
    if unrun:
        line += f"; {unrun} cases not run (neither looked at nor checked)"
    sampled, checked = stop.get("sampled"), _count(stop.get("checked"))
    if isinstance(sampled, str) and sampled:
        line += f"; {sampled}"
    elif checked:
        line += f"; per-case checks on {checked} of {total} cases"
    return line + "."


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def case_page(store: ReadOnlyStore, matrix: Matrix, case_id: str) -> dict[str, Any] | None:
    """The case page's data, or None when the run has no such case."""
    return next(case_pages(store, matrix, [case_id]))[1]


def case_pages(
    store: ReadOnlyStore, matrix: Matrix, case_ids: list[str], chunk: int = 500
) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each case's page data (None: no such case), the store read for `chunk` cases at a
    time (a query per table, not per case: the export's thousands of case pages)."""
    run_id = matrix.run_id
    previous_run = store.previous_run(run_id)
    for start in range(0, len(case_ids), chunk):
        ids = case_ids[start : start + chunk]
        cases = store.cases_of(run_id, ids)
        trials: dict[str, list[TrialRow]] = {}
        for trial in store.trials(run_id, ids, cut=PAGE_TEXT):
            trials.setdefault(trial.case_id, []).append(trial)
        scores = store.scores_of(run_id, ids)
        wanted = set(ids)
        checks: dict[str, list[dict[str, Any]]] = {}
        for check in (matrix.report or {}).get("case_checks", []):
            if check.get("case_id") in wanted:
                checks.setdefault(str(check.get("case_id")), []).append(check)
        before = store.cases_of(previous_run, ids) if previous_run is not None else {}
        for case_id in ids:
            case, tried = cases.get(case_id), trials.get(case_id, [])
            if case is None and not tried:
                yield case_id, None
                continue
            data = _case_page(matrix, case_id, case, tried, scores[case_id])
            # the checks of a case the sequential verdict never looked at are no verdict on it
            data["checks"] = [] if data["unlooked"] else checks.get(case_id, [])
            data["previous_run"] = previous_run if case_id in before else None
            yield case_id, data


def _case_page(
    matrix: Matrix, case_id: str, case: CaseRow | None, trials: list[TrialRow], scored: CaseScores
) -> dict[str, Any]:
    conditions = list(matrix.conditions) or sorted({t.condition for t in trials})
    baseline = matrix.baseline if matrix.baseline in conditions else conditions[0]
    numbers = sorted({t.trial for t in trials}) or [1]
    by_key = {(t.condition, t.trial): t for t in trials}
    lines = []
    for n in numbers:
        base = by_key.get((baseline, n))
        line = TrialLine(n)
        for condition in conditions:
            trial = by_key.get((condition, n))
            diff = None
            if condition != baseline and _answered(base) and _answered(trial):
                assert base is not None and trial is not None
                diff = word_diff(str(base.record["response"]), str(trial.record["response"]))
            line.columns.append(Column(condition, trial, diff))
        lines.append(line)
    order = {c: i for i, c in enumerate(conditions)}
    scores = sorted(
        (_score_view(kind, row) for kind, row in scored.rows),
        key=lambda s: (s.trial, order.get(s.condition, len(order)), s.kind),
    )
    ids = matrix.ids
    at = matrix.index.get(case_id, -1)
    return {
        "case_id": case_id,
        "case": case.record if case is not None else None,
        "category": case.category if case is not None else "",
        "risk": case.risk if case is not None else "",
        "baseline": baseline,
        "gated_baseline": matrix.baseline,
        "unlooked": stop_line(matrix) if at >= 0 and matrix.looked_past(at) else None,
        "page_text": PAGE_TEXT,
        "conditions": conditions,
        "lines": lines,
        "scores": scores,
        "answers": scored.answers,
        "previous_case": ids[at - 1] if at > 0 else None,
        "next_case": ids[at + 1] if 0 <= at < len(ids) - 1 else None,
    }


def _answered(trial: TrialRow | None) -> bool:
    return (
        trial is not None
        and trial.record.get("error") is None
        and isinstance(trial.record.get("response"), str)
    )


def _score_view(kind: str, row: dict[str, Any]) -> ScoreView:
    condition = str(row.get("condition") or row.get("b") or "")
    trial = row.get("trial")
    if kind == "comparison":
        title = f"pairwise {row.get('a')} vs {row.get('b')} · {row.get('judge') or 'judge'}"
    elif kind == "scorer":
        title = f"scorer {row.get('scorer')}"
    else:
        title = str(row.get("source") or "score row")
    shown = [(k, v) for k, v in row.items() if k not in PLACE and v is not None]
    return ScoreView(
        kind,
        condition,
        trial if isinstance(trial, int) else 0,
        title,
        shown,
        row.get("blocker") is True or _metric(row, "blocker") > 0,
    )


def _metric(row: dict[str, Any], name: str) -> float:
    metrics = row.get("metrics")
    value = metrics.get(name) if isinstance(metrics, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


@dataclass(slots=True)
class Change:
    """One case of two runs compared: the gated condition's outcome in each."""

    case_id: str
    before: bool | None
    after: bool | None
    weighted_before: float | None
    weighted_after: float | None
    new_errors: list[str]
    existed: bool = True
    """Whether the earlier run had the case at all."""

    @property
    def flipped(self) -> str | None:
        if self.before is True and self.after is False:
            return "pass → fail"
        if self.before is False and self.after is True:
            return "fail → pass"
        return None

    @property
    def delta(self) -> float | None:
        if self.weighted_before is None or self.weighted_after is None:
            return None
        return self.weighted_after - self.weighted_before


def compare_page(before: Matrix, after: Matrix) -> dict[str, Any]:
    """Two runs compared: cases that flipped, moved or newly errored, and both reports'
    paired deltas side by side."""
    candidate = after.candidate or (after.conditions[-1] if after.conditions else "")
    now, was = after.columns.get(candidate), before.columns.get(candidate)
    changes = []
    for i, case_id in enumerate(after.ids):
        j = before.index.get(case_id)
        new_errors = [
            c
            for c, column in after.columns.items()
            if column.errored[i]
            and not (j is not None and c in before.columns and before.columns[c].errored[j])
        ]
        change = Change(
            case_id,
            before.passed[j] if j is not None else None,
            after.passed[i],
            was.weighted[j] if was is not None and j is not None else None,
            now.weighted[i] if now is not None else None,
            new_errors,
            j is not None,
        )
        if change.flipped or change.new_errors or (change.delta or 0.0) != 0.0:
            changes.append(change)
    changes.sort(key=lambda c: (c.flipped is None, not c.new_errors, c.delta or 0.0))
    return {
        "before": before,
        "after": after,
        "candidate": candidate,
        "changes": changes,
        "flipped": sum(1 for c in changes if c.flipped),
        "errors": sum(1 for c in changes if c.new_errors),
        "deltas": _deltas(before.report, after.report),
        "only_before": len(before.index.keys() - after.index.keys()),
    }


def _deltas(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> list[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]]:
    """(condition, metric, delta before, delta after) from both reports' comparisons."""

    def index(report: dict[str, Any] | None) -> dict[tuple[str, str], dict[str, Any]]:
        found = {}
        for comparison in (report or {}).get("comparisons", []):
            for delta in comparison.get("deltas", []):
                found[(str(comparison.get("condition")), str(delta.get("metric")))] = delta
        return found

    old, new = index(before), index(after)
    keys = list(new) + [k for k in old if k not in new]
    return [(c, m, old.get((c, m)), new.get((c, m))) for c, m in keys]
