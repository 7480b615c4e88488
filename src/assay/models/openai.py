"""`openai:MODEL`: any OpenAI-compatible chat completions endpoint (OpenAI, vLLM, Ollama,
the llama.cpp server, LM Studio) over a lean aiohttp client, with the proxies, CA
certificates and organisation/project headers the environment sets (models/network.py).

A plain aiohttp request costs a fraction of the CPU the SDK's default transport spends per
call (see bench/engine.py), which matters at high concurrency on small machines.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from assay.core.errors import InputError
from assay.core.limits import MAX_REPLY_BYTES
from assay.core.memo import ByObject
from assay.core.redact import scrub
from assay.models.base import ModelError, Request, Response, ServerMismatch, token_count
from assay.models.forms import Negotiation, messages_for, rejects_form, response_format
from assay.models.http import (
    OVERLOAD_STATUSES,
    body_text,
    error_message,
    is_retryable,
    parse_retry_after,
    read_capped,
)
from assay.models.network import openai_headers, route, session
from assay.models.openai_batch import OpenAIBatches
from assay.models.pricing import Price, lookup_price, priced
from assay.models.registry import ModelOptions, unset
from assay.models.servers import check_served, refuses_model
from assay.models.transport import aiohttp  # without its import-time CA loading

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_HINT = "a local server needs none: give --base-url or OPENAI_BASE_URL"


def _uses_completion_tokens(model: str) -> bool:
    return model.startswith(("o1", "o3", "o4", "gpt-5"))


class OpenAIModel:
    """Chat completions over HTTP; errors become ModelError with retry hints.

    A request with a JSON Schema is sent in the structured-output form the server accepts,
    falling back form by form when it refuses one (models/forms.py); `check_server` is the
    one `/models` check the Caller makes before the first call (models/servers.py).
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None,
        price: Price | None,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ):
        self.spec = f"openai:{model}"
        self.max_reply_bytes = max_reply_bytes
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.price = price
        self._url = f"{self.base_url}/chat/completions"
        self._headers = {"Content-Type": "application/json", **openai_headers()}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._route = route(self.base_url)  # proxy and CA certificates, from the environment
        self._session: aiohttp.ClientSession | None = None
        self._tokens_key = (
            "max_completion_tokens" if _uses_completion_tokens(model) else "max_tokens"
        )
        self._head = '{"model": ' + json.dumps(model)  # the body's fixed start and key
        self._tokens_json = json.dumps(self._tokens_key)
        self._timeouts: dict[float | None, aiohttp.ClientTimeout] = {}
        self._tails: dict[tuple[str, str], str] = {}
        self.forms = Negotiation()
        self._unlisted: str | None = None  # the error if the server refuses this unlisted name

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "base_url": self.base_url}

    def server_key(self) -> tuple[str, str]:
        return self.base_url, self.model

    async def check_server(self) -> bool:
        self._unlisted = await check_served(self._client(), self.spec, self.base_url, self.model)
        return self._unlisted is None

    def structured_form(self) -> str | None:
        return self.forms.settled

    def assume_structured_form(self, form: str) -> None:
        self.forms.start_at(form)

    def batch_api(self) -> OpenAIBatches:
        """The server's Batch API (`--batch`: models/openai_batch.py)."""
        return OpenAIBatches(self)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = session(self._headers, self._route)
        return self._session

    def _body(self, request: Request, form: str | None = None) -> bytes:
        """The request body; with a schema, in `form` (see models/forms.py).

        The bytes of `json.dumps({"model", ["response_format"], "messages", max_tokens,
        "temperature"})`, put together from their parts: a judge's `response_format` (the
        same schema for every call of its configuration) is encoded once per schema."""
        messages = request.messages
        parts = [self._head]
        schema = request.json_schema
        if schema is not None and form is not None:
            messages = messages_for(form, messages, schema)
            structured = _FORMAT_JSON.get(schema, lambda: _format_json(form, schema), form)
            if structured is not None:
                parts.append(f', "response_format": {structured}')
        listed = json.dumps([{"role": m.role, "content": m.content} for m in messages])
        parts += (', "messages": ', listed, self._tail(request.max_tokens, request.temperature))
        return "".join(parts).encode()

    def _tail(self, max_tokens: int, temperature: float) -> str:
        """The body's end: its token limit and temperature (the same for most calls)."""
        key = (repr(max_tokens), repr(temperature))  # (0.0 == -0.0 == False, printed otherwise)
        tail = self._tails.get(key)
        if tail is None:
            tail = (
                f", {self._tokens_json}: {json.dumps(max_tokens)},"
                f' "temperature": {json.dumps(temperature)}}}'
            )
            if len(self._tails) >= 64:
                self._tails.clear()
            self._tails[key] = tail
        return tail

    async def generate(self, request: Request) -> Response:
        if request.json_schema is None:
            return await self._post(request, None)
        return await self._structured(request)

    async def _structured(self, request: Request) -> Response:
        """Send in the current form; on a refusal of the form, go on with the next one (the
        Caller sends the first such call alone, so a refused form is sent once)."""
        while True:
            form = self.forms.current()
            try:
                response = await self._post(request, form)
            except ModelError as exc:
                if exc.status is None or form == "prompt":
                    raise
                if not rejects_form(exc.status, exc.detail or ""):
                    raise
                if not self.forms.refused(form):
                    raise
                continue
            self.forms.answered(form)
            return response

    async def _post(self, request: Request, form: str | None) -> Response:
        timeout = self._timeouts.get(request.timeout_s)
        if timeout is None:  # one per distinct timeout, not one per call
            timeout = self._timeouts[request.timeout_s] = aiohttp.ClientTimeout(
                total=request.timeout_s
            )
        retry_after = None
        try:
            async with self._client().post(
                self._url, data=self._body(request, form), timeout=timeout
            ) as reply:
                raw = await read_capped(reply, self.max_reply_bytes)
                status = reply.status
                if status >= 400:
                    retry_after = parse_retry_after(reply.headers.get("Retry-After"))
        except TimeoutError:
            raise ModelError(
                f"timeout after {request.timeout_s}s", retryable=True, billed=True
            ) from None
        except aiohttp.ClientError as exc:
            raise ModelError(
                scrub(f"connection error: {type(exc).__name__}: {exc}"),
                retryable=True,
                # no connection, no request: nothing billed; a connection lost after the
                # request was sent may have been (its reservation counts)
                billed=not isinstance(exc, aiohttp.ClientConnectorError),
            ) from None
        if status >= 400:
            if self._unlisted is not None and refuses_model(status, body_text(raw)):
                raise ServerMismatch(self._unlisted)
            raise self._http_error(status, raw, retry_after)
        self._unlisted = None  # it answers to the name after all
        return self._parse(raw)

    def _http_error(self, status: int, raw: bytes, retry_after: float | None) -> ModelError:
        text = body_text(raw)
        message = f"HTTP {status}"
        said = error_message(raw)
        if said:
            message += f": {said}"
        if status == 404:
            message += f" (is {self.base_url} the server's OpenAI API, ending in /v1?)"
        return ModelError(
            message,
            retryable=is_retryable(status, text),
            overload=status in OVERLOAD_STATUSES,
            retry_after=retry_after,
            detail=text,
            status=status,
        )

    def _parse(self, raw: bytes) -> Response:
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            if not isinstance(text, str):
                text = content_text(text)
            usage = data.get("usage") or {}
            # a count that is not an integer of at least 0 (`Infinity`, `1e400`, "12") is
            # unreadable usage: the call counts at its reservation
            input_tokens = token_count(usage.get("prompt_tokens"))
            output_tokens = token_count(usage.get("completion_tokens"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            # (RecursionError: a body nested too deep to read)
            raise ModelError(
                "malformed response body", retryable=True, detail=body_text(raw), billed=True
            ) from None
        return Response(
            text=text,
            input_tokens=input_tokens or 0,
            output_tokens=output_tokens or 0,
            cost_usd=priced(self.price, input_tokens, output_tokens),
            model=str(data.get("model") or self.model),
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            await asyncio.sleep(0)


TEXT_PARTS = ("text", "output_text")  # the content-part types whose `text` is the answer


def content_text(content: Any) -> str:
    """A reply's content that is not a string: the OpenAI content-parts form (a list of
    `{"type": "text", "text": ...}`, a refusal part's `refusal`) as its texts joined; any
    other form is a ModelError (an errored trial, never stored as the answer)."""
    if not isinstance(content, list):
        raise ModelError(
            f"the reply's content is a JSON {_json_type(content)}, not text", billed=True
        )
    texts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        value = part.get("refusal" if kind == "refusal" else "text") if kind else None
        if kind not in (*TEXT_PARTS, "refusal") or not isinstance(value, str):
            shown = repr(kind) if isinstance(kind, str) else f"a JSON {_json_type(part)}"
            raise ModelError(
                f"the reply's content has a part of type {shown[:60]}, not text", billed=True
            )
        texts.append(value)
    return "".join(texts)


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


# The `response_format` JSON text of each (schema object, form) sent (None: the form has none).
_FORMAT_JSON: ByObject[str | None] = ByObject()


def _format_json(form: str, schema: dict[str, Any]) -> str | None:
    structured = response_format(form, schema)
    return None if structured is None else json.dumps(structured)


def base_url_of(options: ModelOptions) -> str:
    """The endpoint: --base-url (or the suite's), then OPENAI_BASE_URL, then OpenAI's API."""
    return options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def required_env(rest: str, options: ModelOptions) -> tuple[str, ...]:
    """OPENAI_API_KEY for OpenAI's API; nothing for another base URL (a local server or a
    gateway that needs no key; the key is still sent when it is set)."""
    return ("OPENAI_API_KEY",) if base_url_of(options).rstrip("/") == DEFAULT_BASE_URL else ()


def create(rest: str, options: ModelOptions) -> OpenAIModel:
    """Factory for `openai:MODEL`; base URL from --base-url, then OPENAI_BASE_URL."""
    if not rest:
        raise InputError("ERROR: model spec 'openai:': name the model, e.g. openai:gpt-4o-mini")
    if unset(required_env(rest, options)):
        raise InputError("ERROR: openai: set OPENAI_API_KEY (or --base-url for a local server)")
    price = options.price or lookup_price(rest)
    key = os.environ.get("OPENAI_API_KEY")
    return OpenAIModel(rest, base_url_of(options), key, price, options.max_reply_bytes)
