"""The `anthropic` SDK's HTTP client with the cap on replies (`core/limits.py`).

The SDK reads a reply whole before it parses it: a server that never ends its body, or sends
gigabytes, would take the process's memory with it. This client (the SDK's default one, with
its connection settings) counts each Messages reply as it arrives and stops it past the cap
with `reply_too_large`, which `anthropic.map_error` finds behind the SDK's connection error.
It asks for an uncompressed reply; a server that compresses all the same (gzip or deflate)
is measured by what its body inflates to, and any other encoding is refused. Other requests
(a batch's results, which may be large) are left as they are.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from assay.models.base import ModelError, reply_too_large

INFLATE_STEP = 64 * 1024  # the most one step of measuring a compressed body inflates


class _Inflated:
    """How many bytes a gzip or zlib stream inflates to, measured piece by piece in bounded
    steps (the pieces themselves pass on unchanged, for the SDK to decode)."""

    def __init__(self) -> None:
        self.inflater = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header

    def size(self, piece: bytes, limit: int) -> int:
        """What `piece` inflates to, or a number over `limit` as soon as it passes it."""
        total, data = 0, piece
        try:
            while data and total <= limit:
                total += len(self.inflater.decompress(data, INFLATE_STEP))
                data = self.inflater.unconsumed_tail
        except zlib.error:
            raise ModelError("malformed response body: it does not inflate") from None
        return total


class _CappedStream(httpx2.AsyncByteStream):
    """A reply body that raises `reply_too_large` once it (inflated, when compressed) passes
    `cap` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, cap: int, encoding: str) -> None:
        self.inner = inner
        self.cap = cap
        self.inflated = _Inflated() if encoding in ("gzip", "x-gzip", "deflate") else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for piece in self.inner:
            if self.inflated is None:
                size += len(piece)
            else:
                size += self.inflated.size(piece, self.cap - size)
            if size > self.cap:
                raise reply_too_large(self.cap)
            yield piece

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def elapsed(self) -> Any:
        """The inner stream's timing, which `httpx2.Response.elapsed` reads once closed."""
        return getattr(self.inner, "elapsed", None)


class CappedHttpClient(anthropic.DefaultAsyncHttpxClient):
    """The SDK's default HTTP client, whose Messages replies stop at `max_reply_bytes`."""

    def __init__(self, max_reply_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_reply_bytes = max_reply_bytes

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        if not request.url.path.endswith("/messages"):
            return await super().send(request, **kwargs)
        request.headers["Accept-Encoding"] = "identity"
        stream = kwargs.pop("stream", False)
        response = await super().send(request, stream=True, **kwargs)
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            await response.aclose()
            raise ModelError(f"the server sent a {encoding!r}-encoded reply, not asked for")
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's
        response.stream = _CappedStream(response.stream, self.max_reply_bytes, encoding)
        if not stream:
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response
