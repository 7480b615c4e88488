"""Read-only queries for `assay view`: runs, their recorded results, cases, trials and scores.

The store is opened with SQLite's `mode=ro` URI, so nothing the viewer does can write to it
(no migration either: a store from an older assay is read as it is, its missing tables read
as empty; one from a newer assay is refused, exit 2). Each query opens its own cursor on one
connection shared by the server's threads (SQLite serialises them).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.measure.history import JudgeScore
from assay.store.calibrations import StoredCalibration, latest_calibrations
from assay.store.db import damaged_store
from assay.store.history import judge_scores
from assay.store.schema import check_version


@dataclass(frozen=True, slots=True)
class SuiteVerdict:
    """One suite's recorded verdict of a run."""

    suite: str
    verdict: str
    saved_at: str
    looked: tuple[int, int] | None = None
    """A sequential stop before the last case: (cases looked at, cases in all)."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One run as the runs list shows it: `suite`, `verdict` and `saved_at` are those of the
    suite that recorded it last (or, in a suite's history, of that suite); `results` has every
    suite's verdict of it, oldest first."""

    run_id: str
    created_at: str
    config: dict[str, Any]
    trials: int
    errored: int
    spent_usd: float | None
    suite: str | None = None
    verdict: str | None = None
    saved_at: str | None = None
    git_commit: str | None = None
    duration_s: float | None = None
    results: tuple[SuiteVerdict, ...] = ()
    looked: tuple[int, int] | None = None
    """A sequential run that stopped before its last case: (cases the verdict looked at,
    cases in the catalogue), from the recorded report of `suite`; None for a run of every
    case."""

    @property
    def suite_names(self) -> list[str]:
        return [r.suite for r in self.results]

    def for_suite(self, suite: str) -> RunSummary:
        """This run as `suite` recorded it (its verdict, when it saved it)."""
        found = next((r for r in self.results if r.suite == suite), None)
        if found is None:
            return self
        return replace(
            self,
            suite=found.suite,
            verdict=found.verdict,
            saved_at=found.saved_at,
            looked=found.looked,
        )

    @property
    def conditions(self) -> list[str]:
        return [str(c.get("name")) for c in self.config.get("conditions", []) if c.get("name")]

    @property
    def cases(self) -> int | None:
        value = self.config.get("cases")
        return value if isinstance(value, int) else None

    @property
    def planned_trials(self) -> int | None:
        value = self.config.get("trials")
        return value if isinstance(value, int) else None


@dataclass(frozen=True, slots=True)
class TrialRow:
    """One trial as stored: its JSON record and the error detail kept beside it."""

    case_id: str
    condition: str
    trial: int
    record: dict[str, Any]
    error_detail: str | None
    response_chars: int | None = None
    """The whole response's length when `record["response"]` was cut (`trials(cut=...)`)."""


@dataclass(frozen=True, slots=True)
class CaseRow:
    case_id: str
    category: str
    risk: str
    record: dict[str, Any]


@dataclass(slots=True)
class CaseScores:
    """Everything scored about one case of a run, and what people said about it."""

    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(kind, record): kind is judge, scorer or comparison."""
    answers: list[dict[str, Any]] = field(default_factory=list)
    """Review answers: reviewer, mode, trial, a, b, answer, answered_at."""


class ReadOnlyStore:
    """A read-only connection to a run store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise InputError(f"ERROR: {path}: no store here (pass --store PATH)")
        uri = f"{path.resolve().as_uri()}?mode=ro"
        try:
            self.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"ERROR: {path}: cannot open the store: {exc}") from None
        self._lock = threading.Lock()
        try:
            self.db.execute("PRAGMA busy_timeout=10000")
            check_version(self.db, path)
            self.tables = {name for (name,) in self.db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            self.db.close()
            damaged = damaged_store(exc, path, opening=True)
            raise damaged or InputError(f"ERROR: {path}: cannot open the store: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self.db.execute(sql, params))

    def _has(self, *tables: str) -> bool:
        return all(t in self.tables for t in tables)

    # -- runs -----------------------------------------------------------------------------
    def runs(self, suite: str | None = None) -> list[RunSummary]:
        """Every run, newest first (only those recorded for `suite` when given)."""
        found = self._summaries(None)
        return [r for r in found if suite is None or suite in r.suite_names]

    def run(self, run_id: str) -> RunSummary | None:
        found = self._summaries(run_id)
        return found[0] if found else None

    def _summaries(self, run_id: str | None) -> list[RunSummary]:
        """The runs (one when `run_id` is given), newest first, with their trial counts."""
        if not self._has("runs"):
            return []
        where, params = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
        counts = {
            r: (n, errored or 0)
            for r, n, errored in self._rows(
                f"SELECT run_id, COUNT(*), SUM(error IS NOT NULL) FROM trials {where}"
                " GROUP BY run_id",
                params,
            )
        }
        spent = (
            dict(self._rows(f"SELECT run_id, spent_usd FROM run_spend {where}", params))
            if self._has("run_spend")
            else {}
        )
        looked = self._looked(where, params)
        results: dict[str, list[SuiteVerdict]] = {}
        if self._has("run_results"):
            for r, s, v, at in self._rows(
                f"SELECT run_id, suite, verdict, saved_at FROM run_results {where}"
                " ORDER BY saved_at, rowid",
                params,
            ):
                results.setdefault(r, []).append(SuiteVerdict(s, v, at, looked.get((r, s))))
        provenance = (
            {
                r: (commit, seconds)
                for r, commit, seconds in self._rows(
                    f"SELECT run_id, git_commit, duration_s FROM run_provenance {where}", params
                )
            }
            if self._has("run_provenance")
            else {}
        )
        found = []
        for r, created_at, config in self._rows(
            f"SELECT run_id, created_at, config FROM runs {where} ORDER BY created_at DESC, run_id",
            params,
        ):
            n, errored = counts.get(r, (0, 0))
            recorded = results.get(r, [])
            last = recorded[-1] if recorded else None
            commit, seconds = provenance.get(r) or (None, None)
            found.append(
                RunSummary(
                    r,
                    created_at,
                    _json_object(config),
                    n,
                    errored,
                    spent.get(r),
                    last.suite if last else None,
                    last.verdict if last else None,
                    last.saved_at if last else None,
                    commit,
                    seconds,
                    results=tuple(recorded),
                    looked=last.looked if last else None,
                )
            )
        return found

    def _looked(
        self, where: str, params: tuple[Any, ...]
    ) -> dict[tuple[str, str], tuple[int, int]]:
        """(run, suite) → (cases looked at, cases in all) of each recorded sequential stop
        that came before the last case. `instr` first: only a report naming `sequential` is
        parsed, and a damaged one is skipped."""
        if not self._has("run_results"):
            return {}
        found = {}
        for run_id, suite, cases, total in self._rows(
            "SELECT run_id, suite, json_extract(report, '$.sequential.cases'),"
            " json_extract(report, '$.sequential.total_cases') FROM run_results"
            f" {where} {'AND' if where else 'WHERE'} instr(report, '\"sequential\"') > 0"
            " AND json_valid(report)",
            params,
        ):
            if isinstance(cases, int) and isinstance(total, int) and cases < total:
                found[(str(run_id), str(suite))] = (cases, total)
        return found

    def suites(self) -> list[str]:
        if not self._has("run_results"):
            return []
        return [s for (s,) in self._rows("SELECT DISTINCT suite FROM run_results ORDER BY suite")]

    def suite_runs(self, suite: str) -> list[tuple[RunSummary, dict[str, Any]]]:
        """The suite's recorded runs, oldest first, each with its report's data."""
        if not self._has("run_results"):
            return []
        reports = {
            r: _json_object(text)
            for r, text in self._rows(
                "SELECT run_id, report FROM run_results WHERE suite = ? ORDER BY saved_at, run_id",
                (suite,),
            )
        }
        known = {r.run_id: r for r in self.runs(suite)}
        return [(known[r].for_suite(suite), report) for r, report in reports.items() if r in known]

    def judge_history(self) -> tuple[list[JudgeScore], list[StoredCalibration]]:
        """The judge monitoring rows (`assay history`'s): score rows and latest calibrations."""
        with self._lock:
            rows = judge_scores(self) if self._has("judge_scores") else []
            verdicts = latest_calibrations(self) if self._has("judge_calibrations") else []
        return rows, verdicts

    def report(self, run_id: str) -> dict[str, Any] | None:
        """The recorded report of the run's evaluation (report.json's data; of the suite that
        recorded it last), if any."""
        if not self._has("run_results"):
            return None
        rows = self._rows(
            "SELECT report FROM run_results WHERE run_id = ? ORDER BY saved_at DESC, rowid DESC"
            " LIMIT 1",
            (run_id,),
        )
        return _json_object(rows[0][0]) if rows else None

    def previous_run(self, run_id: str) -> str | None:
        """Another run of the suite that recorded this one last, recorded just before it."""
        if not self._has("run_results"):
            return None
        rows = self._rows(
            "SELECT p.run_id FROM run_results p JOIN run_results r ON p.suite = r.suite"
            " WHERE r.run_id = ? AND p.run_id <> r.run_id AND p.saved_at < r.saved_at"
            " AND r.saved_at = (SELECT MAX(saved_at) FROM run_results WHERE run_id = ?)"
            " ORDER BY p.saved_at DESC LIMIT 1",
            (run_id, run_id),
        )
        return str(rows[0][0]) if rows else None

    def stamp(self, run_id: str) -> tuple[Any, ...]:
        """What changes when the run gets more trials or is recorded again (cache key)."""
        trials = self._rows(
            "SELECT COUNT(*), MAX(seq), SUM(error IS NOT NULL) FROM trials WHERE run_id = ?",
            (run_id,),
        )[0]
        saved = (
            self._rows(
                "SELECT COUNT(*), MAX(saved_at) FROM run_results WHERE run_id = ?", (run_id,)
            )[0]
            if self._has("run_results")
            else (0, None)
        )
        return (*trials, *saved)

    # -- a run's cases, trials and scores -----------------------------------------------------
    def cases_of(self, run_id: str, case_ids: Collection[str]) -> dict[str, CaseRow]:
        """The run's catalogue entries of `case_ids` (those recorded)."""
        if not self._has("run_cases") or not case_ids:
            return {}
        among, wanted = _among(case_ids)
        return {
            c: CaseRow(c, cat, risk, _json_object(rec))
            for c, cat, risk, rec in self._rows(
                f"SELECT case_id, category, risk, record FROM run_cases WHERE run_id = ?{among}",
                (run_id, *wanted),
            )
        }

    def trials(
        self, run_id: str, case_ids: Collection[str] | None = None, *, cut: int | None = None
    ) -> Iterator[TrialRow]:
        """The run's trials in plan order (only those of `case_ids` when given). With `cut`,
        the error detail comes cut to `cut` characters, and a record longer than `cut`
        characters with its response cut to its first `cut` (`_cut_record`: the whole
        response never comes into Python) and its whole length in `response_chars`."""
        among, wanted = _among(case_ids)
        if cut is None:
            for c, cond, trial, record, detail in self._rows(
                "SELECT case_id, condition, trial, record, error_detail FROM trials"
                f" WHERE run_id = ?{among} ORDER BY seq",
                (run_id, *wanted),
            ):
                yield TrialRow(c, cond, trial, _json_object(record), detail)
            return
        for rowid, c, cond, trial, record, detail in self._rows(
            "SELECT rowid, case_id, condition, trial, CASE WHEN length(record) > ? THEN NULL"
            " ELSE record END, substr(error_detail, 1, ?) FROM trials"
            f" WHERE run_id = ?{among} ORDER BY seq",
            (cut, cut, run_id, *wanted),
        ):
            if record is not None:
                yield TrialRow(c, cond, trial, _json_object(record), detail)
                continue
            parsed, chars = self._cut_record(rowid, cut)
            yield TrialRow(c, cond, trial, parsed, detail, chars)

    def _cut_record(self, rowid: int, cut: int) -> tuple[dict[str, Any], int | None]:
        """A long trial record with its response cut to `cut` characters, and the whole
        response's length (None: not cut). One statement at a time: SQLite holds copies of
        the record and of the response for each JSON function it evaluates, and a 50 MB
        response took 380 MB more at its peak read in one statement, 190 MB this way."""

        def one(sql: str, *params: Any) -> Any:
            rows = self._rows(f"SELECT {sql} FROM trials WHERE rowid = ?", (*params, rowid))
            return rows[0][0] if rows else None

        if not one("json_valid(record)"):
            return {}, None
        record = _json_object(one("json_remove(record, '$.response')"))
        if one("json_type(record, '$.response')") != "text":
            return record, None
        record["response"] = one("substr(json_extract(record, '$.response'), 1, ?)", cut)
        chars = one("length(json_extract(record, '$.response'))")
        return record, chars if isinstance(chars, int) and chars > cut else None

    def response(self, run_id: str, case_id: str, condition: str, trial: int) -> str | None:
        """One trial's whole response (None: no such trial, or no text response)."""
        rows = self._rows(
            "SELECT json_extract(record, '$.response') FROM trials WHERE run_id = ?"
            " AND case_id = ? AND condition = ? AND trial = ? AND json_valid(record)",
            (run_id, case_id, condition, trial),
        )
        text = rows[0][0] if rows else None
        return text if isinstance(text, str) else None

    def case_keys(self, run_id: str) -> list[tuple[str, str, str, Any]]:
        """(case, category, risk, tags) of the run's catalogue in its order, for the case
        matrix: the tags read by SQLite (`json_extract`, JSON text when a list), not the whole
        record."""
        if not self._has("run_cases"):
            return []
        return self._rows(
            "SELECT case_id, category, risk, json_extract(record, '$.tags') FROM run_cases"
            " WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )

    def prompts(self, run_id: str) -> list[tuple[str, Any]]:
        """(case, prompt) of the run's catalogue, for the search."""
        if not self._has("run_cases"):
            return []
        return self._rows(
            "SELECT case_id, json_extract(record, '$.prompt') FROM run_cases WHERE run_id = ?",
            (run_id,),
        )

    def trial_errors(self, run_id: str) -> list[tuple[str, str, int]]:
        """(case, condition, errored: 0 or 1) of each of the run's trials in plan order: the
        trials' columns only, no record read."""
        return self._rows(
            "SELECT case_id, condition, error IS NOT NULL FROM trials WHERE run_id = ?"
            " ORDER BY seq",
            (run_id,),
        )

    def answers(
        self, run_id: str, case_ids: Collection[str] | None = None, *, cut: int | None = None
    ) -> Iterator[tuple[str, str, str | None, str]]:
        """(case, condition, error, response) of each of the run's trials in plan order (only
        those of `case_ids` when given): the response read by SQLite (`json_extract`), not the
        whole record, and cut to its first `cut` characters when given."""
        among, wanted = _among(case_ids)
        text = "json_extract(record, '$.response')"
        if cut is not None:  # (a response always is text: `Trial.response`)
            text = f"substr({text}, 1, {int(cut)})"
        for case_id, condition, error, response in self._rows(
            f"SELECT case_id, condition, error, {text} FROM trials"
            f" WHERE run_id = ?{among} ORDER BY seq",
            (run_id, *wanted),
        ):
            yield case_id, condition, error, response if isinstance(response, str) else ""

    def cells(self, run_id: str) -> list[tuple[str, str, float | None, int]]:
        """(case, condition, weighted score, has a blocking finding: 0 or 1), as recorded."""
        if not self._has("run_cells"):
            return []
        return self._rows(
            "SELECT case_id, condition, weighted, blocker FROM run_cells WHERE run_id = ?",
            (run_id,),
        )

    def scores_of(self, run_id: str, case_ids: Collection[str]) -> dict[str, CaseScores]:
        """Everything scored about each of `case_ids` in the run, and what people said."""
        found = {c: CaseScores() for c in case_ids}
        among, wanted = _among(case_ids)
        if self._has("run_scores") and found:
            for case_id, kind, rec in self._rows(
                f"SELECT case_id, kind, record FROM run_scores WHERE run_id = ?{among}"
                " ORDER BY seq",
                (run_id, *wanted),
            ):
                found[case_id].rows.append((kind, _json_object(rec)))
        if self._has("review_answers") and found:
            for case_id, reviewer, mode, trial, a, b, answer, at in self._rows(
                "SELECT case_id, reviewer, mode, trial, a, b, answer, answered_at"
                f" FROM review_answers WHERE dataset = ?{among} ORDER BY answered_at",
                (run_id, *wanted),
            ):
                found[case_id].answers.append(
                    {
                        "reviewer": reviewer,
                        "mode": mode,
                        "trial": trial,
                        "a": a,
                        "b": b,
                        "answer": _json_object(answer),
                        "answered_at": at,
                    }
                )
        return found


def _among(case_ids: Collection[str] | None) -> tuple[str, list[str]]:
    """The `AND case_id IN (...)` clause of a query and its parameters (none: every case)."""
    if case_ids is None:
        return "", []
    wanted = sorted(set(case_ids))
    return f" AND case_id IN ({', '.join('?' * len(wanted))})", wanted


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
