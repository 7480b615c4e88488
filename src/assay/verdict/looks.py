"""A sequential run's looks: the order cases are looked at and the looks' sizes
(docs/sequential.md; whether a look's verdict ends the run: `verdict.sequential.settled`).

Order: a seeded random order stratified by protection (`coverage.protected`: high risk, an
`escalate`/`refuse` expectation, a safety tag or category), risk and category, so every prefix
holds each stratum in proportion to its size (systematic sampling: a stratum of n cases puts
its i-th shuffled case at (i + u)/n, u one random offset per stratum, and the cases are sorted
by that position). Every look is then a sample that represents the whole suite, the
assumption the alpha spending rests on: with the protected cases first, a candidate better
there and worse elsewhere passed an early look far more often than the fixed design
(bench/sequential.py --shape strata|split). The protected cases still run first, for their
per-case checks only (`api.sequential`: a blocking finding there FAILs the first look).
Cases that declare one cluster are one unit (`verdict.clusters.whole_units`: protected when
any of its cases is, in the stratum of its first case), and a look ends at a cluster's end
(`verdict.clusters.unit_ends`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from assay.core.records import Case
from assay.verdict.clusters import whole_units
from assay.verdict.coverage import protected
from assay.verdict.interval import MIN_CASES

LOOK_SHARE = 0.1
"""A look's default size: this share of the cases (and never fewer than `MIN_CASES`)."""


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
    strata: dict[tuple[bool, str, str], list[list[Case]]] = {}
    for unit in whole_units(cases):  # a cluster moves as one, stratified as its first case
        first = unit[0]
        guarded = any(protected(case) for case in unit)
        strata.setdefault((guarded, first.risk, first.category), []).append(unit)
    placed: list[tuple[float, int, list[Case]]] = []
    for _, members in sorted(strata.items()):
        shuffled = list(members)
        rng.shuffle(shuffled)
        offset = rng.random()
        for index, unit in enumerate(shuffled):
            placed.append(((index + offset) / len(shuffled), len(placed), unit))
    placed.sort(key=lambda p: (p[0], p[1]))
    return [case for p in placed for case in p[2]]
