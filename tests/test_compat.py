"""Judges on every OpenAI-compatible server: the structured-output form each server takes
(replayed from the rejection bodies of vLLM, Ollama and the llama-cpp-python server by the
mock server's flavours), what is not retried, and the one `/v1/models` check at the start.

The table of servers in docs/models.md is checked here, row by row, against what assay settles on.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from server_flavours import LLAMA_CPP_LITERAL_ERROR

from assay.models.base import Message
from assay.models.forms import FORMS, Negotiation, messages_for, rejects_form
from assay.models.http import is_retryable
from conftest import ROOT, make_case, write_jsonl

JUDGE = "openai:judge"
# docs/models.md table row (its first cell) -> the mock server's flavour that replays that server.
ROWS = {
    "OpenAI, vLLM with a schema its backend takes": "openai",
    "vLLM with xgrammar, a schema it cannot enforce": "vllm",
    "Ollama, a schema its grammar converter refuses": "ollama",
    "the llama-cpp-python server": "llama-cpp-python",
    "a server without `response_format`": "no-response-format",
}


def readme_table() -> dict[str, tuple[str, str]]:
    """The server table of docs/models.md: first cell -> (its answer to json_schema, assay's form)."""
    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    section = text.split("## What assay sends to each server\n\n", 1)[1]
    lines = section.split("\n\n", 1)[0].splitlines()
    assert all(line.startswith("|") for line in lines)
    table = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = (cells[1], cells[2])
    return table


def form_named(cell: str) -> str:
    """The form a table cell names: `json_schema`, `json_object` (with the schema), or
    no `response_format` (the schema in the prompt)."""
    if cell.startswith("no `response_format`"):
        return "prompt"
    found = re.match(r"`(json_schema|json_object)`", cell)
    assert found, cell
    return found.group(1)


@pytest.fixture
def files(cli: Any, tmp_path: Path) -> dict[str, Path]:
    """Five cases answered by the offline mock under two conditions."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(5)])
    skill = tmp_path / "skill.md"
    skill.write_text("Answer briefly.\n")
    trials = tmp_path / "trials.jsonl"
    made = cli("run", "--cases", cases, "--model", "mock", "--condition-skill", skill,
               "--trials", 1, "--output", trials, "--store", tmp_path / "run.db")  # fmt: skip
    assert made.code == 0, made.stderr
    return {"cases": cases, "trials": trials, "store": tmp_path / "judge.db"}


def judge(cli: Any, files: dict[str, Path], url: str, *extra: Any) -> Any:
    return cli(
        "judge", "--trials", files["trials"], "--cases", files["cases"], "--judge", JUDGE,
        "--base-url", url, "--allow-unmetered", "--concurrency", 4, "--retries", 4,
        "--output", files["store"].parent / "out.jsonl", "--store", files["store"], "--json",
        *extra,
    )  # fmt: skip


def remembered(store: Path) -> list[tuple[str, str, str]]:
    with contextlib.closing(sqlite3.connect(store)) as db:
        return list(db.execute("SELECT base_url, model, form FROM server_forms"))


def test_the_readme_names_every_replayed_server() -> None:
    assert set(readme_table()) == set(ROWS)


@pytest.mark.parametrize("row", list(ROWS))
def test_each_server_gets_the_form_the_readme_table_names(
    cli: Any, files: dict[str, Path], mock_server: Any, row: str
) -> None:
    """Direct judging of 10 items, 4 at a time: every refused form is sent once, the form
    that answers is used for the rest and remembered per base URL and model."""
    answer, settles = readme_table()[row]
    form = form_named(settles)
    server = mock_server(flavour=ROWS[row], judge_reply="schema", models=["judge"])
    result = judge(cli, files, server.url)
    assert result.code == 0, result.stderr
    assert result.json()["judged"] == 10
    stats = server.stats()
    refused = FORMS.index(form)  # the forms before it, each refused once
    assert stats["refused"] == refused
    assert stats["requests"] == 10 + refused
    assert remembered(files["store"]) == [(server.url, "judge", form)]
    if refused:
        assert answer.split(" ", 1)[0] in {"400", "422", "500"}
    sent = {"json_schema": "json_schema", "json_object": "json_object", "prompt": "none"}
    assert stats["forms"][sent[form]] == 10


def test_a_remembered_form_is_where_a_later_run_starts(
    cli: Any, files: dict[str, Path], mock_server: Any
) -> None:
    server = mock_server(flavour="llama-cpp-python", judge_reply="schema", models=["judge"])
    assert judge(cli, files, server.url).code == 0
    assert server.stats()["refused"] == 1
    again = judge(cli, files, server.url, "--mode", "pairwise")
    assert again.code == 0, again.stderr
    stats = server.stats()
    assert stats["refused"] == 1  # not one more
    assert stats["forms"] == {"json_schema": 1, "json_object": 10 + 10}


def test_a_form_refused_by_the_remembered_server_still_falls_back(
    cli: Any, files: dict[str, Path], mock_server: Any
) -> None:
    """A store that remembers `json_schema` for a server that now refuses it."""
    first = mock_server(judge_reply="schema", models=["judge"])
    assert judge(cli, files, first.url, "--mode", "pairwise").code == 0
    later = mock_server(flavour="ollama", judge_reply="schema", models=["judge"])
    with contextlib.closing(sqlite3.connect(files["store"])) as db:
        db.execute("UPDATE server_forms SET base_url = ?", (later.url,))
        db.commit()
    result = judge(cli, files, later.url)
    assert result.code == 0, result.stderr
    assert later.stats()["refused"] == 1
    assert remembered(files["store"]) == [(later.url, "judge", "json_object")]


def test_the_plain_prompt_carries_the_schema_and_a_bad_reply_is_no_score(
    cli: Any, files: dict[str, Path], mock_server: Any
) -> None:
    """Without `response_format` the schema goes into the instructions (the mock answers
    from it); a reply that does not fit is repaired once, then fails: never a default."""
    server = mock_server(flavour="no-response-format", judge_reply="no JSON here")
    result = judge(cli, files, server.url)
    assert result.code == 3
    assert result.json()["failed"] == 10
    assert not (files["store"].parent / "out.jsonl").read_text(encoding="utf-8").strip()
    assert server.stats()["refused"] == 2  # json_schema and json_object, once each


def test_a_500_that_says_the_request_is_invalid_is_not_retried(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any
) -> None:
    invalid = mock_server(rates={"invalid-500": 1.0})
    args = ["run", "--cases", cases_file, "--trials", 1, "--retries", 2, "--allow-unmetered",
            "--store", tmp_path / "s.db", "--json"]  # fmt: skip
    out = tmp_path / "t.jsonl"
    result = cli(*args, "--model", "openai:m", "--base-url", invalid.url, "--output", out)
    assert result.code == 3 and result.json()["errored"] == 5
    (first, *_) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert first["error"].startswith("HTTP 500: 1 validation error")
    assert invalid.stats()["requests"] == 5  # once per trial
    flaky = mock_server(rates={"500": 1.0})
    result = cli(*args, "--model", "openai:n", "--base-url", flaky.url)
    assert result.code == 3
    assert flaky.stats()["requests"] == 5 * 3  # an internal error is retried


@pytest.mark.parametrize(
    ("status", "body", "retryable"),
    [
        (500, {"error": {"message": LLAMA_CPP_LITERAL_ERROR}}, False),
        (500, {"error": {"message": "invalid JSON schema in format", "type": "api_error"}}, False),
        (500, {"error": {"message": "internal error"}}, True),
        (502, "<html>bad gateway</html>", True),
        (503, {"error": {"message": "invalid request: overloaded"}}, True),
        (429, {"error": {"message": "rate limited"}}, True),
        (400, {"object": "error", "message": "bad", "code": 400}, False),
        (422, {"detail": [{"loc": ["body", "response_format"], "msg": "extra"}]}, False),
    ],
)
def test_what_is_retried(status: int, body: Any, retryable: bool) -> None:
    text = body if isinstance(body, str) else json.dumps(body)
    assert is_retryable(status, text) is retryable


@pytest.mark.parametrize(
    ("status", "message", "refuses"),
    [
        (500, LLAMA_CPP_LITERAL_ERROR, True),
        (500, "invalid JSON schema in format", True),
        (400, "The provided JSON schema contains features not supported by xgrammar.", True),
        (422, "body.response_format: extra fields not permitted", True),
        (400, "This model's maximum context length is 2048 tokens", False),
        (500, "internal error while sampling the json_schema", False),  # not "invalid"
        (429, "response_format rate limited", False),
    ],
)
def test_what_counts_as_refusing_the_form(status: int, message: str, refuses: bool) -> None:
    assert rejects_form(status, json.dumps({"error": {"message": message}})) is refuses


def test_the_prompt_form_puts_the_schema_in_the_last_user_turn() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    messages = [Message("user", "Grade this."), Message("assistant", "?"), Message("user", "Fix")]
    sent = messages_for("prompt", messages, schema)
    assert sent[:2] == messages[:2]
    assert sent[2].content.startswith("Fix\n\n") and json.dumps(schema, separators=(",", ":")) in (
        sent[2].content
    )
    assert messages_for("json_object", messages, schema) == messages


def test_a_refusal_moves_every_call_past_the_form_once() -> None:
    forms = Negotiation()
    assert forms.current() == "json_schema"
    assert forms.refused("json_schema") and forms.current() == "json_object"
    assert forms.refused("json_schema")  # a call that was in flight: go on, drop nothing more
    assert forms.current() == "json_object"
    forms.answered("json_object")
    assert forms.refused("json_object") and forms.settled is None
    assert forms.current() == "prompt" and not forms.refused("prompt")
    later = Negotiation()
    later.start_at("json_object")
    assert later.open == ["json_object", "prompt"]


# -- the /v1/models check -------------------------------------------------------------------


@pytest.mark.parametrize("flavour", ["openai", "vllm", "ollama"])
def test_a_wrong_model_name_is_one_clear_error_at_the_first_call(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any, flavour: str
) -> None:
    """A name the server's list lacks: the first call goes alone, the server refuses it, and
    that one refusal is the one error naming what the server serves (not one per trial)."""
    server = mock_server(flavour=flavour, models=["llama3.2", "qwen3"])
    out = tmp_path / "t.jsonl"
    result = cli("run", "--cases", cases_file, "--model", "openai:llama3", "--base-url",
                 server.url, "--allow-unmetered", "--output", out, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2
    served = "llama3.2:latest, qwen3:latest" if flavour == "ollama" else "llama3.2, qwen3"
    assert f"does not serve 'llama3'; it serves: {served}" in result.stderr
    assert result.stderr.count("ERROR") == 1
    assert server.stats()["requests"] == 1 and server.stats()["model_lists"] == 1
    assert not out.exists()


def test_a_server_that_answers_any_name_is_used_under_the_name_given(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any
) -> None:
    """The llama.cpp servers list the file they loaded and answer every name with it: a
    name their list lacks still runs (a strict check would refuse a server that works)."""
    server = mock_server(flavour="llama-cpp-python", models=["/models/gemma-3-270m.gguf"])
    out = tmp_path / "t.jsonl"
    result = cli("run", "--cases", cases_file, "--model", "openai:gpt-4o-mini", "--base-url",
                 server.url, "--allow-unmetered", "--output", out, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 0, result.stderr
    assert out.exists() and "does not serve" not in result.stderr


def test_a_wrong_judge_name_stops_judging_with_one_error(
    cli: Any, files: dict[str, Path], mock_server: Any
) -> None:
    server = mock_server(flavour="vllm", judge_reply="schema", models=["Qwen/Qwen2.5-7B"])
    result = judge(cli, files, server.url)
    assert result.code == 2
    assert "does not serve 'judge'; it serves: Qwen/Qwen2.5-7B" in result.stderr
    assert result.stderr.count("ERROR") == 1
    assert server.stats()["requests"] == 1
    assert not (files["store"].parent / "out.jsonl").exists()


def test_ollama_names_match_without_their_default_tag(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(flavour="ollama", models=["llama3.2"])
    result = cli("run", "--cases", cases_file, "--model", "openai:llama3.2", "--base-url",
                 server.url, "--allow-unmetered", "--trials", 1, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 0, result.stderr


def test_nothing_listening_is_one_clear_error(cli: Any, cases_file: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = cli("run", "--cases", cases_file, "--model", "openai:m", "--base-url",
                 f"http://127.0.0.1:{port}/v1", "--allow-unmetered", "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2
    assert f"no server answers at http://127.0.0.1:{port}/v1" in result.stderr


def test_a_base_url_without_v1_is_pointed_at_v1(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(models=["m"])
    root = server.url.removesuffix("/v1")
    result = cli("run", "--cases", cases_file, "--model", "openai:m", "--base-url", root,
                 "--allow-unmetered", "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2
    assert f"use --base-url {root}/v1" in result.stderr


def test_a_rerun_from_the_cache_needs_no_server(
    cli: Any, cases_file: Path, tmp_path: Path, mock_server: Any
) -> None:
    """The check is made before the first call that reaches the server, not at every start."""
    server = mock_server(models=["m"])
    args = ["run", "--cases", cases_file, "--model", "openai:m", "--base-url", server.url,
            "--allow-unmetered", "--trials", 1, "--json"]  # fmt: skip
    assert cli(*args, "--store", tmp_path / "a.db").code == 0
    server.stop()
    again = cli(*args, "--store", tmp_path / "a.db", "--output", tmp_path / "again.jsonl")
    assert again.code == 0, again.stderr


def test_a_version_1_store_gains_the_server_forms_table(tmp_path: Path) -> None:
    from assay.store import Store, schema
    from assay.store.servers import queue_form, remembered_form

    path = tmp_path / "v1.db"
    with contextlib.closing(sqlite3.connect(path)) as db:
        schema.MIGRATIONS[0](db)
        db.execute("INSERT INTO runs VALUES ('r1', '2026-01-01T00:00:00Z', '{}')")
        db.execute("PRAGMA user_version = 1")
        db.commit()
    store = Store(path)
    assert store.runs()[0][0] == "r1"
    assert remembered_form(store, "http://x/v1", "m") is None
    queue_form(store, "http://x/v1", "m", "json_object")
    queue_form(store, "http://x/v1", "m", "prompt")
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION >= 2
    assert remembered_form(Store(path), "http://x/v1", "m") == "prompt"
