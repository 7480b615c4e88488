"""The Caller's retry policy: what is retried, the backoff between attempts, and when the
server's Retry-After ends the retries (engine/calls.py `Caller._with_retries`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from assay.models.base import ModelError

if TYPE_CHECKING:
    # tenacity is imported by the first retry, not with the engine: most runs never retry,
    # and importing it costs start-up time (with tornado installed, tenacity imports that too).
    from tenacity import RetryCallState


def retryable(exc: BaseException) -> bool:
    """Retry only what can succeed when sent again: the provider says so (a 400/422, or a
    500 whose body says the request is invalid, is final: models/http.py)."""
    return isinstance(exc, ModelError) and exc.retryable


class Backoff:
    """Exponential backoff with jitter, never sooner than the server's Retry-After.

    `first` is the wait after the bare first attempt; `later` continues the same doubling
    sequence for tenacity's attempts.
    """

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial = initial
        self.maximum = maximum
        self._later: Callable[[RetryCallState], float] | None = None  # built by the first retry

    def first(self, exc: ModelError) -> float:
        delay = min(self.maximum, self.initial + random.uniform(0, self.initial))
        return max(delay, exc.retry_after or 0.0)

    def later(self, state: RetryCallState) -> float:
        if self._later is None:
            from tenacity.wait import wait_exponential_jitter

            self._later = wait_exponential_jitter(
                multiplier=2 * self.initial, max=self.maximum, jitter=self.initial
            )
        delay = float(self._later(state))
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ModelError) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return delay


class RetryAfterTooLong:
    """Stop retrying when the server asks for a longer wait than the backoff ever allows.

    Retrying sooner would disobey the server and waiting could stall the run for hours;
    the call is recorded as an error instead, and running the command again retries it.
    A tenacity stop condition by protocol (called with the retry state), not by subclassing
    `tenacity.stop.stop_base`, so defining it does not import tenacity.
    """

    def __init__(self, maximum: float) -> None:
        self.maximum = maximum

    def exceeds(self, exc: BaseException | None) -> bool:
        return (
            isinstance(exc, ModelError)
            and exc.retry_after is not None
            and exc.retry_after > self.maximum
        )

    def __call__(self, state: RetryCallState) -> bool:
        return self.exceeds(state.outcome.exception() if state.outcome else None)
