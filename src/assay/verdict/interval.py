"""The interval of a mean of bounded values: a betting confidence interval.

Each case contributes one value per column (a paired delta, its trials averaged first: the
case is the unit, so trials of one case never count as independent evidence; or, for a
corpus bound, the case's mean). The values lie within a known range [`floor`, `span`] (the
rubric's scale, or [0, 1] for a share: `compare.delta_spans`, `corpus.value_range`), and that
is all the interval assumes: no normality, no symmetry, no minimum spread. It is the hedged
capital betting interval of Waudby-Smith & Ramdas (2024, "Estimating means of bounded random
variables by betting", JRSS B 86(1):1-27, §4-5, predictable plug-in bets, "PrPl-EB" sizes,
their Theorem 3 and Remark 4 on averaging over orders):

- rescaled to x in [0, 1], the lower bound is the least m at which a gambler betting each
  case's x above m, with stake λ_t = min(√(2·log(1/a) / (n·σ̂²_{t−1})), c/m) (σ̂² the running
  variance with a prior of 1/4, made from the cases before t only; c = `STAKE`), would not
  have multiplied their capital by 1/a, a = (1 − level)/2: K_n(m) = Π (1 + λ_t(x_t − m)) < 1/a.
  Under any distribution of mean m in [0, 1], K is a nonnegative martingale, so the bound
  errs with probability at most a (Ville's inequality): a one-sided 2.5% for every shape of
  data and every case count, not only in the limit. The upper bound is the same on 1 − x.
- the capital depends on the order the cases are taken in, so it is averaged over `ORDERS`
  fixed pseudo-random orders of the sorted values (an average of e-values is one): the
  interval is a deterministic function of the column's values, whatever the cases' order
  or names, and identical values always give identical intervals.

A column without spread needs nothing special: every value at x₀ gives the lower bound
x₀ / (1 + ((1/a)^{1/n} − 1)/c). One case gives a mean and no interval (NaN bounds). The
reported `sd` (over cases) is descriptive: it feeds `cases_to_clear` and the reports.
bench/gate_simulation.py (`--shapes`) measures the false PASS rate and the power on
rare-catastrophe, bimodal, ties-heavy, binary, skewed and symmetric data (docs/design.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

LEVEL = 0.95
MIN_CASES = 5
"""Fewer cases than this never pass a check: the interval is still shown, but the check is
INCONCLUSIVE and asks for at least this many (`verdict.gate`). The betting interval holds at
any count; below 5 cases it is too wide to clear any bound a gate uses."""
STAKE = 0.75
"""c, the largest share of the capital staked on one case (Waudby-Smith & Ramdas's
truncation, c/m, m the mean tested: 1/2 or 3/4 in their paper). Larger stakes let a column
without spread clear its bound on fewer cases; any c < 1 keeps the guarantee."""
ORDERS = 16
"""How many fixed orders of the values the capital is averaged over, up to `WORK` values in
all: a column of n > WORK/16 cases takes max(1, WORK // n) orders (the order matters less
the more cases there are, and a million-case column stays within a second)."""
WORK = 16_000
SEED = 20240101
STEPS = 40
"""Bisection steps for each bound: the bracket [0, 1] narrows to 2⁻⁴⁰ of the range."""
ESTIMATE_STEPS = 16
"""Bisection steps of each bound `cases_to_clear` computes (an estimate: 2⁻¹⁶ of the range)."""

FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class Interval:
    """Per-column figures: mean, interval bounds, spread (sd over cases) and case count."""

    mean: FloatArray
    low: FloatArray
    high: FloatArray
    sd: FloatArray
    n: NDArray[np.int64]


@lru_cache(maxsize=256)
def _orders(n: int) -> NDArray[np.int64]:
    """`ORDERS` fixed pseudo-random permutations of range(n) (none the identity by design:
    applied to the sorted values, each is a uniformly random order whatever the data, which
    the sorted order itself is not)."""
    rng = np.random.default_rng(SEED + n)
    rows = [rng.permutation(n) for _ in range(ORDERS)]
    orders: NDArray[np.int64] = np.array(rows, dtype=np.int64)
    orders.setflags(write=False)
    return orders


def _stakes(x: FloatArray, side: float, plan: int) -> FloatArray:
    """Each order's predictable bet size before truncation (rows: orders, columns: cases):
    √(2·log(1/side)/(plan·σ̂²_{t−1})), σ̂² the running variance with a prior of 1/4 about the
    running mean with a prior of 1/2 (Waudby-Smith & Ramdas 2024, eq. 26-27)."""
    count = np.arange(1, x.shape[1] + 1)
    mu = (0.5 + np.cumsum(x, axis=1)) / (count + 1)
    before = np.concatenate([np.full((x.shape[0], 1), 0.5), mu[:, :-1]], axis=1)
    var = (0.25 + np.cumsum((x - before) ** 2, axis=1)) / (count + 1)
    prior = np.concatenate([np.full((x.shape[0], 1), 0.25), var[:, :-1]], axis=1)
    stakes: FloatArray = np.sqrt(2.0 * math.log(1.0 / side) / (plan * prior))
    return stakes


def lower_bound(
    x: FloatArray, side: float, plan: int | None = None, orders: int = ORDERS, steps: int = STEPS
) -> float:
    """The betting lower bound for the mean of `x` (values in [0, 1], at least one) that errs
    with probability at most `side`; `plan`: the case count the bets are sized for (default
    len(x): the fixed design's); `orders`: how many of the fixed random orders of the sorted
    values the capital is averaged over (0: `x` as given, in its order, which must not depend
    on the values); `steps`: of bisection."""
    n = len(x)
    ordered = np.sort(x)[_orders(n)[:orders]] if orders else np.asarray(x)[None, :]
    stakes = _stakes(ordered, side, plan or n)
    target = math.log(1.0 / side) + math.log(max(orders, 1))
    low, high = 0.0, 1.0
    for _ in range(steps):
        m = (low + high) / 2
        bets = np.minimum(stakes, STAKE / m)
        log_wealth = np.log1p(bets * (ordered - m)).sum(axis=1)
        top = log_wealth.max()
        if top + math.log(np.exp(log_wealth - top).sum()) >= target:
            low = m  # m is rejected: the mean lies above it
        else:
            high = m
    return low


def paired_intervals(
    deltas: FloatArray | Sequence[Sequence[float]],
    *,
    level: float = LEVEL,
    span: float | FloatArray,
    floor: float | FloatArray | None = None,
) -> Interval:
    """The interval of the mean of each column of `deltas` (cases × columns, NaN = absent).

    Every value of a column lies within [`floor`, `span`] (`floor` defaults to −`span`: a
    paired delta), for every column or per column; a value seen beyond them widens them to
    it. One case gives a mean and no interval (NaN bounds)."""
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
    sd = np.where(sd <= 1e-12 * np.maximum(1.0, np.abs(mean)), 0.0, sd)
    top = np.broadcast_to(np.asarray(span, dtype=np.float64), n.shape)
    bottom = -top if floor is None else np.broadcast_to(np.asarray(floor, np.float64), n.shape)
    side = (1.0 - level) / 2
    low = np.full(n.shape, np.nan)
    high = np.full(n.shape, np.nan)
    for j in np.flatnonzero(n >= 2):
        column = values[present[:, j], j]
        least = min(float(bottom[j]), float(column.min()))  # a value past the range widens it
        most = max(float(top[j]), float(column.max()))
        width = most - least
        x = np.clip((column - least) / width, 0.0, 1.0)
        orders = max(1, min(ORDERS, WORK // len(x)))
        low[j] = least + width * lower_bound(x, side, orders=orders)
        high[j] = most - width * lower_bound(1.0 - x, side, orders=orders)
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
    """About how many cases the interval needs for its lower bound to clear a bound
    `distance` below `mean` at this spread: the least n at which the betting lower bound of
    n values alternating mean ± sd (within [`floor`, `span`], `floor` defaulting to −`span`)
    clears it. None when the mean is on the wrong side, or when not even `LARGEST` cases
    would do. (For an upper bound, pass the values negated: −mean, span −floor, floor
    −span.)"""
    if distance <= 0:
        return None
    bottom = -span if floor is None else floor
    width = span - bottom
    side = (1.0 - level) / 2
    goal = (mean - distance - bottom) / width

    def room(n: int) -> float:
        """How far the lower bound of n such cases lies above the bound to clear."""
        signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        x = np.clip((mean + sd * signs - bottom) / width, 0.0, 1.0)
        return lower_bound(x, side, orders=0, steps=ESTIMATE_STEPS) - goal

    low, high = 1, 2
    while room(high) < 0:
        if high >= COMPUTED:  # beyond, the bound's distance from the mean shrinks as 1/√n
            half = mean - bottom - width * (goal + room(high))  # mean − the lower bound
            estimate = math.ceil(high * (half / distance) ** 2)
            return estimate if estimate <= LARGEST else None
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if room(middle) >= 0 else (middle, high)
    return high


COMPUTED = 1 << 10
"""`cases_to_clear` computes the bound up to this many cases, and extrapolates beyond."""
LARGEST = 1 << 24
"""`cases_to_clear` says None rather than a count above this."""
