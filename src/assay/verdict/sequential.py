"""The sequential gate's error spending: the level each look of a sequential run is gated at.

A stand-in until the statistics of issue 29 land (its own module replaces this one):
Bonferroni-style linear spending, α·(f_k − f_{k−1}) at look k (f: the share of the cases
looked at so far); the last look (f = 1) is the fixed design's, at the full `level`.
"""

from __future__ import annotations

from collections.abc import Sequence


def look_level(level: float, fractions: Sequence[float]) -> float:
    """The nominal confidence level at which the gate is evaluated at the last of these looks,
    given the information fractions (0 < f_1 < ... < f_k ≤ 1) of every look made so far; for
    f_k == 1 the fixed design's `level`."""
    last = fractions[-1]
    if last >= 1.0:
        return level
    before = fractions[-2] if len(fractions) > 1 else 0.0
    return 1.0 - (1.0 - level) * (last - before)
