"""The one check of an OpenAI-compatible server before its first call: `GET {base}/models`.

A wrong URL or model name otherwise shows up as one error per call (a connection error
retried with backoff, or a 404 per trial). Checked once, it is one clear error naming what
the server does serve. A model the list lacks is not refused outright: some servers (the
llama.cpp ones) answer any name with the model they loaded. Its first call goes alone
instead, and when the server refuses the name (`refuses_model`) that is the one error,
naming the served models. Servers without `/models`, or whose list cannot be read, are not
checked: the calls themselves then report what happens.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from assay.core.limits import MAX_REPLY_BYTES
from assay.core.redact import scrub
from assay.models.base import ModelError, ServerMismatch
from assay.models.http import error_message, read_capped
from assay.models.transport import aiohttp  # without its import-time CA loading

CHECK_TIMEOUT_S = 30.0
SHOWN = 20


def serves(served: list[str], model: str) -> bool:
    """Whether `model` names one of the served ids: exactly, without Ollama's default
    `:latest` tag, or as the file name of a path (llama-cpp-python lists the path it loaded)."""
    if model in served:
        return True
    if ":" not in model and f"{model}:latest" in served:
        return True
    return any(PurePosixPath(s).name == model for s in served)


def served_ids(raw: bytes) -> list[str] | None:
    """The model ids of an OpenAI-style `{"data": [{"id": ...}]}` list, or None."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    return [d["id"] for d in listed if isinstance(d, dict) and isinstance(d.get("id"), str)]


async def _get(
    session: aiohttp.ClientSession, url: str, timeout_s: float
) -> tuple[int, bytes] | None:
    """Status and body of a GET; None when there is no reply in time, or one over the cap on
    replies (cannot tell)."""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) as reply:
            return reply.status, await read_capped(reply, MAX_REPLY_BYTES)
    except (TimeoutError, ModelError):
        return None
    except aiohttp.ClientConnectorError:
        raise
    except aiohttp.ClientError:
        return None


async def check_served(
    session: aiohttp.ClientSession,
    spec: str,
    base_url: str,
    model: str,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> str | None:
    """Raise ServerMismatch when nothing answers at `base_url`, it refuses the credentials,
    or it lists no model at all; return the error to give if the server then refuses the
    name when its list lacks `model`, else None (served, or it cannot tell)."""
    try:
        got = await _get(session, f"{base_url}/models", timeout_s)
    except aiohttp.ClientConnectorError as exc:
        raise ServerMismatch(
            scrub(
                f"ERROR: {spec}: no server answers at {base_url} ({exc.os_error or exc}); "
                "check --base-url (or OPENAI_BASE_URL) and that the server is running"
            )
        ) from None
    if got is None:
        return None
    status, raw = got
    if status in (401, 403):
        said = error_message(raw) or ""
        raise ServerMismatch(
            f"ERROR: {spec}: the server at {base_url} refused the credentials (HTTP {status}"
            f"{': ' + said if said else ''}); check OPENAI_API_KEY"
        )
    if status == 404 and not base_url.endswith("/v1"):
        await _suggest_v1(session, spec, base_url, timeout_s)
    if status >= 400:
        return None
    served = served_ids(raw)
    if served is None or serves(served, model):
        return None
    if not served:
        raise ServerMismatch(
            f"ERROR: {spec}: the server at {base_url} serves no models yet; load or pull "
            f"{model!r} there first"
        )
    shown = ", ".join(served[:SHOWN]) + (
        f" (and {len(served) - SHOWN} more)" if len(served) > SHOWN else ""
    )
    return (
        f"ERROR: {spec}: the server at {base_url} does not serve {model!r}; it serves: "
        f"{shown} (name one of them: openai:NAME)"
    )


def refuses_model(status: int, text: str) -> bool:
    """Whether a failed call's reply refuses the model name (OpenAI, vLLM and Ollama answer
    an unknown model with a 404; some servers with a 400 that names the model)."""
    return status == 404 or (status == 400 and "model" in text.lower())


async def _suggest_v1(
    session: aiohttp.ClientSession, spec: str, base_url: str, timeout_s: float
) -> None:
    """A base URL without `/v1` whose `/v1/models` answers: say so."""
    try:
        got = await _get(session, f"{base_url}/v1/models", timeout_s)
    except aiohttp.ClientConnectorError:
        return
    if got is not None and got[0] < 400 and served_ids(got[1]) is not None:
        raise ServerMismatch(
            f"ERROR: {spec}: no OpenAI-compatible API at {base_url} (GET /models: 404); the "
            f"server answers at {base_url}/v1: use --base-url {base_url}/v1"
        )
