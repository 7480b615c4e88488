"""Model specs (`PREFIX[:REST]`) resolved to Model instances through a lazy registry."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.models.base import Model
from assay.models.pricing import Price

# prefix -> "module:factory"; modules load only when a spec needs them. A provider module whose
# model needs an API key also declares `required_env(rest, options) -> tuple[str, ...]` (the
# variables of which one must be set) and `KEY_HINT` (how to run it without one), so every key
# can be checked before the first call (`missing_key`).
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


def _provider(spec: str) -> tuple[Any, str, str]:
    """The provider module of a spec, its factory's name and the spec's rest; InputError for
    an unknown prefix or a provider whose package is not installed."""
    prefix, rest = split_spec(spec)
    target = REGISTRY.get(ALIASES.get(prefix, prefix))
    if target is None:
        known = ", ".join(sorted([*REGISTRY, *ALIASES]))
        raise InputError(f"ERROR: model spec {spec!r}: unknown kind {prefix!r} (known: {known})")
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(
            f"ERROR: model spec {spec!r} needs a package that is not installed: {exc.name}"
        ) from None
    return module, attr, rest


def create_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Build the model a spec names; InputError for an unknown prefix or a bad spec."""
    module, attr, rest = _provider(spec)
    factory: Factory = getattr(module, attr)
    return factory(rest, options or ModelOptions())


def required_env(spec: str, options: ModelOptions | None = None) -> tuple[str, ...]:
    """The environment variables of which one must be set before `spec`'s first call (its
    API key); () when it needs none: an offline or local model, or a provider pointed at
    another base URL (a local server needs no key)."""
    module, _, rest = _provider(spec)
    declared: Callable[[str, ModelOptions], tuple[str, ...]] | None = getattr(
        module, "required_env", None
    )
    return declared(rest, options or ModelOptions()) if declared is not None else ()


def unset(variables: tuple[str, ...]) -> bool:
    """Whether a key is needed (`variables` not empty) and none of its variables is set."""
    return bool(variables) and not any(os.environ.get(v) for v in variables)


@dataclass(frozen=True, slots=True)
class MissingKey:
    """A model's API key that is not set: the `variable` to set, and the provider's `hint`
    on running without one (a local server)."""

    spec: str
    variable: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.variable} is not set"


def missing_key(spec: str, options: ModelOptions | None = None) -> MissingKey | None:
    """The key `spec` needs and lacks, or None when it is set or none is needed."""
    variables = required_env(spec, options)
    if not unset(variables):
        return None
    module, _, _ = _provider(spec)
    return MissingKey(spec, variables[0], str(getattr(module, "KEY_HINT", "")))


def missing_keys(specs: Iterable[str], options: ModelOptions | None = None) -> list[MissingKey]:
    """Every spec's missing key, in order, each spec once."""
    found = (missing_key(spec, options) for spec in dict.fromkeys(specs))
    return [m for m in found if m is not None]


def unset_text(missing: Sequence[MissingKey]) -> str:
    """`ANTHROPIC_API_KEY is not set` (`A and B are not set` for two variables or more)."""
    names = list(dict.fromkeys(m.variable for m in missing))
    if len(names) == 1:
        return f"{names[0]} is not set"
    return f"{', '.join(names[:-1])} and {names[-1]} are not set"


def model_price(model: Model) -> Price | None:
    """The price a model charges, or None when it is unmetered."""
    price: Price | None = getattr(model, "price", None)
    return price


# What meters a run's (or a judging's) models from the command line: the price setting, and
# the one that lets a model without a price run (a suite's judges name their [judge] keys).
METERING = ("--price IN,OUT (USD per million tokens)", "--allow-unmetered")


def unpriceable(model: Model) -> str | None:
    """Why no price can meter the model's calls (None: a price can), e.g. a `command:` whose
    output format reports no usage: such models set `unpriceable` to the reason."""
    reason: str | None = getattr(model, "unpriceable", None)
    return reason


def is_agent(model: Model) -> bool:
    """Whether one call may run many model turns (agent CLIs and callables), so its cost is
    not bounded by its price's worst case: such models set `agent = True`."""
    return bool(getattr(model, "agent", False))
