"""Prices in USD per million input/output tokens, and worst-case cost bounds."""

from __future__ import annotations

import json
from dataclasses import dataclass

from assay.core.errors import InputError
from assay.core.memo import ByObject
from assay.core.money import price_values
from assay.models.base import UNREADABLE_COST, Request

# Public list prices (USD per 1M tokens: input, output). `--price` overrides.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "claude-opus-4": (15.00, 75.00),
    "claude-opus-4-1": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-haiku-4-5": (1.00, 5.00),
}

# Claude Code's model aliases (`claude --model sonnet`) and the model each stands for;
# `opusplan` plans with Opus, so it is metered at Opus's price.
CLAUDE_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
    "opusplan": "claude-opus-4-1",
    "haiku": "claude-haiku-4-5",
}

# Upper bound on tokens a message costs beyond its UTF-8 bytes (role markers, template).
MESSAGE_OVERHEAD_TOKENS = 16
# Upper bound on the tokens a request's JSON Schema adds beyond its bytes: a provider puts the
# schema in the prompt (OpenAI's structured outputs), or a tool with it and the tool-use
# instructions (Anthropic's, a few hundred tokens).
SCHEMA_OVERHEAD_TOKENS = 1024

_SCHEMA_BYTES: ByObject[int] = ByObject()


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input and output tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1e6

    def worst_case(self, request: Request) -> float:
        """A bound no call can exceed: every byte a token (the JSON Schema's too), plus
        max_tokens of output. A one-turn call reporting more counts at this bound
        (engine/costs.py): no provider bills beyond it."""
        return self.cost(max_input_tokens(request), request.max_tokens)


FREE = Price(0.0, 0.0)


def max_input_tokens(request: Request) -> int:
    """Tokens the prompt can take at most (a BPE token covers at least one byte), its JSON
    Schema included."""
    tokens = sum(_utf8_length(m.content) + MESSAGE_OVERHEAD_TOKENS for m in request.messages)
    schema = request.json_schema
    if schema is not None:  # built once per judge setup: its size is measured once
        tokens += _SCHEMA_BYTES.get(schema, lambda: len(json.dumps(schema).encode()))
        tokens += SCHEMA_OVERHEAD_TOKENS
    return tokens


def _utf8_length(text: str) -> int:
    """`len(text.encode())`, without encoding an ASCII text (a judge's prompt, every call)."""
    return len(text) if text.isascii() else len(text.encode())


def parse_price(text: str, what: str = "--price") -> Price:
    """Parse `--price IN,OUT` (USD per million input/output tokens; `what` names where the
    text came from in the error)."""
    try:
        return Price(*price_values(text))
    except ValueError as exc:
        raise InputError(f"ERROR: {what}: {exc}") from None


def lookup_price(model_name: str) -> Price | None:
    """The built-in price of a model, matching dated snapshots by prefix; None if unknown."""
    best = ""
    for name in PRICES:
        if (model_name == name or model_name.startswith(name + "-")) and len(name) > len(best):
            best = name
    return Price(*PRICES[best]) if best else None


def claude_price(model: str) -> Price | None:
    """The price of a `claude[:MODEL]` runner: an alias's model, else a name in the table.

    Bare `claude` (and `claude:default`) runs whatever model Claude Code is set to, so it is
    metered at the most expensive Claude price in the table: a cap must assume the worst.
    """
    if model in ("", "default"):
        claude = [Price(*p) for name, p in PRICES.items() if name.startswith("claude-")]
        return max(claude, key=lambda p: (p.output_per_m, p.input_per_m))
    return lookup_price(CLAUDE_ALIASES.get(model, model))


def priced(
    price: Price | None, input_tokens: int | None, output_tokens: int | None
) -> float | None:
    """What reported usage costs at `price` (a `Price`, or None: unmetered, no cost);
    `UNREADABLE_COST` when either count cannot be read."""
    if price is None:
        return None
    if input_tokens is None or output_tokens is None:
        return UNREADABLE_COST
    return price.cost(input_tokens, output_tokens)
