"""`assay view --export DIR`: the explorer as static files, for a CI artifact.

The same templates as the server, rendered into files with relative links
(`view/links.py`): `index.html` (the runs), `suites/SUITE.html` (each suite's history),
`runs/RUN/index.html` and `page-N.html` (the case matrix, unfiltered: filters and search
need the server), `runs/RUN/cases/CASE.html`, `compare/A--B.html` (each run against the run
of its suite before it), `static/` (the stylesheet and the keyboard script), and the data as
JSON (`runs.json`, `runs/RUN/matrix.json`). Opened from disk, nothing is fetched from
elsewhere (a Content-Security-Policy in each page says so).

Written into a new folder beside DIR and renamed into place at the end, so DIR is whole or
absent; an existing DIR is refused unless `force`, then replaced in one rename.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from assay.core.errors import InputError
from assay.store.views import ReadOnlyStore
from assay.view.app import render_page, templates
from assay.view.history import history_page
from assay.view.links import Links, file_name
from assay.view.matrix import PER_PAGE, Filters, Matrix, MatrixCache, Page
from assay.view.pages import case_page, compare_page

HERE = Path(__file__).resolve().parent
# The server's policy, less what a <meta> element cannot carry (frame-ancestors), for pages
# opened from disk: no script or style but the export's own files, nothing fetched.
STATIC_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'none'; base-uri 'none'"
)


@dataclass(frozen=True, slots=True)
class Exported:
    folder: Path
    runs: int
    pages: int


def check_target(folder: Path, force: bool) -> Path:
    """The folder the export is written in (a new one beside `folder`); InputError when
    `folder` is taken (unless `force`) or its parent cannot be written, before any work."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"ERROR: --export {folder}: not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise InputError(
            f"ERROR: --export {folder}: the folder is not empty (pass --force to replace it)"
        )
    parent = folder.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=parent))
    except OSError as exc:
        raise InputError(f"ERROR: --export {folder}: cannot write there: {exc.strerror}") from None


def export(
    store: ReadOnlyStore, folder: Path, *, force: bool = False, title: str = "assay view"
) -> Exported:
    """Write the whole explorer of `store` into `folder` (see the module docstring)."""
    work = check_target(folder, force)
    try:
        pages = _write(store, work, templates(), title)
        _swap(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Exported(folder, len(store.runs()), pages)


def _swap(work: Path, folder: Path) -> None:
    """Put the finished export at `folder`: one rename (the old folder, if any, moved aside
    first and removed after)."""
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.absolute().parent))
        os.rename(folder, old / "export")
    os.rename(work, folder)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write(store: ReadOnlyStore, root: Path, env: Environment, title: str) -> int:
    count = 0

    def page(path: str, template: str, **context: Any) -> None:
        nonlocal count
        depth = path.count("/")
        links = Links(root="../" * depth, static=True)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        html = render_page(env, template, links, title, csp=STATIC_POLICY, **context)
        target.write_text(html, encoding="utf-8")
        count += 1

    shutil.copytree(HERE / "static", root / "static")
    runs = store.runs()
    suites = store.suites()
    page("index.html", "runs.html", runs=runs, suites=suites, suite="")
    _dump(root / "runs.json", [asdict(r) for r in runs])
    for suite in suites:
        data = history_page(store, suite)
        if data is not None:
            page(f"suites/{file_name(suite)}.html", "history.html", **data)
    cache = MatrixCache(store, size=2)
    for summary in runs:
        matrix = cache.get(summary.run_id)
        previous = store.previous_run(summary.run_id)
        base = f"runs/{file_name(summary.run_id)}"
        for number, selected in _pages(matrix):
            name = "index.html" if number == 1 else f"page-{number}.html"
            page(
                f"{base}/{name}",
                "run.html",
                run=summary,
                matrix=matrix,
                report=matrix.report,
                filters=Filters(page=number),
                page=selected,
                previous_run=previous,
            )
        _dump(root / base / "matrix.json", _matrix_json(matrix))
        for row in matrix.rows:
            data = case_page(store, matrix, row.case_id)
            if data is not None:
                page(
                    f"{base}/cases/{file_name(row.case_id)}.html", "case.html", run=summary, **data
                )
        if previous is not None and store.run(previous) is not None:
            before = cache.get(previous)
            known = {r.run_id: r for r in runs}
            page(
                f"compare/{file_name(previous)}--{file_name(summary.run_id)}.html",
                "compare.html",
                a=known[previous],
                b=summary,
                **compare_page(before, matrix),
            )
    return count


def _pages(matrix: Matrix) -> Iterator[tuple[int, Page]]:
    """Every page of the unfiltered matrix, in catalogue order."""
    rows = matrix.rows
    pages = max(1, math.ceil(len(rows) / PER_PAGE))
    for number in range(1, pages + 1):
        start = (number - 1) * PER_PAGE
        yield number, Page(rows[start : start + PER_PAGE], len(rows), number, pages)


def _matrix_json(matrix: Matrix) -> dict[str, Any]:
    return {
        "run_id": matrix.run_id,
        "conditions": matrix.conditions,
        "baseline": matrix.baseline,
        "candidate": matrix.candidate,
        "rows": [
            {
                "case_id": r.case_id,
                "page": f"cases/{file_name(r.case_id)}.html",
                "category": r.category,
                "risk": r.risk,
                "tags": list(r.tags),
                "passed": r.passed,
                "delta": r.delta,
                "cells": {
                    c: {
                        "first_line": cell.first_line,
                        "trials": cell.trials,
                        "errored": cell.errored,
                        "weighted": cell.weighted,
                        "blocker": cell.blocker,
                    }
                    for c, cell in r.cells.items()
                },
            }
            for r in matrix.rows
        ],
    }


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
