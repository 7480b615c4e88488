"""Calls in flight (`call_claims`): a call's cache key is claimed in the store before the call
is sent, so another process that needs the same call waits for its reply instead of paying
for it again.

Claims are taken in batches, in one transaction with the store's queued writes
(`Store.write`): within it, a key whose reply is cached is answered from the cache, a key
another live process has claimed is left to it, and every other key is claimed by this
process. A claim is released (`queue_release`) with the cached reply it produced, in the same
commit; one whose holder is gone (a dead process of this host, or no heartbeat for
`STALE_S`: `holder_gone`, as for run leases) is taken over, so a killed process never blocks
anyone. The holder renews the heartbeat of all its claims at once (`renew_claims`).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from assay.store.db import Store
from assay.store.judgments import CHUNK
from assay.store.lease import holder_gone, this_process


@dataclass(slots=True)
class Claimed:
    """What a batch of claims found: the cached replies (JSON text) by key, the keys this
    process now holds, and the keys a live other process holds."""

    cached: dict[str, str] = field(default_factory=dict)
    mine: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)


def claim_calls(store: Store, keys: Collection[str]) -> Claimed:
    """Claim the calls of `keys` for this process, in one transaction with the store's queued
    writes (see the module's docstring)."""
    holder, host, pid = this_process(), socket.gethostname(), os.getpid()

    def work(db: sqlite3.Connection) -> Claimed:
        now = time.time()
        found = Claimed()
        held: dict[str, tuple[str, str, int, float]] = {}
        ordered = list(keys)
        for start in range(0, len(ordered), CHUNK):
            chunk = ordered[start : start + CHUNK]
            marks = ",".join("?" * len(chunk))
            found.cached.update(
                db.execute(f"SELECT key, response FROM call_cache WHERE key IN ({marks})", chunk)
            )
            for key, *claim in db.execute(
                f"SELECT key, holder, host, pid, heartbeat FROM call_claims WHERE key IN ({marks})",
                chunk,
            ):
                held[key] = (str(claim[0]), str(claim[1]), int(claim[2]), float(claim[3]))
        for key in ordered:
            if key in found.cached:
                continue
            claim = held.get(key)
            if claim is None or claim[0] == holder or holder_gone(*claim[1:], now):
                found.mine.append(key)
            else:
                found.theirs.append(key)
        db.executemany(
            "INSERT OR REPLACE INTO call_claims (key, holder, host, pid, heartbeat)"
            " VALUES (?, ?, ?, ?, ?)",
            [(key, holder, host, pid, now) for key in found.mine],
        )
        return found

    return store.write(work)


def queue_release(store: Store, key: str) -> None:
    """Release this process's claim of `key` at the next commit (with the reply it cached)."""
    store.queue("DELETE FROM call_claims WHERE key = ? AND holder = ?", (key, this_process()))


def renew_claims(store: Store) -> None:
    """Renew the heartbeat of every claim this process holds (one statement)."""
    store.db.execute(
        "UPDATE call_claims SET heartbeat = ? WHERE holder = ?", (time.time(), this_process())
    )
