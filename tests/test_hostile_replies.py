"""Replies not to be trusted (tests/hostile_server.py on 127.0.0.1): bodies without end or too
large for memory are cut at the cap on replies and recorded as errored calls; content of the
wrong type is joined (OpenAI's content parts) or refused, never stored as the answer; and an
error body that carries the key, cut, percent-encoded or base64-encoded, never gets any of
it written."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from assay.core.redact import scrub, scrub_cut, scrub_known
from assay.models import Message, ModelError, ModelOptions, Request, create_model
from conftest import make_case, write_jsonl

KEY = "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
DEFAULT_CAP = "8,388,608-byte cap"


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def ask(spec: str, url: str, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    """One call of `spec` at the hostile server (its answer, or the ModelError raised)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url.removesuffix("/v1"))
    model = create_model(spec, ModelOptions(base_url=url, **options))
    request = Request(messages=[Message("user", "hi")], max_tokens=8, timeout_s=20)

    async def go() -> Any:
        try:
            return await model.generate(request)
        except ModelError as exc:
            return exc
        finally:
            await model.aclose()

    return asyncio.run(go())


def leaks(text: str, key: str = KEY) -> bool:
    """Whether `text` holds 8 characters or more of `key`, as they are or decoded (percent
    escapes, base64 runs)."""
    decoded = [text, unquote(text)]
    for run in re.findall(r"[A-Za-z0-9+/_-]{12,}", text):
        for start in range(4):  # wherever the encoding starts in the run
            piece = run[start:].translate(str.maketrans("-_", "+/"))
            raw = base64.b64decode(piece[: len(piece) // 4 * 4])
            decoded.append(raw.decode("utf-8", "replace"))
    pieces = {key[i : i + 8] for i in range(len(key) - 7)}
    return any(piece in blob for blob in decoded for piece in pieces)


# -- 1: the cap on replies -------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", ["huge", "endless", "gzip-bomb"])
def test_a_reply_over_the_cap_is_an_error_naming_it(  # type: ignore[no-untyped-def]
    hostile_server, keys, monkeypatch, provider: str, name: str
) -> None:
    """Unfixed: the 24 MB and the 100 MB (gzip) replies were answers, and the endless one
    read until the timeout."""
    started = time.monotonic()
    failure = ask(f"{provider}:{name}", hostile_server.url, monkeypatch)
    assert isinstance(failure, ModelError), f"answered {len(failure.text):,} characters"
    assert DEFAULT_CAP in str(failure) and not failure.retryable
    assert not failure.detail
    assert time.monotonic() - started < 15
    assert hostile_server.sent < 64 * 1024 * 1024  # stopped reading, not read to the end


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", ["gzip", "chunked"])
def test_replies_under_the_cap_are_read_whole(  # type: ignore[no-untyped-def]
    hostile_server, keys, monkeypatch, provider: str, name: str
) -> None:
    reply = ask(f"{provider}:{name}", hostile_server.url, monkeypatch)
    assert not isinstance(reply, ModelError), reply
    assert reply.text == "fine " * 1000
    small = ask(f"{provider}:{name}", hostile_server.url, monkeypatch, max_reply_bytes=4096)
    assert isinstance(small, ModelError) and "4,096-byte cap" in str(small)


def run_cli(cli: Any, folder: Path, url: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    folder.mkdir(exist_ok=True)
    cases = write_jsonl(folder / "cases.jsonl", [make_case("c0"), make_case("c1")])
    result = cli(
        "run", "--cases", cases, "--base-url", url, "--allow-unmetered", "--retries", "0",
        "--trials", "1", "--store", folder / "store.db", "--output", folder / "trials.jsonl",
        *args,
    )  # fmt: skip
    lines = (folder / "trials.jsonl").read_text().splitlines()
    return result.code, [json.loads(line) for line in lines]


def test_a_run_records_an_oversized_reply_as_an_errored_trial_and_stores_nothing_huge(  # type: ignore[no-untyped-def]
    cli, hostile_server, tmp_path: Path
) -> None:
    """Unfixed: each 24 MB reply was stored twice (trial and call cache)."""
    code, trials = run_cli(cli, tmp_path, hostile_server.url, "--model", "openai:huge")
    assert code == 3
    assert all(DEFAULT_CAP in t["error"] and t["response"] == "" for t in trials)
    stored = sum(p.stat().st_size for p in tmp_path.glob("store.db*"))
    assert stored < 1024 * 1024
    code, trials = run_cli(
        cli, tmp_path / "less", hostile_server.url, "--model", "openai:gzip",
        "--max-reply-bytes", "2048",
    )  # fmt: skip
    assert code == 3 and all("2,048-byte cap" in t["error"] for t in trials)


def test_the_suite_sets_the_cap(cli, hostile_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "capped"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        f'model = "openai:gzip"\n[run]\nbase_url = "{hostile_server.url}"\n'
        "allow_unmetered = true\nretries = 0\nmax_reply_bytes = 3000\n"
    )
    result = cli("run", suite, "--store", tmp_path / "s.db", "--output", tmp_path / "t.jsonl")
    (trial,) = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert result.code == 3 and "3,000-byte cap" in trial["error"]
    # the judges' cap: the suite's [run] one, or the run's --max-reply-bytes
    from assay.api.run_inputs import load, with_run_base_url
    from assay.scorers.judge.config import judge_options

    loaded = load(suite)
    assert loaded is not None and judge_options(loaded).max_reply_bytes == 3000
    flagged = with_run_base_url(loaded, hostile_server.url, 5000)
    assert judge_options(flagged).max_reply_bytes == 5000
    suite.write_text(suite.read_text().replace("3000", "512"))
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code == 2 and "max_reply_bytes" in result.stderr


# -- 7: content of the wrong type -------------------------------------------------------------


def test_content_parts_are_joined_and_other_shapes_refused(  # type: ignore[no-untyped-def]
    hostile_server, keys, monkeypatch
) -> None:
    """Unfixed: the list and the dict were returned as the answer's text."""
    assert ask("openai:parts", hostile_server.url, monkeypatch).text == "first second"
    for spec, said in [
        ("openai:dict-content", "content is a JSON object, not text"),
        ("openai:image-part", "a part of type 'image_url', not text"),
        ("anthropic:dict-content", "text block whose text is not a string"),
    ]:
        failure = ask(spec, hostile_server.url, monkeypatch)
        assert isinstance(failure, ModelError) and said in str(failure), failure


def test_a_run_never_stores_content_that_is_not_text(cli, hostile_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Unfixed: the dict was stored as the trial's response, and `judge --run` then failed
    with a pydantic traceback."""
    code, trials = run_cli(cli, tmp_path, hostile_server.url, "--model", "openai:dict-content")
    assert code == 3
    assert all(t["response"] == "" and "not text" in t["error"] for t in trials)
    code, trials = run_cli(cli, tmp_path / "parts", hostile_server.url, "--model", "openai:parts")
    assert code == 0 and all(t["response"] == "first second" for t in trials)


def test_a_stored_trial_that_is_not_a_trial_is_a_clear_error(  # type: ignore[no-untyped-def]
    cli, hostile_server, tmp_path: Path
) -> None:
    """A store an older assay wrote (a list stored as the response): `judge --run` names the
    run, the trial and the field, exit 2, no traceback."""
    code, trials = run_cli(cli, tmp_path, hostile_server.url, "--model", "openai:fine")
    assert code == 0
    run_id = trials[0]["run_id"]
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.execute("UPDATE trials SET record = json_set(record, '$.response', json('[1, 2]'))")
    result = cli(
        "judge", "--run", run_id, "--store", tmp_path / "store.db", "--judge", "mock:fair",
        "--cases", tmp_path / "cases.jsonl", "--output", tmp_path / "judged.jsonl",
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert f"run {run_id}: trial 1 (case_id 'c0', trial 1, condition" in result.stderr
    assert "response: Input should be a valid string" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "judged.jsonl").exists()


# -- 4: keys in error bodies -------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", ["long-error", "long-error-chars", "percent-key", "base64-key"])
def test_an_error_body_never_keeps_any_of_the_key(  # type: ignore[no-untyped-def]
    hostile_server, keys, monkeypatch, provider: str, name: str
) -> None:
    """Unfixed: a body cut before it was scrubbed kept the key's first 26 characters (openai
    at 8,000 bytes, anthropic at 4,000 characters); the percent-encoded and the base64 key
    (`Basic base64(user:key)`) were kept as they came."""
    failure = ask(f"{provider}:{name}", hostile_server.url, monkeypatch)
    assert isinstance(failure, ModelError) and str(failure).startswith("HTTP ")
    assert failure.detail and "[redacted]" in failure.detail
    assert not leaks(str(failure)) and not leaks(failure.detail)


def test_scrub_decodes_common_encodings() -> None:
    other = "k3Y-Zz9x/Q+pLmN0rstuVWxyz"  # a secret with characters percent-encoding changes
    secrets = [KEY, other]
    spelled = [
        "".join(f"%{b:02X}" for b in KEY.encode()),
        "".join(f"%{b:02x}" for b in other.encode()),
        "k3Y-Zz9x%2FQ%2BpLmN0rstuVWxyz",
        base64.b64encode(f"user:{KEY}".encode()).decode(),
        base64.b64encode(f"me:{other}".encode()).decode(),
        base64.urlsafe_b64encode(f"ab:{other}".encode()).decode(),
        base64.b64encode(other.encode()).decode(),
    ]
    for text in spelled:
        for scrubbed in (scrub(f"said: {text}!", secrets), scrub_known(f"said: {text}!", secrets)):
            assert scrubbed == "said: [redacted]!", (text, scrubbed)
    # key shapes and Basic credentials of keys assay does not hold: by `scrub` alone
    foreign = "sk-" + "Q" * 30
    assert scrub("u=" + "".join(f"%{b:02X}" for b in foreign.encode())) == "u=[redacted]"
    basic = base64.b64encode(b"someone:hunter22hunter").decode()
    assert scrub(f"Authorization: Basic {basic}") == "Authorization: Basic [redacted]"
    for plain in ("50% off, 100%", "see %41%42 there", "aGVsbG8gd29ybGQ= is hello world"):
        assert scrub(plain, secrets) == plain and scrub_known(plain, secrets) == plain


def test_scrub_cut_scrubs_before_it_cuts() -> None:
    text = "p" * 3989 + " " + KEY + "q" * 100
    assert not leaks(scrub_cut(text, 4000, secrets=[KEY]))
    assert not leaks(scrub_cut(text, 4000, secrets=[]))  # a key shape, not held: still whole
    tail = KEY[6:] + "q" * 50  # the kept end of a longer text starts inside a key
    assert scrub_cut(tail, 100, tail=True, cut_before=True, secrets=[KEY]).startswith("[redacted]q")


def test_a_cli_error_detail_never_keeps_any_of_the_key(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unfixed: stdout cut at 4,000 characters and then scrubbed kept 26 characters of the
    key, and so did a codex failure message cut at 300."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    program = tmp_path / "tool"
    program.write_text(
        f"#!{sys.executable}\nimport os, sys\nkey = os.environ['OPENAI_API_KEY']\n"
        "print('p' * 3974 + key)\nsys.exit(1)\n"
    )
    program.chmod(0o755)
    failure = ask(f"command:{program}", "http://127.0.0.1:9/v1", monkeypatch)
    assert isinstance(failure, ModelError) and failure.detail
    assert "[redacted]" in failure.detail and not leaks(failure.detail)
    event = {"type": "turn.failed", "error": {"message": "x" * 274 + KEY}}
    program.write_text(f"#!/bin/sh\necho '{json.dumps(event)}'\n")
    failure = ask(
        f"command:{program}", "http://127.0.0.1:9/v1", monkeypatch, response_format="codex-jsonl"
    )
    assert isinstance(failure, ModelError) and "turn failed" in str(failure)
    assert "[redacted]" in str(failure) and not leaks(str(failure))
