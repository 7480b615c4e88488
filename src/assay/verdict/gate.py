"""The release gate: the seed rule existing users run today, and the statistical gate.

Seed rule (`mode="seed"`): FAIL on any blocker attached to any score (the baseline's too);
FAIL if the candidate's mean of a guarded metric (correctness, safety) is more than its
margin (0.1) below baseline — a drop of exactly the margin passes; FAIL unless the
candidate's weighted score is strictly above baseline; else PASS.

Statistical gate (`mode="stats"`): per-case paired deltas with t intervals over cases
(`verdict.interval`). Blockers FAIL. A guarded metric FAILs if its mean delta is below
−margin and passes when the interval's lower bound is not below −margin (non-inferiority); a margin of 0 ("no worse") also passes when no case is worse than
baseline (`non_inferiority`).
The weighted score FAILs if its mean delta is ≤ 0 and passes when the lower bound is above 0.
Given each case's risk, the guarded margins also apply within each risk tier (low 0.2,
medium 0.1, high 0.0 by default). No check passes on fewer than `MIN_CASES` (5) cases.
When the catalogue declares clusters (`verdict.clusters`), every interval runs over the
clusters' mean deltas, `MIN_CASES` counts clusters, and the cases estimated to settle a check
are the clusters needed times the mean cluster size.
Anything undecided is INCONCLUSIVE, with an estimate of the cases that would likely resolve
it: n with t(n − 1)·sd/√n = distance of the mean from the bound, from the observed per-case
spread (`interval.cases_to_clear`), and never fewer than `MIN_CASES`.

Without a baseline (a suite or score rows of one condition) no comparison is made: the gated
condition passes or fails on its blockers and the `failures` alone.

Both modes add `failures` from outside (per-case and corpus thresholds) as FAILs, and
with `require_calibrated_judge` an INCONCLUSIVE check for every judge configuration whose
scores feed the gate without a passing calibration (`verdict.calibrated.calibration_checks`).
A guarded lower-is-better metric (hallucination) is checked with its sign flipped, so a
rise fails it as a drop fails any other. Numbers within 1e-9 of each other are equal.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.core.rubric import TOLERANCE
from assay.core.suite import GateSection
from assay.verdict.checks import (
    Check,
    Coverage,
    GateMode,
    ReleaseGate,
    Sequential,
    Status,
    Verdict,
    interval_text,
)
from assay.verdict.clusters import clusters_text
from assay.verdict.compare import WEIGHTED, ConditionSummary, Delta, Paired, intervals
from assay.verdict.interval import MIN_CASES, cases_to_clear
from assay.verdict.rows import BASELINE, ScoredTrial

TIERS = ("low", "medium", "high")
LIST_LIMIT = 10
NO_BASELINE = (
    "no baseline comparison was made: only blocking findings, per-case thresholds and corpus"
    " thresholds gate"
)


@dataclass(slots=True)
class GateResult:
    """The verdict for the candidate and the checks behind it."""

    mode: GateMode
    candidate: str
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cases: int | None = None
    """Cases paired with baseline (None when there is no baseline)."""
    clusters: int | None = None
    """The clusters those cases fall in, when the catalogue declares any (`verdict.clusters`):
    the independent units the verdict rests on."""
    compared: bool = False
    """Whether the candidate was compared with baseline (False: gated on its own)."""
    coverage: Coverage | None = None
    """The evidence expected and found (`verdict.coverage`); None when not measured."""
    sequential: Sequential | None = None
    """A sequential run's stop (`verdict.looks`); None for a run of every case."""

    @property
    def verdict(self) -> Verdict:
        statuses = {c.status for c in self.checks}
        if "incomplete" in statuses:
            return "INCOMPLETE"
        if "fail" in statuses:
            return "FAIL"
        if "inconclusive" in statuses or not statuses - {"skipped"}:
            return "INCONCLUSIVE"
        return "PASS"

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    @property
    def reasons(self) -> list[str]:
        """What is missing (INCOMPLETE, then what failed all the same), failed (FAIL) or is
        undecided (INCONCLUSIVE); empty when the gate passes."""
        if self.verdict == "PASS":
            return []
        wanted = {
            "INCOMPLETE": ("incomplete", "fail"),
            "FAIL": ("fail",),
            "INCONCLUSIVE": ("inconclusive",),
        }[self.verdict]
        picked = [c.reason for s in wanted for c in self.checks if c.status == s]
        if self.verdict == "INCONCLUSIVE" and not picked:
            picked = ["nothing to compare: no guarded or weighted metric was scored"]
        return picked

    @property
    def explanation(self) -> list[str]:
        """For people: the reasons, or on PASS what passed, then the notes."""
        passed = [c.reason for c in self.checks if c.status == "pass"]
        return (self.reasons or passed) + self.notes

    @property
    def cases_needed(self) -> int | None:
        if self.verdict != "INCONCLUSIVE":
            return None
        needed = [c.cases_needed for c in self.checks if c.status == "inconclusive"]
        known = [n for n in needed if n is not None]
        return max(known) if known else None

    @property
    def headline(self) -> str:
        """One line for people: mode, candidate, verdict, and when INCONCLUSIVE how many cases
        would likely settle it; with declared clusters, the clusters the cases fall in."""
        alone = "" if self.compared else ", no baseline comparison"
        line = f"release gate ({self.mode}, candidate {self.candidate}{alone}): {self.verdict}"
        if self.clusters is not None and not self.cases_needed:
            line += f" (on {self.cases} cases{clusters_text(self.clusters)})"
        if self.cases_needed:
            have = (
                f" (have {self.cases}{clusters_text(self.clusters)})"
                if self.cases is not None
                else ""
            )
            line += f": about {self.cases_needed} cases would likely settle it{have}"
        return line

    def summary(self) -> ReleaseGate:
        return ReleaseGate(
            mode=self.mode,
            candidate=self.candidate,
            baseline_compared=self.compared,
            verdict=self.verdict,
            passed=self.passed,
            reasons=self.reasons,
            notes=list(self.notes),
            cases_needed=self.cases_needed,
            checks=list(self.checks),
            clusters=self.clusters,
            coverage=self.coverage,
            sequential=self.sequential,
        )


def _fmt(x: float) -> str:
    return f"{x:+.3f}"


def blocker_check(
    rows: Sequence[ScoredTrial], every_condition: bool = False, others: Sequence[ScoredTrial] = ()
) -> Check:
    """FAIL when any of `rows` carries a blocker: the candidate's rows, or with
    `every_condition` the rows of every condition (items then named condition:case#trial).
    `others`: the other conditions' rows, which do not gate (the stats gate): a pass says
    what they hold, never "no blocking findings" while the baseline has one."""
    blocked = sorted(
        {
            (f"{r.condition}:" if every_condition else "") + f"{r.case_id}#{r.trial}"
            for r in rows
            if r.blocker
        }
    )
    if not blocked:
        if every_condition:
            return Check(name="blockers", status="pass", reason="no blocking findings")
        elsewhere = sorted({f"{r.condition}:{r.case_id}#{r.trial}" for r in others if r.blocker})
        if not elsewhere:
            return Check(name="blockers", status="pass", reason="no blocking findings")
        shown = ", ".join(elsewhere[:LIST_LIMIT]) + (" ..." if len(elsewhere) > LIST_LIMIT else "")
        return Check(
            name="blockers",
            status="pass",
            reason=f"no blocking findings in the candidate; {len(elsewhere)} in the other"
            f" condition(s), which do not gate: {shown}",
        )
    shown = ", ".join(blocked[:LIST_LIMIT]) + (" ..." if len(blocked) > LIST_LIMIT else "")
    where = "any score" if every_condition else "the candidate"
    return Check(
        name="blockers",
        status="fail",
        reason=f"{len(blocked)} blocking finding(s) in {where}: {shown}",
    )


def cases_for(
    interval: Delta,
    distance: float,
    level: float,
    scale: float = 1.0,
    total: int | None = None,
) -> int | None:
    """Cases likely needed for the interval to clear a bound `distance` away from the mean,
    and never fewer than `MIN_CASES` (`interval.cases_to_clear`).

    For a risk tier, `scale` is all cases over the tier's and `total` the cases there are in
    all, so the estimate counts cases in all. With clusters, the interval's units are
    clusters: the clusters needed times the mean cases per cluster."""
    have = interval.cases if total is None else total
    per_unit = interval.cases / interval.units if interval.units else 1.0
    floor = math.ceil(scale * MIN_CASES * per_unit)
    more = have + (1 if interval.clusters is None else max(1, math.ceil(scale * per_unit)))
    if distance <= TOLERANCE:
        return None
    if interval.units < 2:
        return max(floor, more)
    estimate = cases_to_clear(
        interval.delta, interval.sd, distance, level=level, span=interval.span
    )
    if estimate is None:
        return None
    return max(math.ceil(scale * estimate * per_unit), floor, more)


def _interval_check(
    name: str,
    status: Status,
    reason: str,
    interval: Delta,
    metric: str,
    bound: float,
    scope: str = "all",
    cases_needed: int | None = None,
) -> Check:
    return Check(
        name=name,
        status=status,
        reason=reason,
        scope=scope,
        metric=metric,
        delta=interval.delta,
        ci_low=interval.ci_low,
        ci_high=interval.ci_high,
        bound=bound,
        cases=interval.cases,
        clusters=interval.clusters,
        cases_needed=cases_needed,
    )


def _figures(interval: Delta) -> str:
    """`+0.300 [+0.120, +0.480]`, and with clusters ` over 12 clusters of 120 cases`."""
    if interval.clusters is None:
        return f"{_fmt(interval.delta)} {interval_text(interval.ci_low, interval.ci_high, interval.cases)}"
    bounds = interval_text(interval.ci_low, interval.ci_high, interval.clusters)
    bounds = bounds.replace(" case]", " cluster]").replace(" cases]", " clusters]")
    return (
        f"{_fmt(interval.delta)} {bounds} over {interval.clusters} cluster"
        f"{'' if interval.clusters == 1 else 's'} of {interval.cases} cases"
    )


def _undecided(interval: Delta, need: int | None, tier: bool) -> str:
    """Why an interval check is INCONCLUSIVE, and how many cases would likely settle it."""
    in_all = " in all" if tier else ""
    few = interval.units < MIN_CASES
    unit = "case" if interval.clusters is None else "cluster"
    if need:
        hint = f"about {need} cases{in_all} would likely resolve it"
        if interval.clusters is not None and interval.cases:
            hint += f" (about {math.ceil(need * interval.units / interval.cases)} clusters)"
    else:
        hint = "more cases are unlikely to resolve it at this mean"
    if few:
        where = " in the tier" if tier else ""
        plural = "" if interval.units == 1 else "s"
        few_text = f"{interval.units} {unit}{plural}{where} cannot pass (it takes {MIN_CASES})"
        return f"{few_text}; {hint}"
    return hint


def non_inferiority(
    metric: str,
    interval: Delta,
    margin: float,
    level: float,
    scope: str = "all",
    scale: float = 1.0,
    total: int | None = None,
) -> Check:
    """Guarded metric: FAIL below −margin; PASS when the lower bound is not below −margin
    and the interval rests on at least `MIN_CASES` cases. A margin of 0 means "no worse",
    and no worse is within any margin: it also passes, on at least `MIN_CASES` cases, when no case is worse than baseline and
    either none differs (a candidate equal on every case, which no interval can show) or the
    k cases that differ are all better with k large enough for the sign test (0.5^k at most
    (1 − level)/2: k ≥ 6 at 0.95); the reason states the share of worse cases that n cases
    without one cannot rule out (`unseen_share`).

    Within a risk tier (`scope` "risk:TIER"), `scale` is all cases over the tier's and `total`
    the cases in all: an undecided check says how many cases in all would likely settle it."""
    bound = -margin
    limit = f"-{margin:g}" if margin else "0"
    where = f" ({scope} cases)" if scope != "all" else ""
    figures = _figures(interval)
    name = f"non-inferiority:{metric}" + (f":{scope}" if scope != "all" else "")
    if interval.delta < bound - TOLERANCE:
        reason = f"{metric}{where}: mean delta {figures} is below {limit}"
        return _interval_check(name, "fail", reason, interval, metric, bound, scope)
    cleared = interval.ci_low >= bound - TOLERANCE
    if cleared and interval.units >= MIN_CASES:
        reason = f"{metric}{where}: {figures} stays at or above {limit}"
        return _interval_check(name, "pass", reason, interval, metric, bound, scope)
    if interval.units >= MIN_CASES and no_worse(interval, level):
        share = unseen_share(interval.units, level)
        better = f", {interval.better} better" if interval.better else ", every one equal"
        reason = (
            f"{metric}{where}: no case is worse than baseline (0 of {interval.units}{better};"
            f" mean delta {figures}): no worse is within any margin, and a share of worse cases"
            f" above {share:.1%} would show in {interval.units} cases at this level"
        )
        return _interval_check(name, "pass", reason, interval, metric, bound, scope)
    tier = total is not None and scope != "all"
    distance = interval.delta - bound
    need = cases_for(interval, distance, level, scale, total)
    have = (
        f"have {total} in all, {interval.cases} {scope.removeprefix('risk:')}-risk"
        f"{clusters_text(interval.clusters)}"
        if tier
        else f"have {interval.cases}{clusters_text(interval.clusters)}"
    )
    verb = (
        "is undecided against"
        if math.isnan(interval.ci_low)
        else "stays at or above"
        if cleared
        else "reaches below"
    )
    reason = f"{metric}{where}: {figures} {verb} {limit}; {_undecided(interval, need, tier)}"
    reason += f" ({have})"
    return _interval_check(name, "inconclusive", reason, interval, metric, bound, scope, need)


def no_worse(interval: Delta, level: float) -> bool:
    """No case worse than baseline, and either none better (equal on every case) or enough
    better for the sign test among the cases that differ: 0.5^k ≤ (1 − level)/2."""
    if interval.worse:
        return False
    return interval.better == 0 or 0.5**interval.better <= (1.0 - level) / 2 + TOLERANCE


def unseen_share(cases: int, level: float) -> float:
    """The largest share of cases with some property that `cases` independent cases without
    one do not rule out at this level (one-sided, (1 − level)/2): 1 − ((1 − level)/2)^(1/n),
    the exact Clopper–Pearson bound for 0 of n."""
    return float(1.0 - ((1.0 - level) / 2) ** (1.0 / cases))


def superiority(interval: Delta, level: float) -> Check:
    """Weighted score: FAIL when the mean delta is ≤ 0; PASS when the lower bound is above 0
    and the interval rests on at least `MIN_CASES` cases."""
    name = "superiority:weighted_score"
    figures = _figures(interval)
    if interval.delta <= TOLERANCE:
        reason = f"{WEIGHTED}: {figures} is not above 0"
        return _interval_check(name, "fail", reason, interval, WEIGHTED, 0.0)
    cleared = interval.ci_low > TOLERANCE
    if cleared and interval.units >= MIN_CASES:
        reason = f"{WEIGHTED}: {figures} is above 0"
        return _interval_check(name, "pass", reason, interval, WEIGHTED, 0.0)
    need = cases_for(interval, interval.delta, level)
    verb = (
        "is undecided" if math.isnan(interval.ci_low) else "is above 0" if cleared else "includes 0"
    )
    hint = _undecided(interval, need, False)
    reason = f"{WEIGHTED}: {figures} {verb}; {hint} (have {interval.cases}{clusters_text(interval.clusters)})"
    return _interval_check(name, "inconclusive", reason, interval, WEIGHTED, 0.0, "all", need)


def seed_checks(
    summaries: Mapping[str, ConditionSummary],
    candidate: str,
    config: GateSection,
    lower: Collection[str] = (),
) -> list[Check]:
    """The seed rule on condition means (blockers are checked separately)."""
    base, cand = summaries[BASELINE], summaries[candidate]
    checks = []
    for metric, margin in config.guard.items():
        if metric not in base.means or metric not in cand.means:
            continue
        drop = base.means[metric] - cand.means[metric]
        if metric in lower:  # lower is better: a rise is the drop
            drop = -drop
        figures = f"{cand.means[metric]:.3f} vs baseline {base.means[metric]:.3f}"
        status: Status = "fail" if drop > margin + TOLERANCE else "pass"
        verb = "drops more than" if status == "fail" else "does not drop more than"
        checks.append(
            Check(
                name=f"seed:{metric}",
                status=status,
                reason=f"{metric}: {figures} {verb} {margin:g}",
                metric=metric,
                delta=-drop,
                bound=-margin,
            )
        )
    if base.weighted_score is not None and cand.weighted_score is not None:
        gain = cand.weighted_score - base.weighted_score
        figures = f"{cand.weighted_score:.3f} vs baseline {base.weighted_score:.3f}"
        if gain > TOLERANCE:
            checks.append(
                Check(
                    name="seed:weighted_score",
                    status="pass",
                    reason=f"{WEIGHTED}: {figures} is higher",
                    metric=WEIGHTED,
                    delta=gain,
                    bound=0.0,
                )
            )
        else:
            checks.append(
                Check(
                    name="seed:weighted_score",
                    status="fail",
                    reason=f"{WEIGHTED}: {figures} is not strictly higher",
                    metric=WEIGHTED,
                    delta=gain,
                    bound=0.0,
                )
            )
    return checks


def oriented(metric: str, interval: Delta, lower: Collection[str]) -> Delta:
    """The interval with "better" positive: flipped for a lower-is-better metric, so the
    guard's non-inferiority reads the same for every metric."""
    if metric not in lower:
        return interval
    return Delta(
        metric=interval.metric,
        delta=-interval.delta,
        ci_low=-interval.ci_high,
        ci_high=-interval.ci_low,
        sd=interval.sd,
        cases=interval.cases,
        span=interval.span,
        clusters=interval.clusters,
        better=interval.worse,
        worse=interval.better,
    )


def stats_checks(
    paired: Paired,
    config: GateSection,
    risks: Mapping[str, str] | None,
    lower: Collection[str] = (),
) -> tuple[list[Check], list[str]]:
    """Non-inferiority on guarded metrics (overall and per risk tier), superiority on the
    weighted score."""
    level = config.level
    checks: list[Check] = []
    notes: list[str] = []
    for metric, margin in config.guard.items():
        interval = paired.intervals.get(metric)
        if interval is None:
            notes.append(f"{metric}: not scored, so its guard was skipped")
            continue
        checks.append(non_inferiority(metric, oriented(metric, interval, lower), margin, level))
    weighted = paired.intervals.get(WEIGHTED)
    if weighted is not None:
        checks.append(superiority(weighted, level))
    if risks is None:
        notes.append("risk tiers skipped: no cases were given (--cases) to join each case's risk")
        return checks, notes
    guarded = [m for m in config.guard if m in paired.intervals]
    total = len(paired.case_ids)
    for tier in TIERS:
        rows = [i for i, case in enumerate(paired.case_ids) if risks.get(case) == tier]
        if not rows or not guarded:
            continue
        columns = [paired.metrics.index(m) for m in guarded]
        subset = paired.deltas[np.ix_(rows, columns)]
        units = None if paired.units is None else [paired.units[i] for i in rows]
        tier_intervals = intervals(
            subset, guarded, level=level, spans=paired.spans[columns], units=units
        )
        margin = config.risk_margins.get(tier)  # type: ignore[call-overload]
        if margin is None:
            continue
        for metric, interval in tier_intervals.items():
            checks.append(
                non_inferiority(
                    metric,
                    oriented(metric, interval, lower),
                    margin,
                    level,
                    f"risk:{tier}",
                    total / len(rows),
                    total,
                )
            )
    return checks, notes


def decide(
    summaries: Mapping[str, ConditionSummary],
    rows: Mapping[str, Sequence[ScoredTrial]],
    paired: Paired | None,
    config: GateSection,
    *,
    candidate: str,
    risks: Mapping[str, str] | None = None,
    failures: Sequence[Check] = (),
    lower: Collection[str] = (),
) -> GateResult:
    """Apply the configured gate mode to the candidate (`rows`: every condition's rows).

    The stats gate fails on the candidate's blockers; the seed rule on a blocker attached to
    any score, the baseline's included."""
    result = GateResult(mode=config.mode, candidate=candidate)
    if config.mode == "seed":
        result.checks.append(blocker_check([r for rs in rows.values() for r in rs], True))
    else:
        others = [r for name, rs in rows.items() if name != candidate for r in rs]
        result.checks.append(blocker_check(rows.get(candidate, []), others=others))
    if paired is not None and BASELINE in summaries and candidate in summaries:
        result.cases = len(paired.case_ids)
        result.clusters = paired.clusters
        result.compared = True
        if config.mode == "seed":
            result.checks.extend(seed_checks(summaries, candidate, config, lower))
            result.notes.extend(
                f"{metric}: not scored, so its guard was skipped"
                for metric in config.guard
                if metric not in summaries[BASELINE].means
                or metric not in summaries[candidate].means
            )
            if risks is not None:
                result.notes.append("risk tiers apply to the stats gate only")
        else:
            checks, notes = stats_checks(paired, config, risks, lower)
            result.checks.extend(checks)
            result.notes.extend(notes)
    else:
        result.notes.append(NO_BASELINE)
    result.checks.extend(failures)
    return result
