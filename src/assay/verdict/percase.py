"""A sequential run's per-case checks: what a PASS before the last look needs beyond the
comparison (docs/sequential.md, "What an early stop checks").

Per-case checks are those a single case can fail whatever the others show: a blocking finding
(any scorer's `blocker`, a `tools` forbidden call, a judge's blocker), a per-case threshold
(`[scoring.thresholds]`, e.g. `tools_correct = 1`) and a scorer's error row (an `expect.*`
or `tools` check that could not be made). A look's comparison rests on the cases it looked at
(the error rate the looks spend covers that); a per-case check has no error rate to spend, so
a PASS needs it on every case: the candidate's trials (judged) on the cases not looked at.
Only a suite that opts in (`[gate] sampled_checks`) passes on the cases checked, with an exact
Clopper-Pearson bound on the rate of cases that would fail them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from assay.core.records import Trial
from assay.verdict.checks import Check, Sequential
from assay.verdict.gate import blocker_check
from assay.verdict.rows import ScoredTrial


def rate_bound(failing: int, cases: int, level: float) -> float:
    """The exact (Clopper-Pearson) one-sided upper confidence bound at `level` on a rate
    seen `failing` times in `cases` draws: 1 − (1 − level)^(1/n) when none failed."""
    if cases <= 0:
        return 1.0
    if failing >= cases:
        return 1.0
    from scipy.stats import beta  # scipy.stats costs 0.3 s to import: only here

    return float(beta.ppf(level, failing + 1, cases - failing))


def sampled_text(failing: int, checked: int, total: int, sampled: int, level: float) -> str:
    """`per-case checks sampled: 0 failing in 15 of 28 cases: rate below 18% at 95% (...)`;
    `sampled`: the cases the bound rests on (those checked at random, not every protected
    case run first)."""
    bound = rate_bound(failing, sampled, level)
    return (
        f"per-case checks sampled ([gate] sampled_checks): {failing} failing in {checked} of"
        f" {total} cases: rate below {bound:.0%} at {level:.0%} (exact Clopper-Pearson bound,"
        f" one-sided, on the {sampled} case(s) drawn at random)"
    )


def looked_rows(rows: Sequence[ScoredTrial], looked: Collection[str]) -> list[ScoredTrial]:
    """The rows of the cases a look holds: what its comparison and corpus bounds rest on."""
    return [r for r in rows if r.case_id in looked]


def with_blockers(checks: list[Check], rows: Sequence[ScoredTrial], candidate: str) -> None:
    """Replace the `blockers` check (made on the looked cases) by one on every row of the
    candidate: the cases checked beyond the look too."""
    mine = [r for r in rows if r.condition == candidate]
    for index, check in enumerate(checks):
        if check.name == "blockers":
            checks[index] = blocker_check(mine)


def held(stop: Sequential, candidate: str) -> Callable[[Trial], bool]:
    """Whether a look's evaluation holds a trial: every condition's on a case looked at, the
    candidate's alone on a case checked beyond them (a baseline trial there, run before, is
    neither judged nor compared)."""
    looked, alone = set(stop.case_ids), set(stop.checked_ids)
    return lambda t: t.case_id in looked or (t.case_id in alone and t.condition == candidate)
