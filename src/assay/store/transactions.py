"""One write transaction on a store connection, and the connection that names its store in
every error SQLite raises through it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` ... `COMMIT` on an autocommit connection, rolled back on any error.

    SQLite may have rolled the transaction back itself (a full disk does): the ROLLBACK is then
    skipped, so the error that ended the transaction is the one raised, never "cannot rollback
    - no transaction is active"."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise


class Connection(sqlite3.Connection):
    """A store's connection: an error SQLite raises through `execute` or `executemany` carries
    the store's file (`store_of`), so a failed write deep in any command is reported naming
    it (`store/db.py` `store_fault`)."""

    path: Path | None = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as exc:
            exc.store_path = self.path  # type: ignore[attr-defined]
            raise

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as exc:
            exc.store_path = self.path  # type: ignore[attr-defined]
            raise


def store_of(exc: BaseException) -> Path | None:
    """The store file an SQLite error was raised on (None: not through a store connection)."""
    path = getattr(exc, "store_path", None)
    return path if isinstance(path, Path) else None
