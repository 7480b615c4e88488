"""Anthropic Message Batches for `anthropic:` models, through the official SDK:
POST /v1/messages/batches, poll its `processing_status` (in_progress, canceling, ended),
then stream its results JSONL, one `{"custom_id", "result": {"type", ...}}` per request with
type succeeded (the message), errored (the error), canceled or expired (never ran).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import anthropic

from assay.core.redact import scrub
from assay.models.base import ModelError, Request, Response
from assay.models.batch import BatchState, discounted

ErrorMap = Callable[[anthropic.AnthropicError, float | None], ModelError]


class MessagesModel(Protocol):
    """What the batch path uses of an `anthropic:` model (models/anthropic.py)."""

    base_url: str

    def _params(self, request: Request) -> tuple[dict[str, Any], bool]: ...

    def _response(self, message: Any, wrapped: bool) -> Response: ...


class AnthropicBatches:
    """Message Batches of one `anthropic:` model's endpoint."""

    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(
        self, model: MessagesModel, client: anthropic.AsyncAnthropic, map_error: ErrorMap
    ) -> None:
        self.model = model
        self.client = client
        self.map_error = map_error  # the SDK's errors as ModelErrors (models/anthropic.py)
        self.endpoint = f"anthropic {model.base_url}"

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        params, _ = self.model._params(request)
        params.pop("timeout", None)
        return {"custom_id": custom_id, "params": params}

    async def submit(self, lines: list[dict[str, Any]]) -> str:
        try:
            batch = await self.client.messages.batches.create(requests=lines)  # type: ignore[arg-type]
        except anthropic.AnthropicError as exc:
            raise self._mapped(exc) from None
        return batch.id

    async def state(self, batch_id: str) -> BatchState:
        try:
            batch = await self.client.messages.batches.retrieve(batch_id)
        except anthropic.AnthropicError as exc:
            raise self._mapped(exc) from None
        status = str(batch.processing_status)
        return BatchState(status, status == "ended")

    async def results(self, batch_id: str) -> dict[str, Any]:
        entries: dict[str, Any] = {}
        try:
            async for entry in await self.client.messages.batches.results(batch_id):
                entries[entry.custom_id] = entry.result
        except anthropic.AnthropicError as exc:
            raise self._mapped(exc) from None
        return entries

    def _mapped(self, exc: anthropic.AnthropicError) -> ModelError:
        mapped = self.map_error(exc, None)
        return ModelError(
            f"batch API: {mapped}",
            retryable=mapped.retryable,
            detail=mapped.detail,
            status=mapped.status,
        )

    def parse(self, entry: Any, request: Request) -> Response:
        kind = getattr(entry, "type", None)
        if kind == "succeeded":
            _, wrapped = self.model._params(request)
            return discounted(self.model._response(entry.message, wrapped))
        if kind == "errored":
            error = getattr(getattr(entry, "error", None), "error", None)
            message = getattr(error, "message", None) or str(getattr(error, "type", "error"))
            raise ModelError(f"batch request failed: {scrub(str(message))[:300]}")
        raise ModelError(f"batch request {kind}: it did not run")
