"""Keep secrets out of everything assay stores, prints or reports.

A secret is found as it is and in the spellings servers and programs echo it in: JSON
escapes (`\\u0073\\u006b...`), percent-encoding (`%73%6B...`, a key in a URL or form) and
base64 (`Basic dXNlcjpzay0...`, the `user:key` of HTTP Basic auth). Text is scrubbed whole
before it is cut short (`scrub_cut`), so a cut never leaves part of a key behind.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD|AUTH)", re.IGNORECASE)
_BEARER = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"']?\s*[:=]\s*[\"']?|api[_-]?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9._\-]{8,})"
)
_BASIC = re.compile(r"(?i)(basic\s+)([A-Za-z0-9+/_\-]{8,}=*)")
# A run of URL characters holding a percent escape, from the start of the run (the
# look-behind keeps the scan linear: a run is tried once, from its first character).
_PERCENT_RUN = re.compile(r"(?<![\w.~+%-])[\w.~+-]*+%[0-9A-Fa-f]{2}[\w.~+%-]*")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
MIN_FRAGMENT = 8  # the shortest base64 fragment of a secret looked for
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
# The system under test as the user named it (`command:my-cli --api-key KEY`, its value
# expanded by the shell from a variable named like a secret): scrubbed of the secret values
# assay holds only, so a spec keeps its spelling otherwise.
SPEC_FIELDS = frozenset({"runner"})


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


@functools.lru_cache(maxsize=16)
def _base64_fragments(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """The base64 text every encoding of each secret contains, wherever it starts in the
    encoded bytes (`user:KEY`): per alignment, the characters that depend on the secret's
    bytes alone, in the standard and URL-safe alphabets."""
    found: set[str] = set()
    for value in secrets:
        raw = value.encode()
        for shift in range(3):
            whole = (len(raw) + shift) // 3  # 3-byte groups inside the padded secret
            encoded = base64.b64encode(b"\0" * shift + raw).decode()
            fragment = encoded[4 if shift else 0 : 4 * whole]
            if len(fragment) >= MIN_FRAGMENT:
                found.add(fragment)
                found.add(fragment.translate(str.maketrans("+/", "-_")))
    return tuple(sorted(found, key=len, reverse=True))


def _drop_base64_runs(text: str, fragment: str) -> str:
    """`text` with every base64 run holding `fragment` replaced by `[redacted]` (the whole
    run: its characters next to the fragment carry bits of the secret too)."""
    while (at := text.find(fragment)) >= 0:
        start, end = at, at + len(fragment)
        while start > 0 and text[start - 1] in _BASE64_CHARS:
            start -= 1
        while end < len(text) and text[end] in _BASE64_CHARS:
            end += 1
        text = text[:start] + "[redacted]" + text[end:]
    return text


def _decoded_base64(run: str) -> str | None:
    """A base64 run as text (standard or URL-safe alphabet), or None when it is not."""
    try:
        raw = base64.b64decode(run.translate(str.maketrans("-_", "+/")) + "==", validate=False)
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _unencoded(text: str, secrets: tuple[str, ...], known_only: bool) -> str:
    """`text` with the percent-encoded runs and base64 fragments that spell a secret value
    replaced; unless `known_only`, the percent-encoded runs that spell whatever `scrub`
    redacts (a bearer token, a key shape) too."""
    if "%" in text:

        def run(match: re.Match[str]) -> str:
            decoded = unquote(match.group())
            if known_only:
                cleaned = _replace_known(decoded, secrets)
            else:
                cleaned = _scrub_plain(decoded, secrets)
            return cleaned if cleaned != decoded else match.group()

        text = _PERCENT_RUN.sub(run, text)
    for fragment in _base64_fragments(secrets):
        if fragment in text:
            text = _drop_base64_runs(text, fragment)
    return text


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
    return _unencoded(text, tuple(secrets), known_only=True)


def _replace_known(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
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

    JSON escapes are decoded first (`decode_escapes`): error bodies are kept decoded. A
    percent-encoded or base64 run that spells a secret or a key shape is redacted too.
    """
    secrets = tuple(secret_values() if secrets is None else secrets)
    text = _unencoded(_scrub_plain(decode_escapes(text), secrets), secrets, known_only=False)
    return _BASIC.sub(_basic, text)


def _scrub_plain(text: str, secrets: Sequence[str]) -> str:
    """`scrub` without the decodings: the secret values, bearer tokens, URL credentials and
    key shapes as they are spelled."""
    for value in secrets:
        text = text.replace(value, "[redacted]")
    text = _BEARER.sub(lambda m: m.group(1) + "[redacted]", text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + "[redacted]@", text)
    return _KEY_SHAPES.sub("[redacted]", text)


def _basic(match: re.Match[str]) -> str:
    """HTTP Basic credentials: redacted when they decode to `user:password`."""
    decoded = _decoded_base64(match.group(2))
    return match.group(1) + "[redacted]" if decoded and ":" in decoded else match.group()


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

    Content fields (`CONTENT_FIELDS`) and the runner's spec (`SPEC_FIELDS`) lose the secret
    values assay holds (`scrub_known`); metadata fields (`METADATA_FIELDS`: the reply's `model`, usage keys, error and its
    detail) lose every key shape too (`scrub`), since a provider may put a key anywhere.
    Identity fields (case, condition, trial, run) are left as they are.
    """
    secrets = tuple(secret_values() if secrets is None else secrets)
    scrubbed = dict(record)
    for key, value in record.items():
        if value is None:
            continue
        if key in CONTENT_FIELDS or key in SPEC_FIELDS:
            scrubbed[key] = scrub_known_value(value, secrets)
        elif key in METADATA_FIELDS:
            scrubbed[key] = _scrub_value(value, secrets)
    return scrubbed


def scrub_cut(
    text: str,
    limit: int,
    *,
    tail: bool = False,
    cut_before: bool = False,
    secrets: Sequence[str] | None = None,
) -> str:
    """`scrub(text)` cut to its first `limit` characters (its last, with `tail`).

    Scrubbed whole before the cut, so the cut cannot keep part of a key. `cut_before` says
    the text is itself the end of a longer one (a process's stderr, of which the tail is
    kept): a start that is the end of a secret value is redacted as well."""
    secrets = secret_values() if secrets is None else secrets
    text = scrub(text, secrets)
    if cut_before:
        text = _without_secret_end(text, secrets)
    return text[-limit:] if tail else text[:limit]


def _without_secret_end(text: str, secrets: Sequence[str]) -> str:
    """`text` with a start that is the last 4 or more characters of a secret redacted."""
    for value in secrets:
        for size in range(len(value) - 1, 3, -1):  # the longest piece first
            if text.startswith(value[-size:]):
                return "[redacted]" + text[size:]
    return text
