"""The paired cluster bootstrap: resample cases (not trials), vectorised with numpy.

Each case contributes one paired delta per metric (its trials averaged first), so a
resample draws cases with replacement. Each metric's interval is computed on the cases that
have it. Rubric scores are coarse (1-5, averaged over a few trials), so a column usually
holds few distinct deltas; drawing how often each distinct value is picked — a multinomial
over the distinct values — is exactly the same resampling as drawing case indices, and
makes 10,000 resamples of any number of cases cheap. Columns with many distinct values fall
back to drawing case indices in chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

RESAMPLES = 10_000
SEED = 20_240_611
LEVEL = 0.95
CHUNK_CELLS = 4_000_000
DECIMALS = 10

FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class Interval:
    """Per-metric figures of a bootstrap: mean, interval bounds, spread and case count."""

    mean: FloatArray
    low: FloatArray
    high: FloatArray
    sd: FloatArray
    n: NDArray[np.int64]


def _resampled_means(values: FloatArray, resamples: int, rng: np.random.Generator) -> FloatArray:
    """Means of `resamples` bootstrap resamples of one column of present values."""
    n = values.size
    distinct, counts = np.unique(np.round(values, DECIMALS), return_counts=True)
    if distinct.size * 4 <= n:
        draws = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
        result: FloatArray = draws @ distinct / n
        return result
    out = np.empty(resamples)
    chunk = max(1, min(resamples, CHUNK_CELLS // n))
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        out[start : start + size] = np.take(values, picks).mean(axis=1)  # = values[picks]
    return out


def paired_bootstrap(
    deltas: FloatArray,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval:
    """Percentile intervals of the mean of each column of `deltas` (cases × metrics, NaN = absent)."""
    values = np.asarray(deltas, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n_metrics = values.shape[1]
    rng = np.random.default_rng(seed)
    alpha = (1.0 - level) / 2.0
    mean = np.full(n_metrics, np.nan)
    low = np.full(n_metrics, np.nan)
    high = np.full(n_metrics, np.nan)
    sd = np.zeros(n_metrics)
    n = np.zeros(n_metrics, dtype=np.int64)
    for column in range(n_metrics):
        present = values[:, column][~np.isnan(values[:, column])]
        n[column] = present.size
        if not present.size:
            continue
        mean[column] = present.mean()
        if present.size < 2:
            continue  # one case says nothing about the spread: no interval
        low[column] = high[column] = mean[column]
        sd[column] = present.std(ddof=1)
        if resamples > 0 and sd[column] > 0:
            means = _resampled_means(present, resamples, rng)
            low[column], high[column] = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(mean=mean, low=low, high=high, sd=sd, n=n)
