"""The one async protocol every model, CLI and agent runner implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

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

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (what the call cache stores)."""
        return {
            "text": self.text,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "model": self.model,
            "state": self.state,
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
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.overload = overload
        self.retry_after = retry_after
        self.detail = detail
        self.cost_usd = cost_usd  # what the failed call still cost (an agent CLI reports it)


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
