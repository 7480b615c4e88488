"""What an HTTP model API's error replies mean: retry hints and the server's own message.

One set of rules for every HTTP provider (`openai:`, `anthropic:`): overloads (429/503/529)
are retried with backoff and halve concurrency; a timeout (408) and other server errors are
retried, except a 5xx whose body says the request itself is invalid (a server that reports
request-validation errors as 500s, as the llama-cpp-python server and Ollama do): repeating
the same request cannot succeed, so it is not sent again. Every other 4xx is final.
"""

from __future__ import annotations

import json
import re
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from assay.core.redact import scrub, scrub_cut
from assay.models.base import reply_too_large

if TYPE_CHECKING:
    from aiohttp import ClientResponse

OVERLOAD_STATUSES = {429, 503, 529}
DETAIL_LIMIT = 4000
MESSAGE_LIMIT = 300

# What a 5xx body says when the server means "your request is invalid" (a FastAPI/pydantic
# validation error, an OpenAI-style invalid_request_error, a schema a grammar cannot take).
INVALID_REQUEST = re.compile(
    r"validation error|literal_error|input should be|invalid_request_error|badrequest"
    r"|invalid (?:json )?(?:schema|request|format|value|parameter|argument)"
    r"|not supported|unsupported",
    re.IGNORECASE,
)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def says_invalid_request(text: str) -> bool:
    """Whether an error body says the request itself is invalid (so resending cannot help)."""
    return bool(INVALID_REQUEST.search(text))


def is_retryable(status: int, text: str) -> bool:
    """Overloads, 408 and server errors are retried; a 5xx that says the request is invalid,
    and every other 4xx, are not."""
    if status in OVERLOAD_STATUSES or status == 408:
        return True
    return status >= 500 and not says_invalid_request(text)


async def read_capped(reply: ClientResponse, cap: int) -> bytes:
    """An aiohttp reply's body, or `reply_too_large` once it passes `cap` bytes (decoded).

    A plain body of a declared length is checked before it is read, then read whole (the
    common reply: nothing more per call than `reply.read()`); one without a length (chunked,
    perhaps without end) or compressed (a small body may inflate to gigabytes) is read piece
    by piece and dropped as soon as it passes the cap."""
    size = reply.content_length
    if size is not None and "Content-Encoding" not in reply.headers:
        if size > cap:
            raise reply_too_large(cap)
        return await reply.read()
    body = bytearray()
    async for piece in reply.content.iter_any():
        body += piece
        if len(body) > cap:
            raise reply_too_large(cap)
    return bytes(body)


def body_text(raw: bytes) -> str:
    """An error body as text, secrets scrubbed, cut to DETAIL_LIMIT (what `detail` keeps).

    Scrubbed whole, then cut: a body cut first may end inside a key, which no rule knows."""
    return scrub_cut(raw.decode("utf-8", "replace"), DETAIL_LIMIT)


def _message_of(data: Any) -> str | None:
    """The message in the error shapes servers use: OpenAI's `{"error": {"message"}}`,
    vLLM's flat `{"object": "error", "message"}`, `{"error": "..."}`, FastAPI's `detail`."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    if data.get("message"):
        return str(data["message"])
    detail = data.get("detail")
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail:
        return "; ".join(
            f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg', '')}"
            if isinstance(d, dict)
            else str(d)
            for d in detail
        )
    return None


def error_message(raw: bytes) -> str | None:
    """The server's own error message, scrubbed and cut short, or None when it gave none."""
    try:
        message = _message_of(json.loads(raw))
    except ValueError:
        return None
    return scrub(message)[:MESSAGE_LIMIT] if message else None
