"""A run's case matrix, held in memory per run as columns (one list per field, one entry
per case, in the catalogue's order), so filtering, searching and sorting a 10,000-case run is
a scan of plain lists and a page is a slice; the store is read once per run, and again only
when the run has changed.

Building it reads columns, not records: the cases' ids, categories, risks and tags, the
trials' counts and errors, the recorded cells' scores (no trial's JSON is parsed). What only
some pages need is read on demand and kept: the first lines of the cells a page shows, the
prompts and responses on the run's first search. Columns of numbers and strings also keep
Python's cycle collector out of it: a matrix is a few dozen lists, not 40,000 objects it
would walk again and again. `Row` and `Cell` are what a page shows of one case.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from assay.core.text import cut
from assay.store.views import ReadOnlyStore

PER_PAGE = 50
PAGE_TEXT = 200_000
"""Characters of a response a page shows (and the search looks in): a longer one is cut,
its whole text a link away (`/runs/RUN/response?...`; an export's file beside the page)."""
FIRST_LINE = 160
Outcome = Literal["", "regressions", "wins", "losses", "failing", "blocking", "errored", "not-run"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


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
    """One case as a page shows it (made from the matrix's columns for the rows shown)."""

    case_id: str
    category: str
    risk: str
    tags: tuple[str, ...]
    cells: dict[str, Cell]
    passed: bool | None
    """The gated condition's per-case checks: all passed, some failed, or none recorded."""
    delta: float | None
    """The candidate's weighted score minus the baseline's."""
    unlooked: bool = False
    """A sequential run stopped before the case: the verdict never looked at it."""


@dataclass(slots=True)
class Column:
    """One condition's cells, one entry per case (`ran` False: no trial, no recorded cell)."""

    ran: list[bool]
    trials: list[int]
    errored: list[int]
    weighted: list[float | None]
    blocker: list[bool]
    first_line: list[str | None]
    """None until read (`fill_first_lines`)."""

    @classmethod
    def empty(cls, n: int) -> Column:
        return cls([False] * n, [0] * n, [0] * n, [None] * n, [False] * n, [None] * n)

    def grow(self) -> None:
        for values, blank in self._fields():
            values.append(blank)

    def _fields(self) -> list[tuple[list[Any], Any]]:
        return [
            (self.ran, False),
            (self.trials, 0),
            (self.errored, 0),
            (self.weighted, None),
            (self.blocker, False),
            (self.first_line, None),
        ]


@dataclass(slots=True)
class Matrix:
    run_id: str
    conditions: list[str]
    baseline: str | None
    candidate: str | None
    report: dict[str, Any] | None
    ids: list[str]
    category: list[str]
    risk: list[str]
    case_tags: list[tuple[str, ...]]
    columns: dict[str, Column]
    passed: list[bool | None]
    delta: list[float | None]
    index: dict[str, int]
    """Case id → its position."""
    store: ReadOnlyStore | None = field(default=None, repr=False, compare=False)
    """Where the parts read on demand come from."""
    unlooked: list[bool] = field(default_factory=list)
    """Per case: a sequential run stopped before it (the report's `not_looked`); its
    checks are not shown as passed, whatever trials an earlier run left."""
    unrun_count: int | None = field(default=None, repr=False, compare=False)
    texts: dict[str, tuple[str, ...]] | None = field(default=None, repr=False, compare=False)
    """Each case's prompt and responses, casefolded, for the search (read on the first)."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def compared(self) -> bool:
        """Whether the run's gate compared a candidate with a baseline (False: a single
        system gated on its own, or no evaluation recorded)."""
        return self.baseline is not None

    @property
    def sequential(self) -> dict[str, Any] | None:
        """The report's sequential stop (`Sequential`'s fields), if the run went in looks."""
        stop = (self.report or {}).get("sequential")
        return stop if isinstance(stop, dict) else None

    @property
    def not_run(self) -> int:
        """Cases no condition answered, or the verdict never looked at (counted once)."""
        if self.unrun_count is None:
            self.unrun_count = sum(1 for i in range(len(self)) if self.unrun(i))
        return self.unrun_count

    def looked_past(self, i: int) -> bool:
        """Whether a sequential run stopped before case `i` (the verdict never saw it)."""
        return i < len(self.unlooked) and self.unlooked[i]

    def unrun(self, i: int) -> bool:
        return self.looked_past(i) or not any(c.ran[i] for c in self.columns.values())

    @property
    def categories(self) -> list[str]:
        return sorted({c for c in self.category if c})

    @property
    def risks(self) -> list[str]:
        return [k for k in ("low", "medium", "high") if k in self.risk]

    @property
    def tags(self) -> list[str]:
        return sorted({t for tags in set(self.case_tags) for t in tags})

    def errored(self, i: int) -> bool:
        return any(c.errored[i] for c in self.columns.values())

    def blocking(self, i: int) -> bool:
        return any(c.blocker[i] for c in self.columns.values())

    def cell(self, condition: str, i: int) -> Cell | None:
        column = self.columns.get(condition)
        if column is None or not column.ran[i]:
            return None
        return Cell(
            column.first_line[i] or "",
            column.trials[i],
            column.errored[i],
            column.weighted[i],
            column.blocker[i],
        )

    def row(self, i: int) -> Row:
        """Case `i` as a page shows it (its cells' first lines read first: `fill_first_lines`)."""
        cells = {c: cell for c in self.columns if (cell := self.cell(c, i)) is not None}
        return Row(
            self.ids[i],
            self.category[i],
            self.risk[i],
            self.case_tags[i],
            cells,
            self.passed[i],
            self.delta[i],
            self.looked_past(i),
        )


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
    """The rows the filters keep, sorted, and the requested page of them (its cells' first
    lines read)."""
    needle = filters.q.casefold().strip()
    texts = search_texts(matrix) if needle else {}
    keeps = _keeps(matrix, filters, needle, texts)
    kept = [i for i in range(len(matrix)) if keeps(i)]
    if filters.sort:
        sign = 1 if filters.sort == "delta" else -1
        delta = matrix.delta
        kept.sort(key=lambda i: (delta[i] is None, sign * (delta[i] or 0.0)))
    pages = max(1, math.ceil(len(kept) / per_page))
    page = min(filters.page, pages)
    start = (page - 1) * per_page
    shown = kept[start : start + per_page]
    return Page(rows(matrix, shown), len(kept), page, pages)


def rows(matrix: Matrix, indices: list[int]) -> list[Row]:
    """The rows at `indices`, their first lines read from the store where not read yet."""
    fill_first_lines(matrix, indices)
    return [matrix.row(i) for i in indices]


def _keeps(
    m: Matrix, f: Filters, needle: str, texts: dict[str, tuple[str, ...]]
) -> Callable[[int], bool]:
    test = OUTCOME_TESTS[f.outcome] if f.outcome else None

    def keeps(i: int) -> bool:
        if f.category and m.category[i] != f.category:
            return False
        if f.risk and m.risk[i] != f.risk:
            return False
        if f.tag and f.tag not in m.case_tags[i]:
            return False
        if test is not None and not test(m, i):
            return False
        return not needle or any(needle in t for t in texts.get(m.ids[i], ()))

    return keeps


def _below(value: float | None) -> bool:
    return value is not None and value < 0


OUTCOME_TESTS: dict[str, Callable[[Matrix, int], bool]] = {
    # a regression: the candidate scored lower than baseline, or failed the case's checks
    "regressions": lambda m, i: _below(m.delta[i]) or m.passed[i] is False,
    "losses": lambda m, i: _below(m.delta[i]),
    "wins": lambda m, i: (d := m.delta[i]) is not None and d > 0,
    "failing": lambda m, i: m.passed[i] is False,
    "blocking": lambda m, i: m.blocking(i),
    "errored": lambda m, i: m.errored(i),
    "not-run": lambda m, i: m.unrun(i),
}


def first_line(text: str, limit: int = FIRST_LINE) -> str:
    """The first non-blank line of a response, cut to `limit` characters."""
    head = text[: limit * 8]
    line = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    return cut(line, limit)


def build(store: ReadOnlyStore, run_id: str) -> Matrix:
    """Read the run's columns: its cases (recorded, else from its trials), trials and cells."""
    run = store.run(run_id)
    report = store.report(run_id)
    keys = store.case_keys(run_id)
    ids = [k[0] for k in keys]
    index = {case_id: i for i, case_id in enumerate(ids)}
    category, risk = [k[1] for k in keys], [k[2] for k in keys]
    parsed: dict[Any, tuple[str, ...]] = {}  # tags as SQLite gave them → as the matrix holds them
    case_tags = [parsed[t] if t in parsed else parsed.setdefault(t, _tags(t)) for *_, t in keys]
    conditions = list(run.conditions) if run is not None else []
    columns = {c: Column.empty(len(ids)) for c in conditions}

    def at(case_id: str) -> int:
        """The case's position, a new row for a case only its trials name."""
        i = index.get(case_id)
        if i is None:
            i = index[case_id] = len(ids)
            ids.append(case_id)
            category.append("")
            risk.append("")
            case_tags.append(())
            for column in columns.values():
                column.grow()
        return i

    def column(condition: str) -> Column:
        if condition not in columns:
            conditions.append(condition)
            columns[condition] = Column.empty(len(ids))
        return columns[condition]

    for case_id, condition, errored in store.trial_errors(run_id):
        i, col = at(case_id), column(condition)
        col.ran[i] = True
        col.trials[i] += 1
        col.errored[i] += errored
    for case_id, condition, weighted, blocker in store.cells(run_id):
        found = index.get(case_id)
        if found is not None:
            col = column(condition)
            if not col.ran[found]:
                col.ran[found], col.first_line[found] = True, ""
            col.weighted[found], col.blocker[found] = weighted, bool(blocker)
    candidate = str(report["candidate"]) if report and report.get("candidate") else None
    baseline = _baseline(report, conditions, candidate)
    matrix = Matrix(
        run_id,
        conditions,
        baseline,
        candidate,
        report,
        ids,
        category,
        risk,
        case_tags,
        columns,
        [None] * len(ids),
        [None] * len(ids),
        index,
        store,
    )
    _outcomes(matrix)
    return matrix


def _baseline(
    report: dict[str, Any] | None, conditions: list[str], candidate: str | None
) -> str | None:
    """The condition the gate compared the candidate with; None when it compared none (a
    single system gated on its own: `baseline_compared` false, one condition, or no report)."""
    if not report or report.get("baseline_compared") is False or not report.get("baseline"):
        return None
    baseline = str(report["baseline"])
    return baseline if baseline in conditions and baseline != candidate else None


def _tags(value: Any) -> tuple[str, ...]:
    """A case's tags from `json_extract`: a list comes back as JSON text, anything else is
    no tags."""
    if not isinstance(value, str) or not value.startswith("["):
        return ()
    try:
        tags = json.loads(value)
    except ValueError:
        return ()
    return tuple(str(t) for t in tags) if isinstance(tags, list) else ()


def _outcomes(m: Matrix) -> None:
    listed = (m.report or {}).get("not_looked") if m.sequential else None
    unlooked = {c for c in listed if isinstance(c, str)} if isinstance(listed, list) else set()
    m.unlooked = [case_id in unlooked for case_id in m.ids]
    for check in (m.report or {}).get("case_checks", []):
        i = m.index.get(str(check.get("case_id")))
        if i is not None and not m.unlooked[i]:
            m.passed[i] = bool(check.get("passed")) and m.passed[i] is not False
    base = m.columns.get(m.baseline) if m.baseline is not None else None
    cand = m.columns.get(m.candidate) if m.candidate is not None else None
    if base is None or cand is None:
        return
    for i, (b, c) in enumerate(zip(base.weighted, cand.weighted, strict=True)):
        if b is not None and c is not None:
            m.delta[i] = c - b


def fill_first_lines(matrix: Matrix, indices: list[int]) -> None:
    """Give the cells of the rows at `indices` their first lines (the first trial's, else the
    first with a response), read from the store for the rows not read yet."""
    columns = list(matrix.columns.values())
    wanted = [i for i in indices if any(c.first_line[i] is None for c in columns)]
    if not wanted or matrix.store is None:
        return
    whole = len(wanted) == len(matrix)
    ids = None if whole else [matrix.ids[i] for i in wanted]
    read = matrix.store.answers(matrix.run_id, ids, cut=FIRST_LINE * 8)
    _set_first_lines(matrix, _first_lines(read), wanted)


def _first_lines(answers: Iterable[tuple[str, str, str | None, str]]) -> dict[tuple[str, str], str]:
    lines: dict[tuple[str, str], str] = {}
    for case_id, condition, _, text in answers:
        key = (case_id, condition)
        if key not in lines or (not lines[key] and text):
            lines[key] = first_line(text)
    return lines


def _set_first_lines(
    matrix: Matrix, lines: dict[tuple[str, str], str], indices: Iterable[int]
) -> None:
    for i in indices:
        case_id = matrix.ids[i]
        for condition, column in matrix.columns.items():
            if column.first_line[i] is None:
                column.first_line[i] = lines.get((case_id, condition), "")


def search_texts(matrix: Matrix) -> dict[str, tuple[str, ...]]:
    """Each case's prompt and answered responses (the first PAGE_TEXT characters of each, as
    its page shows), casefolded: read from the store on the run's first search and kept
    (every cell's first line filled on the way)."""
    with matrix.lock:
        if matrix.texts is not None:
            return matrix.texts
        found: dict[str, list[str]] = {}
        answers: list[tuple[str, str, str | None, str]] = []
        if matrix.store is not None:
            for case_id, prompt in matrix.store.prompts(matrix.run_id):
                found[case_id] = [str(prompt if prompt is not None else "").casefold()]
            answers = list(matrix.store.answers(matrix.run_id, cut=PAGE_TEXT))
        for case_id, _, error, text in answers:
            if error is None and text:
                found.setdefault(case_id, []).append(text.casefold())
        matrix.texts = {c: tuple(t) for c, t in found.items()}
    _set_first_lines(matrix, _first_lines(answers), range(len(matrix)))
    return matrix.texts


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
