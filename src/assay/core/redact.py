"""Keep secrets out of everything assay stores, prints or reports."""

from __future__ import annotations

import functools
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
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\/")

# The fields of a recorded reply or trial: content is what the model wrote (scrubbed of the
# secret values assay holds only: key-like text in an answer is content to evaluate), metadata
# is everything else a provider or runner reports (scrubbed of every key shape too). An
# agent's trajectory holds what its tools returned (a file, a command's output), which may
# carry any key: it is scrubbed as metadata.
CONTENT_FIELDS = frozenset({"text", "response", "state"})
METADATA_FIELDS = frozenset({"model", "usage", "error", "error_detail", "trajectory"})


def secret_values() -> list[str]:
    """Values of environment variables whose names say they hold a secret."""
    return sorted(
        (v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8),
        key=len,
        reverse=True,
    )


def decode_escapes(text: str) -> str:
    """`text` with JSON's `\\uXXXX` and `\\/` escapes decoded, so that a key a provider's
    error body spells escaped (`"\\u0073\\u006b..."`) is seen, and stored, as what it is."""
    if "\\" not in text:
        return text
    decoded = _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else "/", text)
    try:  # an escaped surrogate pair is one character
        return decoded.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        return decoded


def scrub_known(text: str, secrets: Sequence[str] | None = None) -> str:
    """Replace only the secret values assay holds (see `secret_values`) by `[redacted]`.

    For successful model output: a model that echoes a key must not get it written, but
    key-like text a model legitimately writes (`api_key="..."` in example code) is content to
    evaluate, so the pattern rules of `scrub` (meant for provider error bodies) do not apply.
    """
    secrets = secret_values() if secrets is None else secrets
    if "\\u" in text:  # an escaped secret is decoded, so that it is redacted
        decoded = decode_escapes(text)
        if any(value in decoded for value in secrets):
            text = decoded
    for value in secrets:
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


def scrub(text: str, secrets: Sequence[str] | None = None) -> str:
    """Replace secrets (environment values, bearer tokens, key-shaped strings) by `[redacted]`.

    JSON escapes are decoded first (`decode_escapes`): error bodies are kept decoded.
    """
    text = decode_escapes(text)
    for value in secret_values() if secrets is None else secrets:
        text = text.replace(value, "[redacted]")
    text = _BEARER.sub(lambda m: m.group(1) + "[redacted]", text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + "[redacted]@", text)
    return _KEY_SHAPES.sub("[redacted]", text)


SHORT_TEXT = 256  # metadata strings up to this length are scrubbed once each (`_scrub_short`)


@functools.lru_cache(maxsize=1024)
def _scrub_short(text: str, secrets: tuple[str, ...]) -> str:
    """`scrub(text, secrets)`, remembered: every recorded call repeats the same few metadata
    strings (the reply's model name, the usage keys), each worth three regex passes."""
    return scrub(text, secrets)


def scrub_value(value: Any, secrets: Sequence[str] | None = None) -> Any:
    """`scrub` every string inside a JSON-like value (dicts, lists), keys included."""
    return _scrub_value(value, tuple(secret_values() if secrets is None else secrets))


def _scrub_value(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _scrub_short(value, secrets) if len(value) <= SHORT_TEXT else scrub(value, secrets)
    if isinstance(value, dict):
        return {_scrub_value(k, secrets): _scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub_value(v, secrets) for v in value]
    return value


def scrub_record(record: dict[str, Any], secrets: Sequence[str] | None = None) -> dict[str, Any]:
    """A reply or trial record as it may be written: the one place every recorded string of a
    model call passes (the call cache's replies and the trials, engine/calls.py and
    engine/runner.py).

    Content fields (`CONTENT_FIELDS`) lose the secret values assay holds (`scrub_known`);
    metadata fields (`METADATA_FIELDS`: the reply's `model`, usage keys, error and its
    detail) lose every key shape too (`scrub`), since a provider may put a key anywhere.
    Identity fields (case, condition, trial, run) are left as they are.
    """
    secrets = tuple(secret_values() if secrets is None else secrets)
    scrubbed = dict(record)
    for key, value in record.items():
        if value is None:
            continue
        if key in CONTENT_FIELDS:
            scrubbed[key] = scrub_known_value(value, secrets)
        elif key in METADATA_FIELDS:
            scrubbed[key] = _scrub_value(value, secrets)
    return scrubbed
