"""`python:MODULE:CALLABLE` and `python:PATH.py:CALLABLE`: your own agent as a model.

The callable is `fn(case, settings)`, sync (run in a worker thread) or async; `case` is the
Case record (a pydantic model: `case.prompt`, not `case["prompt"]`; an error that shows the
mix-up says so) and `settings` the condition's dict `{condition, skill, model, **params}`. It returns
the response text, or a dict: `response` plus any of `kind` (answer|refusal|escalation),
`citations`, `retrieved` (kept as the trial's `state`, with any other keys), `usage`
(`{input_tokens, output_tokens}`), `cost_usd`, and `trajectory` (its steps) or `messages`
(a LangGraph final state's messages, or an OpenAI/Anthropic tool loop's), kept as the
trial's trajectory (models/trajectories.py).

Metering: an agent reports what it spent as `cost_usd`. Its worst case cannot be known in
advance, so it is unmetered (needs `--allow-unmetered`) unless `--price IN,OUT` is given or
the callable carries an `assay_price` attribute (a Price or an `(in, out)` pair, USD per
million tokens): a reply without `cost_usd` is then charged that price for its reported
usage. An agent may run many model turns a call, so the budget reserves a share of what is
left for each call (engine/calls.py), not one turn's worst case.

Optional attributes of the callable: `assay_version` (any JSON value, part of the cache
identity: set it to a hash of the agent's data, say its knowledge base) and `assay_aclose`
(sync or async, called once when the run ends, to close the agent's own clients).

A file path is imported as a module of its own, with its folder put first on `sys.path` so it
can import its neighbours; a relative path is resolved against the suite's folder (when
there is a suite and the file is there), else against the current directory. The cache identity includes a hash of the callable's source (for
a file, of every .py file in its folder), so editing the agent invalidates cached answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.core.environ import restore_user_env
from assay.core.errors import InputError
from assay.core.redact import scrub
from assay.models.base import ModelError, Request, Response, reported_cost, token_count
from assay.models.pricing import Price, priced
from assay.models.registry import ModelOptions
from assay.models.trajectories import agent_trajectory

STATE_KEYS = ("kind", "citations", "retrieved")
KINDS = ("answer", "refusal", "escalation")
MAX_SOURCE_FILES = 200


def split_target(rest: str) -> tuple[str, str]:
    """`pkg.mod:fn` or `path/to/file.py:fn` -> (target, callable name)."""
    target, _, name = rest.rpartition(":")
    if not target or not name.isidentifier():
        raise InputError(
            f"ERROR: model spec 'python:{rest}': expected python:MODULE:CALLABLE"
            " or python:PATH.py:CALLABLE"
        )
    return target, name


def _load_file(path: Path) -> ModuleType:
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"assay_agent_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"ERROR: model spec 'python:{path}': cannot import this file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def resolve_file(target: str, root: Path | None) -> Path | None:
    """The agent file a target names, or None when the target is a module name."""
    if not target.endswith(".py"):
        return None
    path = Path(target).expanduser()
    if not path.is_absolute() and root is not None and (root / path).is_file():
        path = root / path
    if not path.is_file():
        raise InputError(f"ERROR: model spec 'python:{target}:…': no such file {path}")
    return path.resolve()


def load_callable(rest: str, root: Path | None = None) -> tuple[Callable[..., Any], Path | None]:
    """Import the callable a spec names; InputError (never a traceback) when it cannot."""
    target, name = split_target(rest)
    path = resolve_file(target, root)
    try:
        module = _load_file(path) if path is not None else importlib.import_module(target)
    except ImportError as exc:
        raise InputError(f"ERROR: model spec 'python:{rest}': cannot import: {exc}") from None
    except Exception as exc:
        raise InputError(
            f"ERROR: model spec 'python:{rest}': importing it failed: {type(exc).__name__}: {exc}"
        ) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise InputError(f"ERROR: model spec 'python:{rest}': {name!r} is not a callable there")
    source = path if path is not None else getattr(module, "__file__", None)
    return fn, Path(source) if source else None


def source_digest(source: Path | None, whole_folder: bool) -> str | None:
    """A hash of the agent's code: its file, or every .py file in its folder."""
    if source is None or not source.is_file():
        return None
    files = [source]
    if whole_folder:
        found = sorted(p for p in source.parent.rglob("*.py") if "__pycache__" not in p.parts)
        files = found[:MAX_SOURCE_FILES]
    digest = hashlib.sha256()
    for file in files:
        digest.update(str(file.relative_to(source.parent)).encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def declared_price(fn: Callable[..., Any]) -> Price | None:
    """The price a callable declares through `assay_price`, if any."""
    value = getattr(fn, "assay_price", None)
    if value is None or isinstance(value, Price):
        return value
    if isinstance(value, tuple | list) and len(value) == 2:
        return Price(float(value[0]), float(value[1]))
    raise InputError(f"ERROR: {fn!r}: assay_price must be a Price or an (in, out) pair")


def _tokens(usage: Any, key: str) -> int | None:
    """A reported token count (0 when absent; None when it cannot be read)."""
    return token_count(usage.get(key) if isinstance(usage, dict) else None)


def to_response(result: Any, price: Price | None) -> Response:
    """A callable's return value as a Response; a malformed value is an error."""
    if isinstance(result, str):
        return Response(text=result)
    if not isinstance(result, dict):
        raise ModelError(
            f"the agent returned {type(result).__name__}; expected a str or a dict with 'response'"
        )
    text = result.get("response")
    if not isinstance(text, str):
        raise ModelError("the agent's dict has no 'response' string")
    trajectory = agent_trajectory(result)
    kept = ("response", "usage", "cost_usd", "trajectory", "messages")
    state = {k: v for k, v in result.items() if k not in kept}
    kind = state.get("kind", "answer")
    if kind not in KINDS:
        raise ModelError(f"the agent's kind {kind!r} is not one of {', '.join(KINDS)}")
    for key in ("citations", "retrieved"):
        value = state.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ModelError(f"the agent's {key!r} must be a list of strings")
    usage = result.get("usage")
    input_tokens, output_tokens = _tokens(usage, "input_tokens"), _tokens(usage, "output_tokens")
    cost = result.get("cost_usd")
    if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
        # it ran (and may have been billed): the failure counts at the call's reservation
        raise ModelError("the agent's cost_usd must be a number or null")
    return Response(
        text=text,
        input_tokens=input_tokens or 0,
        output_tokens=output_tokens or 0,
        cost_usd=priced(price, input_tokens, output_tokens)
        if cost is None
        else reported_cost(cost),
        model=str(result.get("model")) if result.get("model") else None,
        state=state,
        trajectory=trajectory,
    )


def misuse_hint(exc: Exception, case: object) -> str:
    """What the callable receives, when its error shows it took the Case for something else
    (`case["prompt"]` or `case.get("prompt")`, as with a dict: the usual first mistake)."""
    name = type(case).__name__
    if not isinstance(exc, TypeError | AttributeError) or f"'{name}' object" not in str(exc):
        return ""
    fields = ", ".join(getattr(type(case), "model_fields", {}))
    return (
        f" (the callable receives an assay {name}: use case.prompt, not case['prompt'];"
        f" its fields: {fields})"
    )


class PythonModel:
    """Calls a Python callable per request; exceptions become errors with their traceback."""

    agent = True  # one call may run many model turns: see models.registry.is_agent

    def __init__(
        self, spec: str, fn: Callable[..., Any], price: Price | None, digest: str | None
    ) -> None:
        self.spec = spec
        self.fn = fn
        self.price = price
        self.digest = digest
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004
        )

    def identity(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "source_sha256": self.digest,
            "version": getattr(self.fn, "assay_version", None),
        }

    async def generate(self, request: Request) -> Response:
        if request.case is None:
            raise ModelError("python agents need the case (called outside a run?)", billed=False)
        settings = dict(request.settings)
        try:
            if self.is_async:
                result = await self.fn(request.case, settings)
            else:
                result = await asyncio.to_thread(self.fn, request.case, settings)
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(
                scrub(f"{type(exc).__name__}: {exc}{misuse_hint(exc, request.case)}"),
                detail=scrub(traceback.format_exc()),
            ) from None
        return to_response(result, self.price)

    async def aclose(self) -> None:
        hook = getattr(self.fn, "assay_aclose", None)
        if hook is not None:
            result = hook()
            if inspect.isawaitable(result):
                await result


def create(rest: str, options: ModelOptions) -> PythonModel:
    """Factory for `python:MODULE:CALLABLE` and `python:PATH.py:CALLABLE`.

    The agent runs in assay's process: it gets the user's environment (`assay.core.environ`)."""
    restore_user_env()
    root = options.extra.get("root")
    fn, source = load_callable(rest, Path(root) if root else None)
    target, _ = split_target(rest)
    price = options.price or declared_price(fn)
    return PythonModel(
        f"python:{rest}", fn, price, source_digest(source, whole_folder=target.endswith(".py"))
    )
