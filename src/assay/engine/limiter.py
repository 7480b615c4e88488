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
        while self.active >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
        self.active += 1

    def release(self) -> None:
        self.active -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.active
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

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
