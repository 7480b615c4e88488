"""Text as every command, report and page prints it: a figure that cannot be computed as
`n/a (why)` (never `nan`, a clamp or a degenerate interval), and a long text cut with `…`."""

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


def cut(text: str, limit: int) -> str:
    """`text` as it is, or cut to `limit` characters, the last of them `…`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
