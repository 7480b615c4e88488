"""Calls in flight (`call_claims`): a call's cache key is claimed in the store before the call
is sent, so another process that needs the same call waits for its reply instead of paying
for it again.

Claims are taken in batches, each in one small transaction of its own (the store's queued
writes keep their own, larger commits: a claim's commit then writes only this table's pages):
within it, a key whose reply is cached is answered from the cache, a key another live process
has claimed is left to it, and every other key is claimed by this process. A claim is released
(`queue_unclaim`) in the commit of the cached reply it produced; one whose holder is gone (a
dead process of this host, or no heartbeat for `STALE_S`: `holder_gone`, as for run leases)
is taken over, so a killed process never blocks anyone. The holder renews the heartbeat of
all its claims at once (`renew_claims`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from assay.store.db import Store
from assay.store.judgments import CHUNK
from assay.store.lease import holder_gone, this_process
from assay.store.transactions import immediate


@dataclass(slots=True)
class Claimed:
    """What a batch of claims found: the cached replies by key, the keys this
    process now holds, and the keys a live other process holds."""

    cached: dict[str, dict[str, Any]] = field(default_factory=dict)
    mine: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)


_CACHED = "SELECT key, response FROM call_cache WHERE key IN ({})"
_CLAIMS = "SELECT key, holder, host, pid, heartbeat FROM call_claims WHERE key IN ({})"


def claim_calls(store: Store, keys: Collection[str]) -> Claimed:
    """Claim the calls of `keys` for this process (see the module's docstring).

    The cache and the claims are read first, outside any transaction: a run whose replies are
    cached, or a process waiting for calls others hold, writes nothing. The keys left free are
    claimed in one transaction, which reads the cache and the claims for them again (another
    process may have just cached or claimed them)."""
    found = Claimed()
    _cached(store.db, keys, found.cached)
    missing = [key for key in keys if key not in found.cached]
    if missing:
        free = _sort(store.db, missing, found.theirs)
        if free:
            with immediate(store.db) as db:
                _cached(db, free, found.cached)
                free = _sort(db, [key for key in free if key not in found.cached], found.theirs)
                claim = (this_process(), socket.gethostname(), os.getpid(), time.time())
                db.executemany(
                    "INSERT OR REPLACE INTO call_claims (key, holder, host, pid, heartbeat)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(key, *claim) for key in free],
                )
                found.mine = free
    return found


def _read(db: sqlite3.Connection, sql: str, keys: Collection[str], into: dict[str, Any]) -> None:
    """Rows of `sql` (its first column a key in `keys`, marked `{}`) into `into` by key, the
    keys bound `CHUNK` at a time."""
    ordered = list(keys)
    for start in range(0, len(ordered), CHUNK):
        chunk = ordered[start : start + CHUNK]
        for key, *rest in db.execute(sql.format(",".join("?" * len(chunk))), chunk):
            into[key] = rest[0] if len(rest) == 1 else tuple(rest)


def _cached(db: sqlite3.Connection, keys: Collection[str], into: dict[str, Any]) -> None:
    """The usable cached replies of `keys` into `into`: a recorded response whose text is a
    string (any other, a provider's bug an older assay kept, is asked again)."""
    rows: dict[str, str] = {}
    _read(db, _CACHED, keys, rows)
    for key, text in rows.items():
        with contextlib.suppress(ValueError):
            reply = json.loads(text)
            if isinstance(reply, dict) and isinstance(reply.get("text"), str):
                into[key] = reply


def _sort(db: sqlite3.Connection, keys: list[str], theirs: list[str]) -> list[str]:
    """The keys this process may claim (no claim, its own, or a gone holder's); those a live
    other process holds go to `theirs`."""
    me, now = this_process(), time.time()
    held: dict[str, tuple[str, str, int, float]] = {}
    _read(db, _CLAIMS, keys, held)
    free = []
    for key in keys:
        claim = held.get(key)
        if claim is None or claim[0] == me or holder_gone(claim[1], claim[2], claim[3], now):
            free.append(key)
        else:
            theirs.append(key)
    return free


def queue_unclaim(store: Store, key: str) -> None:
    """Release this process's claim of `key` at the next commit (with the reply it cached)."""
    store.queue("DELETE FROM call_claims WHERE key = ? AND holder = ?", (key, this_process()))


def renew_claims(store: Store) -> None:
    """Renew the heartbeat of every claim this process holds (one statement)."""
    store.db.execute(
        "UPDATE call_claims SET heartbeat = ? WHERE holder = ?", (time.time(), this_process())
    )
