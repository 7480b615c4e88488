"""Keep secrets out of everything assay stores, prints or reports."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|AUTH)", re.IGNORECASE)
_BEARER = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?|api[_-]?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9._\-]{8,})"
)
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk-ant-[A-Za-z0-9_\-]{8,})")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@]+@")


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret."""
    return sorted(
        (v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8),
        key=len,
        reverse=True,
    )


def scrub_known(text: str, secrets: Sequence[str] | None = None) -> str:
    """Replace only the secret values assay holds (see `secret_values`) by `[redacted]`.

    For successful model output: a model that echoes a key must not get it written, but
    key-like text a model legitimately writes (`api_key="..."` in example code) is content to
    evaluate, so the pattern rules of `scrub` (meant for provider error bodies) do not apply.
    """
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def scrub_known_value(value: Any, secrets: Sequence[str] | None = None) -> Any:
    """`scrub_known` every string inside a JSON-like value (dicts, lists), keys included."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, str):
        return scrub_known(value, secrets)
    if isinstance(value, dict):
        return {
            scrub_known_value(k, secrets): scrub_known_value(v, secrets) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub_known_value(v, secrets) for v in value]
    return value


def scrub(text: str) -> str:
    """Replace secrets (environment values, bearer tokens, key-shaped strings) by `[redacted]`."""
    for value in secret_values():
        text = text.replace(value, "[redacted]")
    text = _BEARER.sub(lambda m: m.group(1) + "[redacted]", text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + "[redacted]@", text)
    return _KEY_SHAPES.sub("[redacted]", text)


def scrub_value(value: Any) -> Any:
    """`scrub` every string inside a JSON-like value (dicts, lists), keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value(v) for v in value]
    return value
