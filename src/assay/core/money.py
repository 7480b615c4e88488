"""The text of a price, `IN,OUT` (USD per million input and output tokens), as numbers.

One reading for `--price` (models/pricing.py `parse_price`) and a suite's `[run] price` and
`[judge] price` (core/suite.py, validated when the suite is loaded, so an error names the
file and line): two finite numbers of at least 0.
"""

from __future__ import annotations

import math

from assay.core.errors import InputError


def price_values(text: str) -> tuple[float, float]:
    """`"1,2.5"` -> (1.0, 2.5); ValueError saying what is wrong otherwise (a NaN, an
    infinite or a negative price is refused: the budget could not bound anything with it)."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        values = (float(parts[0]), float(parts[1]))
    except ValueError:
        raise ValueError(f"expected IN,OUT in USD per million tokens, got {text!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise ValueError(f"prices must be finite numbers of at least 0, got {text!r}")
    return values


def checked_budget(amount: float | None, what: str) -> float | None:
    """A spending cap as given (`what` names where: `--budget-usd (budget_usd)`), or an
    InputError: a NaN, infinite or negative cap would let a run silently make no call, or
    cap nothing."""
    if amount is None:
        return None
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        raise InputError(f"ERROR: {what}: the budget must be a number of USD, got {amount!r}")
    if not (math.isfinite(amount) and amount >= 0):
        raise InputError(
            f"ERROR: {what}: the budget must be a finite number of USD of at least 0,"
            f" got {amount!r}"
        )
    return float(amount)
