"""Model specs, prices and the mock model."""

from __future__ import annotations

import asyncio

import pytest

from assay.core.errors import InputError
from assay.models import Message, ModelOptions, Request, create_model, model_price
from assay.models.pricing import Price, lookup_price, parse_price


def request(text: str = "hello world", trial: int = 1) -> Request:
    return Request(messages=[Message("user", text)], max_tokens=64, trial=trial)


def test_mock_is_deterministic_and_free() -> None:
    model = create_model("mock")
    first = asyncio.run(model.generate(request()))
    again = asyncio.run(model.generate(request()))
    other_trial = asyncio.run(model.generate(request(trial=2)))
    assert first.text == again.text != other_trial.text
    assert first.cost_usd == 0.0 and model_price(model) == Price(0, 0)


def test_mock_behaviours_and_options() -> None:
    echo = create_model("mock:echo,latency=0.001")
    assert asyncio.run(echo.generate(request("say this"))).text == "say this"
    priced = create_model("mock", ModelOptions(price=Price(1.0, 2.0)))
    reply = asyncio.run(priced.generate(request("a b c d")))
    assert reply.cost_usd == pytest.approx((4 * 1.0 + reply.output_tokens * 2.0) / 1e6)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nosuch:model", "unknown kind 'nosuch'"),
        ("mock:dance", "unknown mock behaviour"),
        ("mock:latency=abc", "could not convert"),
        ("mock:answer,colour=red", "unknown option"),
        ("openai:", "name the model"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        create_model(spec)


def test_openai_needs_a_key_only_for_the_hosted_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        create_model("openai:gpt-4o-mini")
    local = create_model("openai:llama3", ModelOptions(base_url="http://127.0.0.1:1/v1"))
    assert local.identity() == {"spec": "openai:llama3", "base_url": "http://127.0.0.1:1/v1"}
    assert model_price(local) is None  # unknown model: unmetered


def test_prices() -> None:
    assert lookup_price("gpt-4o-mini-2024-07-18") == Price(0.15, 0.60)
    assert lookup_price("gpt-4o-2024-08-06") == Price(2.50, 10.00)
    assert lookup_price("llama3") is None
    assert parse_price("1,2.5") == Price(1.0, 2.5)
    for bad in ("1", "a,b", "1,-1"):
        with pytest.raises(InputError):
            parse_price(bad)


def test_worst_case_bounds_any_tokenisation() -> None:
    price = Price(1.0, 1.0)
    req = request("héllo " * 100)
    worst = price.worst_case(req)
    assert worst >= price.cost(len(req.messages[0].content.encode()), req.max_tokens)


def test_options_may_follow_the_kind_directly() -> None:
    model = create_model("mock,latency=0.001")
    assert asyncio.run(model.generate(request("x"))).text.startswith("Answer")


def _openai_body_before(model: str, request: Request, form: str | None) -> bytes:
    """An `openai:` request body as assay always built it: one `json.dumps` of the dict."""
    import json

    from assay.models.forms import messages_for, response_format

    messages = request.messages
    body: dict[str, object] = {"model": model}
    if request.json_schema is not None and form is not None:
        messages = messages_for(form, messages, request.json_schema)
        structured = response_format(form, request.json_schema)
        if structured is not None:
            body["response_format"] = structured
    body["messages"] = [{"role": m.role, "content": m.content} for m in messages]
    tokens = (
        "max_completion_tokens" if model.startswith(("o1", "o3", "o4", "gpt-5")) else "max_tokens"
    )
    body[tokens] = request.max_tokens
    body["temperature"] = request.temperature
    return json.dumps(body).encode()


def test_openai_body_bytes_never_change() -> None:
    """The body is put together from parts (the schema's `response_format` encoded once per
    schema object): the bytes sent are those of one `json.dumps` of the whole body, for every
    form, model, text and schema seen again."""
    from assay.scorers.judge.verdicts import direct_schema

    schema = direct_schema(["accuracy", "clarité"], 1, 5)
    messages = [Message("system", "Be fair. ünïcödé ✓"), Message("user", 'say "hi"\n\t{} \x00')]
    requests = [
        Request(messages=[Message("user", "hi")], max_tokens=10),
        Request(messages=messages, max_tokens=300, temperature=0.7, trial=3),
        Request(messages=messages, max_tokens=300, temperature=0.0),
        Request(messages=messages, max_tokens=300, temperature=-0.0),
        Request(messages=messages, max_tokens=300, temperature=0),
        Request(messages=messages, max_tokens=300, json_schema=schema),
        Request(messages=messages, max_tokens=9, json_schema={"type": "object", "b": 1, "a": []}),
    ]
    options = ModelOptions(base_url="http://127.0.0.1:9/v1", price=Price(0.0, 0.0))
    for name in ("gpt-4o-mini", "o3-mini", "llama ✓"):
        model = create_model(f"openai:{name}", options)
        for _ in range(2):  # a schema seen again is sent as the first time
            for request in requests:
                for form in (None, "json_schema", "json_object", "prompt"):
                    body = model._body(request, form)  # type: ignore[attr-defined]
                    assert body == _openai_body_before(name, request, form)
