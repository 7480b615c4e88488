"""The paired comparison's interval: a Student t interval over the per-case mean deltas.

Each case contributes one paired delta per metric (its trials averaged first: the case is
the cluster, so trials of one case never count as independent evidence). A column's
interval is mean ± t(n − 1, 1 − α/2) · sd / √n over the n cases that have it (Student
1908; the paired t interval that cluster-robust inference reduces to when each cluster is
summarised by its mean, as in Miller 2024, "Adding Error Bars to Evals"). Every column
(each metric and the weighted score) is one deterministic function of its deltas: there is
no resampling, so identical deltas always give identical intervals. The quantile is
scipy's (`scipy.special.stdtrit`, the inverse of Student's t distribution, the same
function `scipy.stats.t.ppf` calls; scipy.special imports in a fraction of scipy.stats's
time).

A column whose cases all share one delta has no spread to scale a t interval by (its width
would be 0, which is not certainty). Its interval is distribution-free instead: if every one
of n cases shows delta d, the share of all cases that would show another delta is at most
p = 1 − (α/2)^(1/n) at this level (the exact one-sided Clopper–Pearson bound for 0 of n),
and those cases lie within the deltas the scale allows (±`span`), so the mean lies within
[d − p·(d + span), d + p·(span − d)]. The same interval serves a column of values rather than
deltas (a corpus threshold's case means, `verdict.corpus`): `floor` is then the lowest a value
can be (a share's 0) and `span` the highest, so the mean lies within [d − p·(d − floor),
d + p·(span − d)].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri, stdtrit

LEVEL = 0.95
MIN_CASES = 5
"""Fewer paired cases than this never pass a check: the interval is still shown, but the
check is INCONCLUSIVE and asks for at least this many (`verdict.gate`). From 5 cases up the
t interval keeps its nominal coverage on simulated judge scores (bench/gate_simulation.py)."""
SPREAD_TOLERANCE = 1e-12

FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class Interval:
    """Per-column figures: mean, interval bounds, spread (sd over cases) and case count."""

    mean: FloatArray
    low: FloatArray
    high: FloatArray
    sd: FloatArray
    n: NDArray[np.int64]


def paired_intervals(
    deltas: FloatArray | Sequence[Sequence[float]],
    *,
    level: float = LEVEL,
    span: float | FloatArray,
    floor: float | FloatArray | None = None,
) -> Interval:
    """The interval of the mean of each column of `deltas` (cases × columns, NaN = absent).

    `span` is the widest a delta can be (the values' range), for every column or per
    column: it bounds the interval of a column without spread, whose values lie within
    [`floor`, `span`] (`floor` defaults to −`span`). One case gives a mean and no interval
    (NaN bounds)."""
    values = np.asarray(deltas, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    present = ~np.isnan(values)
    n = present.sum(axis=0)
    filled = np.where(present, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / n
        centred = np.where(present, values - mean, 0.0)
        sd = np.sqrt((centred**2).sum(axis=0) / (n - 1))
    sd = np.where(n >= 2, sd, 0.0)
    alpha = 1.0 - level
    half = np.full(n.shape, np.nan)
    several = n >= 2
    half[several] = stdtrit(n[several] - 1, 1.0 - alpha / 2) * sd[several] / np.sqrt(n[several])
    low, high = mean - half, mean + half
    flat = several & (sd <= SPREAD_TOLERANCE * np.maximum(1.0, np.abs(mean)))
    if flat.any():
        share = 1.0 - (alpha / 2) ** (1.0 / n[flat])
        top = np.broadcast_to(np.asarray(span, dtype=np.float64), n.shape)
        bottom = -top if floor is None else np.broadcast_to(np.asarray(floor, np.float64), n.shape)
        d = mean[flat]
        low[flat] = d - share * (d - bottom[flat])
        high[flat] = d + share * (top[flat] - d)
        sd[flat] = 0.0
    return Interval(mean=mean, low=low, high=high, sd=sd, n=n.astype(np.int64))


def cases_to_clear(
    mean: float,
    sd: float,
    distance: float,
    *,
    level: float = LEVEL,
    span: float,
    floor: float | None = None,
) -> int | None:
    """About how many cases an interval needs for its lower bound to clear a bound `distance`
    below `mean` at this spread: the least n with t(n − 1)·sd/√n ≤ distance; for a column
    without spread (values within [`floor`, `span`], `floor` defaulting to −`span`), the
    least n at which the distribution-free bound clears it. None when the mean is on the
    wrong side. (For an upper bound, pass the values negated: −mean, span −floor, floor
    −span.)"""
    if distance <= 0:
        return None
    alpha = 1.0 - level
    if sd <= 0:
        room = mean - (-span if floor is None else floor)
        share = distance / room if room > 0 else 1.0
        if share >= 1:
            return 2
        return math.ceil(math.log(alpha / 2) / math.log1p(-share))
    tail = 1.0 - alpha / 2
    n = max(2, math.ceil((float(ndtri(tail)) * sd / distance) ** 2))  # t > z: a lower bound
    while float(stdtrit(n - 1, tail)) * sd / math.sqrt(n) > distance:
        n += 1  # a few steps: t(n − 1) is within a few % of z once n is past a handful
    return n


def skew_corrected(values: FloatArray, level: float) -> tuple[float, float]:
    """The interval of the mean of `values` (one column, no NaN, at least 2 values with
    spread) by Hall's (1992) transformation of the t statistic, which removes its skewness:
    with a = γ/√n (γ the sample skewness), g(T) = T + aT²/3 + a²T³/27 + a/6 is monotone and
    g(T) is near t-distributed, so the limits are mean − s/√n·g⁻¹(±t), g⁻¹ in closed form
    (g(T) = ((1 + aT/3)³ − 1)/a + a/6). Hall, P. (1992), On the removal of skewness by
    transformation, JRSS B 54(1):221-228.

    A sequential run checks corpus bounds with it at its looks before the last: there the
    level is strict, and the t interval's far tail on skewed case means (a share near 0 or 1,
    most cases at one end) errs too often on one side (bench/sequential_corpus.py)."""
    n = len(values)
    mean = float(np.mean(values))
    sd = float(np.std(values, ddof=1))
    gamma = float(np.mean((values - mean) ** 3)) / sd**3
    a = gamma / math.sqrt(n)
    t = float(stdtrit(n - 1, 1.0 - (1.0 - level) / 2))
    step = sd / math.sqrt(n)
    if abs(a) < 1e-12:
        return mean - t * step, mean + t * step

    def inverse(y: float) -> float:
        return 3.0 / a * (float(np.cbrt(1.0 + a * (y - a / 6))) - 1.0)

    return mean - inverse(t) * step, mean - inverse(-t) * step
