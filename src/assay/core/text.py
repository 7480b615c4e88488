"""Text as every command, report and page prints it: a figure that cannot be computed as
`n/a (why)` (never `nan`, a clamp or a degenerate interval), a long text cut with `…`, and
text from outside made safe for a terminal (`terminal_safe`)."""

from __future__ import annotations

import math
import re

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F: U+009B is a
# one-character CSI, U+009D an OSC for terminals that read 8-bit controls).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


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


def terminal_safe(text: str) -> str:
    """`text` with every control character but tab and newline shown as an escape (`\\x1b`,
    `\\x07`, `\\x9b`), so that text from outside (a provider's error body, an agent's
    exception, a case id, a response) printed to a terminal or a CI log cannot move the
    cursor, rewrite a line (`\\r`), retitle the window, write the clipboard (OSC 52) or
    hide a link (OSC 8): ANSI CSI and OSC sequences all start with a control character.
    The one function the command line's printing (cli/output.py) passes every line through."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
