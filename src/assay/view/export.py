"""`assay view --export DIR`: the explorer as static files, for a CI artifact.

The same templates as the server, rendered into files with relative links
(`view/links.py`): `index.html` (the runs), `suites/SUITE.html` (each suite's history),
`runs/RUN/index.html` and `page-N.html` (the case matrix, unfiltered: filters and search
need the server), `runs/RUN/cases/CASE.html`, `compare/A--B.html` (each run against the run
of its suite before it), `static/` (the stylesheet and the keyboard script), and the data as
JSON (`runs.json`, `runs/RUN/matrix.json`). Opened from disk, nothing is fetched from
elsewhere (a Content-Security-Policy in each page says so).

Written into a new folder beside DIR, marked as an export (a manifest of the files it wrote)
and renamed into place at the end, so DIR is whole or absent; what DIR may be (never the
store's folder, the current folder, or a folder holding anything an export did not write;
an earlier export only with `force`) is `view/target.py`'s.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from assay.store.views import ReadOnlyStore
from assay.view.app import CHUNK, render_page, templates
from assay.view.history import history_page
from assay.view.links import Links, file_name
from assay.view.matrix import PER_PAGE, Filters, Matrix, MatrixCache, Page, Row, rows
from assay.view.pages import case_pages, compare_page
from assay.view.target import (
    check_target,
    mark,
    protected_paths,
    put_in_place,
    work_folder,
    write_error,
)

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


def export(
    store: ReadOnlyStore, folder: Path, *, force: bool = False, title: str = "assay view"
) -> Exported:
    """Write the whole explorer of `store` into `folder` (see the module docstring); what
    `folder` may be is `view/target.py`'s (InputError, before any work, otherwise)."""
    protected = protected_paths(store.path)
    target = check_target(folder, force, protected)
    work = work_folder(target, folder)
    try:
        pages = _write(store, work, templates(), title)
        mark(work)
        check_target(folder, force, protected)  # again: nothing put there meanwhile
        put_in_place(work, target, folder)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(exc, OSError):
            raise write_error(exc, work, target, folder) from None
        raise
    return Exported(folder, len(store.runs()), pages)


def _write(store: ReadOnlyStore, root: Path, env: Environment, title: str) -> int:
    count = 0

    def page(path: str, template: str, **context: Any) -> None:
        nonlocal count
        depth = path.count("/")
        links = Links(root="../" * depth, static=True)
        target = root / path
        html = render_page(env, template, links, title, csp=STATIC_POLICY, **context)
        _save(target, html)
        count += 1

    for asset in sorted((HERE / "static").iterdir()):
        _save(root / "static" / asset.name, asset.read_text(encoding="utf-8"))
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
        every = rows(matrix, list(range(len(matrix))))
        previous = store.previous_run(summary.run_id)
        base = f"runs/{file_name(summary.run_id)}"
        for number, selected in _pages(every):
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
        _dump(root / base / "matrix.json", _matrix_json(matrix, every))
        for case_id, data in case_pages(store, matrix, matrix.ids):
            if data is not None:
                page(f"{base}/cases/{file_name(case_id)}.html", "case.html", run=summary, **data)
                _whole_responses(store, root, summary.run_id, case_id, data)
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


def _whole_responses(
    store: ReadOnlyStore, root: Path, run_id: str, case_id: str, data: dict[str, Any]
) -> None:
    """The whole text of each response the case page cut, as a file of its own beside it
    (`Links.response`), read from the store one response at a time and written a CHUNK of
    characters at a time."""
    where = Links(root="", static=True)
    for line in data["lines"]:
        for column in line.columns:
            trial = column.trial
            if trial is None or trial.response_chars is None:
                continue
            text = store.response(run_id, case_id, column.condition, trial.trial)
            if text is None:
                continue
            _save(root / where.response(run_id, case_id, column.condition, trial.trial), text)


def _pages(every: list[Row]) -> Iterator[tuple[int, Page]]:
    """Every page of the unfiltered matrix (`every` row, in catalogue order)."""
    pages = max(1, math.ceil(len(every) / PER_PAGE))
    for number in range(1, pages + 1):
        start = (number - 1) * PER_PAGE
        yield number, Page(every[start : start + PER_PAGE], len(every), number, pages)


def _matrix_json(matrix: Matrix, every: list[Row]) -> dict[str, Any]:
    return {
        "run_id": matrix.run_id,
        "conditions": matrix.conditions,
        "baseline": matrix.baseline,
        "candidate": matrix.candidate,
        "sequential": matrix.sequential,
        "rows": [
            {
                "case_id": r.case_id,
                "page": f"cases/{file_name(r.case_id)}.html",
                "category": r.category,
                "risk": r.risk,
                "tags": list(r.tags),
                "passed": r.passed,
                "delta": r.delta,
                "not_looked": r.unlooked,
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
            for r in every
        ],
    }


def _dump(path: Path, data: Any) -> None:
    _save(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def _save(path: Path, text: str) -> None:
    """Write `text` to `path` in UTF-8, a CHUNK of characters at a time (a long response is
    not encoded whole at once); an OSError (a full disk, a file-size limit) names the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", errors="replace") as handle:
            for start in range(0, len(text), CHUNK):
                handle.write(text[start : start + CHUNK])
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise
