"""How the public functions are called from Python: arguments checked, any thread, async twins.

`public(fn)` is `fn` as `assay.fn` exports it: its arguments are checked against its type
hints first (a wrong type is an InputError naming the argument, never a traceback from deep
inside the run), and called from a thread whose event loop is running (Jupyter,
pytest-asyncio, an async service) it runs in a worker thread with a loop of its own
(`assay.core.aio.call_blocking`) instead of failing. `twin(fn)` is its `async` twin
(`await assay.aevaluate(...)`): the same work in a worker thread (`asyncio.to_thread`), so
the caller's loop goes on serving meanwhile. Cancelling the await does not stop the work
already started; what it finished is in the store, and calling again resumes it.

Checks use typeguard on each given argument; a collection is checked by its first item
(typeguard's default: the usual mistake, dicts for records, is caught at a cost that does
not grow with the collection; checking all of 100,000 trials took 0.3 s). An argument whose
hint is only known to type checkers is not checked. Keyword options a function passes on (`run`'s to
`run_request`, `judge`'s to `JudgeConfig`) are checked against where they go.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, ParamSpec, TypeVar

from typeguard import CollectionCheckStrategy, TypeCheckError, check_type

from assay.core import aio
from assay.core.errors import InputError

P = ParamSpec("P")
R = TypeVar("R")

# Where a function's `**options` go: (module, name) -> (module, name of the callable whose
# parameters they are).
_OPTIONS_OF = {
    ("assay.api.running", "run"): ("assay.api.running", "run_request"),
    ("assay.api.judging", "judge"): ("assay.scorers.judge.config", "JudgeConfig"),
}
_FIRST = CollectionCheckStrategy.FIRST_ITEM
_QUALIFIED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)")


def public(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its arguments checked, callable from a thread with a running event loop."""
    check = _checker(fn)

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        check(args, kwargs)
        return aio.call_blocking(fn, *args, **kwargs)

    return call


def twin(fn: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """The `async` twin of a `public` function: awaited, it runs in a worker thread."""
    unwrapped = typing.cast(Callable[P, R], getattr(fn, "__wrapped__", fn))
    check = _checker(unwrapped)

    @functools.wraps(unwrapped)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        check(args, kwargs)
        return await asyncio.to_thread(unwrapped, *args, **kwargs)

    call.__name__ = call.__qualname__ = f"a{unwrapped.__name__}"
    call.__doc__ = (
        f"The async twin of `assay.{unwrapped.__name__}`: `await assay.a{unwrapped.__name__}"
        f"(...)` does the same work in a worker thread while the event loop goes on.\n\n"
        + (unwrapped.__doc__ or "")
    )
    return call


Checker = Callable[[tuple[Any, ...], dict[str, Any]], None]


def _checker(fn: Callable[..., Any]) -> Checker:
    """What checks a call's arguments (the hints are read on the first call)."""
    name = f"assay.{fn.__name__}"

    @functools.cache
    def rules() -> tuple[inspect.Signature, dict[str, Any], dict[str, Any] | None]:
        signature = inspect.signature(fn)
        options = _OPTIONS_OF.get((fn.__module__, fn.__name__))
        target = getattr(sys.modules[options[0]], options[1]) if options else None
        return signature, _hints(fn), _hints(target) if target is not None else None

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        signature, hints, passed_on = rules()
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise InputError(f"ERROR: {name}: {exc}") from None
        for argument, value in bound.arguments.items():
            kind = signature.parameters[argument].kind
            if kind is inspect.Parameter.VAR_KEYWORD and passed_on is not None:
                for option, given in value.items():
                    if option not in passed_on:
                        raise InputError(f"ERROR: {name}: unknown argument {option!r}")
                    _check(name, option, given, passed_on[option])
            elif argument in hints:
                _check(name, argument, value, hints[argument])

    return check


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's type hint, evaluated where `fn` is defined; a hint naming what is
    only imported for type checkers is left out (not checked)."""
    namespace = vars(sys.modules[fn.__module__])
    hints: dict[str, Any] = {}
    for parameter in inspect.signature(fn).parameters.values():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty or parameter.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, dict(namespace))
            except NameError:
                continue
        hints[parameter.name] = annotation
    return hints


def _check(function: str, argument: str, value: Any, hint: Any) -> None:
    try:
        check_type(value, hint, collection_check_strategy=_FIRST)
        if isinstance(value, str) and not _takes_text(hint):
            raise TypeCheckError("is one string, not a sequence of them")
    except TypeCheckError as exc:
        reason = _reason(value, hint, exc)
        raise InputError(
            f"ERROR: {function}: argument {argument!r} must be {_readable(hint)}, not"
            f" {_described(value)}{f' ({reason})' if reason else ''}"
        ) from None


def _reason(value: Any, hint: Any, error: TypeCheckError) -> str | None:
    """What is wrong inside a collection of the right kind (`item 0 is not an instance of
    Case`); None when the value's kind is wrong itself (the message says so already)."""
    members = typing.get_args(hint) if _is_union(hint) else (hint,)
    for member in members:
        origin = typing.get_origin(member)
        if isinstance(origin, type) and isinstance(value, origin):
            try:
                check_type(value, member, collection_check_strategy=_FIRST)
            except TypeCheckError as inner:
                return _QUALIFIED.sub(r"\1", str(inner))
    text = str(error)
    return None if "did not match any element" in text or " instance of " in text else text


def _takes_text(hint: Any) -> bool:
    """Whether a string is a value of `hint` for itself, not as a sequence of letters."""
    members = typing.get_args(hint) if _is_union(hint) else (hint,)
    return any(
        m is str or m is Any or typing.get_origin(m) is typing.Literal or isinstance(m, TypeVar)
        for m in members
    )


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _readable(hint: Any) -> str:
    """`str | Path | Sequence[Case] | None`, without module names."""
    text = hint.__name__ if isinstance(hint, type) else str(hint)
    return _QUALIFIED.sub(r"\1", text).replace("NoneType", "None")


def _described(value: Any) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    kind = type(value).__name__
    return f"{kind} {shown}" if not isinstance(value, Mapping | list | tuple) else shown
