"""Provider batch APIs (`--batch`): the protocol the engine's batch path drives.

A batch API takes many requests at once and answers within a day at half the price: the
OpenAI Batch API (`openai:`, models/openai_batch.py) and Anthropic Message Batches
(`anthropic:`, models/anthropic_batch.py). A model that has one returns it from
`batch_api()`; the engine (engine/batching.py) collects requests into batches, keeps the
batch ids in the store, polls, and hands each answer back to the Caller's usual path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from assay.models.base import Model, Request, Response

# What a batch call costs relative to the same call made alone (both providers: 50%).
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True, slots=True)
class BatchState:
    """A batch as its provider reports it: `status` in the provider's own words, `ended`
    when no request in it will run any more, `error` when the batch as a whole failed."""

    status: str
    ended: bool
    error: str | None = None


@runtime_checkable
class BatchAPI(Protocol):
    """One provider endpoint's batch API; `custom_id`s are the Caller's cache keys."""

    endpoint: str  # provider and base URL: what a stored batch id belongs to
    max_requests: int
    max_bytes: int

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        """The request as one entry of a batch."""
        ...

    async def submit(self, lines: list[dict[str, Any]]) -> str:
        """Submit the entries as one batch; its id (raises ModelError)."""
        ...

    async def state(self, batch_id: str) -> BatchState:
        """The batch's status now (raises ModelError)."""
        ...

    async def results(self, batch_id: str) -> dict[str, Any]:
        """An ended batch's results, raw, by custom_id (requests that never ran are absent)."""
        ...

    def parse(self, entry: Any, request: Request) -> Response:
        """One raw result as the Response of `request` at batch prices, or raise ModelError
        (a per-request error)."""
        ...


@runtime_checkable
class Batchable(Protocol):
    """A model that can send its calls through a provider batch API."""

    def batch_api(self) -> BatchAPI: ...


def batch_api_of(model: Model) -> BatchAPI | None:
    """The model's batch API, or None when its provider has none."""
    return model.batch_api() if isinstance(model, Batchable) else None


def discounted(response: Response) -> Response:
    """The response with its cost at batch prices."""
    if response.cost_usd is not None:
        response.cost_usd *= BATCH_DISCOUNT
    return response
