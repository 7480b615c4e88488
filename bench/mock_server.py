"""A mock OpenAI-compatible (and Anthropic Messages) server for benchmarks and fault tests.

Loopback only. Latency and fault rates are configurable; faults are drawn from a seeded
generator: 429 (with or without Retry-After), 500, `invalid-500` (a 500 whose body is a
request-validation error, as the llama-cpp-python server sends), timeouts (no reply in time),
connection resets, truncated and non-JSON bodies, and `echo-auth` (a 401 whose body echoes the request's
credentials, as some proxies do, to check that assay scrubs what it stores and prints).
Two faults are successful (200) replies with bad content: `echo-key` (the reply text quotes
the request's credentials) and `malformed-json` (the reply text is broken JSON, as a judge
that cannot keep to its format gives).

`judge_reply` fixes the reply text; `judge_reply="schema"` instead answers each request that
asks for a JSON Schema (in `response_format`, as assay's judges do, or in the prompt) with a
small valid instance of that schema, varied by the prompt, so judging runs end to end.

`schema_replies` maps a requested schema's title (e.g. DeepEval's `ReasonScore`, RAGAS's
`ContextRecallOutput`) to the reply text for requests asking for that schema.
`POST /v1/embeddings` answers with a bag-of-words vector of each input (words hashed into
`EMBEDDING_SIZE` dimensions), so equal texts embed equally and unrelated ones are apart.

`flavour` makes it answer structured output and unknown model names as a real server does
(bench/server_flavours.py: vLLM, Ollama, the llama-cpp-python server, ...); `models` lists
what `GET /v1/models` serves (without it, that path is a 404, as on servers without it).

    python bench/mock_server.py --latency 0.1 --rate-429 0.05 --rate-500 0.05

prints `PORT <n>` once it listens; GET /stats returns request counts and timings.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web
from server_flavours import FLAVOURS, form_of, listed, refusal, requested_schema, unknown_model

FAULTS = (
    "429",
    "429-no-retry-after",
    "500",
    "timeout",
    "reset",
    "truncated",
    "non-json",
    "echo-auth",
    "echo-key",
    "malformed-json",
    "invalid-500",
)
SUCCESS_FAULTS = frozenset({"echo-key", "malformed-json"})  # a 200 reply with bad content


@dataclass
class ServerConfig:
    latency: float = 0.0
    rates: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    retry_after: float = 0.05
    timeout_sleep: float = 30.0
    judge_reply: str | None = None
    record: bool = False  # keep a per-request log (arrival, reply time, body hash, model, fault)
    flavour: str = "openai"  # how structured output and model names are answered
    models: list[str] | None = None  # what GET /v1/models lists (None: no such path)
    schema_replies: dict[str, str] = field(default_factory=dict)  # schema title → reply text
    blocker_marker: str | None = None  # a schema reply to a prompt holding it flags a blocker


@dataclass
class Stats:
    requests: int = 0
    replies: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    forms: dict[str, int] = field(default_factory=dict)  # chat requests per structured form
    refused: int = 0  # chat requests refused as the flavour refuses them
    model_lists: int = 0  # GET /v1/models requests
    embeddings: int = 0  # POST /v1/embeddings requests
    first_request: float | None = None
    last_reply: float | None = None


def _reply_text(prompt: str) -> str:
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:10]
    return f"Mock reply {digest}: a short, direct answer."


def schema_instance(schema: dict[str, Any], seed: str, defs: dict[str, Any] | None = None) -> Any:
    """A small value valid against a JSON Schema (the subset judges use, with pydantic's
    `$defs`/`$ref` and `anyOf`, as DeepEval's schemas have), chosen by `seed`."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return schema_instance(defs[schema["$ref"].rsplit("/", 1)[-1]], seed, defs)
    if "anyOf" in schema:
        return schema_instance(schema["anyOf"][0], seed, defs)
    pick = int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16)
    kind = schema.get("type")
    if "enum" in schema:
        options = schema["enum"]
        return options[pick % len(options)]
    if kind == "object":
        return {
            name: schema_instance(sub, f"{seed}/{name}", defs)
            for name, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        item = schema_instance(schema.get("items", {}), f"{seed}/0", defs)
        return [item][: schema.get("maxItems", 1)]
    if kind == "boolean":
        return False
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        value = low + (high - low) * (pick % 101) / 100
        return round(value) if kind == "integer" else round(value, 2)
    return f"mock {seed.rsplit('/', 1)[-1]}"[: schema.get("maxLength", 40)]


EMBEDDING_SIZE = 64


def embedding(text: str) -> list[float]:
    """A bag-of-words vector of `text`: each lower-case word adds 1 to one hashed dimension."""
    vector = [0.0] * EMBEDDING_SIZE
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % EMBEDDING_SIZE] += 1.0
    return vector


def _credentials(request: web.Request) -> str:
    return " ".join(
        f"{name}: {request.headers[name]}"
        for name in ("Authorization", "x-api-key")
        if name in request.headers
    )


class MockServer:
    """The aiohttp application and its counters."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.log: list[dict[str, Any]] = []
        self.random = random.Random(config.seed)
        self.app = web.Application()
        if config.flavour not in FLAVOURS:
            raise ValueError(f"unknown flavour {config.flavour!r} (known: {', '.join(FLAVOURS)})")
        self.app.router.add_post("/v1/chat/completions", self.chat)
        self.app.router.add_get("/v1/models", self.list_models)
        self.app.router.add_post("/v1/embeddings", self.embeddings)
        self.app.router.add_post("/v1/messages", self.messages)
        self.app.router.add_get("/stats", self.get_stats)
        self.app.router.add_get("/requests", self.get_requests)
        self.app.router.add_post("/reset", self.reset)

    def _fault(self) -> str | None:
        draw = self.random.random()
        edge = 0.0
        for name in FAULTS:
            edge += self.config.rates.get(name, 0.0)
            if draw < edge:
                return name
        return None

    async def _common(
        self, request: web.Request
    ) -> tuple[dict[str, Any], web.StreamResponse | None, str | None]:
        arrived = time.perf_counter()
        body, faulty, fault = await self._serve(request)
        if self.config.record:
            raw = json.dumps(body.get("messages"), sort_keys=True).encode()
            self.log.append(
                {
                    "arrived": arrived,
                    "replied": time.perf_counter(),
                    "body": hashlib.sha256(raw).hexdigest()[:16],
                    "model": body.get("model"),
                    "schema": requested_schema(body) is not None,  # a judge's structured call
                    "fault": fault,
                }
            )
        return body, faulty, fault

    async def _serve(
        self, request: web.Request
    ) -> tuple[dict[str, Any], web.StreamResponse | None, str | None]:
        now = time.perf_counter()
        self.stats.requests += 1
        if self.stats.first_request is None:
            self.stats.first_request = now
        body = await request.json()
        if self.config.latency:
            await asyncio.sleep(self.config.latency)
        fault = self._fault()
        if fault is None:
            return body, None, None
        self.stats.faults[fault] = self.stats.faults.get(fault, 0) + 1
        if fault in SUCCESS_FAULTS:
            return body, None, fault
        return body, await self._faulty(request, fault), fault

    async def _faulty(self, request: web.Request, fault: str) -> web.StreamResponse:
        if fault == "429":
            headers = {"Retry-After": str(self.config.retry_after)}
            return web.json_response(
                {"error": {"message": "rate limited"}}, status=429, headers=headers
            )
        if fault == "429-no-retry-after":
            return web.json_response({"error": {"message": "rate limited"}}, status=429)
        if fault == "500":
            return web.json_response({"error": {"message": "internal error"}}, status=500)
        if fault == "invalid-500":
            message = (
                "1 validation error:\n  {'type': 'less_than_equal', 'loc': ('body', 'top_p'),"
                " 'msg': 'Input should be less than or equal to 1'}"
            )
            return web.json_response(
                {"error": {"message": message, "type": "internal_server_error"}}, status=500
            )
        if fault == "timeout":
            await asyncio.sleep(self.config.timeout_sleep)
            return web.json_response({"error": {"message": "too late"}}, status=504)
        if fault == "reset":
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        if fault == "truncated":
            return web.Response(
                body=b'{"id": "x", "choices": [{"mess', content_type="application/json"
            )
        if fault == "echo-auth":
            credentials = _credentials(request)
            return web.json_response(
                {"error": {"message": f"invalid credentials ({credentials})"}, "echo": credentials},
                status=401,
            )
        return web.Response(text="<html>upstream error</html>", content_type="text/html")

    def _text(
        self, request: web.Request, prompt: str, schema: dict[str, Any] | None, fault: str | None
    ) -> str:
        """The reply text: scripted, schema-shaped, or the content of a 200 fault."""
        if fault == "echo-key":
            return f"Here is what you sent me: {_credentials(request)}"
        if fault == "malformed-json":
            return '{"scores": {"correctness": {"evidence": ["unterminated'
        title = schema.get("title") if schema is not None else None
        if title in self.config.schema_replies:
            return self.config.schema_replies[title]
        if self.config.judge_reply == "schema" and schema is not None:
            instance = schema_instance(schema, prompt)
            marker = self.config.blocker_marker
            if marker and marker in prompt and isinstance(instance, dict) and "blocker" in instance:
                instance["blocker"] = True
            return json.dumps(instance)
        if self.config.judge_reply and self.config.judge_reply != "schema":
            return self.config.judge_reply
        return _reply_text(prompt)

    def _done(self) -> None:
        self.stats.replies += 1
        self.stats.last_reply = time.perf_counter()

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body, faulty, fault = await self._common(request)
        if faulty is not None:
            return faulty
        form = form_of(body)
        self.stats.forms[form] = self.stats.forms.get(form, 0) + 1
        flavour, models = self.config.flavour, self.config.models or []
        refused = unknown_model(flavour, str(body.get("model")), models) or refusal(flavour, body)
        if refused is not None:
            self.stats.refused += 1
            return web.json_response(refused[1], status=refused[0])
        prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
        text = self._text(request, prompt, requested_schema(body), fault)
        self._done()
        return web.json_response(
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion",
                "model": body.get("model", "mock"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": max(1, len(prompt) // 4),
                    "completion_tokens": len(text) // 4,
                },
            }
        )

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body, faulty, fault = await self._common(request)
        if faulty is not None:
            return faulty
        prompt = json.dumps(body.get("messages", []))
        text = self._text(request, prompt, None, fault)
        self._done()
        return web.json_response(
            {
                "id": "msg_mock",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "mock"),
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {
                    "input_tokens": max(1, len(prompt) // 4),
                    "output_tokens": len(text) // 4,
                },
            }
        )

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's embeddings API: one `embedding` per input text."""
        body, faulty, _ = await self._common(request)
        if faulty is not None:
            return faulty
        self.stats.embeddings += 1
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        self._done()
        return web.json_response(
            {
                "object": "list",
                "model": body.get("model", "mock"),
                "data": [
                    {"object": "embedding", "index": i, "embedding": embedding(str(text))}
                    for i, text in enumerate(texts)
                ],
                "usage": {"prompt_tokens": sum(len(str(t)) // 4 for t in texts), "total_tokens": 0},
            }
        )

    async def list_models(self, request: web.Request) -> web.Response:
        self.stats.model_lists += 1
        if self.config.models is None:
            raise web.HTTPNotFound()
        ids = listed(self.config.flavour, self.config.models)
        data = [{"id": i, "object": "model", "owned_by": "mock"} for i in ids]
        return web.json_response({"object": "list", "data": data})

    async def get_stats(self, request: web.Request) -> web.Response:
        return web.json_response(asdict(self.stats))

    async def get_requests(self, request: web.Request) -> web.Response:
        return web.json_response(self.log)

    async def reset(self, request: web.Request) -> web.Response:
        self.stats = Stats()
        self.log = []
        return web.json_response({"ok": True})


async def serve_app(app: web.Application, port: int = 0) -> tuple[web.AppRunner, int]:
    """Start an aiohttp app on 127.0.0.1 (port 0: any free one); its runner and bound port."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
    return runner, sockets[0].getsockname()[1]


async def serve(config: ServerConfig, port: int = 0) -> tuple[web.AppRunner, int]:
    """Start the server on 127.0.0.1; return its runner and the bound port."""
    return await serve_app(MockServer(config).app, port)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.05)
    parser.add_argument("--timeout-sleep", type=float, default=30.0)
    parser.add_argument("--flavour", choices=FLAVOURS, default="openai")
    parser.add_argument("--models", nargs="*", default=None, help="What GET /v1/models lists.")
    parser.add_argument(
        "--judge-reply",
        default=None,
        help="Reply with this text to every call ('schema': a valid instance of the request's JSON Schema).",
    )
    for name in FAULTS:
        parser.add_argument(
            f"--rate-{name}", type=float, default=0.0, help=f"share of {name} faults"
        )
    args = parser.parse_args()
    rates = {name: getattr(args, f"rate_{name.replace('-', '_')}") for name in FAULTS}
    config = ServerConfig(
        args.latency,
        rates,
        args.seed,
        args.retry_after,
        args.timeout_sleep,
        args.judge_reply,
        flavour=args.flavour,
        models=args.models,
    )

    async def run() -> None:
        runner, port = await serve(config, args.port)
        print(f"PORT {port}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
