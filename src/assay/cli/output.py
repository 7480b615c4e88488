"""Plain, never-wrapped output lines and the progress display.

On GitHub Actions (`GITHUB_ACTIONS=true`) the runner obeys a workflow command in any line a
step prints, stdout or stderr: a line that starts with `::` (after blanks: `::add-mask::`,
`::stop-commands::`, ...), or one holding the legacy `##[` form anywhere. Assay prints text it
did not write (condition labels, case ids, a server's error text, a judge's reply), so there
every line printed here is made inert (`inert_lines`) except assay's own annotations
(`annotate`, made by `assay.api.ci.command`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Where a line may begin for the runner (.NET's ReadLine splits at CR, LF and CRLF), and for
# good measure at every other break `str.splitlines` knows.
_LINE_START = re.compile(r"(^|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029])(\s*)::")
LEGACY_COMMAND = "##["


def on_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def inert_lines(text: str) -> str:
    """`text` with no workflow command left for the GitHub runner to obey: a backslash before
    each `::` that starts a line (blanks before it included) and inside each `##[`."""
    text = _LINE_START.sub(r"\1\2\\::", text)
    return text.replace(LEGACY_COMMAND, "##\\[")


def _write(stream: Any, text: str) -> None:
    stream.write((inert_lines(text) if on_github_actions() else text) + "\n")


def out(line: str = "") -> None:
    """A result line on stdout, undecorated (inert on GitHub Actions: `inert_lines`)."""
    _write(sys.stdout, line)


def err(line: str) -> None:
    """An error or notice line on stderr, undecorated (inert on GitHub Actions)."""
    _write(sys.stderr, line)


def annotate(command: str, *, stderr: bool = False) -> None:
    """One of assay's own workflow commands (`assay.api.ci.command`: its message and
    properties escaped into one line), printed as it is for the runner to obey."""
    (sys.stderr if stderr else sys.stdout).write(command + "\n")


def print_json(value: Any) -> None:
    """`value` as indented JSON. On GitHub Actions `##[` in a string is written `##\\u005b`,
    the same JSON value (no line of indented JSON starts with `::`)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if on_github_actions():
        text = text.replace(LEGACY_COMMAND, "##\\u005b")
    sys.stdout.write(text + "\n")


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
