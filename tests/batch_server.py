"""Mock servers of the OpenAI Batch API and Anthropic Message Batches on 127.0.0.1.

A batch ends after `polls` status reads. Its answers follow the prompt: a prompt with
FAIL gets a per-request error (OpenAI: a 400 line in the error file; Anthropic: an errored
result). `expire = N` ends each batch as expired with only its first N requests run.
`hold = True` keeps every batch in progress (the kill-and-resume test releases it).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from mock_server import schema_instance
from server_flavours import requested_schema

from app_thread import AppThread


def reply_text(prompt: str) -> str:
    return f"batch answer to: {prompt[-40:]}"


@dataclass
class Batch:
    id: str
    kind: str  # "openai" | "anthropic"
    requests: list[dict[str, Any]]
    reads: int = 0
    status: str = "validating"
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


class BatchServer(AppThread):
    """Both batch APIs in one aiohttp app, run on its own loop in a thread."""

    def __init__(self, polls: int = 2, expire: int | None = None, hold: bool = False) -> None:
        self.polls = polls
        self.expire = expire
        self.hold = hold
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, Batch] = {}
        self.submissions = 0
        self.direct_calls = 0
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.direct)
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{id}/content", self.content)
        app.router.add_post("/v1/batches", self.create_openai)
        app.router.add_get("/v1/batches/{id}", self.get_openai)
        app.router.add_post("/v1/messages/batches", self.create_anthropic)
        app.router.add_get("/v1/messages/batches/{id}", self.get_anthropic)
        app.router.add_get("/v1/messages/batches/{id}/results", self.results_anthropic)
        super().__init__(app)

    # -- shared -------------------------------------------------------------------------
    def _advance(self, batch: Batch) -> None:
        """One status read: validating → in_progress → ended after `polls` reads."""
        batch.reads += 1
        if batch.status in ("completed", "expired"):
            return
        if self.hold or batch.reads < self.polls:
            batch.status = "in_progress"
            return
        run = batch.requests if self.expire is None else batch.requests[: self.expire]
        for entry in run:
            (batch.errors if "FAIL" in json.dumps(entry) else batch.results).append(entry)
        batch.status = "expired" if self.expire is not None else "completed"

    # -- OpenAI -------------------------------------------------------------------------
    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "gpt-4o-mini"}]})

    async def direct(self, request: web.Request) -> web.Response:
        self.direct_calls += 1
        return web.json_response({"error": {"message": "use the batch API"}}, status=400)

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        assert form["purpose"] == "batch"
        upload = form["file"]
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = upload.file.read()  # type: ignore[union-attr]
        return web.json_response({"id": file_id, "object": "file", "purpose": "batch"})

    async def content(self, request: web.Request) -> web.Response:
        return web.Response(body=self.files[request.match_info["id"]])

    async def create_openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        assert body["endpoint"] == "/v1/chat/completions"
        assert body["completion_window"] == "24h"
        lines = self.files[body["input_file_id"]].decode().splitlines()
        self.submissions += 1
        batch = Batch(f"batch_{self.submissions}", "openai", [json.loads(x) for x in lines])
        self.batches[batch.id] = batch
        return web.json_response(self._openai(batch))

    def _openai(self, batch: Batch) -> dict[str, Any]:
        data: dict[str, Any] = {"id": batch.id, "object": "batch", "status": batch.status}
        if batch.status in ("completed", "expired"):
            out, err = f"file-out-{batch.id}", f"file-err-{batch.id}"
            answers = "".join(json.dumps(self._answer(e)) + "\n" for e in batch.results)
            self.files[out] = answers.encode()
            self.files[err] = "".join(
                json.dumps(self._error(e)) + "\n" for e in batch.errors
            ).encode()
            data["output_file_id"] = out if batch.results else None
            data["error_file_id"] = err if batch.errors else None
        return data

    def _answer(self, entry: dict[str, Any]) -> dict[str, Any]:
        body = entry["body"]
        prompt = "".join(m["content"] for m in body["messages"])
        schema = requested_schema(body)  # a judge's call: an answer of its schema's shape
        text = json.dumps(schema_instance(schema, prompt)) if schema else reply_text(prompt)
        return {
            "id": f"req-{entry['custom_id'][:8]}",
            "custom_id": entry["custom_id"],
            "response": {
                "status_code": 200,
                "request_id": "r",
                "body": {
                    "id": "chatcmpl-batch",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                },
            },
            "error": None,
        }

    def _error(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"req-{entry['custom_id'][:8]}",
            "custom_id": entry["custom_id"],
            "response": {
                "status_code": 400,
                "request_id": "r",
                "body": {
                    "error": {"message": "the prompt was refused", "type": "invalid_request_error"}
                },
            },
            "error": None,
        }

    async def get_openai(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        self._advance(batch)
        return web.json_response(self._openai(batch))

    # -- Anthropic ------------------------------------------------------------------------
    async def create_anthropic(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.submissions += 1
        batch = Batch(f"msgbatch_{self.submissions}", "anthropic", body["requests"])
        batch.status = "in_progress"
        self.batches[batch.id] = batch
        return web.json_response(self._anthropic(batch))

    def _anthropic(self, batch: Batch) -> dict[str, Any]:
        ended = batch.status in ("completed", "expired")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": len(batch.results),
                "errored": len(batch.errors),
                "canceled": 0,
                "expired": len(batch.requests) - len(batch.results) - len(batch.errors)
                if ended
                else 0,
            },
            "created_at": now,
            "expires_at": now,
            "ended_at": now if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.root}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    async def get_anthropic(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        self._advance(batch)
        return web.json_response(self._anthropic(batch))

    async def results_anthropic(self, request: web.Request) -> web.Response:
        batch = self.batches[request.match_info["id"]]
        lines = []
        for entry in batch.results:
            params = entry["params"]
            text = reply_text(json.dumps(params["messages"]))
            message = {
                "id": "msg_batch",
                "type": "message",
                "role": "assistant",
                "model": params["model"],
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1000, "output_tokens": 100},
            }
            result = {"type": "succeeded", "message": message}
            lines.append({"custom_id": entry["custom_id"], "result": result})
        for entry in batch.errors:
            error = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "the prompt was refused"},
            }
            lines.append(
                {"custom_id": entry["custom_id"], "result": {"type": "errored", "error": error}}
            )
        run = {e["custom_id"] for e in batch.results + batch.errors}
        for entry in batch.requests:
            if entry["custom_id"] not in run:
                lines.append({"custom_id": entry["custom_id"], "result": {"type": "expired"}})
        body = "".join(json.dumps(x) + "\n" for x in lines)
        return web.Response(body=body.encode(), content_type="application/binary")
