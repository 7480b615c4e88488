"""A hard spending cap: reserve each call's worst case before sending, settle after.

A model call's worst case comes from its price (one turn of at most max_tokens). An agent's
call (claude, command:, python:) runs any number of model turns, so nothing bounds it in
advance: it reserves a share of what is left instead (`reserve_share`), which claude is told
as `--max-budget-usd`. A call that reports more than it reserved stops every new call at once
(`overran`): the cap is then only as good as the runner's own limit.

Pure logic: the spend of a run is kept in the store (store/spend.py), so a run resumed after
a kill or a budget stop starts from what it has already spent: `--budget-usd` caps the run,
not each invocation of it.

A budget may draw on a parent (`within`): the suite's judges, pipelined with the run, reserve
from a budget capped by `[judge] budget_usd` whose every reservation and spend also counts in
the run's budget, so one cap holds across run and judge calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

TOLERANCE = 1e-12


class Budget:
    """Never lets reserved plus spent exceed the limit, whatever the concurrency.

    All methods are called from the event loop thread, so no lock is needed.
    """

    def __init__(
        self, limit_usd: float | None, spent_usd: float = 0.0, parent: Budget | None = None
    ) -> None:
        self.limit = limit_usd
        self.spent = spent_usd
        self.parent = parent
        self.reserved = 0.0
        self.parked = 0.0  # reservations of calls waiting to add to them (`reserve_when_settled`)
        self.exhausted = False
        self.overrun: str | None = None  # why no new call may start (a call cost too much)
        self._settled: list[asyncio.Future[None]] = []

    def within(self, limit_usd: float | None) -> Budget:
        """A budget of its own `limit_usd` (None: no limit of its own, 0 spent so far) whose
        reservations and spend count in this one too: a call must fit both."""
        return Budget(limit_usd, 0.0, parent=self)

    def reserve(self, amount: float) -> bool:
        """Hold `amount` for a call; False (and exhausted) when it does not fit (or after an
        overrun)."""
        if not self._fits(amount):
            self.exhausted = True
            return False
        self._hold(amount)
        return True

    def _hold(self, amount: float) -> None:
        self.reserved += amount
        if self.parent is not None:
            self.parent._hold(amount)

    def _idle(self) -> bool:
        """Nothing in flight here or in the parents could free room (the reservations of
        calls waiting to add to them cannot settle while they wait: `parked`)."""
        if self.reserved - self.parked > TOLERANCE:
            return False
        return self.parent is None or self.parent._idle()

    def _park(self, amount: float) -> None:
        """Count `amount` as held by a waiting call (negative: no longer); the calls waiting
        look again (what they wait for may now be nothing that can settle)."""
        self.parked += amount
        if self.parent is not None:
            self.parent._park(amount)
        self._wake()

    async def reserve_when_settled(self, amount: float, own: float = 0.0) -> bool:
        """Hold `amount`, waiting for calls in flight to settle when it does not fit yet.

        Worst cases are far above real costs, so a reservation refused while others are in
        flight usually fits once they settle. False only when nothing in flight can free it
        (`own`: what the asking call holds already, e.g. a retry adding to its reservation;
        it does not count as in flight while the call waits).
        """
        self._park(own)
        try:
            while not self._fits(amount):
                if self._idle() or self._overrun() is not None:
                    self.exhausted = True
                    return False
                await self._next_settle()
        finally:
            self._park(-own)
        self._hold(amount)
        return True

    async def reserve_share(self, least: Callable[[], float | None], slots: int) -> float | None:
        """Hold an agent call's reservation: a `slots`-th of what is free but at least
        `least()`; when `least()` is None (no call has told what one costs yet), all that is
        free, so that first call runs alone. `least` is asked again after each wait.

        Returns the amount held (0 without a limit), or None (and exhausted) when it cannot
        fit and nothing in flight can free room.
        """
        while True:
            free = self.remaining()
            if free is None:
                return 0.0
            floor = least()
            amount = free if floor is None else min(free, max(floor, free / slots))
            floor = floor or 0.0
            if (
                self._overrun() is None
                and amount > TOLERANCE
                and amount >= floor - TOLERANCE
                and self._fits(amount)
            ):
                self._hold(amount)
                return amount
            if self._idle() or self._overrun() is not None:
                self.exhausted = True
                return None
            await self._next_settle()

    def settle(self, reserved: float, actual: float) -> None:
        """Release a reservation and record what the call really cost."""
        self.reserved = max(0.0, self.reserved - reserved)
        self.spent += actual
        if self.parent is not None:
            self.parent.settle(reserved, actual)
        self._wake()

    def overran(self, what: str, reserved: float, actual: float) -> None:
        """A call cost more than it reserved: start no new call (its limit cannot be trusted)
        and say so; calls already in flight finish."""
        if self.parent is not None:
            self.parent.overran(what, reserved, actual)
        if self.limit is None or actual <= reserved + TOLERANCE:
            return
        if self.overrun is None:
            self.overrun = (
                f"{what}: a call cost ${actual:.4f}, more than the ${reserved:.4f} reserved for"
                " it, so no new call was started (the budget cannot bound this runner's calls)"
            )
        self.exhausted = True
        self._wake()

    async def _next_settle(self) -> None:
        if self.parent is not None:  # every settle here reaches the parents too
            await self.parent._next_settle()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._settled.append(waiter)
        await waiter

    def _wake(self) -> None:
        waiters, self._settled = self._settled, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def remaining(self) -> float | None:
        """What is left to reserve (here and in the parents), or None without any limit."""
        own = None if self.limit is None else max(0.0, self.limit - self.spent - self.reserved)
        above = self.parent.remaining() if self.parent is not None else None
        if own is None or above is None:
            return own if above is None else above
        return min(own, above)

    def _overrun(self) -> str | None:
        if self.overrun is not None or self.parent is None:
            return self.overrun
        return self.parent._overrun()

    def _fits(self, amount: float) -> bool:
        if self.overrun is not None:
            return False
        if self.parent is not None and not self.parent._fits(amount):
            return False
        return self.limit is None or self.spent + self.reserved + amount <= self.limit + TOLERANCE
