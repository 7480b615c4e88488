"""Embeddings from an OpenAI-compatible `/embeddings` endpoint, as a model the Caller calls.

A library metric that compares texts by their embeddings (RAGAS's answer_relevancy) asks
for them through the run's `Caller` like any judge call, so they share its call cache,
budget, retries and concurrency: a request's messages are the texts, the response's text is
the vectors as JSON (`vectors` reads them back). The endpoint is the one `openai:` models use
(`--base-url`, the suite's, OPENAI_BASE_URL, else OpenAI's), with the same proxies, CA
certificates and headers; the spec is `openai:<embedding model>`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from assay.core.errors import InputError
from assay.models.base import ModelError, Request, Response
from assay.models.http import body_text
from assay.models.openai import OpenAIModel, base_url_of, required_env
from assay.models.pricing import lookup_price
from assay.models.registry import ModelOptions, unset


class OpenAIEmbeddings(OpenAIModel):
    """`POST {base_url}/embeddings`: one vector per message of the request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._url = f"{self.base_url}/embeddings"

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "api": "embeddings"}

    def _body(self, request: Request, form: str | None = None) -> bytes:
        texts = [m.content for m in request.messages]
        return json.dumps({"model": self.model, "input": texts}).encode()

    def _parse(self, raw: bytes) -> Response:
        try:
            data = json.loads(raw)
            rows = sorted(data["data"], key=lambda row: int(row.get("index", 0)))
            found = [[float(x) for x in row["embedding"]] for row in rows]
            tokens = int((data.get("usage") or {}).get("prompt_tokens") or 0)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ModelError(
                "malformed embeddings body", retryable=True, detail=body_text(raw), billed=True
            ) from None
        cost = self.price.cost(tokens, 0) if self.price else None
        return Response(
            text=json.dumps(found), input_tokens=tokens, cost_usd=cost, model=self.model
        )


def vectors(response: Response) -> list[list[float]]:
    """The vectors an `OpenAIEmbeddings` response carries."""
    found: list[list[float]] = json.loads(response.text)
    return found


def create_embeddings(spec: str, options: ModelOptions) -> OpenAIEmbeddings:
    """The embeddings model of `openai:<model>`, at the endpoint `options` give (InputError
    for another provider, or OpenAI's API without OPENAI_API_KEY)."""
    provider, _, name = spec.partition(":")
    if provider != "openai" or not name:
        raise InputError(
            f"ERROR: embeddings {spec!r}: name an OpenAI-compatible model, e.g."
            " openai:text-embedding-3-small"
        )
    if unset(required_env(name, options)):
        raise InputError(
            "ERROR: openai embeddings: set OPENAI_API_KEY (or a base_url for a local server)"
        )
    key = os.environ.get("OPENAI_API_KEY")
    return OpenAIEmbeddings(
        name, base_url_of(options), key, lookup_price(name), options.max_reply_bytes
    )
