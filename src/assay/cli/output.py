"""Plain, never-wrapped output lines and the progress display.

On GitHub Actions (`GITHUB_ACTIONS=true`) the runner obeys a workflow command in any line a
step prints, stdout or stderr: a line that starts with `::` (after blanks: `::add-mask::`,
`::stop-commands::`, ...), or one holding the legacy `##[` form anywhere. Assay prints text it
did not write (condition labels, case ids, a server's error text, a judge's reply), so there
every line printed here is made inert (`inert_lines`) except assay's own annotations
(`annotate`, made by `assay.api.ci.command`).

Everywhere, every line printed here has its control characters shown as escapes
(`core/text.py` `terminal_safe`): text from outside (a provider's error body, an agent's
exception, a case id, a response) cannot send a terminal or a CI log ANSI CSI or OSC
sequences (a clipboard write, a hidden link, a rewritten line). JSON output keeps its value:
the controls JSON leaves raw (DEL, U+0080-U+009F) are written as `\\u` escapes.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from assay.core.text import terminal_safe

if TYPE_CHECKING:
    from assay.api.running import Spent, Tick

# Where a line may begin for the runner (.NET's ReadLine splits at CR, LF and CRLF), and for
# good measure at every other break `str.splitlines` knows.
_LINE_START = re.compile(r"(^|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029])(\s*)::")
LEGACY_COMMAND = "##["
# The control characters json.dumps(ensure_ascii=False) writes raw: DEL and C1.
_JSON_RAW_CONTROL = re.compile("[\x7f-\x9f]")


def on_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def inert_lines(text: str) -> str:
    """`text` with no workflow command left for the GitHub runner to obey: a backslash before
    each `::` that starts a line (blanks before it included) and inside each `##[`."""
    text = _LINE_START.sub(r"\1\2\\::", text)
    return text.replace(LEGACY_COMMAND, "##\\[")


def _write(stream: Any, text: str) -> None:
    text = terminal_safe(text)
    stream.write((inert_lines(text) if on_github_actions() else text) + "\n")


def out(line: str = "") -> None:
    """A result line on stdout, undecorated (inert on GitHub Actions: `inert_lines`)."""
    _write(sys.stdout, line)


def err(line: str) -> None:
    """An error or notice line on stderr, undecorated (inert on GitHub Actions)."""
    _write(sys.stderr, line)


def annotate(command: str, *, stderr: bool = False) -> None:
    """One of assay's own workflow commands (`assay.api.ci.command`: its message and
    properties escaped into one line), printed for the runner to obey (its control
    characters shown as escapes: `terminal_safe`)."""
    (sys.stderr if stderr else sys.stdout).write(terminal_safe(command) + "\n")


def print_json(value: Any) -> None:
    """`value` as indented JSON. On GitHub Actions `##[` in a string is written `##\\u005b`,
    the same JSON value (no line of indented JSON starts with `::`)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    text = _JSON_RAW_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if on_github_actions():
        text = text.replace(LEGACY_COMMAND, "##\\u005b")
    sys.stdout.write(text + "\n")


def print_output(name: str, value: dict[str, Any]) -> None:
    """Print a command's JSON output after checking it against its model (`assay schema
    NAME`), so the published schema is exactly what is printed."""
    from assay.api.outputs import OUTPUTS

    OUTPUTS[name].model_validate(value)
    print_json(value)


PLAIN_EVERY_S = 5.0
"""Without a terminal, a progress line at most this often (and one at the end)."""


@contextmanager
def progress(
    total: int, label: str, *, console: Any = None, clock: Callable[[], float] = time.monotonic
) -> Iterator[Tick]:
    """Yield a tick(ok, spent=None) callback: a Rich bar on a terminal (count, errors so
    far, rate, elapsed and time left, and when the run tells it, spend so far and budget
    left), else a plain line with the same figures at most every PLAIN_EVERY_S seconds and
    one at the end. `console`: a Rich console to draw on (a terminal's stderr by default);
    `clock`: the plain lines' time source."""
    if console is None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
        from rich.console import Console

        console = Console(stderr=True)
    if console is not None:
        with _bar(total, label, console) as advance:
            yield advance
        return
    start = last = clock()
    seen = failed = 0

    def tick(ok: bool, spent: Spent | None = None, /) -> None:
        nonlocal seen, failed, last
        seen += 1
        failed += not ok
        now = clock()
        if now - last >= PLAIN_EVERY_S or seen == total:
            last = now
            err(_plain_line(label, seen, total, failed, now - start, spent))

    yield tick


def spend_text(spent: Spent | None) -> str:
    """`$0.0123 spent, $0.9877 left` (`left` only with a budget); "" when not told."""
    if spent is None:
        return ""
    text = f"${spent.spent_usd:.4f} spent"
    left = spent.left_usd
    return text if left is None else f"{text}, ${left:.4f} left"


@contextmanager
def _bar(total: int, label: str, console: Any) -> Iterator[Tick]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f}/s" if speed else "", style="progress.data.speed")

    failed = 0
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]}", style="red"),
        Rate(),
        TextColumn("{task.fields[spend]}", style="progress.data.speed"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total, errors="", spend="")

        def tick(ok: bool, spent: Spent | None = None, /) -> None:
            nonlocal failed
            failed += not ok
            errors = f"{failed} error{'s' if failed > 1 else ''}" if failed else ""
            bar.update(task, advance=1, errors=errors, spend=spend_text(spent))

        yield tick


def _plain_line(
    label: str, seen: int, total: int, failed: int, elapsed: float, spent: Spent | None = None
) -> str:
    """`trials: 120/1000, 3 errors, 4.1/s, 29s elapsed, 3m34s left, $0.0123 spent, $0.9877
    left`."""
    parts = [f"{label}: {seen}/{total}"]
    if failed:
        parts.append(f"{failed} error{'s' if failed > 1 else ''}")
    if elapsed > 0:
        rate = seen / elapsed
        parts.append(f"{rate:.1f}/s")
        parts.append(f"{_duration(elapsed)} elapsed")
        if seen < total:
            parts.append(f"{_duration((total - seen) / rate)} left")
    if spent is not None:
        parts.append(spend_text(spent))
    return ", ".join(parts)


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
