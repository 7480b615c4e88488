"""Each case × condition of an evaluation as one record (`Result.cases`): its responses, its
figures, its per-case checks and whether it passed, as people (and test runners) read it.

A case passes under a condition when it ran, none of its trials errored, no trial has a blocking
finding and each of its figures meets its per-case threshold (`[scoring.thresholds]`): the
per-case rules the gate applies to the gated condition (`gated`), applied to every condition.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from assay.core.records import Expect, Trial
from assay.verdict.pipeline import Evaluation
from assay.verdict.rows import ScoredTrial
from assay.verdict.thresholds import bounded_figures, case_metric_means


class MetricCheck(BaseModel):
    """A case's figure (the mean over its trials) against its per-case threshold."""

    metric: str
    source: str
    """What produced the figure: a scorer (`contains`) or a judge (`judge:<model>`)."""
    value: float
    min: float | None = None
    max: float | None = None
    passed: bool
    message: str
    """`contains 0 < min 1` when missed; `contains=1 (min 1)` when met."""

    @property
    def threshold(self) -> str:
        """The threshold as text: `min 1`, `max 0.2`, `min 0.5, max 1`."""
        return bound_text(self.min, self.max)


class CaseResult(BaseModel):
    """One case under one condition."""

    case_id: str
    condition: str
    gated: bool
    """Whether the release gate decides for this condition (its failures fail the gate)."""
    passed: bool
    """It ran, and no trial errored, had a blocking finding or missed a threshold."""
    ran: bool
    """Some trial of it was run (False: a case a sequential run settled its verdict without,
    or one the run never reached; such a case has not passed)."""
    errored: bool
    """Some trial of the case errored (no answer to score)."""
    responses: list[str]
    """The answer of each trial, in trial order (an errored trial's is empty)."""
    errors: list[str]
    scores: dict[str, float]
    """Each metric's mean over the trials: the scorers' and the judges'."""
    sources: dict[str, str]
    """metric → what produced it (a scorer, `judge:<model>`)."""
    checks: list[MetricCheck]
    blockers: list[str]
    """The blocking findings, one line per trial that has any."""
    reasons: list[str]
    """What the judges said of each trial (`judge:<model>, trial 1: ...`)."""
    expect: Expect | None = None
    """The case's expectations (`contains`, `regex`, `refuse`, ...), when it has any."""

    @property
    def response(self) -> str | None:
        """The first trial's response (None: no trial)."""
        return self.responses[0] if self.responses else None

    @property
    def problems(self) -> list[str]:
        """Why the case did not pass: errors, blocking findings, missed thresholds."""
        return [
            *([] if self.ran else ["not run"]),
            *(f"error: {e}" for e in self.errors),
            *self.blockers,
            *(f"{c.source}: {c.message}" for c in self.checks if not c.passed),
        ]


def case_results(evaluation: Evaluation) -> list[CaseResult]:
    """Every case × condition the evaluation holds: conditions sorted, cases in catalogue
    order (else sorted)."""
    return list(_results(evaluation))


def _results(evaluation: Evaluation) -> Iterator[CaseResult]:
    analysis = evaluation.analysis
    inputs = evaluation.inputs
    catalogue = inputs.cases or {}
    trials: dict[tuple[str, str], list[Trial]] = {}
    for trial in inputs.trials:
        trials.setdefault((trial.condition, trial.case_id), []).append(trial)
    judged: dict[tuple[str, str], list[ScoredTrial]] = {}
    for row in inputs.scores:
        judged.setdefault((row.condition, row.case_id), []).append(row)
    conditions = sorted({c for c, _ in trials} | set(analysis.rows))
    ids = list(catalogue) or sorted(
        {case for _, case in trials} | {r.case_id for rs in analysis.rows.values() for r in rs}
    )
    for condition in conditions:
        means = case_metric_means(evaluation.results, condition, inputs.scores)
        checks: dict[str, list[MetricCheck]] = {}
        for bounded in bounded_figures(
            evaluation.results, evaluation.config.thresholds, condition, means=means
        ):
            checks.setdefault(bounded.case_id, []).append(
                MetricCheck(
                    metric=bounded.metric,
                    source=bounded.source,
                    value=bounded.value,
                    min=bounded.bound.min,
                    max=bounded.bound.max,
                    passed=not bounded.missed,
                    message="; ".join(bounded.missed)
                    or f"{bounded.metric}={bounded.value:.3g}"
                    f" ({bound_text(bounded.bound.min, bounded.bound.max)})",
                )
            )
        blocked: dict[str, list[str]] = {}
        for row in analysis.rows.get(condition, []):
            if row.blocker:
                blocked.setdefault(row.case_id, []).append(_blocker(row))
        for case_id in ids:
            ran = sorted(trials.get((condition, case_id), []), key=lambda t: t.trial)
            figures = means.get(case_id, {})
            errors = [f"trial {t.trial}: {t.error}" for t in ran if t.error is not None]
            case_checks = checks.get(case_id, [])
            blockers = blocked.get(case_id, [])
            case = catalogue.get(case_id)
            yield CaseResult(
                case_id=case_id,
                condition=condition,
                gated=condition == analysis.candidate,
                passed=bool(ran)
                and not errors
                and not blockers
                and all(c.passed for c in case_checks),
                ran=bool(ran),
                errored=bool(errors),
                responses=[t.response for t in ran],
                errors=errors,
                scores={metric: value for metric, (_, value) in sorted(figures.items())},
                sources={metric: source for metric, (source, _) in sorted(figures.items())},
                checks=case_checks,
                blockers=blockers,
                reasons=_reasons(judged.get((condition, case_id), [])),
                expect=case.expect if case is not None else None,
            )


def bound_text(low: float | None, high: float | None) -> str:
    """A per-case threshold as text: `min 1`, `max 0.2`, `min 0.5, max 1`."""
    sides = (("min", low), ("max", high))
    return ", ".join(f"{side} {value:g}" for side, value in sides if value is not None)


def _blocker(row: ScoredTrial) -> str:
    said = ", ".join([*map(str, row.findings), *([row.notes] if row.notes else [])])
    return f"trial {row.trial}: blocking finding: {said or 'blocker'}"


def _reasons(rows: list[ScoredTrial]) -> list[str]:
    reasons = []
    for row in sorted(rows, key=lambda r: (r.source or "", r.trial)):
        text = _reason(row)
        if text:
            reasons.append(f"{row.source or 'scores'}, trial {row.trial}: {text}")
    return reasons


def _reason(row: ScoredTrial) -> str | None:
    """A score row's justification (per criterion: `correctness: ...; safety: ...`), else
    its notes, else its evidence."""
    said = row.scored.justification if row.scored is not None else None
    if isinstance(said, dict):
        return "; ".join(f"{key}: {value}" for key, value in said.items()) or None
    return said or row.notes or row.shown_evidence()
