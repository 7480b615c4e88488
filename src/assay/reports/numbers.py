"""Figures as every report prints them (Markdown and HTML alike): a whole number whole."""

from __future__ import annotations

import math
from collections.abc import Mapping


def _whole(value: float) -> str | None:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else None


def figure(value: float | None) -> str:
    """A bound: a whole number as one (`30` tokens, not `30.000`), else three decimals
    (`0.200`); `–` for none."""
    if value is None or not math.isfinite(value):
        return "–"
    return _whole(value) or f"{value:.3f}"


def figures(metrics: Mapping[str, float | None]) -> str:
    """A scorer's figures: `tokens 30, within_budget 1, latency_s 0.512` (a whole number
    whole, else three significant digits)."""
    shown = []
    for name, value in metrics.items():
        if value is None or not math.isfinite(value):
            shown.append(f"{name} –")
        else:
            shown.append(f"{name} {_whole(value) or f'{value:.3g}'}")
    return ", ".join(shown)
