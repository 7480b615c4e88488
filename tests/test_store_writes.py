"""The store's write queue: a flush has the effect of running the queued writes in order."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from assay.store import Store
from assay.store.db import _runs

TABLES = "CREATE TABLE a (k TEXT PRIMARY KEY, v TEXT); CREATE TABLE b (k TEXT PRIMARY KEY, v TEXT)"
WRITES = [
    ("INSERT OR REPLACE INTO a (k, v) VALUES (?, ?)", 2),
    ("DELETE FROM a WHERE k = ?", 1),
    ("UPDATE a SET v = v || ? WHERE k = ?", 2),
    ("INSERT OR REPLACE INTO b (k, v) VALUES (?, ?)", 2),
    ("update b set v = v || ? where k = ?", 2),
    ("REPLACE INTO b (k, v) VALUES (?, ?)", 2),  # a shape the queue does not parse
    ("INSERT OR REPLACE INTO a (k, v) SELECT ?, v FROM b WHERE k = ?", 2),  # reads b
]


def _contents(db: sqlite3.Connection) -> list[Any]:
    return [list(db.execute(f"SELECT k, v FROM {t} ORDER BY k")) for t in ("a", "b")]


def test_a_flush_does_what_the_writes_in_queued_order_do(tmp_path: Path) -> None:
    rng = random.Random(7)
    for round_ in range(200):
        store = Store(tmp_path / f"s{round_}.db")
        store.db.executescript(TABLES)
        plain = sqlite3.connect(":memory:")
        plain.executescript(TABLES)
        for _ in range(rng.randint(1, 40)):
            sql, n = rng.choice(WRITES)
            params = tuple(rng.choice("xyz") for _ in range(n))
            store.queue(sql, params)
            plain.execute(sql, params)
        store.flush()
        assert _contents(store.db) == _contents(plain)
        store.close()


def test_interleaved_writes_to_two_tables_are_two_batches() -> None:
    """A run queues each trial and its cached reply one after the other: one executemany
    per statement, not one per row."""
    trial = "INSERT OR REPLACE INTO trials (run_id, key) VALUES (?, ?)"
    cache = "INSERT OR REPLACE INTO call_cache (key, response) VALUES (?, ?)"
    pending = [(sql, (str(i), "r")) for i in range(100) for sql in (cache, trial)]
    runs = _runs(pending)
    assert [(sql, len(rows)) for sql, rows in runs] == [(cache, 100), (trial, 100)]
    assert [rows[0] for _, rows in runs] == [("0", "r"), ("0", "r")]
    uncache = "DELETE FROM call_cache WHERE key = ?"
    pending = [(cache, ("k", "r")), (trial, ("1", "r")), (uncache, ("k",)), (cache, ("k", "s"))]
    assert [len(rows) for _, rows in _runs(pending)] == [1, 1, 1, 1]  # order kept on one table


def _saved(store: Store, key: str) -> None:
    from assay.store.judgments import save_judgment

    save_judgment(
        store, key=key, mode="direct", case_id="c1", trial=1, a="x", b="", judge="mock:fair",
        prompt_sha256="p", status="ok", record={"overall": 3.0}, error=None, raw=["{}"],
    )  # fmt: skip


def _committed(path: Path) -> list[str]:
    with sqlite3.connect(path) as other:  # what another process sees
        return [key for (key,) in other.execute("SELECT key FROM judgments ORDER BY key")]


def test_a_judgment_is_committed_at_once_or_with_the_run(tmp_path: Path) -> None:
    """Judging on its own commits each judgment at once; pipelined with a run (whose engine
    commits every 0.2 s) it lands with the run's next commit."""
    store = Store(tmp_path / "s.db")
    _saved(store, "k1")
    assert _committed(tmp_path / "s.db") == ["k1"]
    store.periodic = True
    _saved(store, "k2")
    assert _committed(tmp_path / "s.db") == ["k1"] and store.pending() == 1
    store.flush()
    assert _committed(tmp_path / "s.db") == ["k1", "k2"]
    store.close()
