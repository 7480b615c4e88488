"""A deterministic offline model for tests, demos and benchmarks.

Spec: `mock[:BEHAVIOUR][,key=value...]`, e.g. `mock`, `mock:echo`, `mock:answer,latency=0.05`.
Options: `latency` (seconds per call), `fail` (share of calls that raise a retryable error),
`seed`. Behaviours are functions of the request, registered in BEHAVIOURS.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable
from importlib import import_module
from typing import Any

from assay.core.errors import InputError
from assay.models.base import ModelError, Request, Response
from assay.models.pricing import FREE, Price
from assay.models.registry import ModelOptions

Behaviour = Callable[[Request], str]


def last_user(request: Request) -> str:
    """The content of the last user message."""
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


def _answer(request: Request) -> str:
    prompt = last_user(request)
    digest = hashlib.sha256(f"{prompt}\x00{request.trial}".encode()).hexdigest()[:8]
    words = " ".join(prompt.split()[:12])
    return f"Answer {digest}: regarding '{words}', here is a concise and actionable response."


def _echo(request: Request) -> str:
    return last_user(request)


BEHAVIOURS: dict[str, Behaviour] = {"answer": _answer, "echo": _echo}

# Modules that register more behaviours (the scripted judges: mock:first, mock:fair, ...),
# named here and imported on the first lookup of a behaviour not yet known: the command line
# loads them only when a mock model needs them.
MORE_BEHAVIOURS = ("assay.scorers.judge.mock",)


def behaviour_named(name: str) -> Behaviour | None:
    """The behaviour registered under NAME (loading MORE_BEHAVIOURS first if need be)."""
    if name not in BEHAVIOURS:
        for module in MORE_BEHAVIOURS:
            import_module(module)
    return BEHAVIOURS.get(name)


class MockModel:
    """Answers instantly (or after `latency`) from a named behaviour; free unless priced."""

    def __init__(self, spec: str, behaviour: str, options: dict[str, str], price: Price | None):
        found = behaviour_named(behaviour)
        if found is None:
            known = ", ".join(sorted(BEHAVIOURS))
            raise InputError(f"ERROR: model spec {spec!r}: unknown mock behaviour (known: {known})")
        self.spec = spec
        self.behaviour = found
        self.price = price if price is not None else FREE
        try:
            self.latency = float(options.pop("latency", 0.0))
            self.fail_rate = float(options.pop("fail", 0.0))
            self._random = random.Random(int(options.pop("seed", 0)))
        except ValueError as exc:
            raise InputError(f"ERROR: model spec {spec!r}: {exc}") from None
        if options:
            raise InputError(f"ERROR: model spec {spec!r}: unknown option(s) {', '.join(options)}")

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec}

    async def generate(self, request: Request) -> Response:
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.fail_rate and self._random.random() < self.fail_rate:
            # a provider's refusal (an HTTP 500): nothing billed
            raise ModelError("mock failure (injected)", retryable=True, billed=False)
        text = self.behaviour(request)
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        output_words = min(len(text.split()), request.max_tokens)
        return Response(
            text=text,
            input_tokens=prompt_words,
            output_tokens=output_words,
            cost_usd=self.price.cost(prompt_words, output_words),
            model="mock",
        )

    async def aclose(self) -> None:
        return None


def create(rest: str, options: ModelOptions) -> MockModel:
    """Factory for `mock[:behaviour][,k=v...]`."""
    parts = [p for p in rest.split(",") if p] if rest else []
    behaviour = "answer"
    settings: dict[str, str] = {}
    for part in parts:
        if "=" in part:
            key, _, value = part.partition("=")
            settings[key.strip()] = value.strip()
        else:
            behaviour = part.strip()
    spec = f"mock:{rest}" if rest else "mock"
    return MockModel(spec, behaviour, settings, options.price)
