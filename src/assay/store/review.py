"""The review app's records: presentation order, answers, and the judge cascade's queue.

Tables `review_order`, `review_answers` and `review_queue` (declared in store/schema.py). One
short transaction per answer, safe across threads: every call opens its own connection (WAL,
busy timeout), so any number of request threads and reviewers write at once without sharing a
connection or losing an answer.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from assay.store.db import Store, now_iso
from assay.store.transactions import Connection, immediate

Mode = Literal["scores", "pairwise"]
MODES: tuple[Mode, ...] = ("scores", "pairwise")


@dataclass(frozen=True)
class ItemKey:
    """Identifies a review item; the same key as the cascade's `review_queue` rows."""

    case_id: str
    trial: int
    a: str
    b: str


@dataclass(frozen=True)
class QueuedItem:
    """A row of `review_queue`: an item the judge cascade sent to humans (a/b may be NULL)."""

    case_id: str
    trial: int
    a: str | None
    b: str | None
    reason: str
    source: str
    created_at: str

    def matches(self, key: ItemKey) -> bool:
        """NULL conditions match any; a and b may be given in either order."""
        if (self.case_id, self.trial) != (key.case_id, key.trial):
            return False
        named = {c for c in (self.a, self.b) if c is not None}
        return named <= {key.a, key.b}


@dataclass(frozen=True)
class Answer:
    dataset: str
    reviewer: str
    mode: Mode
    key: ItemKey
    answer: dict[str, Any]
    answered_at: str


class ReviewStore:
    """The review tables of a store file; a fresh connection for every operation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        Store(path).close()  # creates or migrates the file (InputError if unusable)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, factory=Connection)
        db.path = self.path
        try:
            db.execute("PRAGMA busy_timeout=30000")
            yield db
        finally:
            db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.connect() as db, immediate(db):
            yield db

    # -- presentation order ----------------------------------------------------------------
    def assign_order(self, dataset: str, keys: Iterable[ItemKey]) -> dict[ItemKey, str]:
        """Which condition each pair shows as Response 1: drawn at random once, then kept."""
        keys = list(keys)
        now = now_iso()
        with self.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO review_order (dataset, case_id, trial, a, b, first,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (dataset, k.case_id, k.trial, k.a, k.b, secrets.choice((k.a, k.b)), now)
                    for k in keys
                ],
            )
            rows = db.execute(
                "SELECT case_id, trial, a, b, first FROM review_order WHERE dataset = ?",
                (dataset,),
            ).fetchall()
        stored = {ItemKey(c, t, a, b): first for c, t, a, b, first in rows}
        return {k: stored[k] for k in keys}

    # -- the cascade's queue ---------------------------------------------------------------
    def queued(self) -> list[QueuedItem]:
        with self.connect() as db:
            rows = db.execute(
                "SELECT case_id, trial, a, b, reason, source, created_at FROM review_queue"
                " ORDER BY created_at, case_id, trial"
            ).fetchall()
        return [QueuedItem(*row) for row in rows]

    # -- answers ---------------------------------------------------------------------------
    def save_answer(
        self, dataset: str, reviewer: str, mode: Mode, key: ItemKey, answer: dict[str, Any]
    ) -> None:
        """Record (or replace) one reviewer's answer to one item, committed at once."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO review_answers (dataset, reviewer, mode, case_id, trial,"
                " a, b, answer, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    dataset,
                    reviewer,
                    mode,
                    key.case_id,
                    key.trial,
                    key.a,
                    key.b,
                    json.dumps(answer, ensure_ascii=False, sort_keys=True),
                    now_iso(),
                ),
            )

    def answers(
        self,
        dataset: str | None = None,
        mode: Mode | None = None,
        reviewer: str | None = None,
    ) -> list[Answer]:
        """Stored answers, optionally narrowed, in a stable order."""
        clauses, params = [], []
        for column, value in (("dataset", dataset), ("mode", mode), ("reviewer", reviewer)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self.connect() as db:
            rows = db.execute(
                "SELECT dataset, reviewer, mode, case_id, trial, a, b, answer, answered_at"
                f" FROM review_answers{where}"
                " ORDER BY dataset, mode, case_id, trial, a, b, reviewer",
                params,
            ).fetchall()
        return [
            Answer(d, r, m, ItemKey(c, t, a, b), json.loads(ans), at)
            for d, r, m, c, t, a, b, ans, at in rows
        ]

    def reviewers(self, dataset: str, mode: Mode) -> dict[str, int]:
        """Each reviewer of this dataset and mode, with how many items they answered."""
        with self.connect() as db:
            rows = db.execute(
                "SELECT reviewer, COUNT(*) FROM review_answers WHERE dataset = ? AND mode = ?"
                " GROUP BY reviewer ORDER BY reviewer",
                (dataset, mode),
            ).fetchall()
        return {r: n for r, n in rows}
