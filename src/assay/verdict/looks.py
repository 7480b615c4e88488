"""A sequential run's looks: the order cases are looked at, the looks' sizes, and whether a
look's verdict settles the gate (docs/sequential.md).

Order: protected cases first (`coverage.protected`: high risk, an `escalate`/`refuse`
expectation, a safety tag or category: one blocking finding there settles a FAIL), then
the rest; within each part the cases are in a seeded random order stratified by risk and
category, so every prefix holds each stratum in proportion to its size (systematic
sampling: a stratum of n cases puts its i-th shuffled case at (i + u)/n, u one random
offset per stratum, and the cases are sorted by that position).

Settled: a PASS; a FAIL whose failing checks more cases cannot undo: a blocking finding, a
per-case threshold, or an interval check whose whole interval (at the look's level) lies on
the failing side of its bound. A FAIL on a point estimate alone (a mean delta at or below 0
whose interval still reaches above it) is not settled before the last look.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from assay.core.records import Case
from assay.verdict.checks import Check
from assay.verdict.coverage import protected
from assay.verdict.gate import GateResult
from assay.verdict.interval import MIN_CASES
from assay.verdict.thresholds import TOLERANCE

LOOK_SHARE = 0.1
"""A look's default size: this share of the cases (and never fewer than `MIN_CASES`)."""
INTERVAL_CHECKS = ("non-inferiority:", "superiority:", "corpus:")
"""Checks decided on an interval against a bound (the others are settled when they fail)."""
METHOD = (
    "group-sequential looks with linear alpha spending (verdict/sequential.py); the paired,"
    " clustered gate at each look's level"
)
GUARANTEE = (
    "the chance of a false PASS over all looks stays within 1 − [gate] level; the last look"
    " is the fixed design (see docs/design.md)"
)


def look_size(cases: int, look: int | None) -> int:
    """Cases per look: as configured, else a tenth of the cases, at least `MIN_CASES`."""
    if look is not None:
        return look
    return max(MIN_CASES, math.ceil(LOOK_SHARE * cases))


def look_ends(cases: int, size: int) -> list[int]:
    """The cumulative case count at each look: size, 2·size, ..., every case."""
    ends = list(range(size, cases, size))
    return [*ends, cases]


def look_order(cases: Sequence[Case], seed: int) -> list[Case]:
    """The cases in the order a sequential run looks at them (see the module's docstring):
    the same cases and seed always give the same order."""
    rng = random.Random(seed)
    strata: dict[tuple[bool, str, str], list[Case]] = {}
    for case in cases:
        strata.setdefault((not protected(case), case.risk, case.category), []).append(case)
    placed: list[tuple[bool, float, int, Case]] = []
    for (later, _, _), members in sorted(strata.items()):
        shuffled = list(members)
        rng.shuffle(shuffled)
        offset = rng.random()
        for index, case in enumerate(shuffled):
            placed.append((later, (index + offset) / len(shuffled), len(placed), case))
    placed.sort(key=lambda p: (p[0], p[1], p[2]))
    return [p[3] for p in placed]


def settled_check(check: Check) -> bool:
    """Whether a failing check is one more cases cannot undo (see the module's docstring)."""
    if not check.name.startswith(INTERVAL_CHECKS):
        return True
    low, high, bound = check.ci_low, check.ci_high, check.bound
    if low is None or high is None or bound is None:
        return False  # no interval (one case): more cases decide it
    if check.name.endswith(":max"):  # a corpus ceiling: fails when the mean is above it
        return low > bound + TOLERANCE
    if check.name.startswith("superiority:"):
        return high <= bound + TOLERANCE
    return high < bound - TOLERANCE


def settled(gate: GateResult) -> bool:
    """Whether a look's verdict ends a sequential run: PASS, or a settled FAIL."""
    verdict = gate.verdict
    if verdict == "PASS":
        return True
    if verdict != "FAIL":
        return False
    return any(settled_check(c) for c in gate.checks if c.status == "fail")
