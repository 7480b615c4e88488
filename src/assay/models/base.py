"""The one async protocol every model, CLI and agent runner implements."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from assay.core.errors import InputError
from assay.core.records import Case


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: str
    content: str


@dataclass(slots=True)
class Request:
    """What the engine asks of a model: messages plus the case and condition behind them."""

    messages: list[Message]
    max_tokens: int
    temperature: float = 0.0
    trial: int = 1
    json_schema: dict[str, Any] | None = None
    case: Case | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    budget_usd: float | None = None


@dataclass(slots=True)
class Response:
    """A model's answer with its usage; `cost_usd` is None when the provider reports none."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    model: str | None = None
    state: dict[str, Any] | None = None
    trajectory: list[dict[str, Any]] | None = None
    """The agent's steps (core/trajectory.py), when the runner reports them."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (what the call cache stores)."""
        return {
            "text": self.text,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "model": self.model,
            "state": self.state,
            "trajectory": self.trajectory,
        }


class ModelError(Exception):
    """A failed call. `retryable` errors are retried with backoff; `overload` halves concurrency."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        overload: bool = False,
        retry_after: float | None = None,
        detail: str | None = None,
        cost_usd: float | None = None,
        status: int | None = None,
        billed: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.overload = overload
        self.retry_after = retry_after
        self.detail = detail
        self.cost_usd = cost_usd  # what the failed call still cost (an agent CLI reports it)
        self.status = status  # the HTTP status of an error reply (None for other failures)
        # Whether the call may have been billed for an amount nobody reported: the budget
        # then counts it at its reservation (engine/costs.py). None: not known, so it may
        # (a timeout, an unreadable 200 reply, an agent that failed after it ran), unless the
        # error is the provider's refusal (an HTTP error reply, `status`); False: it was not
        # (the request never left, or the runner is unmetered).
        self.billed = billed
        # What the Caller counted for the failed call, its attempts together (engine/calls.py):
        # the trial records it as its cost.
        self.counted_usd = 0.0

    def may_be_billed(self) -> bool:
        """Whether the failed call may have cost something nobody reported (`billed`)."""
        return self.status is None if self.billed is None else self.billed


# A cost a runner reported that is no amount (a string, a negative, NaN or infinite number)
# or usage that cannot be read: the budget counts such a call at its reservation, never at $0
# and never priced from tokens instead (engine/costs.py `trusted`).
UNREADABLE_COST = math.nan


def reported_cost(value: Any) -> float | None:
    """A cost as a runner reported it: None when it reported none, the amount when it is a
    finite number of at least 0, else `UNREADABLE_COST`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return UNREADABLE_COST
    try:
        amount = float(value)
    except OverflowError:  # an integer too large for a float
        return UNREADABLE_COST
    return amount if math.isfinite(amount) and amount >= 0 else UNREADABLE_COST


def token_count(value: Any) -> int | None:
    """A reported token count: 0 when absent, the count when it is an integer of at least 0,
    else None (unreadable usage: its call is counted at its reservation)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def reply_too_large(cap: int, what: str = "reply") -> ModelError:
    """The error of a reply (an HTTP body, a CLI's stdout) longer than the cap
    (`core/limits.py`): not retried, since the same request would bring the same flood, and
    nothing of the reply is kept. It may have been billed (a provider's answer, an agent's
    turns), so the budget counts it at its reservation."""
    return ModelError(
        f"the {what} is larger than the {cap:,}-byte cap on replies"
        " ([run] max_reply_bytes, --max-reply-bytes); nothing of it was kept",
        billed=True,
    )


class ServerMismatch(InputError):
    """The server a model spec points at cannot serve it: nothing answers at the URL, it
    refuses the credentials, or it does not serve the model named. Every call would fail the
    same way, so the command stops with this one error (exit 2) rather than recording it
    once per call."""


@runtime_checkable
class Model(Protocol):
    """A system under test (or a judge). One instance serves many concurrent calls."""

    spec: str

    def identity(self) -> dict[str, Any]:
        """What, besides the request, determines the output (model, base URL); cache key part."""
        ...

    async def generate(self, request: Request) -> Response:
        """Answer one request or raise ModelError."""
        ...

    async def aclose(self) -> None:
        """Release connections, processes or weights."""
        ...


@runtime_checkable
class Served(Protocol):
    """A model behind a network server (`openai:`). The Caller checks the server once before
    the model's first call that is not answered from the cache (`check_server`, which raises
    ServerMismatch), and keeps in the store the structured-output form the server accepted
    (models/forms.py), per `server_key`, so a later run starts with it."""

    def server_key(self) -> tuple[str, str]:
        """(base URL, model name): what a remembered structured-output form belongs to."""
        ...

    async def check_server(self) -> bool | None:
        """Check that the server answers, or raise ServerMismatch; False when it lists its
        models and this one is not among them (its first call then goes alone, and a refusal
        of the name is one ServerMismatch naming what the server serves)."""
        ...

    def structured_form(self) -> str | None:
        """The structured-output form the server has accepted so far (None: none yet)."""
        ...

    def assume_structured_form(self, form: str) -> None:
        """Start with a form remembered from an earlier run."""
        ...
