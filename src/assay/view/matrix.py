"""A run's case matrix, held in memory per run: one row per case, one cell per condition,
with what the filters, the search and the sort read, so a page of a 10,000-case run is a
scan of plain Python objects and a slice (the store is read once per run, and again only
when the run has changed)."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.store.views import ReadOnlyStore

PER_PAGE = 50
Outcome = Literal["", "regressions", "wins", "losses", "failing", "blocking", "errored"]
OUTCOMES: tuple[Outcome, ...] = (
    "",
    "regressions",
    "wins",
    "losses",
    "failing",
    "blocking",
    "errored",
)


@dataclass(slots=True)
class Cell:
    """One case under one condition: its first trial's first line, and its badges."""

    first_line: str = ""
    trials: int = 0
    errored: int = 0
    weighted: float | None = None
    blocker: bool = False


@dataclass(slots=True)
class Row:
    case_id: str
    category: str
    risk: str
    tags: tuple[str, ...]
    cells: dict[str, Cell] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    """Prompt and responses, casefolded, for the search."""
    passed: bool | None = None
    """The gated condition's per-case checks: all passed, some failed, or none recorded."""
    delta: float | None = None
    """The candidate's weighted score minus the baseline's."""

    @property
    def errored(self) -> bool:
        return any(c.errored for c in self.cells.values())

    @property
    def blocking(self) -> bool:
        return any(c.blocker for c in self.cells.values())


@dataclass(slots=True)
class Matrix:
    run_id: str
    conditions: list[str]
    rows: list[Row]
    baseline: str | None
    candidate: str | None
    report: dict[str, Any] | None
    categories: list[str]
    risks: list[str]
    tags: list[str]


@dataclass(frozen=True, slots=True)
class Filters:
    """What the run page shows: every field is a query parameter (a deep link)."""

    outcome: Outcome = ""
    category: str = ""
    risk: str = ""
    tag: str = ""
    q: str = ""
    sort: Literal["", "delta", "-delta"] = ""
    page: int = 1

    def query(self, **changes: Any) -> dict[str, str]:
        """The query string's parameters (the defaults left out), with `changes` applied."""
        values = {
            "outcome": self.outcome,
            "category": self.category,
            "risk": self.risk,
            "tag": self.tag,
            "q": self.q,
            "sort": self.sort,
            "page": self.page,
            **changes,
        }
        return {k: str(v) for k, v in values.items() if v not in ("", None, 1)}


def parse_filters(params: dict[str, str]) -> Filters:
    """Filters from a query string; a value it does not know shows everything (a deep link
    from an older page stays usable), a page past the end shows the last page."""
    wanted = params.get("outcome")
    outcome: Outcome = next((o for o in OUTCOMES if o == wanted), "")
    sort = params.get("sort", "")
    page_text = params.get("page", "1")
    return Filters(
        outcome=outcome,
        category=params.get("category", ""),
        risk=params.get("risk", ""),
        tag=params.get("tag", ""),
        q=params.get("q", "")[:200],
        sort=sort if sort in ("delta", "-delta") else "",  # type: ignore[arg-type]
        page=int(page_text) if page_text.isdigit() and 0 < int(page_text) < 10**6 else 1,
    )


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Row]
    matched: int
    page: int
    pages: int


def select(matrix: Matrix, filters: Filters, per_page: int = PER_PAGE) -> Page:
    """The rows the filters keep, sorted, and the requested page of them."""
    needle = filters.q.casefold().strip()
    kept = [r for r in matrix.rows if _keeps(r, filters, needle)]
    if filters.sort:
        sign = 1 if filters.sort == "delta" else -1
        kept.sort(key=lambda r: (r.delta is None, sign * (r.delta or 0.0)))
    pages = max(1, math.ceil(len(kept) / per_page))
    page = min(filters.page, pages)
    start = (page - 1) * per_page
    return Page(kept[start : start + per_page], len(kept), page, pages)


def _keeps(row: Row, f: Filters, needle: str) -> bool:
    if f.category and row.category != f.category:
        return False
    if f.risk and row.risk != f.risk:
        return False
    if f.tag and f.tag not in row.tags:
        return False
    if f.outcome and not OUTCOME_TESTS[f.outcome](row):
        return False
    return not needle or any(needle in t for t in row.text)


OUTCOME_TESTS: dict[str, Callable[[Row], bool]] = {
    # a regression: the candidate scored lower than baseline, or failed the case's checks
    "regressions": lambda r: (r.delta is not None and r.delta < 0) or r.passed is False,
    "losses": lambda r: r.delta is not None and r.delta < 0,
    "wins": lambda r: r.delta is not None and r.delta > 0,
    "failing": lambda r: r.passed is False,
    "blocking": lambda r: r.blocking,
    "errored": lambda r: r.errored,
}


def first_line(text: str, limit: int = 160) -> str:
    """The first non-blank line of a response, cut to `limit` characters."""
    head = text[: limit * 8]
    line = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def build(store: ReadOnlyStore, run_id: str) -> Matrix:
    """Read the run once: its cases (recorded, else from its trials), trials and cells."""
    run = store.run(run_id)
    report = store.report(run_id)
    rows: dict[str, Row] = {}
    for case in store.cases(run_id):
        tags = case.record.get("tags")
        rows[case.case_id] = Row(
            case.case_id,
            case.category,
            case.risk,
            tuple(str(t) for t in tags) if isinstance(tags, list) else (),
            text=[str(case.record.get("prompt", "")).casefold()],
        )
    conditions = list(run.conditions) if run is not None else []
    for case_id, condition, error, text in store.answers(run_id):
        row = rows.get(case_id)
        if row is None:
            row = rows[case_id] = Row(case_id, "", "", ())
        if condition not in conditions:
            conditions.append(condition)
        cell = row.cells.setdefault(condition, Cell())
        cell.trials += 1
        if error is not None:
            cell.errored += 1
        elif text:
            row.text.append(text.casefold())
        if cell.trials == 1 or (not cell.first_line and text):
            cell.first_line = first_line(text)
    for (case_id, condition), (weighted, blocker) in store.cells(run_id).items():
        row = rows.get(case_id)
        if row is not None:
            cell = row.cells.setdefault(condition, Cell())
            cell.weighted, cell.blocker = weighted, blocker
    baseline = str(report["baseline"]) if report and report.get("baseline") else None
    candidate = str(report["candidate"]) if report and report.get("candidate") else None
    _outcomes(rows, report, baseline, candidate)
    every = list(rows.values())
    return Matrix(
        run_id,
        conditions,
        every,
        baseline,
        candidate,
        report,
        sorted({r.category for r in every if r.category}),
        [k for k in ("low", "medium", "high") if any(r.risk == k for r in every)],
        sorted({t for r in every for t in r.tags}),
    )


def _outcomes(
    rows: dict[str, Row], report: dict[str, Any] | None, baseline: str | None, candidate: str | None
) -> None:
    for check in (report or {}).get("case_checks", []):
        row = rows.get(str(check.get("case_id")))
        if row is not None:
            row.passed = bool(check.get("passed")) and row.passed is not False
    if baseline is None or candidate is None:
        return
    for row in rows.values():
        base, cand = row.cells.get(baseline), row.cells.get(candidate)
        if base and cand and base.weighted is not None and cand.weighted is not None:
            row.delta = cand.weighted - base.weighted


class MatrixCache:
    """The matrices of the last few runs viewed, rebuilt when a run's stamp changes."""

    def __init__(self, store: ReadOnlyStore, size: int = 4) -> None:
        self.store = store
        self.size = size
        self._lock = threading.Lock()
        self._held: OrderedDict[str, tuple[tuple[Any, ...], Matrix]] = OrderedDict()

    def get(self, run_id: str) -> Matrix:
        stamp = self.store.stamp(run_id)
        with self._lock:
            held = self._held.get(run_id)
            if held is not None and held[0] == stamp:
                self._held.move_to_end(run_id)
                return held[1]
        matrix = build(self.store, run_id)
        with self._lock:
            self._held[run_id] = (stamp, matrix)
            self._held.move_to_end(run_id)
            while len(self._held) > self.size:
                self._held.popitem(last=False)
        return matrix
