"""Figures as every report prints them (Markdown and HTML alike)."""

from __future__ import annotations

import math
from collections.abc import Mapping


def figure(value: float | None) -> str:
    """A scorer's figure or a bound: a whole number as one (`30` tokens, not `30.000`), else
    three significant digits (`0.667`, `1.25`), one decimal from 100 up (`1234.5`); `–` for
    none."""
    if value is None or not math.isfinite(value):
        return "–"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.3g}"


def figures(metrics: Mapping[str, float | None]) -> str:
    """`tokens 30, within_budget 1, latency_s 0.512`."""
    return ", ".join(f"{name} {figure(value)}" for name, value in metrics.items())
