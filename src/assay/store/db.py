"""The SQLite run store (WAL): runs, trials and the content-addressed call cache.

One writer (the process driving a run) and any number of readers. Every table is declared in
store/schema.py; opening a store brings it to the current schema version (or refuses a file
a newer assay wrote). The other records have their own modules in store/ (spend, review,
history, calibrations), each taking a `Store`.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from assay.core.errors import AssayError, Incomplete, InputError
from assay.core.jsonl import json_line
from assay.store.schema import check_version, migrate
from assay.store.transactions import Connection, immediate, store_of

DEFAULT_STORE = Path(".assay/assay.db")

# The stores this process opened, so that a damaged page met in any later query can be
# reported naming its file (`damaged_store`); SQLite's own error does not name it.
_OPENED: dict[Path, None] = {}
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite found the file damaged (a malformed page, not a database)."""
    return getattr(exc, "sqlite_errorcode", None) in _DAMAGED or type(exc) is sqlite3.DatabaseError


def _fails_check(path: Path) -> bool:
    """Whether SQLite's quick integrity check finds `path` damaged (read-only, best effort)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return bool(db.execute("PRAGMA quick_check(1)").fetchone() != ("ok",))
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return True


def damaged_store(
    exc: sqlite3.DatabaseError, path: Path | None = None, *, opening: bool = False
) -> InputError | None:
    """The error to report when `exc` says a store is damaged (exit 2): its file and how to
    recover; None for any other SQLite failure.

    Without `path`, the file is the one of the stores this process opened that fails SQLite's
    quick check (all of them when none does, or when the check cannot tell).
    """
    if not is_damage(exc):
        return None
    paths = [path] if path is not None else list(_OPENED)
    damaged = [p for p in paths if _fails_check(p)] or paths
    lines = []
    for p in damaged:
        lines += [
            f"ERROR: {p}: {'cannot open the store: ' if opening else ''}"
            f"the store is damaged ({exc}).",
            f"  Recover what it holds: sqlite3 {p} .recover | sqlite3 recovered.db, then pass "
            "--store recovered.db; or move the file aside and start a new store (runs are "
            "made again).",
        ]
    return InputError(lines) if lines else InputError(f"ERROR: a store is damaged ({exc})")


# What SQLite says when the file, its folder or its -wal/-shm files are not writable.
_UNWRITABLE = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN})


def store_fault(exc: sqlite3.DatabaseError) -> AssayError | None:
    """The error to report for a store that failed under a command: damaged (exit 2,
    `damaged_store`), not writable by this user (exit 2), or on a full disk (exit 3: free space
    and run the same command again to resume); None for any other SQLite failure.

    The store is the one the error was raised on (`store_of`), else the one this process
    opened when it opened one."""
    damaged = damaged_store(exc, store_of(exc))
    if damaged is not None:
        return damaged
    path = store_of(exc) or (next(iter(_OPENED)) if len(_OPENED) == 1 else None)
    where = f"{path}" if path is not None else "the store"
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    if code in _UNWRITABLE:
        return InputError(
            f"ERROR: {where}: cannot write to the store ({exc}): this user cannot write the file"
            " or its folder (which holds its -wal and -shm files). Give --store a file this user"
            " can write, or run as its owner; nothing was sent before the first write failed."
        )
    if code == sqlite3.SQLITE_FULL:
        return Incomplete(
            f"ERROR: {where}: the disk is full ({exc}). What the store holds is kept; the"
            " results not yet written to it are not. Free space, then run the same command"
            " again to resume."
        )
    return None


# The JSON text records are stored as: the JSONL lines' (UTF-8 kept).
record_json = json_line

_SECOND: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with milliseconds (`...T12:34:56.789Z`).

    Written with every trial and cached reply: the text up to the second is formatted once
    per second, not once per record."""
    global _SECOND
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    second = _SECOND
    if second[0] != seconds:
        second = _SECOND = (
            seconds,
            datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        )
    return f"{second[1]}.{nanos // 1_000_000:03d}Z"


# The table a queued write changes (None: a statement of another shape).
_WRITES_TO = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|DELETE\s+FROM|UPDATE(?:\s+OR\s+\w+)?)\s+(\w+)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=256)
def _table(sql: str) -> str | None:
    """The one table a statement reads and writes (None: another shape, or it reads others)."""
    match = _WRITES_TO.match(sql)
    if match is None or "select" in sql.lower():  # (a write that reads may read any table)
        return None
    return match.group(1).lower()


def _runs(pending: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """Queued writes as runs of one statement, each run one `executemany`, with the same
    effect as running them in queued order: a write joins an earlier run of its statement
    only when no later run writes to its table (no table has triggers or foreign keys, so
    writes to different tables do not depend on each other). A run's writes keep their order;
    a statement of another shape starts a run nothing later joins across.

    (A run's trial and its cached reply are queued one after the other: grouping only
    neighbours made one `executemany` per row.)"""
    runs: list[tuple[str, list[tuple[Any, ...]]]] = []
    run_of: dict[str, int] = {}  # statement -> its latest run
    last_on: dict[str | None, int] = {}  # table -> the latest run writing to it
    for sql, params in pending:
        table = _table(sql)
        at = run_of.get(sql)
        if table is not None and at is not None and last_on.get(table) == at:
            runs[at][1].append(params)
            continue
        if table is None:
            run_of.clear()  # nothing moves ahead of a statement of unknown effect
            last_on.clear()
        at = run_of[sql] = len(runs)
        last_on[table] = at
        runs.append((sql, [params]))
    return runs


WAL_WAIT_S = 10.0
"""How long opening a store waits for another process that holds it while switching it to
write-ahead logging (the busy timeout's length)."""


def write_ahead(db: sqlite3.Connection) -> None:
    """Put the store in write-ahead-log mode. Switching a new file's journal mode needs the
    file to itself, and SQLite answers "database is locked" at once (no busy handler) while
    another process is opening the same new store: two commands started together on a new
    store would otherwise have one fail. Retried until `WAL_WAIT_S`."""
    deadline = time.monotonic() + WAL_WAIT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Connected(Protocol):
    """What reads a store needs: its connection (a `Store`, or the viewer's read-only one)."""

    @property
    def db(self) -> sqlite3.Connection: ...


class Store:
    """A connection to the run store; writes are buffered and committed in batches."""

    def __init__(self, path: Path = DEFAULT_STORE) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, factory=Connection
            )
            self.db.path = path
        except (sqlite3.DatabaseError, OSError) as exc:
            raise InputError(f"ERROR: {path}: cannot open the store: {exc}") from None
        try:
            self.db.execute("PRAGMA busy_timeout=10000")
            check_version(self.db, path)  # before any write: a newer file is left untouched
            write_ahead(self.db)
            self.db.execute("PRAGMA synchronous=NORMAL")
            migrate(self.db, path)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            damaged = damaged_store(exc, path, opening=True)
            raise damaged or InputError(f"ERROR: {path}: cannot open the store: {exc}") from None
        except BaseException:
            self.db.close()
            raise
        _OPENED[path] = None
        self._pending: list[tuple[str, tuple[Any, ...]]] = []
        self.commits = 0  # the flushes that committed queued writes, so far
        self.periodic = False  # a run's engine commits on a clock (`commit_soon`)

    # -- writes ---------------------------------------------------------------------------
    def queue(self, sql: str, params: tuple[Any, ...]) -> None:
        """Queue a write; it lands at the next flush()."""
        self._pending.append((sql, params))

    def flush(self) -> None:
        """Commit queued writes in one transaction. If the commit fails (a full disk), they
        stay queued for the next one, so nothing queued is dropped while the process lives."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            with immediate(self.db) as db:
                for sql, rows in _runs(pending):
                    db.executemany(sql, rows)
        except BaseException:
            self._pending[:0] = pending
            raise
        self.commits += 1

    def commit_soon(self) -> None:
        """Commit the queued writes now; while a run commits on a clock (`periodic`, set by
        the engine, which flushes every 0.2 s), at its next commit instead: a suite's judges,
        pipelined with the run, then land with the trials they follow rather than one
        commit per judgment. A kill loses at most that much, as it does of the trials (the
        judge calls' cached replies go with them, so a rerun asks again)."""
        if not self.periodic:
            self.flush()

    def pending(self) -> int:
        return len(self._pending)

    def save_run(self, run_id: str, config: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO runs (run_id, created_at, config) VALUES (?, ?, ?)",
            (run_id, now_iso(), json.dumps(config, sort_keys=True)),
        )

    def queue_trial(
        self,
        run_id: str,
        key: str,
        seq: int,
        record: dict[str, Any],
        error_detail: str | None = None,
    ) -> None:
        self.queue(
            "INSERT OR REPLACE INTO trials (run_id, key, seq, case_id, condition, trial, record,"
            " error, error_detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                key,
                seq,
                record["case_id"],
                record["condition"],
                record["trial"],
                record_json(record),
                record.get("error"),
                error_detail,
            ),
        )

    def queue_cache(self, key: str, response: dict[str, Any]) -> None:
        self.queue(
            "INSERT OR REPLACE INTO call_cache (key, response, created_at) VALUES (?, ?, ?)",
            (key, record_json(response), now_iso()),
        )

    # -- reads ----------------------------------------------------------------------------
    def answered_keys(self, run_id: str) -> set[str]:
        """Keys of the run's trials that have an answer (errored ones are retried)."""
        rows = self.db.execute(
            "SELECT key FROM trials WHERE run_id = ? AND error IS NULL", (run_id,)
        )
        return {key for (key,) in rows}

    def queue_uncache(self, key: str) -> None:
        """Drop a cached reply at the next flush (its caller found it unusable)."""
        self.queue("DELETE FROM call_cache WHERE key = ?", (key,))

    def trial_records(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The run's trials in plan order, each exactly once."""
        for record in self.trial_texts(run_id):
            yield json.loads(record)

    def trial_texts(self, run_id: str) -> Iterator[str]:
        """The run's trials in plan order as their JSON text (`Trial.model_validate_json`
        reads one in a single pass)."""
        rows = self.db.execute("SELECT record FROM trials WHERE run_id = ? ORDER BY seq", (run_id,))
        for (record,) in rows:
            yield record

    def error_detail(self, run_id: str, case_id: str, condition: str, trial: int) -> str | None:
        row = self.db.execute(
            "SELECT error_detail FROM trials WHERE run_id = ? AND case_id = ? AND condition = ?"
            " AND trial = ?",
            (run_id, case_id, condition, trial),
        ).fetchone()
        return row[0] if row else None

    def runs(self) -> list[tuple[str, str, dict[str, Any]]]:
        rows = self.db.execute("SELECT run_id, created_at, config FROM runs ORDER BY created_at")
        return [(r, c, json.loads(cfg)) for r, c, cfg in rows]

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.db.close()
