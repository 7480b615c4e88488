"""A hostile OpenAI-compatible (and Anthropic Messages) server on 127.0.0.1, for the tests of
what assay does with replies it should not trust: bodies without end or too large for memory
(plain or gzip-compressed), content of the wrong type, error bodies that carry the caller's
key cut, percent-encoded or base64-encoded.

The model name a request gives chooses the behaviour (`openai:endless`, `anthropic:huge`...);
any other name gets a normal short answer.
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from aiohttp import web

from app_thread import AppThread

HUGE_BYTES = 24 * 1024 * 1024  # a reply beyond the default cap
CUT_AT = 26  # the long error bodies put a key's first 26 characters before a cut


def _answer(content: Any, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }


def _message(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "msg_hostile",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }


DEEP = 100_000  # the nesting of the `deep` replies: beyond what a JSON parser recurses into


def _raw(usage: str, messages: bool) -> str:
    """A short answer whose usage is the raw JSON text `usage` (the Anthropic form when
    `messages`)."""
    if messages:
        head = '{"id": "msg_h", "type": "message", "role": "assistant", "model": "h",'
        head += ' "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",'
        return head + f' "usage": {usage}}}'
    head = '{"id": "c", "object": "chat.completion", "model": "h",'
    head += ' "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],'
    return head + f' "usage": {usage}}}'


# Replies whose usage cannot be read, or reports more than any request of its size can
# cost: (input, output) tokens as raw JSON, or a value nested `DEEP` deep.
USAGE_REPLIES = {
    "usage-infinity": ("Infinity", "2"),
    "usage-1e400": ("3", "1e400"),
    "usage-negative": ("-1000000", "2"),
    "overbilled": ("3", "1000000"),
}


def _usage_reply(name: str, messages: bool) -> str | None:
    if name == "deep":
        return _raw("[" * DEEP + "]" * DEEP, messages)
    if name not in USAGE_REPLIES:
        return None
    given, taken = USAGE_REPLIES[name]
    keys = ("input_tokens", "output_tokens") if messages else ("prompt_tokens", "completion_tokens")
    return _raw(f'{{"{keys[0]}": {given}, "{keys[1]}": {taken}}}', messages)


def _key(request: web.Request) -> str:
    header = request.headers.get("Authorization", "").removeprefix("Bearer ")
    return header or request.headers.get("x-api-key", "")


class HostileServer(AppThread):
    """The aiohttp app, run on its own loop in a background thread; `served` counts bytes."""

    def __init__(self) -> None:
        self.sent = 0  # body bytes written by the endless replies
        self.app = web.Application()
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_post("/v1/messages", self.messages)
        super().__init__(self.app)

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    async def _endless(self, request: web.Request, head: bytes) -> web.StreamResponse:
        reply = web.StreamResponse(headers={"Content-Type": "application/json"})
        await reply.prepare(request)  # chunked: no Content-Length
        await reply.write(head)
        chunk = b"x" * 65536
        try:
            while True:
                await reply.write(chunk)
                self.sent += len(chunk)
        except (ConnectionError, RuntimeError):
            pass
        return reply

    async def _special(self, request: web.Request, name: str, body: dict[str, Any]) -> Any:
        key = _key(request)
        raw = _usage_reply(name, request.path.endswith("/messages"))
        if raw is not None:
            return web.Response(text=raw, content_type="application/json")
        if name == "endless":
            return await self._endless(request, b'{"choices": [{"message": {"content": "')
        if name == "huge":
            filler = "x" * HUGE_BYTES
            if request.path.endswith("/messages"):
                return web.json_response(_message(filler, name))
            return web.json_response(_answer(filler, name))
        if name in ("gzip", "chunked"):  # honest replies, under the cap, read piece by piece
            shaped = _message if request.path.endswith("/messages") else _answer
            data = json.dumps(shaped("fine " * 1000, name)).encode()
            if name == "gzip":
                return web.Response(
                    body=gzip.compress(data),
                    headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
                )
            reply = web.StreamResponse(headers={"Content-Type": "application/json"})
            await reply.prepare(request)
            for start in range(0, len(data), 1000):
                await reply.write(data[start : start + 1000])
            await reply.write_eof()
            return reply
        if name == "gzip-bomb":  # 100 MB of JSON in a 100 kB body
            shaped = _message if request.path.endswith("/messages") else _answer
            plain = json.dumps(shaped("x" * HUGE_BYTES * 4, name)).encode()
            return web.Response(
                body=gzip.compress(plain, 9),
                headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            )
        if name in ("long-error", "long-error-chars"):
            # the key straddles a cut of the body at 8,000 bytes (multibyte padding, so the
            # cut is inside the first 4,000 characters) or at 4,000 characters
            head = '{"error": {"message": "bad", "pad": "'
            if name == "long-error":
                room = 8000 - CUT_AT - len(head)
                pad = "€" * (room // 3) + "p" * (room % 3)
            else:
                pad = "p" * (4000 - CUT_AT - len(head))
            text = head + pad + key + '"}}'
            return web.Response(status=400, text=text, content_type="application/json")
        if name == "percent-key":
            said = "key=" + "".join(f"%{byte:02X}" for byte in key.encode()) + "&user=u"
            return web.json_response({"error": {"message": f"refused {said}"}}, status=401)
        if name == "base64-key":
            pair = base64.b64encode(f"user:{key}".encode()).decode()
            return web.json_response({"error": {"message": f"refused Basic {pair}"}}, status=401)
        if name == "parts":
            parts = [{"type": "text", "text": "first "}, {"type": "text", "text": "second"}]
            return web.json_response(_answer(parts, name))
        if name == "dict-content":
            if request.path.endswith("/messages"):
                reply = _message("", name)
                reply["content"] = [{"type": "text", "text": {"text": "not a string"}}]
                return web.json_response(reply)
            return web.json_response(_answer({"text": "not a string"}, name))
        if name == "image-part":
            return web.json_response(_answer([{"type": "image_url", "image_url": "x"}], name))
        return None

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        name = str(body.get("model"))
        special = await self._special(request, name, body)
        return special if special is not None else web.json_response(_answer("fine", name))

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        name = str(body.get("model"))
        if name == "endless":
            return await self._endless(request, b'{"type": "message", "content": [{"text": "')
        special = await self._special(request, name, body)
        return special if special is not None else web.json_response(_message("fine", name))
