"""Runs of other harnesses as assay records: promptfoo results and Inspect AI logs become
cases, trials and score rows that `assay score`, `assay report` and `assay review` read.

One module per tool (`promptfoo`, `inspect_ai`), each with `read(paths) -> Imported`; the
shared part (`common`) names places in errors, metrics and conditions. Only `core` is used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import get_args

from assay.core.errors import InputError
from assay.importers.common import Imported, Tool

TOOLS: tuple[Tool, ...] = get_args(Tool)


def reader(tool: str) -> Callable[[Sequence[Path]], Imported]:
    """The reader of a tool's output; an unknown tool is an InputError naming the known."""
    if tool == "promptfoo":
        from assay.importers import promptfoo

        return promptfoo.read
    if tool == "inspect":
        from assay.importers import inspect_ai

        return inspect_ai.read
    raise InputError(f"ERROR: import {tool!r}: unknown tool (known: {', '.join(TOOLS)})")


__all__ = ["TOOLS", "Imported", "Tool", "reader"]
