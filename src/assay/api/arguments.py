"""The public API's arguments checked against its type hints, so that a wrong type is an
InputError naming the function and the argument (`ERROR: assay.run: trials: expected int |
None, got str ('3')`) before anything is written, not an AttributeError or TypeError
from deep inside.

Each argument given is validated by pydantic in strict mode (no `"3"` for 3, no `True` for a
number; a record may be given as the dict of its fields, validated as the record). `assay.X`
and `assay.api.X` are the checked functions (`api/__init__.py`); the command line calls the
modules' functions with the values Typer parsed and typed, and builds no validator.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from assay.core.errors import InputError
from assay.core.numbers import plain_number
from assay.core.text import cut

F = TypeVar("F", bound=Callable[..., Any])
CONFIG = ConfigDict(strict=True, arbitrary_types_allowed=True)
SHOWN_ERRORS = 3
SHOWN_VALUE = 40


def checked(function: F, name: str) -> F:
    """`function` with each argument given checked against its type hint (`name` is how the
    errors call it, e.g. `assay.run`); a `**settings: Unpack[SomeTypedDict]` argument is
    checked key by key against the TypedDict (an unknown key is an error), another
    `**options` argument is passed on unchecked."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise InputError(f"ERROR: {name}: {_unbound(exc)}") from None
        for argument, value in bound.arguments.items():
            parameter = signature.parameters[argument]
            if parameter.kind == parameter.VAR_KEYWORD:
                keys = _keywords(function, argument)
                if keys is not None:
                    bound.arguments[argument] = {
                        key: _valid(name, key, _keyword_hint(name, keys, key), given)
                        for key, given in value.items()
                    }
                continue
            if parameter.kind == parameter.VAR_POSITIONAL:
                continue
            bound.arguments[argument] = _valid(name, argument, _hint(function, argument), value)
        return function(*bound.args, **bound.kwargs)

    return typing.cast(F, call)


def plain(value: Any, depth: int = 3) -> Any:
    """`value` with numpy's numbers (and other `numbers.Real`) as Python's, in it and in the
    dicts, lists and tuples it holds (`depth` levels down): `np.float64(4.0)` is 4.0."""
    if isinstance(value, dict) and depth:
        return {key: plain(item, depth - 1) for key, item in value.items()}
    if isinstance(value, list | tuple) and depth:
        return type(value)(plain(item, depth - 1) for item in value)
    return plain_number(value)


def _valid(name: str, argument: str, hint: Any, value: Any) -> Any:
    """`value` validated against `hint` (strict; numpy numbers as Python's, `plain`), or an
    InputError naming the argument."""
    value = plain(value)
    try:
        return _adapter(hint).validate_python(value)
    except ValidationError as exc:
        raise InputError(
            [f"ERROR: {name}: {line}" for line in _problems(argument, hint, value, exc)]
        ) from None


@functools.cache
def _keywords(function: Callable[..., Any], argument: str) -> dict[str, Any] | None:
    """The keys and type hints of a `**argument: Unpack[TD]` parameter (None: not typed so)."""
    hint = _hint(function, argument)
    if typing.get_origin(hint) is not typing.Unpack:
        return None
    return typing.get_type_hints(typing.get_args(hint)[0])


def _keyword_hint(name: str, keys: dict[str, Any], key: str) -> Any:
    if key not in keys:
        raise InputError(f"ERROR: {name}: unexpected keyword {key!r}")
    return keys[key]


def _unbound(exc: TypeError) -> str:
    """A binding error without Python's function name: `unexpected keyword 'x'`."""
    text = str(exc)
    if "unexpected keyword argument" in text:
        return "unexpected keyword " + text.rsplit("argument ", 1)[-1]
    return text


@functools.cache
def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The parameters' type hints, evaluated in the function's module (the return type,
    which may name what is imported for type checkers only, is left alone)."""
    hints = {}
    for parameter in inspect.signature(function).parameters.values():
        annotation = parameter.annotation
        if isinstance(annotation, str):
            # (as `inspect.get_annotations(eval_str=True)` does, for the parameters only)
            annotation = eval(annotation, vars(inspect.getmodule(function)))
        hints[parameter.name] = annotation
    return hints


def _hint(function: Callable[..., Any], argument: str) -> Any:
    return _hints(function)[argument]


@functools.cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(hint, config=CONFIG)


def _problems(argument: str, hint: Any, value: Any, exc: ValidationError) -> list[str]:
    """What is wrong: inside a sequence, each item's field errors (`cases[0].id: ...`);
    otherwise the type expected and the one given."""
    inside = []
    for error in exc.errors():
        loc = error["loc"]
        index = next((i for i, part in enumerate(loc) if isinstance(part, int)), None)
        if index is None:
            continue
        place = argument + "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc[index:]
        )
        inside.append(f"{place}: {error['msg']}")
    if inside:
        return list(dict.fromkeys(inside))[:SHOWN_ERRORS]
    shown = cut(repr(value), SHOWN_VALUE)
    return [f"{argument}: expected {type_name(hint)}, got {type(value).__name__} ({shown})"]


def type_name(hint: Any) -> str:
    """A type hint as a person writes it: `str | Path | Sequence[Case] | None`."""
    if hint is None or hint is type(None):
        return "None"
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " | ".join(type_name(arg) for arg in typing.get_args(hint))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is not None:
        if origin is typing.Literal:
            return " | ".join(repr(arg) for arg in args)
        inner = ", ".join("..." if arg is Ellipsis else type_name(arg) for arg in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]" if args else type_name(origin)
    if isinstance(hint, list):  # Callable's argument list
        return "[" + ", ".join(type_name(arg) for arg in hint) + "]"
    return str(getattr(hint, "__name__", hint))
