"""Krippendorff's alpha: the one agreement-among-raters statistic, used by judge panels, the
review app and calibration (`assay calibrate`'s human alpha)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import krippendorff
import numpy as np

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]
MAX_SCALE_POINTS = 1000


def integer_scale(values: Sequence[float]) -> tuple[float, float] | None:
    """(lowest, highest) when every value is a whole number within `MAX_SCALE_POINTS` points
    (a rating scale), else None (continuous)."""
    if not values or not all(float(v).is_integer() for v in values):
        return None
    low, high = float(min(values)), float(max(values))
    return (low, high) if high - low < MAX_SCALE_POINTS else None


def alpha_level(numeric: bool, rating_scale: bool) -> AlphaLevel:
    """The one level of measurement for a kind of rating, wherever alpha is computed
    (calibrate's human alpha, the review app, judge panels): categories are nominal, the
    points of a rating scale (1-5, 0/1 blocker) ordinal (their order counts, their distances
    are not measured), continuous numbers interval. The same 1-5 scores therefore get the
    same alpha in `assay calibrate` and in the review app."""
    if not numeric:
        return "nominal"
    return "ordinal" if rating_scale else "interval"


def krippendorff_alpha(
    matrix: Sequence[Sequence[float | None]] | np.ndarray,
    level: AlphaLevel,
    *,
    digits: int | None = None,
) -> float | None:
    """Krippendorff's alpha among raters (rows) over units (columns), by the `krippendorff`
    library; None (or NaN) marks a missing rating. Rounded to `digits` when given.

    None when alpha is undefined: fewer than two raters, no units, fewer than two distinct
    values (no variation to agree on), or no unit rated twice.
    """
    if isinstance(matrix, np.ndarray):
        data = matrix.astype(float)
    else:
        data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] == 0:
        return None
    if np.unique(data[~np.isnan(data)]).size < 2:
        return None
    try:
        value = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None
    if not math.isfinite(value):
        return None
    return value if digits is None else round(value, digits)
