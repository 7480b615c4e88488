"""User-given regular expressions and JSON Schemas, run on untrusted text within limits.

A case's `expect.regex`, the `regex` scorer's `pattern`, `expect.json_schema` and the JSON
Schemas of `expect.tools.args` are written by the user and run on what a model or an agent
returned. Scoring must end and must not reach outside the schema, whatever the response:

- Regular expressions run on the `regex` module (Python's `re` syntax and Unicode semantics,
  so a catalogue's patterns mean what they meant) with a limit of CPU time per search,
  `REGEX_TIMEOUT_S`. A search that exceeds it (catastrophic backtracking, `^(a+)+$` against
  `aaaa…!`) raises `LimitExceeded`: the check has no answer, and the scorer writes an errored
  score row (never a pass, never a hang). RE2 (`google-re2`) was the other choice: linear
  time, but it lacks look-around, back-references, possessive and atomic groups, and its
  `\\w`, `\\d` and `\\b` are ASCII-only, so existing patterns would be refused or silently
  change meaning on non-English text.
- JSON Schemas are validated with jsonschema, extended: `pattern`, `patternProperties` and
  `additionalProperties` search with the limited regular expressions; `uniqueItems` compares
  items by hashing (jsonschema's check is quadratic on objects: 20,000 of them took
  minutes); every keyword checks a deadline, `SCHEMA_TIMEOUT_S` of CPU time per validation; a schema
  that refers to itself without end (`{"$ref": "#"}`) stops at Python's recursion limit.
  Each of these raises `LimitExceeded`.
- `$ref` (and `$dynamicRef`, `$recursiveRef`) resolves inside the schema only (and to the
  bundled meta-schemas): nothing is fetched or read. `schema_validator` refuses a schema
  with a reference that does not resolve there (an `http://` or `file://` one), a pattern
  that does not compile, `unevaluatedProperties` together with `patternProperties` (whose
  patterns jsonschema searches with `re` itself, without a limit) and a reference cycle
  found by validating `null`, `{}`, `[]`, `[null]` and an object of every property the
  schema names; so the catalogue read (`assay validate`, and
  every command that reads cases) refuses them naming file, line and field.

`regex` and jsonschema are imported when a pattern or a schema is first used: a run whose
cases have none starts without them.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urljoin

if TYPE_CHECKING:
    import regex
    from jsonschema.protocols import Validator
    from referencing import Registry, Resource

REGEX_TIMEOUT_S = 1.0
"""The most CPU time one regular-expression search may take (seconds; the `regex` module
counts CPU time, so on a loaded machine the wall-clock time is longer)."""
SCHEMA_TIMEOUT_S = 2.0
"""The most CPU time (of its thread) one JSON Schema validation may take (seconds), its
pattern searches included."""
DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
_PROBES: tuple[Any, ...] = (None, {}, [], [None])

T = TypeVar("T")
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "assay_schema_deadline", default=None
)


class LimitExceeded(Exception):
    """A check ran past a limit (time, recursion): it has no answer. A scorer turns it into
    an errored score row, which the gate never passes."""


# Regular expressions --------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def compile_regex(pattern: str, ignore_case: bool = False) -> regex.Pattern[str]:
    """The compiled pattern (Python `re` syntax); ValueError saying why it does not compile."""
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


def regex_search(pattern: regex.Pattern[str], text: str, timeout_s: float | None = None) -> bool:
    """Whether `pattern` matches somewhere in `text`; LimitExceeded when the search takes
    longer than `timeout_s` (default `REGEX_TIMEOUT_S`)."""
    limit = REGEX_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        return pattern.search(text, timeout=max(limit, 0.001)) is not None
    except TimeoutError:
        raise LimitExceeded(
            f"regular expression {pattern.pattern!r} ran over its {limit:g} s limit on"
            f" {len(text):,} characters (catastrophic backtracking): no answer"
        ) from None


# JSON Schemas ---------------------------------------------------------------------------


def schema_validator(schema: dict[str, Any], *, require_dialect: bool = False) -> Validator:
    """The bounded validator of a JSON Schema, checked (see the module docstring); ValueError
    saying what is wrong. The dialect is the one `$schema` names (required with
    `require_dialect`), else draft 2020-12."""
    import json

    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"not a JSON Schema: {exc}") from None
    return _validator(text, require_dialect)


@functools.lru_cache(maxsize=256)
def _validator(text: str, require_dialect: bool) -> Validator:
    import json

    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        schema = json.loads(text)
    except RecursionError:
        raise ValueError("the schema is nested too deep") from None
    if not isinstance(schema, dict):
        raise ValueError("a JSON Schema must be an object")
    dialect = schema.get("$schema")
    if not isinstance(dialect, str) and (require_dialect or "$schema" in schema):
        raise ValueError("$schema must name a JSON Schema dialect, e.g. " + DEFAULT_DIALECT)
    kind = validator_for(schema, default=None if require_dialect else _default_kind())  # type: ignore[arg-type]
    if kind is None:
        raise ValueError(f"unknown $schema {dialect!r} (use {DEFAULT_DIALECT})")
    try:
        kind.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"invalid JSON Schema: {exc.message}") from None
    except RecursionError:
        raise ValueError("the schema is nested too deep") from None
    names = _check_contents(schema, kind)
    validator: Validator = _bounded_kind(kind)(schema, registry=_registry())
    for probe in (*_PROBES, dict.fromkeys(names)):
        try:
            schema_valid(validator, probe)
        except LimitExceeded as exc:
            raise ValueError(f"the schema cannot be checked: {exc}") from None
    return validator


def schema_valid(validator: Validator, instance: Any) -> bool:
    """Whether `instance` is valid against the bounded validator; LimitExceeded past
    `SCHEMA_TIMEOUT_S` or Python's recursion limit."""
    return _within_limits(lambda: bool(validator.is_valid(instance)))


def schema_error(validator: Validator, instance: Any) -> str | None:
    """Why `instance` is not valid (jsonschema's most relevant error, with where it is:
    `reason: 'reason' is a required property`), None when it is valid; LimitExceeded as
    `schema_valid`."""
    from jsonschema.exceptions import best_match

    def first() -> str | None:
        error = best_match(validator.iter_errors(instance))
        if error is None:
            return None
        where = ".".join(str(part) for part in error.absolute_path)
        return f"{where}: {error.message}" if where else error.message

    return _within_limits(first)


def _within_limits(check: Callable[[], T]) -> T:
    from referencing.exceptions import Unresolvable

    token = _deadline.set(time.thread_time() + SCHEMA_TIMEOUT_S)
    try:
        return check()
    except RecursionError:
        raise LimitExceeded(
            "the schema refers to itself without end, or the value is nested too deep"
        ) from None
    except Unresolvable as exc:  # refused at the catalogue read: defence in depth
        raise LimitExceeded(f"a $ref does not resolve inside the schema: {exc}") from None
    finally:
        _deadline.reset(token)


def _default_kind() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # (an attrs class)


@functools.cache
def _registry() -> Registry[Any]:
    """References resolve inside the schema (and to the bundled meta-schemas) only."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]  # (an attrs class)


def _check_contents(schema: dict[str, Any], kind: Any) -> list[str]:
    """Refuse references that leave the schema, patterns that do not compile, and
    `unevaluatedProperties` with `patternProperties` (see the module docstring); the
    property names the schema mentions (an object of them, each null, probes for a
    reference cycle under a property)."""
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    meta = kind.META_SCHEMA
    dialect = meta.get("$id") or meta.get("id") or ""
    specification = specification_with(dialect, default=DRAFT202012)
    root = specification.create_resource(schema)
    base = root.id() or ""
    registry = SPECIFICATIONS.combine(_registry()).with_resource(base, root)
    unevaluated = patterned = False
    names: dict[str, None] = {}
    try:
        for where, node in _nodes(root, base):
            if isinstance(node.get("properties"), dict):
                names.update(dict.fromkeys(node["properties"]))
            for key in _REFS:
                ref = node.get(key)
                if isinstance(ref, str):
                    try:
                        registry.resolver(base_uri=where).lookup(ref)
                    except Unresolvable:
                        raise ValueError(
                            f"{key} {ref!r} does not resolve inside the schema (only references"
                            " within it, such as '#/$defs/name', are followed; nothing is"
                            " fetched or read)"
                        ) from None
            patterns = [node.get("pattern")]
            if isinstance(node.get("patternProperties"), dict):
                patterned = True
                patterns.extend(node["patternProperties"])
            unevaluated = unevaluated or "unevaluatedProperties" in node
            for pattern in patterns:
                if isinstance(pattern, str):
                    compile_regex(pattern)
    except RecursionError:
        raise ValueError("the schema is nested too deep") from None
    if unevaluated and patterned:
        raise ValueError(
            "unevaluatedProperties with patternProperties is not supported: its pattern"
            " searches cannot be time-limited (use additionalProperties)"
        )
    return list(names)


def _nodes(resource: Resource[Any], base: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema that is an object, with the base URI its references resolve against."""
    contents = resource.contents
    if isinstance(contents, dict):
        yield base, contents
    for sub in resource.subresources():
        own = sub.id()
        yield from _nodes(sub, urljoin(base, own) if own else base)


Keyword = Callable[[Any, Any, Any, dict[str, Any]], Any]


@functools.cache
def _bounded_kind(kind: Any) -> Any:
    """`kind` with every keyword checking the deadline, and the pattern and uniqueness
    keywords replaced by bounded ones."""
    from jsonschema.validators import extend

    keywords: dict[str, Keyword] = {name: _timed(fn) for name, fn in kind.VALIDATORS.items()}
    replaced: dict[str, Keyword] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    for name, fn in replaced.items():
        if name in keywords:
            keywords[name] = _timed(fn)
    return extend(kind, validators=keywords)  # type: ignore[no-untyped-call]


def _remaining() -> float:
    deadline = _deadline.get()
    if deadline is None:
        return REGEX_TIMEOUT_S
    left = deadline - time.thread_time()
    if left <= 0:
        raise LimitExceeded(
            f"JSON Schema validation ran over its {SCHEMA_TIMEOUT_S:g} s limit: no answer"
        )
    return left


def _timed(keyword: Keyword) -> Keyword:
    def timed(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Any:
        _remaining()
        errors = keyword(validator, value, instance, schema)
        if errors is not None:
            yield from errors

    return timed


def _matches(pattern: str, text: str) -> bool:
    return regex_search(compile_regex(pattern), text, min(REGEX_TIMEOUT_S, _remaining()))


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(_matches(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(key) for key in sorted(extras))
        yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: dict[str, Any]) -> Any:
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen: set[Any] = set()
        for item in instance:
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"{instance!r:.200} has non-unique elements")
                return
            seen.add(key)


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (1 and 1.0 equal, true and 1 not; object
    keys in any order), as JSON Schema compares items."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("l", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, _canonical(item)) for key, item in value.items()))
    if value is None:
        return ("z",)
    return ("x", id(value))
