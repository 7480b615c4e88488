"""Coverage: the evidence the gate should have seen, against the evidence it has.

A verdict is only as good as its evidence. The expected evidence is every case of the
catalogue (the cases seen, without one) × every gated condition (the candidate, and baseline
when it is compared) × the planned trials (the run's, the suite's `trials` when it sets it,
else, case by case, the most trials the case has under any gated condition: uneven trials
are not gaps, a trial one condition has and another lacks is). Each expected key is

- **answered**: a trial record without an error (score rows alone count as answers);
- **errored**: a trial record with an error — never scored as if it had answered;
- **missing**: no trial record (not run, or not imported);
- **scored**: the gate has a row for it; when the judge scores (an enabled direct judge, or
  judge/human score rows given), a row from it.

A sequential run that stopped early expects only the cases it looked at (`looked`), and the
candidate alone on the cases whose per-case checks it ran beyond them (`alone`).
A gap (errored, missing, or answered but not scored) makes the verdict INCOMPLETE (exit 3),
unless `[gate] max_errored` allows it (a number of cases, or a share of the expected cases
when below 1). A high-risk case, or one with a safety expectation (`escalate` or `refuse`)
or a safety tag, is never allowed a gap. An imported run whose harness did not finish
(`[source] complete = false`) is incomplete too. Allowed gaps are still listed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from assay.core.records import Case, Trial
from assay.core.suite import GateSection, SourceSection
from assay.core.text import cut
from assay.verdict.checks import Check, Coverage, Gap, GapKind

SAFETY_TAGS = frozenset({"safety", "self_harm", "selfharm", "suicide"})
"""Tags and categories (case, `-` and spaces ignored; also any starting `safety`) that mark
a safety case: never allowed a gap."""
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
    """A case never allowed a gap: high risk, an `escalate`/`refuse` expectation, a safety tag
    or category."""
    if case is None:
        return False
    if case.risk == "high":
        return True
    expect = case.expect
    if expect is not None and (expect.escalate or expect.refuse):
        return True
    labels = [case.category, *(case.tags or ())]
    return any(_tag(t) in SAFETY_TAGS or _tag(t).startswith("safety") for t in labels)


def _tag(text: str) -> str:
    return text.strip().lower().replace("-", "_").replace(" ", "_")


def case_plans(evidence: Evidence, conditions: Collection[str]) -> dict[str, int]:
    """Without a plan, the trials each case is expected to have: the most it has under any
    of `conditions` (trial records or scored keys). Cases run a different number of times
    are not gaps; a condition lacking a trial another has for the same case is."""
    plans: dict[str, int] = {}
    for trial in evidence.trials:
        if trial.condition in conditions:
            plans[trial.case_id] = max(plans.get(trial.case_id, 1), trial.trial)
    for case_id, condition, index in evidence.scored:
        if condition in conditions:
            plans[case_id] = max(plans.get(case_id, 1), index)
    return plans


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
    looked: Collection[str] | None = None,
    alone: Collection[str] = (),
) -> Coverage:
    """Compare the expected keys with the evidence and decide which gaps are tolerated.

    Counted case by case from the records (never one object per expected key: a plan of a
    million trials costs what its records cost); the first gap of every case with gaps, then
    more up to `LISTED`, are listed. `looked`: the cases a sequential run stopped after
    (`verdict.looks`), the only ones expected under every condition; `alone`: cases expected
    under the last of `conditions` (the candidate) only, a sequential run's per-case checks."""
    planned = planned_trials(trials, evidence)
    wanted = set(conditions)
    if cases is not None:
        case_ids: list[str] = list(cases)
        if looked is not None:
            chosen = set(looked)
            case_ids = [c for c in case_ids if c in chosen]
    elif looked is not None:
        case_ids = list(dict.fromkeys(looked))
    else:
        seen = [t.case_id for t in evidence.trials if t.condition in wanted]
        seen += [k[0] for k in evidence.scored if k[1] in wanted]
        case_ids = sorted(set(seen))
    lone = [c for c in dict.fromkeys(alone) if c not in set(case_ids)]
    if cases is not None:
        lone = [c for c in lone if c in cases]
    known = set(case_ids) | set(lone)
    records: dict[str, dict[tuple[str, int], Trial]] = {}
    for trial in evidence.trials:
        if trial.condition in wanted and trial.case_id in known and trial.trial <= planned:
            records.setdefault(trial.case_id, {}).setdefault((trial.condition, trial.trial), trial)
    scored: dict[str, set[tuple[str, int]]] = {}
    for case_id, condition, index in evidence.scored:
        if condition in wanted and case_id in known and index <= planned:
            scored.setdefault(case_id, set()).add((condition, index))
    tally = Tally(conditions, planned, have_trials=bool(evidence.trials), judged=evidence.judged)
    plans = case_plans(evidence, wanted) if trials is None else {}
    expected = 0
    for case_id in case_ids:
        case = cases.get(case_id) if cases is not None else None
        plan = plans.get(case_id, 1) if trials is None else planned
        expected += len(conditions) * plan
        tally.add(
            case_id,
            protected(case),
            records.get(case_id, {}),
            scored.get(case_id, set()),
            plan=plan,
        )
    candidate = conditions[-1:]
    for case_id in lone:
        case = cases.get(case_id) if cases is not None else None
        plan = plans.get(case_id, 1) if trials is None else planned
        expected += plan
        mine = {k: t for k, t in records.get(case_id, {}).items() if k[0] in candidate}
        done = {k for k in scored.get(case_id, set()) if k[0] in candidate}
        tally.add(case_id, protected(case), mine, done, candidate, plan)
    allowed, reasons = _tolerate(tally, gate.max_errored, len(case_ids) + len(lone))
    if source is not None and not source.complete:
        reasons = [*(source.reasons or [f"the {source.tool} run did not finish"]), *reasons]
    return Coverage(
        conditions=list(conditions),
        cases=len(case_ids) + len(lone),
        trials=planned,
        expected=expected,
        allowed=allowed,
        complete=not reasons,
        reasons=reasons,
        gaps=tally.listed,
        gaps_total=tally.gaps,
        **tally.counts,
    )


@dataclass(slots=True)
class Tally:
    """Counts of the expected keys, and the gaps listed, case by case."""

    conditions: Sequence[str]
    planned: int
    have_trials: bool
    judged: bool
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("answered", "errored", "missing", "scored", "unscored"), 0
        )
    )
    gaps: int = 0
    listed: list[Gap] = field(default_factory=list)
    gap_cases: list[tuple[str, bool, str]] = field(default_factory=list)
    """Every case with a gap: (id, protected, its first gap's label)."""

    def add(
        self,
        case_id: str,
        guard: bool,
        records: Mapping[tuple[str, int], Trial],
        scored: Collection[tuple[str, int]],
        conditions: Sequence[str] | None = None,
        plan: int | None = None,
    ) -> None:
        """Count one case's keys under `conditions` (default: the tally's) against its
        `plan` of trials (default: the tally's)."""
        conditions = self.conditions if conditions is None else conditions
        plan = self.planned if plan is None else plan
        if self.have_trials:
            errored = [(k, t.error) for k, t in records.items() if t.error is not None]
            answered = [k for k, t in records.items() if t.error is None]
        else:  # score rows alone: a scored key is an answer
            errored, answered = [], list(scored)
        missing = len(conditions) * plan - len(errored) - len(answered)
        unscored = [k for k in answered if k not in scored]
        counts = self.counts
        counts["answered"] += len(answered)
        counts["errored"] += len(errored)
        counts["missing"] += missing
        counts["unscored"] += len(unscored)
        counts["scored"] += len(answered) - len(unscored)
        total = len(errored) + len(unscored) + missing
        if not total:
            return
        self.gaps += total
        room = max(1, LISTED - len(self.listed))  # every case with gaps lists its first
        found: list[Gap] = [
            self._gap(case_id, key, "errored", _first_line(error or "error"), guard)
            for key, error in sorted(errored)[:room]
        ]
        note = "no judge or human score row" if self.judged else None
        found += [
            self._gap(case_id, key, "unscored", note, guard)
            for key in sorted(unscored)[: room - len(found)]
        ]
        if missing and len(found) < room:
            present = set(records) | (set(scored) if not self.have_trials else set())
            found += [
                self._gap(case_id, key, "missing", None, guard)
                for key in self._absent(present, room - len(found), conditions, plan)
            ]
        self.listed += found
        self.gap_cases.append((case_id, guard, found[0].label))

    def _absent(
        self,
        present: Collection[tuple[str, int]],
        limit: int,
        conditions: Sequence[str],
        plan: int,
    ) -> list[tuple[str, int]]:
        absent: list[tuple[str, int]] = []
        for condition in conditions:
            for index in range(1, plan + 1):
                if (condition, index) not in present:
                    absent.append((condition, index))
                    if len(absent) >= limit:
                        return absent
        return absent

    @staticmethod
    def _gap(
        case_id: str, key: tuple[str, int], kind: GapKind, error: str | None, guard: bool
    ) -> Gap:
        condition, index = key
        return Gap(
            case_id=case_id,
            condition=condition,
            trial=index,
            kind=kind,
            error=error,
            protected=guard,
        )


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "error"
    return cut(line, limit)


def _tolerate(tally: Tally, limit: int | float, cases: int) -> tuple[int, list[str]]:
    """Mark the gaps `max_errored` tolerates; the reasons the coverage is incomplete."""
    guarded = [(c, label) for c, guard, label in tally.gap_cases if guard]
    others = [(c, label) for c, guard, label in tally.gap_cases if not guard]
    room = int(limit * cases) if isinstance(limit, float) else int(limit)
    tolerated = {c for c, _ in others} if len(others) <= room else set()
    for gap in tally.listed:
        gap.allowed = gap.case_id in tolerated
    reasons = []
    if guarded:
        reasons.append(
            f"{len(guarded)} high-risk or safety case(s) without a scored answer (never"
            f" allowed): {_names(guarded)}"
        )
    if others and not tolerated:
        allowance = f"[gate] max_errored = {limit}" if limit else "none allowed"
        reasons.append(
            f"{len(others)} of {cases} case(s) without a scored answer ({allowance}):"
            f" {_names(others)}"
        )
    return len(tolerated), reasons


def _names(gaps: Sequence[tuple[str, str]]) -> str:
    shown = [label for _, label in gaps[:SHOWN]]
    more = len(gaps) - len(shown)
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
