"""Plain, never-wrapped output lines and the progress display."""

from __future__ import annotations

import json
import os
import sys
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


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[bool], None]]:
    """Yield a tick(ok) callback: a Rich bar on a terminal, sparse plain lines otherwise."""
    if sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        console = Console(stderr=True)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task(label, total=total)
            yield lambda ok: bar.advance(task)
        return
    step = max(1, total // 10)
    seen = 0

    def tick(ok: bool) -> None:
        nonlocal seen
        seen += 1
        if seen % step == 0 or seen == total:
            err(f"{label}: {seen}/{total}")

    yield tick
