"""A hard spending cap: reserve each call's worst case before sending, settle after."""

from __future__ import annotations

TOLERANCE = 1e-12


class Budget:
    """Never lets reserved plus spent exceed the limit, whatever the concurrency.

    All methods are synchronous and called from the event loop thread, so no lock is needed.
    """

    def __init__(self, limit_usd: float | None) -> None:
        self.limit = limit_usd
        self.spent = 0.0
        self.reserved = 0.0
        self.exhausted = False

    def reserve(self, amount: float) -> bool:
        """Hold `amount` for a call; False (and exhausted) when it does not fit."""
        if self.limit is not None and self.spent + self.reserved + amount > self.limit + TOLERANCE:
            self.exhausted = True
            return False
        self.reserved += amount
        return True

    def settle(self, reserved: float, actual: float) -> None:
        """Release a reservation and record what the call really cost."""
        self.reserved = max(0.0, self.reserved - reserved)
        self.spent += actual

    def remaining(self) -> float | None:
        """What is left to reserve, or None without a limit."""
        if self.limit is None:
            return None
        return max(0.0, self.limit - self.spent - self.reserved)
