"""A hard spending cap: reserve each call's worst case before sending, settle after.

Pure logic: the spend of a run is kept in the store (store/spend.py), so a run resumed after
a kill or a budget stop starts from what it has already spent: `--budget-usd` caps the run,
not each invocation of it.
"""

from __future__ import annotations

import asyncio

TOLERANCE = 1e-12


class Budget:
    """Never lets reserved plus spent exceed the limit, whatever the concurrency.

    All methods are called from the event loop thread, so no lock is needed.
    """

    def __init__(self, limit_usd: float | None, spent_usd: float = 0.0) -> None:
        self.limit = limit_usd
        self.spent = spent_usd
        self.reserved = 0.0
        self.exhausted = False
        self._settled: list[asyncio.Future[None]] = []

    def reserve(self, amount: float) -> bool:
        """Hold `amount` for a call; False (and exhausted) when it does not fit."""
        if not self._fits(amount):
            self.exhausted = True
            return False
        self.reserved += amount
        return True

    async def reserve_when_settled(self, amount: float) -> bool:
        """Hold `amount`, waiting for calls in flight to settle when it does not fit yet.

        Worst cases are far above real costs, so a reservation refused while others are in
        flight usually fits once they settle. False only when nothing in flight can free it.
        """
        while not self._fits(amount):
            if self.reserved <= TOLERANCE:
                self.exhausted = True
                return False
            waiter = asyncio.get_running_loop().create_future()
            self._settled.append(waiter)
            await waiter
        self.reserved += amount
        return True

    def settle(self, reserved: float, actual: float) -> None:
        """Release a reservation and record what the call really cost."""
        self.reserved = max(0.0, self.reserved - reserved)
        self.spent += actual
        waiters, self._settled = self._settled, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def remaining(self) -> float | None:
        """What is left to reserve, or None without a limit."""
        if self.limit is None:
            return None
        return max(0.0, self.limit - self.spent - self.reserved)

    def _fits(self, amount: float) -> bool:
        return self.limit is None or self.spent + self.reserved + amount <= self.limit + TOLERANCE
