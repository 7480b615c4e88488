"""`anthropic:MODEL`: the Messages API through the official `anthropic` SDK.

System messages go to `system` (the SDK's Messages API takes no sampling temperature, so
`temperature` is not sent); a JSON-schema request is enforced through a forced tool call
whose input is the answer. The SDK's own retries are off (the engine retries), and every SDK
error becomes a ModelError with retry hints. `ANTHROPIC_BASE_URL` points it elsewhere (a
proxy, a gateway, the loopback mock of the tests).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic
import httpx2

from assay.core.errors import InputError
from assay.core.redact import scrub, scrub_cut
from assay.models.anthropic_batch import AnthropicBatches
from assay.models.anthropic_http import CappedHttpClient
from assay.models.base import Message, ModelError, Request, Response, token_count
from assay.models.http import DETAIL_LIMIT, OVERLOAD_STATUSES, is_retryable, parse_retry_after
from assay.models.pricing import Price, lookup_price, priced
from assay.models.registry import ModelOptions, unset

DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_HINT = "a local server or gateway needs none: set ANTHROPIC_BASE_URL"
TOOL_NAME = "respond"
# The key under which a non-object schema is wrapped (tool inputs must be JSON objects).
WRAP_KEY = "value"


def split_system(messages: list[Message]) -> tuple[str | None, list[dict[str, str]]]:
    """System texts joined for `system`; the rest with adjacent same-role turns merged."""
    system = [m.content for m in messages if m.role == "system"]
    turns: list[dict[str, str]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + message.content
        else:
            turns.append({"role": role, "content": message.content})
    return ("\n\n".join(system) if system else None), turns


def tool_for(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The forced tool that carries a schema-shaped answer; True when the schema is wrapped."""
    if schema.get("type") == "object":
        return {"name": TOOL_NAME, "description": "Give the answer.", "input_schema": schema}, False
    wrapped = {"type": "object", "properties": {WRAP_KEY: schema}, "required": [WRAP_KEY]}
    return {"name": TOOL_NAME, "description": "Give the answer.", "input_schema": wrapped}, True


def _retry_after(headers: Any) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


def map_error(exc: anthropic.AnthropicError, timeout_s: float | None) -> ModelError:
    """An SDK exception as a ModelError: retryable for timeouts, connections, 408/429/5xx
    (not a 5xx that says the request is invalid: models/http.py)."""
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelError(f"timeout after {timeout_s}s", retryable=True, billed=True)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc
        if isinstance(cause, ModelError):  # what the capped client refused (anthropic_http.py)
            return cause
        return ModelError(
            scrub(f"connection error: {type(cause).__name__}: {cause}"),
            retryable=True,
            # no connection, no request: nothing billed; one lost after the request was
            # sent may have been (its reservation counts)
            billed=not isinstance(cause, httpx2.ConnectError),
        )
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        response = exc.response
        detail = scrub_cut(response.text, DETAIL_LIMIT) if response is not None else None
        message = f"HTTP {status}"
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else None
        if error and error.get("message"):
            message += f": {scrub(str(error['message']))[:300]}"
        return ModelError(
            message,
            retryable=is_retryable(status, detail or ""),
            overload=status in OVERLOAD_STATUSES,
            retry_after=_retry_after(exc.response.headers),
            detail=detail,
            status=status,
        )
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ModelError(
            "malformed response body", retryable=True, detail=scrub(str(exc)), billed=True
        )
    return ModelError(scrub(f"anthropic: {type(exc).__name__}: {exc}"), retryable=True)


class AnthropicModel:
    """Messages API calls on one AsyncAnthropic client; cost from the price table."""

    def __init__(
        self, model: str, base_url: str, client: anthropic.AsyncAnthropic, price: Price | None
    ) -> None:
        self.spec = f"anthropic:{model}"
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.price = price
        self._client = client

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "base_url": self.base_url}

    def batch_api(self) -> AnthropicBatches:
        """Message Batches on the same client (`--batch`: models/anthropic_batch.py)."""
        return AnthropicBatches(self, self._client, map_error)

    def _params(self, request: Request) -> tuple[dict[str, Any], bool]:
        system, turns = split_system(request.messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": request.max_tokens,
        }
        if system is not None:
            params["system"] = system
        wrapped = False
        if request.json_schema is not None:
            tool, wrapped = tool_for(request.json_schema)
            params["tools"] = [tool]
            params["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        if request.timeout_s is not None:
            params["timeout"] = request.timeout_s
        return params, wrapped

    async def generate(self, request: Request) -> Response:
        params, wrapped = self._params(request)
        try:
            message = await self._client.messages.create(**params)
        except anthropic.AnthropicError as exc:
            raise map_error(exc, request.timeout_s) from None
        except ValueError as exc:  # a body the SDK could not decode
            raise ModelError(
                "malformed response body", retryable=True, detail=scrub(str(exc)), billed=True
            ) from None
        return self._response(message, wrapped)

    def _response(self, message: Any, wrapped: bool) -> Response:
        try:
            blocks = list(message.content or [])
            usage = message.usage
            counts = [
                token_count(getattr(usage, key, None))
                for key in (
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                )
            ]
            input_tokens = None if None in counts else sum(c or 0 for c in counts)
            output_tokens = token_count(usage.output_tokens)
        except (AttributeError, TypeError, ValueError):
            raise ModelError("malformed response body", retryable=True, billed=True) from None
        texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
        if not all(isinstance(t, str) for t in texts):
            raise ModelError("the reply has a text block whose text is not a string", billed=True)
        text = "".join(texts)
        for block in blocks:
            if getattr(block, "type", None) == "tool_use" and block.name == TOOL_NAME:
                value = block.input
                if wrapped and isinstance(value, dict):
                    value = value.get(WRAP_KEY)
                text = json.dumps(value, ensure_ascii=False)
                break
        return Response(
            text=text,
            input_tokens=input_tokens or 0,
            output_tokens=output_tokens or 0,
            cost_usd=priced(self.price, input_tokens, output_tokens),
            model=str(getattr(message, "model", None) or self.model),
        )

    async def aclose(self) -> None:
        await self._client.close()


def base_url_of() -> str:
    """The endpoint: ANTHROPIC_BASE_URL, else Anthropic's API."""
    return os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL


def required_env(rest: str, options: ModelOptions) -> tuple[str, ...]:
    """ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) for Anthropic's API; nothing for another
    base URL (a local server or a gateway that needs no key)."""
    if base_url_of().rstrip("/") != DEFAULT_BASE_URL:
        return ()
    return ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def create(rest: str, options: ModelOptions) -> AnthropicModel:
    """Factory for `anthropic:MODEL`; the key from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)."""
    if not rest:
        raise InputError(
            "ERROR: model spec 'anthropic:': name the model, e.g. anthropic:claude-haiku-4-5"
        )
    if unset(required_env(rest, options)):
        raise InputError(
            "ERROR: anthropic: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server)"
        )
    base_url = base_url_of()
    api_key = os.environ.get("ANTHROPIC_API_KEY")
    auth_token = None if api_key else os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if not api_key and not auth_token:
        api_key = "unused"  # a local server or gateway that needs no key
    client = anthropic.AsyncAnthropic(
        api_key=api_key,
        auth_token=auth_token,
        base_url=base_url,
        max_retries=0,
        open_telemetry=False,
        http_client=CappedHttpClient(options.max_reply_bytes),
    )
    return AnthropicModel(rest, base_url, client, options.price or lookup_price(rest))
