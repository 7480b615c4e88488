"""Plain, never-wrapped output lines and the progress display."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def out(line: str = "") -> None:
    """A result line on stdout, undecorated."""
    sys.stdout.write(line + "\n")


def err(line: str) -> None:
    """An error or notice line on stderr, undecorated."""
    sys.stderr.write(line + "\n")


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


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
) -> Iterator[Callable[[bool], None]]:
    """Yield a tick(ok) callback: a Rich bar on a terminal (count, errors so far, rate,
    elapsed and time left), else a plain line with the same figures at most every
    PLAIN_EVERY_S seconds and one at the end. `console`: a Rich console to draw on (a
    terminal's stderr by default); `clock`: the plain lines' time source."""
    if console is None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
        from rich.console import Console

        console = Console(stderr=True)
    if console is not None:
        with _bar(total, label, console) as advance:
            yield advance
        return
    start = last = clock()
    seen = failed = 0

    def tick(ok: bool) -> None:
        nonlocal seen, failed, last
        seen += 1
        failed += not ok
        now = clock()
        if now - last >= PLAIN_EVERY_S or seen == total:
            last = now
            err(_plain_line(label, seen, total, failed, now - start))

    yield tick


@contextmanager
def _bar(total: int, label: str, console: Any) -> Iterator[Callable[[bool], None]]:
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
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total, errors="")

        def tick(ok: bool) -> None:
            nonlocal failed
            if ok:
                bar.advance(task)
                return
            failed += 1
            bar.update(task, advance=1, errors=f"{failed} error{'s' if failed > 1 else ''}")

        yield tick


def _plain_line(label: str, seen: int, total: int, failed: int, elapsed: float) -> str:
    """`trials: 120/1000, 3 errors, 4.1/s, 29s elapsed, 3m34s left`."""
    parts = [f"{label}: {seen}/{total}"]
    if failed:
        parts.append(f"{failed} error{'s' if failed > 1 else ''}")
    if elapsed > 0:
        rate = seen / elapsed
        parts.append(f"{rate:.1f}/s")
        parts.append(f"{_duration(elapsed)} elapsed")
        if seen < total:
            parts.append(f"{_duration((total - seen) / rate)} left")
    return ", ".join(parts)


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
