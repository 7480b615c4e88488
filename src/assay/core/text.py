"""How a figure that cannot be computed is printed: `n/a (why)`, never `nan`, a clamp or a
degenerate interval. One definition for every command, report and page."""

from __future__ import annotations

import math


def not_available(reason: str) -> str:
    """`n/a (reason)`: a figure there is no meaningful value for, and why."""
    return f"n/a ({reason})"


def figure_text(value: float | None, spec: str, reason: str | None = None) -> str:
    """The value formatted with `spec` (`.2f`), or `n/a (reason)` when it is None or not
    finite (`-` when no reason is known)."""
    if value is None or not math.isfinite(value):
        return not_available(reason) if reason else "-"
    return format(value, spec)
