"""Model specs (`PREFIX[:REST]`) resolved to Model instances through a lazy registry."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.models.base import Model
from assay.models.pricing import Price

# prefix -> "module:factory"; modules load only when a spec needs them.
REGISTRY: dict[str, str] = {
    "mock": "assay.models.mock:create",
    "openai": "assay.models.openai:create",
    "llamacpp": "assay.models.llamacpp:create",
    "anthropic": "assay.models.anthropic:create",
    "claude": "assay.models.command:create_claude",
    "codex": "assay.models.command:create_codex",
    "command": "assay.models.command:create_command",
    "python": "assay.models.python:create",
}

# Other names for a kind: `stub` is the offline runner's name in the evaluation framework
# assay grew from; it is the deterministic mock (same answers, same cache entries).
ALIASES: dict[str, str] = {"stub": "mock"}


@dataclass(slots=True)
class ModelOptions:
    """Settings that come from flags or the suite rather than the spec string."""

    base_url: str | None = None
    price: Price | None = None
    response_format: str = "text"
    workdir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Factory = Callable[[str, ModelOptions], Model]


def split_spec(spec: str) -> tuple[str, str]:
    """`openai:gpt-4o` -> ("openai", "gpt-4o"); `mock` -> ("mock", "");
    `mock,latency=0.1` -> ("mock", "latency=0.1") (options may follow the kind directly)."""
    spec = spec.strip()
    colon, comma = spec.find(":"), spec.find(",")
    cut = comma if comma != -1 and (colon == -1 or comma < colon) else colon
    if cut == -1:
        return spec, ""
    return spec[:cut], spec[cut + 1 :]


def register(prefix: str, target: str) -> None:
    """Register a factory `module:callable` for a spec prefix (plugins call this)."""
    REGISTRY[prefix] = target


def create_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the model a spec names; InputError for an unknown prefix or a bad spec."""
    prefix, rest = split_spec(spec)
    target = REGISTRY.get(ALIASES.get(prefix, prefix))
    if target is None:
        known = ", ".join(sorted([*REGISTRY, *ALIASES]))
        raise InputError(f"ERROR: model spec {spec!r}: unknown kind {prefix!r} (known: {known})")
    module_name, _, attr = target.partition(":")
    try:
        factory: Factory = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        raise InputError(
            f"ERROR: model spec {spec!r} needs a package that is not installed: {exc.name}"
        ) from None
    return factory(rest, options or ModelOptions())


def model_price(model: Model) -> Price | None:
    """The price a model charges, or None when it is unmetered."""
    price: Price | None = getattr(model, "price", None)
    return price


def is_agent(model: Model) -> bool:
    """Whether one call may run many model turns (agent CLIs and callables), so its cost is
    not bounded by its price's worst case: such models set `agent = True`."""
    return bool(getattr(model, "agent", False))
