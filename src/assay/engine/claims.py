"""Overlapping work never pays for a call twice: the `Caller` claims each call's cache key in
the store before sending it (store/claims.py), and a call another process (or another task of
this one) is making is waited for, then answered from its reply.

Lookups and claims are batched: the calls asked for in one turn of the event loop are looked
up in the cache with one query, and those it does not answer are claimed in one small
transaction. A call another process holds is looked for again every `POLL_S` (all such calls
at once) until its reply is cached, or its claim is released without one (its call failed:
this process makes it) or taken over (its holder is gone). While this process holds claims,
their heartbeat is renewed every `HEARTBEAT_S`; a release lands in the store with the reply it
cached, at the run's next commit or within `COMMIT_S`, and until then this process answers
the same call from that reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import sqlite3
import weakref
from typing import Any

from assay.store import Store
from assay.store.claims import claim_calls, queue_unclaim, renew_claims
from assay.store.lease import HEARTBEAT_S

POLL_S = 0.1  # how often calls held by another process are looked for again
COMMIT_S = 0.2  # a release is committed this soon (when no run's engine commits on a clock)

Reply = dict[str, Any]  # a recorded response (`Response.as_dict`), as the call cache holds it


class Claims:
    """The claims of one store in one event loop (`claims_for`)."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self.store = store
        self.loop = loop
        self.held = 0  # claims this process holds in the store
        # The keys in flight in this process, each with the future its other askers wait on
        # (made when the first comes): settled with the reply (None: none) when the call ends.
        self._local: dict[str, asyncio.Future[Reply | None] | None] = {}
        # Replies of calls this process made since the store's last commit: their cache rows
        # are still queued (the store would not find them yet). Dropped at the next commit.
        self._released: dict[str, Reply] = {}
        self._since = store.commits
        # Keys to claim at the next batch, and keys another process holds; each future is
        # settled with the cached reply, or None once this process holds the key.
        self._asked: dict[str, asyncio.Future[Reply | None]] = {}
        self._waiting: dict[str, asyncio.Future[Reply | None]] = {}
        self._batch: asyncio.Handle | None = None
        self._poller: asyncio.Task[None] | None = None
        self._beat: asyncio.Task[None] | None = None
        self._commit: asyncio.TimerHandle | None = None

    async def claim(self, key: str) -> Reply | None:
        """The reply to the call of `key` another process or task made (a copy), or None:
        this task now holds the call's claim, makes the call and then `release`s it."""
        while key in self._local:  # in flight in this process
            own = self._local[key]
            if own is None:
                own = self._local[key] = self.loop.create_future()
            theirs = await asyncio.shield(own)
            if theirs is not None:
                return copy.deepcopy(theirs)
        if key in self._recent():
            return copy.deepcopy(self._released[key])
        self._local[key] = None
        asked = self._ask(key)
        try:
            reply = await asked
        except BaseException:
            if _claimed(asked):  # claimed just as this task was cancelled
                self.release(key, None)
            else:
                self._settle(key, None)
            raise
        if reply is not None:
            self._settle(key, reply)
        return reply

    def release(self, key: str, reply: Reply | None) -> None:
        """The call of a claimed key ended (`reply`: its recorded response, None when it
        failed): its claim is released with the next commit, and the tasks of this process
        waiting for it take the reply (or, without one, the next makes the call)."""
        queue_unclaim(self.store, key)
        self.held -= 1
        if reply is not None:
            self._recent()[key] = reply
        self._settle(key, reply)
        if not self.store.periodic and self._commit is None:
            self._commit = self.loop.call_later(COMMIT_S, self._commit_now)

    def forget(self, key: str) -> None:
        """Its caller found the reply to `key` unusable: not answered from it again."""
        self._recent().pop(key, None)

    def _recent(self) -> dict[str, Reply]:
        """The replies released since the store's last commit (the earlier ones are in it)."""
        if self._since != self.store.commits:
            self._released, self._since = {}, self.store.commits
        return self._released

    def _settle(self, key: str, reply: Reply | None) -> None:
        local = self._local.pop(key, None)
        if local is not None and not local.done():
            local.set_result(reply)

    def _ask(self, key: str) -> asyncio.Future[Reply | None]:
        asked = self._asked[key] = self.loop.create_future()
        if self._batch is None:
            self._batch = self.loop.call_soon(self._claim_asked)
        return asked

    def _claim_asked(self) -> None:
        self._batch = None
        asked, self._asked = self._asked, {}
        self._claim(asked)

    def _claim(self, futures: dict[str, asyncio.Future[Reply | None]]) -> None:
        """Claim the keys whose callers still wait, in one transaction; settle each future."""
        live = {key: f for key, f in futures.items() if not f.done()}
        if not live:
            return
        try:
            found = claim_calls(self.store, live)
        except Exception as exc:  # e.g. a full disk: each call raises it
            for future in live.values():
                if not future.done():
                    future.set_exception(exc)
            return
        # A caller may be cancelled while the claim's transaction runs (Ctrl+C cancels the
        # run's tasks from the signal handler, between two statements): its future is done.
        for key, cached in found.cached.items():
            if not live[key].done():
                live[key].set_result(cached)
        for key in found.mine:
            self.held += 1
            if live[key].done():
                self.release(key, None)  # its caller is gone: the claim is let go at once
            else:
                live[key].set_result(None)
        for key in found.theirs:
            self._waiting[key] = live[key]
        if found.mine and self._beat is None:
            self._beat = self.loop.create_task(self._renew())
        if found.theirs and self._poller is None:
            self._poller = self.loop.create_task(self._poll())

    async def _poll(self) -> None:
        """Look for the calls other processes hold until none is waited for."""
        try:
            while self._waiting:
                await asyncio.sleep(POLL_S)
                waiting, self._waiting = self._waiting, {}
                self._claim(waiting)
        finally:
            self._poller = None

    async def _renew(self) -> None:
        """Renew the heartbeat of this process's claims while it holds any."""
        try:
            while self.held > 0:
                await asyncio.sleep(HEARTBEAT_S)
                with contextlib.suppress(sqlite3.Error):  # the next write reports it
                    renew_claims(self.store)
        finally:
            self._beat = None

    def _commit_now(self) -> None:
        self._commit = None
        with contextlib.suppress(sqlite3.Error):  # kept queued: the next commit reports it
            self.store.flush()


def _claimed(asked: asyncio.Future[Reply | None]) -> bool:
    """Whether a claim's future says this process now holds the key."""
    return (
        asked.done() and not asked.cancelled() and asked.exception() is None
        and asked.result() is None
    )  # fmt: skip


_CLAIMS: weakref.WeakKeyDictionary[Store, Claims] = weakref.WeakKeyDictionary()


def claims_for(store: Store) -> Claims:
    """The claims of `store` in the running event loop (one for every Caller of the store)."""
    loop = asyncio.get_running_loop()
    claims = _CLAIMS.get(store)
    if claims is None or claims.loop is not loop:
        claims = _CLAIMS[store] = Claims(store, loop)
    return claims
