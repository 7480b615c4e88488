"""What test runners show of an evaluation: each case × condition as a test outcome, the
release gate as one more, and a failure message people can act on.

The pytest plugin (`assay.pytest_plugin`) turns these into test items; they are plain data
(pydantic), so a run evaluated once can be shared with other processes (pytest-xdist
workers) as JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel

from assay.api.results import Result
from assay.verdict.thresholds import case_metric_means, threshold_misses

Status = Literal["pass", "fail", "xfail", "skip"]
"""`xfail`: a condition the gate does not decide for missed a per-case rule (shown, not gated);
`skip`: a case a sequential run never looked at (its verdict was reached before it)."""

GATE_ITEM = "release_gate"


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


def outcomes(result: Result) -> Outcomes:
    """Each case × condition of the evaluation, then the release gate."""
    evaluation = result.evaluation
    analysis = evaluation.analysis
    inputs = evaluation.inputs
    thresholds = evaluation.config.thresholds
    conditions = sorted({t.condition for t in inputs.trials} | set(analysis.rows))
    cases = list(inputs.cases or {}) or sorted(
        {r.case_id for rs in analysis.rows.values() for r in rs}
    )
    items: dict[str, Outcome] = {}
    stop = analysis.gate.sequential
    looked = set(stop.case_ids) if stop is not None else None
    for condition in conditions:
        gated = condition == analysis.candidate
        rows = analysis.rows.get(condition, [])
        means = case_metric_means(evaluation.results, condition, inputs.scores)
        misses: dict[str, list[str]] = {}
        for case, source, _metric, message in threshold_misses(
            evaluation.results, thresholds, condition, rows
        ):
            misses.setdefault(case, []).append(f"{source}: {message}")
        for case_id in cases:
            if looked is not None and stop is not None and case_id not in looked:
                name = item_name(case_id, condition)
                lines = [f"{case_id} [{condition}]: not run: {stop.headline}"]
                items[name] = Outcome(name=name, status="skip", lines=lines)
                continue
            problems = [
                *(
                    f"trial {t.trial}: error: {t.error}"
                    for t in inputs.trials
                    if t.case_id == case_id and t.condition == condition and t.error is not None
                ),
                *(
                    _blocker(r.trial, r.findings, r.notes)
                    for r in rows
                    if r.case_id == case_id and r.blocker
                ),
                *misses.get(case_id, []),
            ]
            figures = _figures(means.get(case_id, {}).items())
            status: Status = "pass" if not problems else ("fail" if gated else "xfail")
            head = {"pass": "PASS", "fail": "FAIL", "xfail": "MISSED (not gated)"}[status]
            lines = [f"{case_id} [{condition}]: {head}"]
            if problems and not gated:
                lines.append(f"  (the gate decides for {analysis.candidate}, not {condition})")
            lines += [f"  {p}" for p in problems] + [f"  {f}" for f in figures]
            if not figures and not problems:
                lines.append("  nothing scored this case")
            items[item_name(case_id, condition)] = Outcome(
                name=item_name(case_id, condition), status=status, lines=lines
            )
    gate = item_name(GATE_ITEM, analysis.candidate)
    items[gate] = Outcome(
        name=gate,
        status="pass" if result.passed else "fail",
        lines=explain(result).splitlines(),
    )
    return Outcomes(items=items)


def _blocker(trial: int, findings: Sequence[object], notes: str | None) -> str:
    said = ", ".join([*map(str, findings), *([notes] if notes else [])])
    return f"trial {trial}: blocking finding: {said or 'blocker'}"


def _figures(means: Iterable[tuple[str, tuple[str, float]]]) -> list[str]:
    """`scorer: metric=value, ...` per scorer or judge (means over the case's trials)."""
    by_source: dict[str, list[str]] = {}
    for metric, (source, value) in sorted(means):
        by_source.setdefault(source, []).append(f"{metric}={value:.3g}")
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
    missed = [c for c in report.case_checks if not c.passed]
    if missed:
        lines.append("failing cases:")
    for check in missed[:worst]:
        lines.append(f"  - {check.case_id} {check.check}: {check.message}")
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
