"""The OpenAI Batch API for `openai:` models: upload a JSONL file to /files, create a
/batches job for /v1/chat/completions, poll it, download its output and error files.

Statuses: validating, in_progress, finalizing, completed, expired, failed, cancelling,
cancelled; a batch has ended at completed, expired, failed or cancelled. An output line is
`{"custom_id", "response": {"status_code", "body"}, "error"}`; a request that failed has an
error status code or an `error` (it is in the error file), one that never ran (an expired
batch) is in neither file.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from assay.core.redact import scrub
from assay.models.base import ModelError, Request, Response
from assay.models.batch import BatchState, discounted
from assay.models.forms import Negotiation
from assay.models.http import body_text, error_message, is_retryable
from assay.models.transport import aiohttp  # without its import-time CA loading

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "expired", "failed", "cancelled"})


class ChatModel(Protocol):
    """What the batch path uses of an `openai:` model (models/openai.py's OpenAIModel)."""

    base_url: str
    forms: Negotiation

    def _client(self) -> aiohttp.ClientSession: ...

    def _body(self, request: Request, form: str | None = None) -> bytes: ...

    def _parse(self, raw: bytes) -> Response: ...


class OpenAIBatches:
    """The Batch API of one `openai:` model's server."""

    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024  # OpenAI takes up to 200 MB per input file

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.endpoint = f"openai {model.base_url}"

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        form = self.model.forms.current() if request.json_schema is not None else None
        body = json.loads(self.model._body(request, form))
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        raw = await self._raw(method, path, **kwargs)
        try:
            return json.loads(raw)
        except ValueError:
            raise ModelError(
                f"batch API {path}: malformed response body", retryable=True, detail=body_text(raw)
            ) from None

    async def _raw(self, method: str, path: str, **kwargs: Any) -> bytes:
        url = f"{self.model.base_url}{path}"
        try:
            async with self.model._client().request(method, url, **kwargs) as reply:
                raw = await reply.read()
                status = reply.status
        except aiohttp.ClientError as exc:
            raise ModelError(
                scrub(f"batch API: connection error: {type(exc).__name__}: {exc}"), retryable=True
            ) from None
        if status >= 400:
            said = error_message(raw)
            text = body_text(raw)
            raise ModelError(
                f"batch API {path}: HTTP {status}" + (f": {said}" if said else ""),
                retryable=is_retryable(status, text),
                detail=text,
                status=status,
            )
        return raw

    async def submit(self, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field(
            "file", data.encode(), filename="assay-batch.jsonl", content_type="application/jsonl"
        )
        payload = form()  # multipart, whatever the client's default Content-Type
        uploaded = await self._json(
            "POST", "/files", data=payload, headers={"Content-Type": payload.content_type}
        )
        created = await self._json(
            "POST",
            "/batches",
            json={
                "input_file_id": uploaded["id"],
                "endpoint": ENDPOINT,
                "completion_window": "24h",
            },
        )
        return str(created["id"])

    async def state(self, batch_id: str) -> BatchState:
        batch = await self._json("GET", f"/batches/{batch_id}")
        status = str(batch.get("status"))
        errors = (batch.get("errors") or {}).get("data") or []
        error = "; ".join(str(e.get("message") or e.get("code")) for e in errors) or None
        return BatchState(status, status in ENDED, scrub(error) if error else None)

    async def results(self, batch_id: str) -> dict[str, Any]:
        batch = await self._json("GET", f"/batches/{batch_id}")
        entries: dict[str, Any] = {}
        for key in ("error_file_id", "output_file_id"):  # an answer wins over an error
            file_id = batch.get(key)
            if not file_id:
                continue
            raw = await self._raw("GET", f"/files/{file_id}/content")
            for text in raw.decode("utf-8", "replace").splitlines():
                if text.strip():
                    entry = json.loads(text)
                    entries[str(entry["custom_id"])] = entry
        return entries

    def parse(self, entry: Any, request: Request) -> Response:
        error = entry.get("error")
        reply = entry.get("response") or {}
        status = int(reply.get("status_code") or 0)
        if error or status >= 400 or not reply:
            body = reply.get("body")
            raw = json.dumps(body if body is not None else {"error": error}).encode()
            said = error_message(raw) or "no answer"
            raise ModelError(
                f"batch request failed: HTTP {status}: {said}" if status else f"batch: {said}",
                detail=body_text(raw),
                status=status or None,
            )
        form = self.model.forms.current() if request.json_schema is not None else None
        if form is not None:
            self.model.forms.answered(form)
        return discounted(self.model._parse(json.dumps(reply.get("body")).encode()))
