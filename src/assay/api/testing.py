"""What test runners show of an evaluation: each case × condition as a test outcome, the
release gate as one more, and a failure message people can act on.

The pytest plugin (`assay.pytest_plugin`) turns these into test items; they are plain data
(pydantic), so a run evaluated once can be shared with other processes (pytest-xdist
workers) as JSON.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from assay.api.cases import CaseResult
from assay.api.results import Result
from assay.core.text import cut

Status = Literal["pass", "fail", "xfail", "skip"]
"""`xfail`: a condition the gate does not decide for missed a per-case rule (shown, not gated);
`skip`: a case a sequential run never looked at (its verdict was reached before it)."""

GATE_ITEM = "release_gate"
SHOWN_TRIALS = 3
SHOWN_CHARS = 200


class Outcome(BaseModel):
    """One test item's result: its name (`case[condition]`, or `release_gate[candidate]`),
    status and the lines that explain it (the checks' figures, judge scores, findings)."""

    name: str
    status: Status
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class Outcomes(BaseModel):
    """Every item's outcome of one evaluated suite; `error` when it could not be evaluated."""

    items: dict[str, Outcome] = {}
    error: str | None = None


def item_name(case_id: str, condition: str) -> str:
    return f"{case_id}[{condition}]"


def outcomes(result: Result, gated: str | None = None) -> Outcomes:
    """Each case × condition of the evaluation, then the release gate; with `gated` (the
    condition the whole suite's gate decides for, when `result` evaluated part of it), the
    cases alone, their misses under `gated` failing and under the others `xfail`."""
    candidate = gated or result.evaluation.analysis.candidate
    items: dict[str, Outcome] = {}
    stop = result.evaluation.analysis.gate.sequential
    looked = set(stop.case_ids) if stop is not None else None
    checked = set(stop.checked_ids) if stop is not None else set()
    for case in result.cases:
        name = item_name(case.case_id, case.condition)
        ran = case.case_id in checked and case.condition == candidate  # per-case checks
        if looked is not None and stop is not None and case.case_id not in looked and not ran:
            lines = [f"{case.case_id} [{case.condition}]: not run: {stop.headline}"]
            items[name] = Outcome(name=name, status="skip", lines=lines)
            continue
        status: Status = (
            "pass" if case.passed else ("fail" if case.condition == candidate else "xfail")
        )
        items[name] = Outcome(name=name, status=status, lines=describe(case, status, candidate))
    if gated is None:
        gate = item_name(GATE_ITEM, candidate)
        items[gate] = Outcome(
            name=gate,
            status="pass" if result.passed else "fail",
            lines=explain(result).splitlines(),
        )
    return Outcomes(items=items)


def describe(case: CaseResult, status: Status, candidate: str) -> list[str]:
    """A case's outcome as a test runner shows it: the verdict, then for a miss what went
    wrong, the response(s) (trimmed), the expectation and the judges' reasons, then the
    figures (`scorer: metric=value`, with the threshold when it has one)."""
    head = {"pass": "PASS", "fail": "FAIL", "xfail": "MISSED (not gated)", "skip": "NOT RUN"}[
        status
    ]
    lines = [f"{case.case_id} [{case.condition}]: {head}"]
    if status == "xfail":
        lines.append(f"  (the gate decides for {candidate}, not {case.condition})")
    if not case.passed:
        lines += [f"  {p}" for p in case.problems]
        lines += [f"  {line}" for line in _missed_details(case)]
    figures = _figures(case)
    lines += [f"  {f}" for f in figures]
    if not figures and case.passed:
        lines.append("  nothing scored this case")
    return lines


def _missed_details(case: CaseResult) -> list[str]:
    """The response(s), the expectation and the judges' reasons of a case that missed."""
    lines = []
    shown = [(n, r) for n, r in enumerate(case.responses, 1) if r][:SHOWN_TRIALS]
    for number, response in shown:
        label = "response" if len(case.responses) == 1 else f"response (trial {number})"
        lines.append(f"{label}: {trimmed(response)}")
    if case.expect is not None:
        wanted = case.expect.model_dump(mode="json", exclude_none=True)
        said = "; ".join(
            f"{key} {json.dumps(value, ensure_ascii=False)}" for key, value in wanted.items()
        )
        lines.append(f"expected: {said}")
    lines += [f"reason: {trimmed(reason)}" for reason in case.reasons[:SHOWN_TRIALS]]
    return lines


def trimmed(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` on one line (runs of white space as one space), cut to `limit` characters."""
    flat = " ".join(text.split())
    return cut(flat, limit)


def _figures(case: CaseResult) -> list[str]:
    """`scorer: metric=value, ...` per scorer or judge (means over the case's trials), a
    metric with a per-case threshold shown against it."""
    bounds = {c.metric: c for c in case.checks}
    by_source: dict[str, list[str]] = {}
    for metric, value in sorted(case.scores.items()):
        check = bounds.get(metric)
        figure = f"{metric}={value:.3g}"
        if check is not None:
            figure += f" ({check.threshold})"
        by_source.setdefault(case.sources[metric], []).append(figure)
    return [f"{source}: {', '.join(values)}" for source, values in sorted(by_source.items())]


def explain(result: Result, worst: int = 5) -> str:
    """The verdict, the gate checks that failed or are undecided (with their figures), the
    blocking findings and the worst cases: what an assertion on a verdict prints."""
    report = result.report
    lines = [f"release gate: {report.verdict} for {report.candidate} ({report.mode} gate)"]
    lines += [f"  - {reason}" for reason in report.reasons]
    failing = [c for c in report.checks if c.status in ("fail", "inconclusive", "incomplete")]
    if failing:
        lines.append("checks:")
    lines += [f"  - {c.status.upper()} {c.name}: {c.reason}" for c in failing]
    if report.blockers:
        lines.append("blocking findings:")
    for blocker in report.blockers[:worst]:
        said = ", ".join([*blocker.findings, *([blocker.notes] if blocker.notes else [])])
        lines.append(
            f"  - {blocker.case_id} trial {blocker.trial} [{blocker.condition}]: {said or 'blocker'}"
        )
    failed = result.failed_cases
    if failed:
        lines.append("failing cases:")
    for missed in failed[:worst]:
        problems = "; ".join(missed.problems)
        lines.append(f"  - {missed.case_id} [{missed.condition}]: {problems}")
        lines += [f"      {line}" for line in _missed_details(missed)]
    if report.worst_regressions:
        lines.append("worst cases:")
    for case in report.worst_regressions[:worst]:
        drops = ", ".join(
            f"{m} {v:+.3f}" for m, v in sorted(case.metrics.items()) if v is not None and v < 0
        )
        lines.append(
            f"  - {case.case_id} ({case.risk or '-'} risk, {case.category or '-'}): weighted"
            f" {case.delta:+.3f}" + (f"; {drops}" if drops else "")
        )
    if result.output is not None:
        lines.append(f"reports: {result.output}")
    return "\n".join(lines)


def assert_passes(result: Result) -> None:
    """Raise AssertionError with `explain(result)` unless the release gate passed."""
    if not result.passed:
        raise AssertionError(explain(result))
