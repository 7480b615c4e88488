"""Call claims (store/claims.py, engine/claims.py): who may make a call, and who waits for it.

A free key is claimed; a key a live other process holds is left to it and waited for; a
claim whose holder is gone (a dead process of this host, no heartbeat for STALE_S) is taken
over. In one process, a call asked for again while in flight, or before its cache row is
committed, is answered from the first reply; a failed call lets the next asker make it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay.engine.budget import Budget
from assay.engine.calls import Caller, cache_key
from assay.models import Message, Request
from assay.models.base import ModelError, Response
from assay.store import Store
from assay.store.claims import claim_calls
from assay.store.lease import STALE_S, this_process


class Counting:
    """A model that counts its calls; it answers after `latency`, or fails `failures` times."""

    spec = "counting"

    def __init__(self, latency: float = 0.0, failures: int = 0) -> None:
        self.calls = 0
        self.latency = latency
        self.failures = failures

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec}

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        await asyncio.sleep(self.latency)
        if self.failures:
            self.failures -= 1
            raise ModelError("refused", retryable=False)
        return Response(text=f"reply {self.calls}", cost_usd=0.0, model="counting")

    async def aclose(self) -> None:
        return None


def request(text: str = "Why?") -> Request:
    return Request(messages=[Message("user", text)], max_tokens=16, temperature=0.0)


def caller(store: Store) -> Caller:
    return Caller(store, Budget(None), concurrency=4, retries=0)


def claim_row(store: Path, key: str, host: str, pid: int, age_s: float) -> None:
    with contextlib.closing(sqlite3.connect(store)) as db:
        db.execute(
            "INSERT OR REPLACE INTO call_claims (key, holder, host, pid, heartbeat)"
            " VALUES (?, ?, ?, ?, ?)",
            (key, f"{host}:{pid}:abcd", host, pid, time.time() - age_s),
        )
        db.commit()


def dead_pid() -> int:
    """The pid of a process of this host that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_who_may_make_each_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        store.queue_cache("cached", {"text": "x"})
        store.queue_cache("unusable", {"text": ["not", "text"]})  # asked again
        store.flush()
        claim_row(tmp_path / "s.db", "live", "other-host", 4242, age_s=1)
        claim_row(tmp_path / "s.db", "silent", "other-host", 4242, age_s=STALE_S + 1)
        claim_row(tmp_path / "s.db", "dead", socket.gethostname(), dead_pid(), age_s=0)
        found = claim_calls(store, ["free", "cached", "unusable", "live", "silent", "dead"])
        assert found.cached == {"cached": {"text": "x"}}
        assert sorted(found.mine) == ["dead", "free", "silent", "unusable"]
        assert found.theirs == ["live"]
        holders = dict(store.db.execute("SELECT key, holder FROM call_claims"))
        assert holders == {k: this_process() for k in found.mine} | {"live": "other-host:4242:abcd"}
    finally:
        store.close()


def test_a_call_in_flight_or_just_made_is_not_made_again(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    model = Counting(latency=0.05)
    calls = caller(store)

    async def go() -> list[Response]:
        store.periodic = True  # no commit between the calls: the reply is still queued
        together = await asyncio.gather(*(calls.call(model, request()) for _ in range(3)))
        after = await calls.call(model, request())
        return [*together, after]

    try:
        replies = asyncio.run(go())
    finally:
        store.close()
    assert model.calls == 1
    assert {r.text for r in replies} == {"reply 1"}
    assert calls.cache_hits == 3
    with contextlib.closing(sqlite3.connect(tmp_path / "s.db")) as db:
        assert db.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM call_cache").fetchone()[0] == 1


def test_a_failed_call_is_made_by_the_next_asker(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    model = Counting(latency=0.05, failures=1)
    calls = caller(store)

    async def go() -> list[Response | BaseException]:
        return await asyncio.gather(
            *(calls.call(model, request()) for _ in range(2)), return_exceptions=True
        )

    try:
        first, second = asyncio.run(go())
    finally:
        store.close()
    assert isinstance(first, ModelError)
    assert isinstance(second, Response) and second.text == "reply 2"
    assert model.calls == 2


def test_a_call_another_process_makes_is_waited_for_and_not_paid_again(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    model = Counting()
    key = cache_key(model.identity(), request())
    claim_row(path, key, "other-host", 4242, age_s=0)

    def other_process_answers() -> None:  # as another process would: reply and release at once
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute(
                "INSERT INTO call_cache (key, response, created_at) VALUES (?, ?, '')",
                (key, json.dumps({"text": "theirs", "cost_usd": 0.0})),
            )
            db.execute("DELETE FROM call_claims WHERE key = ?", (key,))
            db.commit()

    async def go() -> Response:
        asyncio.get_running_loop().call_later(0.5, other_process_answers)
        return await caller(store).call(model, request())

    try:
        reply = asyncio.run(go())
    finally:
        store.close()
    assert reply.text == "theirs" and model.calls == 0  # its reply, after it answered


def test_a_claim_released_without_a_reply_is_made_here(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    model = Counting()
    key = cache_key(model.identity(), request())
    claim_row(path, key, "other-host", 4242, age_s=0)

    def other_process_fails() -> None:
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("DELETE FROM call_claims WHERE key = ?", (key,))
            db.commit()

    async def go() -> Response:
        asyncio.get_running_loop().call_later(0.3, other_process_fails)
        return await caller(store).call(model, request())

    try:
        reply = asyncio.run(go())
    finally:
        store.close()
    assert reply.text == "reply 1" and model.calls == 1


@pytest.mark.parametrize("when", ["before its claim", "as it is claimed", "in flight"])
def test_a_cancelled_call_leaves_no_claim(tmp_path: Path, when: str) -> None:
    """Cancelled before its claim is taken (the batch has not run), as it is taken (the batch
    ran, the task has not resumed), or with its call in flight."""
    store = Store(tmp_path / "s.db")
    model = Counting(latency=1.0)

    async def go() -> None:
        task = asyncio.ensure_future(caller(store).call(model, request()))
        await asyncio.sleep(0)  # the task asks for its claim
        if when == "as it is claimed":
            await asyncio.sleep(0)  # the batch claims it
        elif when == "in flight":
            while not model.calls:
                await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(go())
        store.flush()
        assert store.db.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0
    finally:
        store.close()


def test_replies_are_held_only_until_the_store_commits_them(tmp_path: Path) -> None:
    """A run always has writes queued: the replies kept for calls asked again before their
    cache rows land are dropped at the next commit, not when the queue is empty."""
    from assay.engine.claims import claims_for

    store = Store(tmp_path / "s.db")
    model = Counting()
    calls = caller(store)

    async def go() -> list[str]:
        store.periodic = True
        await calls.call(model, request("first"))
        store.flush()  # the first reply's cache row is committed
        store.queue_cache("unrelated", {"text": "x"})  # ... and the queue is never empty
        await calls.call(model, request("second"))
        return sorted(r["text"] for r in claims_for(store)._released.values())

    try:
        assert asyncio.run(go()) == ["reply 2"]
    finally:
        store.close()
