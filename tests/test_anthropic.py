"""The Anthropic provider against the loopback mock server and a recording server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from assay.core.errors import InputError
from assay.models import Message, ModelError, Request, create_model, model_price
from assay.models.anthropic import split_system
from assay.models.pricing import Price
from conftest import make_case, write_jsonl

SECRET = "sk-ant-test-secret-0123456789"


@pytest.fixture
def anthropic_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    def point(url: str) -> None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url.removesuffix("/v1"))

    return point


def call(spec: str, request: Request) -> Any:
    async def go() -> Any:
        model = create_model(spec)
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def req(text: str = "hello", **kwargs: Any) -> Request:
    kwargs.setdefault("timeout_s", 10)
    return Request(messages=[Message("user", text)], max_tokens=64, **kwargs)


def test_answer_usage_and_cost_from_the_price_table(mock_server, anthropic_env) -> None:  # type: ignore[no-untyped-def]
    server = mock_server()
    anthropic_env(server.url)
    reply = call("anthropic:claude-haiku-4-5", req())
    assert reply.text.startswith("Mock reply ")
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    assert reply.cost_usd == pytest.approx(
        Price(1.0, 5.0).cost(reply.input_tokens, reply.output_tokens)
    )
    assert reply.model == "claude-haiku-4-5"
    assert server.stats()["requests"] == 1


def test_unknown_model_is_unmetered_and_key_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        create_model("anthropic:claude-haiku-4-5")
    with pytest.raises(InputError, match="name the model"):
        create_model("anthropic:")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    local = create_model("anthropic:my-local-model")
    assert model_price(local) is None
    assert local.identity() == {
        "spec": "anthropic:my-local-model",
        "base_url": "http://127.0.0.1:9",
    }


@pytest.mark.parametrize(
    "fault, message, overload, retry_after",
    [
        ("429", "HTTP 429: rate limited", True, 0.05),
        ("429-no-retry-after", "HTTP 429", True, None),
        ("500", "HTTP 500: internal error", False, None),
        ("truncated", "malformed response body", False, None),
        ("non-json", "malformed response body", False, None),
        ("reset", "connection error", False, None),
    ],
)
def test_faults_map_to_retryable_errors_without_sdk_retries(  # type: ignore[no-untyped-def]
    mock_server, anthropic_env, fault, message, overload, retry_after
) -> None:
    server = mock_server(rates={fault: 1.0})
    anthropic_env(server.url)
    with pytest.raises(ModelError, match=message) as caught:
        call("anthropic:claude-haiku-4-5", req())
    error = caught.value
    assert error.retryable and error.overload is overload
    assert error.retry_after == retry_after
    assert SECRET not in str(error) and SECRET not in (error.detail or "")
    assert server.stats()["requests"] == 1  # the SDK's own retries are off


def test_timeout(mock_server, anthropic_env) -> None:  # type: ignore[no-untyped-def]
    server = mock_server(rates={"timeout": 1.0}, timeout_sleep=1.0)
    anthropic_env(server.url)
    with pytest.raises(ModelError, match="timeout") as caught:
        call("anthropic:claude-haiku-4-5", req(timeout_s=0.3))
    assert caught.value.retryable


def test_split_system_merges_roles() -> None:
    system, turns = split_system(
        [
            Message("system", "Be brief."),
            Message("user", "a"),
            Message("user", "b"),
            Message("assistant", "c"),
            Message("system", "Cite sources."),
        ]
    )
    assert system == "Be brief.\n\nCite sources."
    assert turns == [{"role": "user", "content": "a\n\nb"}, {"role": "assistant", "content": "c"}]


Handler = Callable[[dict[str, Any]], dict[str, Any]]


def with_recording_server(
    reply: Handler, body: Callable[[str], Awaitable[Any]]
) -> tuple[list[dict[str, Any]], Any]:
    """Serve POST /v1/messages with `reply(body)`; run `body(base_url)`; return bodies seen."""
    seen: list[dict[str, Any]] = []

    async def messages(request: web.Request) -> web.Response:
        data = await request.json()
        seen.append({"body": data, "headers": {k.lower(): v for k, v in request.headers.items()}})
        return web.json_response(reply(data))

    async def go() -> Any:
        app = web.Application()
        app.router.add_post("/v1/messages", messages)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            return await body(f"http://127.0.0.1:{port}")
        finally:
            await runner.cleanup()

    return seen, asyncio.run(go())


def message_reply(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_read_input_tokens": 4,
            "cache_creation_input_tokens": 0,
        },
    }


@pytest.mark.parametrize(
    "schema, tool_input, expected",
    [
        (
            {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]},
            {"score": 4},
            {"score": 4},
        ),
        ({"type": "array", "items": {"type": "string"}}, {"value": ["a", "b"]}, ["a", "b"]),
    ],
)
def test_json_schema_is_enforced_with_a_forced_tool(
    anthropic_env, monkeypatch: pytest.MonkeyPatch, schema: dict, tool_input: dict, expected: Any
) -> None:  # type: ignore[no-untyped-def]
    content = [
        {"type": "text", "text": "thinking aloud"},
        {"type": "tool_use", "id": "tu_1", "name": "respond", "input": tool_input},
    ]

    async def body(url: str) -> Any:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        model = create_model("anthropic:claude-haiku-4-5")
        try:
            request = Request(
                messages=[Message("system", "Judge it."), Message("user", "Rate this.")],
                max_tokens=100,
                json_schema=schema,
            )
            return await model.generate(request)
        finally:
            await model.aclose()

    seen, reply = with_recording_server(lambda data: message_reply(content), body)
    sent = seen[0]["body"]
    assert sent["system"] == "Judge it."
    assert sent["messages"] == [{"role": "user", "content": "Rate this."}]
    assert sent["tool_choice"] == {"type": "tool", "name": "respond"}
    assert sent["tools"][0]["input_schema"]["type"] == "object"
    assert "temperature" not in sent
    headers = seen[0]["headers"]
    assert SECRET in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert json.loads(reply.text) == expected
    assert reply.input_tokens == 14 and reply.output_tokens == 5
    assert reply.model == "claude-sonnet-4-5-20250929"


def test_run_through_faults_records_usage_and_keeps_the_key_out(  # type: ignore[no-untyped-def]
    cli, mock_server, anthropic_env, tmp_path: Path
) -> None:
    server = mock_server(rates={"429": 0.2, "500": 0.1}, seed=3)
    anthropic_env(server.url)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(6)])
    out = tmp_path / "trials.jsonl"
    store = tmp_path / "s.db"
    result = cli(
        "run", "--cases", cases, "--model", "anthropic:claude-haiku-4-5", "--trials", 2,
        "--output", out, "--store", store, "--budget-usd", 1, "--retries", 8, "--json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    trials = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(trials) == 12 and all(t["error"] is None for t in trials)
    assert all(t["cost_usd"] > 0 and t["usage"]["input_tokens"] > 0 for t in trials)
    stats = server.stats()
    assert sum(stats["faults"].values()) > 0 and stats["replies"] == 12
    assert result.json()["spent_usd"] > 0
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()
