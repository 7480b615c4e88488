"""Adaptive concurrency: halve on overload, creep back up by one per window of successes."""

from __future__ import annotations

import asyncio
import time
from collections import deque


class AdaptiveLimiter:
    """A semaphore whose capacity moves between 1 and `maximum` (AIMD)."""

    def __init__(self, maximum: int, cooldown_s: float = 1.0) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.active = 0
        self.cooldown_s = cooldown_s
        self._successes = 0
        self._last_cut = float("-inf")
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        """Take a slot; when none is free, wait in line. A slot freed while others wait is
        handed to the first of them (`_wake`), never taken by a caller that comes later: a
        run's worker that releases and at once asks again cannot starve the judge calls
        queued behind it."""
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the slot is ours when it is set: `_wake` counted it
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot, then cancelled: pass it on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.active -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand the free slots to the waiters in the order they came."""
        while self.active < self.limit and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.active += 1
                waiter.set_result(None)

    def on_success(self) -> None:
        """Additive increase: one more slot after `limit` successes in a row."""
        if self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._wake()

    def on_overload(self) -> None:
        """Multiplicative decrease, at most once per cooldown (one burst of 429s cuts once)."""
        now = time.monotonic()
        if now - self._last_cut < self.cooldown_s:
            return
        self._last_cut = now
        self._successes = 0
        self.limit = max(1, self.limit // 2)
