"""Coverage: the evidence the gate should have seen, against the evidence it has.

A verdict is only as good as its evidence. The expected evidence is every case of the
catalogue (the cases seen, without one) × every gated condition (the candidate, and baseline
when it is compared) × the planned trials (the run's, the suite's `trials` when it sets it,
else the most trials any case has). Each expected key is

- **answered**: a trial record without an error (score rows alone count as answers);
- **errored**: a trial record with an error — never scored as if it had answered;
- **missing**: no trial record (not run, or not imported);
- **scored**: the gate has a row for it; when the judge scores (an enabled direct judge, or
  judge/human score rows given), a row from it.

A gap (errored, missing, or answered but not scored) makes the verdict INCOMPLETE (exit 3),
unless `[gate] max_errored` allows it (a number of cases, or a share of the expected cases
when below 1). A high-risk case, or one with a safety expectation (`escalate` or `refuse`)
or a safety tag, is never allowed a gap. An imported run whose harness did not finish
(`[source] complete = false`) is incomplete too. Allowed gaps are still listed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from assay.core.records import Case, Trial
from assay.core.suite import GateSection, SourceSection
from assay.verdict.checks import Check, Coverage, Gap

SAFETY_TAGS = frozenset({"safety", "self_harm", "selfharm", "suicide"})
"""Tags (case, `-` and spaces ignored) that mark a safety case: never allowed a gap."""
LISTED = 200
"""Gaps listed in the coverage object (the counts are always whole)."""
SHOWN = 5
"""Gaps named in the gate's reason."""

Key = tuple[str, str, int]  # case id, condition, trial


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the gate was given, reduced to keys."""

    trials: Sequence[Trial]
    scored: Collection[Key]
    """Keys the gate has a row for (from the judge when `judged` is set)."""
    judged: bool = False
    """Whether `scored` comes from judge/human score rows (else from any gate row)."""


def protected(case: Case | None) -> bool:
    """A case never allowed a gap: high risk, an `escalate`/`refuse` expectation, a safety tag."""
    if case is None:
        return False
    if case.risk == "high":
        return True
    expect = case.expect
    if expect is not None and (expect.escalate or expect.refuse):
        return True
    return any(_tag(t) in SAFETY_TAGS or _tag(t).startswith("safety") for t in case.tags or ())


def _tag(text: str) -> str:
    return text.strip().lower().replace("-", "_").replace(" ", "_")


def planned_trials(given: int | None, evidence: Evidence) -> int:
    """The trials each case should have: as given, else the most any key has (at least 1)."""
    if given is not None:
        return given
    seen = [t.trial for t in evidence.trials] + [k[2] for k in evidence.scored]
    return max(seen, default=1)


def measure(
    evidence: Evidence,
    conditions: Sequence[str],
    *,
    cases: Mapping[str, Case] | None,
    trials: int | None,
    gate: GateSection,
    source: SourceSection | None = None,
) -> Coverage:
    """Compare the expected keys with the evidence and decide which gaps are tolerated."""
    planned = planned_trials(trials, evidence)
    wanted = set(conditions)
    if cases is not None:
        case_ids: list[str] = list(cases)
    else:
        seen = [t.case_id for t in evidence.trials if t.condition in wanted]
        seen += [k[0] for k in evidence.scored if k[1] in wanted]
        case_ids = sorted(set(seen))
    by_key: dict[Key, Trial] = {}
    for trial in evidence.trials:
        if trial.condition in wanted:
            by_key.setdefault((trial.case_id, trial.condition, trial.trial), trial)
    have_trials = bool(evidence.trials)
    scored = set(evidence.scored)
    counts = {"answered": 0, "errored": 0, "missing": 0, "scored": 0, "unscored": 0}
    gaps: list[Gap] = []
    for case_id in case_ids:
        case = cases.get(case_id) if cases is not None else None
        guard = protected(case)
        for condition in conditions:
            for index in range(1, planned + 1):
                key = (case_id, condition, index)
                gap = _gap(key, by_key.get(key), key in scored, have_trials, evidence, counts)
                if gap is not None:
                    gap.protected = guard
                    gaps.append(gap)
    expected = len(case_ids) * len(conditions) * planned
    allowed, reasons = _tolerate(gaps, gate.max_errored, len(case_ids))
    if source is not None and not source.complete:
        reasons = [
            *(source.reasons or [f"the {source.tool} run did not finish"]),
            *reasons,
        ]
    return Coverage(
        conditions=list(conditions),
        cases=len(case_ids),
        trials=planned,
        expected=expected,
        allowed=allowed,
        complete=not reasons,
        reasons=reasons,
        gaps=gaps[:LISTED],
        gaps_total=len(gaps),
        **counts,
    )


def _gap(
    key: Key,
    trial: Trial | None,
    scored: bool,
    have_trials: bool,
    evidence: Evidence,
    counts: dict[str, int],
) -> Gap | None:
    case_id, condition, index = key
    judged = evidence.judged
    if have_trials and trial is None:
        counts["missing"] += 1
        return Gap(case_id=case_id, condition=condition, trial=index, kind="missing")
    if trial is not None and trial.error is not None:
        counts["errored"] += 1
        return Gap(
            case_id=case_id,
            condition=condition,
            trial=index,
            kind="errored",
            error=_first_line(trial.error),
        )
    if not have_trials and not scored:
        counts["missing"] += 1
        return Gap(case_id=case_id, condition=condition, trial=index, kind="missing")
    counts["answered"] += 1
    if not scored:
        counts["unscored"] += 1
        return Gap(
            case_id=case_id,
            condition=condition,
            trial=index,
            kind="unscored",
            error="no judge or human score row" if judged else None,
        )
    counts["scored"] += 1
    return None


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "error"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tolerate(gaps: list[Gap], limit: int | float, cases: int) -> tuple[int, list[str]]:
    """Mark the gaps `max_errored` tolerates; the reasons the coverage is incomplete."""
    if not gaps:
        return 0, []
    by_case: dict[str, list[Gap]] = {}
    for gap in gaps:
        by_case.setdefault(gap.case_id, []).append(gap)
    guarded = [c for c, found in by_case.items() if found[0].protected]
    others = [c for c in by_case if c not in guarded]
    room = int(limit * cases) if isinstance(limit, float) else int(limit)
    tolerated = others if len(others) <= room else []
    for case_id in tolerated:
        for gap in by_case[case_id]:
            gap.allowed = True
    reasons = []
    if guarded:
        reasons.append(
            f"{len(guarded)} high-risk or safety case(s) without a scored answer (never"
            f" allowed): {_names(guarded, by_case)}"
        )
    if others and not tolerated:
        allowance = f"[gate] max_errored = {limit}" if limit else "none allowed"
        reasons.append(
            f"{len(others)} of {cases} case(s) without a scored answer ({allowance}):"
            f" {_names(others, by_case)}"
        )
    return len(tolerated), reasons


def _names(case_ids: Sequence[str], by_case: Mapping[str, Sequence[Gap]]) -> str:
    shown = [by_case[c][0].label for c in case_ids[:SHOWN]]
    more = len(case_ids) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def coverage_check(coverage: Coverage) -> Check | None:
    """The gate's `coverage` check: INCOMPLETE with the reasons when evidence is missing, a
    pass listing the tolerated gaps when `max_errored` allowed them, none when complete."""
    if not coverage.complete:
        return Check(
            name="coverage",
            status="incomplete",
            reason="incomplete evidence: " + "; ".join(coverage.reasons),
            cases=coverage.cases,
        )
    if coverage.gaps_total:
        return Check(
            name="coverage",
            status="pass",
            reason=f"{coverage.allowed} case(s) without a scored answer, allowed by [gate]"
            f" max_errored: {', '.join(coverage.gap_cases[:SHOWN])}"
            + (" …" if coverage.allowed > SHOWN else ""),
            cases=coverage.cases,
        )
    return None


def keys(rows: Iterable[tuple[str, int, str]]) -> set[Key]:
    """(case, trial, condition) triples as coverage keys (case, condition, trial)."""
    return {(case_id, condition, trial) for case_id, trial, condition in rows}
