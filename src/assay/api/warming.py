"""Warming up for the evaluation after a suite's run: its modules imported while the run waits.

The evaluation after a run imports numpy, the verdict and the report models: a quarter of a
second once the last reply is in. `warming` imports them on a daemon thread as soon as the
run's first trial is finished, while the run mostly waits on the network."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence

from assay.core.suite import Suite
from assay.engine.runner import Progress, Spent, told_spend

EVALUATION_MODULES = (
    "assay.api.suites",
    "assay.reports.build",
    "assay.reports.render",
    "scipy.special",  # the comparison's t quantile (verdict/interval.py)
)
"""What the evaluation after a suite's run imports (numpy, the verdict, the report models)."""


def evaluation_modules(evaluated: Suite) -> tuple[str, ...]:
    """The modules the evaluation of a run of `evaluated` (the suite as it is evaluated)
    will import."""
    modules: tuple[str, ...] = EVALUATION_MODULES
    if evaluated.judge.judges:
        modules += ("assay.store.history",)  # the judges' scores are recorded for history
    if {"md", "html"} & set(evaluated.report.formats):
        modules += ("jinja2",)  # the Markdown and HTML reports' templates
    return modules


def warming(progress: Progress | None, modules: Sequence[str]) -> Progress | None:
    """`progress`, which on the run's first finished trial starts importing `modules` on a
    daemon thread: the evaluation after the run then finds them loaded instead of importing
    them once the last reply is in. Harmless when it fails or the run ends first: importing
    is thread-safe, and the evaluation imports whatever is not loaded yet."""
    if not modules:
        return progress
    started = False
    forward = told_spend(progress) if progress is not None else None

    def tick(ok: bool, spent: Spent | None = None, /) -> None:
        nonlocal started
        if not started:
            started = True
            threading.Thread(
                target=_import_all, args=(modules,), name="assay-warm", daemon=True
            ).start()
        if forward is not None:
            forward(ok, spent)

    return tick


def _import_all(modules: Sequence[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the evaluation imports it again, and reports what fails
            return
