"""The sequential gate's error spending: the level each look of a sequential run is gated at.

A stand-in until the statistics of issue 29 land (its own module replaces this one):
Bonferroni-style linear spending, α·(f_k − f_{k−1}) at look k (f: the share of the cases
looked at so far); the last look (f = 1) is the fixed design's, at the full `level`. With
the same interface: `settled` (does an interim look's verdict end the run) and `METHOD`
(for the reports).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from assay.verdict.checks import Check

TOLERANCE = 1e-9


def look_level(level: float, fractions: Sequence[float]) -> float:
    """The nominal confidence level at which the gate is evaluated at the last of these looks,
    given the information fractions (0 < f_1 < ... < f_k ≤ 1) of every look made so far; for
    f_k == 1 the fixed design's `level`."""
    last = fractions[-1]
    if last >= 1.0:
        return level
    before = fractions[-2] if len(fractions) > 1 else 0.0
    return 1.0 - (1.0 - level) * (last - before)


@dataclass(frozen=True, slots=True)
class Method:
    """How a sequential verdict was reached, for the reports."""

    name: str
    short: str
    references: tuple[str, ...]

    def guarantee(self, level: float) -> str:
        """One line: what the method promises at the gate's `level`."""
        return (
            f"the looks before the last spend {1 - level:.0%} of error in all, in proportion to"
            f" the cases each adds; the last look uses the fixed design's level {level:g}"
        )


METHOD = Method(
    name="group-sequential looks, linear (Bonferroni-style) alpha spending",
    short="group-sequential (linear spending)",
    references=(),
)


def settled(checks: Sequence[Check]) -> bool:
    """Whether an interim look's verdict is settled: every check passes (PASS), or one
    failure is one more cases cannot undo — a failing check without an interval (a blocking
    finding, a per-case threshold), or one whose interval lies wholly on the failing side of
    its bound (below it; above it for a corpus `max` bound). A FAIL on a mean alone, its
    interval still reaching its bound, is not settled: the run goes on to the next look."""
    statuses = {c.status for c in checks}
    if statuses and statuses <= {"pass", "skipped"} and "pass" in statuses:
        return True
    return any(c.status == "fail" and _beyond(c) for c in checks)


def _beyond(check: Check) -> bool:
    low, high, bound = check.ci_low, check.ci_high, check.bound
    if bound is None or low is None or high is None:
        return True
    if not (math.isfinite(low) and math.isfinite(high)):
        return False
    if check.name.endswith(":max"):
        return low > bound + TOLERANCE
    return high < bound - TOLERANCE
