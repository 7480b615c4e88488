"""Anthropic Message Batches for `anthropic:` models, through the official SDK:
POST /v1/messages/batches, poll its `processing_status` (in_progress, canceling, ended),
then stream its results JSONL, one `{"custom_id", "result": {"type", ...}}` per request with
type succeeded (the message), errored (the error), canceled or expired (never ran).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anthropic

from assay.core.redact import scrub
from assay.models.base import ModelError, Request, Response
from assay.models.batch import BatchState, discounted

if TYPE_CHECKING:
    from assay.models.anthropic import AnthropicModel


class AnthropicBatches:
    """Message Batches of one `anthropic:` model's endpoint."""

    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, model: AnthropicModel, client: anthropic.AsyncAnthropic) -> None:
        self.model = model
        self.client = client
        self.endpoint = f"anthropic {model.base_url}"

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        params, _ = self.model._params(request)
        params.pop("timeout", None)
        return {"custom_id": custom_id, "params": params}

    async def submit(self, lines: list[dict[str, Any]]) -> str:
        try:
            batch = await self.client.messages.batches.create(requests=lines)  # type: ignore[arg-type]
        except anthropic.AnthropicError as exc:
            raise _mapped(exc) from None
        return batch.id

    async def state(self, batch_id: str) -> BatchState:
        try:
            batch = await self.client.messages.batches.retrieve(batch_id)
        except anthropic.AnthropicError as exc:
            raise _mapped(exc) from None
        status = str(batch.processing_status)
        return BatchState(status, status == "ended")

    async def results(self, batch_id: str) -> dict[str, Any]:
        entries: dict[str, Any] = {}
        try:
            async for entry in await self.client.messages.batches.results(batch_id):
                entries[entry.custom_id] = entry.result
        except anthropic.AnthropicError as exc:
            raise _mapped(exc) from None
        return entries

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


def _mapped(exc: anthropic.AnthropicError) -> ModelError:
    from assay.models.anthropic import map_error

    mapped = map_error(exc, None)
    return ModelError(
        f"batch API: {mapped}",
        retryable=mapped.retryable,
        detail=mapped.detail,
        status=mapped.status,
    )
