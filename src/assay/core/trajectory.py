"""An agent's trajectory: the ordered steps of one trial, and what a case expects of them.

A step is a model turn (`type: "model"`: its text, tokens and cost, each when known) or a
tool call (`type: "tool"`: its name, its arguments as a JSON object, its result or error,
its duration). A tool's result longer than `RESULT_LIMIT` characters is cut there and its
full length kept in `result_chars`, so a trial that read a large file stays small. The
capture paths (models/cli_formats.py for the claude and codex CLIs, models/trajectories.py
for python: agents and their messages) build steps with `model_step` and `tool_step`, so the
limit is applied in one place; the runner scrubs secrets from the recorded steps
(core/redact.py) as from every recorded string.

`ToolsExpect` is a case's `expect.tools`: which tools must and must not be called, the
expected order of calls and how to match it, argument subsets and a step limit. The `tools`
scorer (scorers/tools.py) checks them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

from assay.core.bounded import schema_valid
from assay.core.bounded import schema_validator as bounded_validator
from assay.core.text import cut

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

RESULT_LIMIT = 4000
"""The longest tool result (and tool error) kept, in characters; longer ones are cut here
with their full length kept in `result_chars`."""

MatchMode = Literal["strict", "unordered", "subset", "superset"]
_Name = Annotated[str, StringConstraints(min_length=1)]
_Count = Annotated[int, Field(ge=0, le=2**53)]


class _Step(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", defer_build=True)


class ModelTurn(_Step):
    """One model turn of the agent: what it wrote (tool requests aside), its tokens and cost."""

    type: Literal["model"] = "model"
    text: str = ""
    input_tokens: _Count | None = None
    output_tokens: _Count | None = None
    cost_usd: float | None = None


class ToolCall(_Step):
    """One tool call: its name, arguments (a JSON object), result or error, and duration.

    `result_chars` is set when the result (or error) was longer than `RESULT_LIMIT`: its
    full length in characters, the recorded text being its first `RESULT_LIMIT`."""

    type: Literal["tool"] = "tool"
    name: _Name
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    result: str | None = None
    error: str | None = None
    result_chars: _Count | None = None
    duration_s: Annotated[float, Field(ge=0)] | None = None


Step = Annotated[ModelTurn | ToolCall, Field(discriminator="type")]
STEPS: TypeAdapter[list[ModelTurn | ToolCall]] = TypeAdapter(
    list[Step], config=ConfigDict(defer_build=True)
)


def _cut(text: str | None) -> tuple[str | None, int | None]:
    if text is None or len(text) <= RESULT_LIMIT:
        return text, None
    return text[:RESULT_LIMIT], len(text)


def model_step(
    text: str = "",
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """A model turn as its recorded JSON (fields left out when unknown)."""
    step: dict[str, Any] = {"type": "model", "text": text}
    for key, value in (
        ("input_tokens", input_tokens),
        ("output_tokens", output_tokens),
        ("cost_usd", cost_usd),
    ):
        if value is not None:
            step[key] = value
    return step


def tool_step(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    id: str | None = None,
    result: str | None = None,
    error: str | None = None,
    duration_s: float | None = None,
) -> dict[str, Any]:
    """A tool call as its recorded JSON: a result or error over `RESULT_LIMIT` is cut, its
    length kept in `result_chars`."""
    step: dict[str, Any] = {"type": "tool", "name": name, "arguments": dict(arguments or {})}
    if id is not None:
        step["id"] = id
    result, result_chars = _cut(result)
    error, error_chars = _cut(error)
    if result is not None:
        step["result"] = result
    if error is not None:
        step["error"] = error
    if result_chars is not None or error_chars is not None:
        step["result_chars"] = max(result_chars or 0, error_chars or 0)
    if duration_s is not None:
        step["duration_s"] = duration_s
    return step


def checked_steps(value: Any) -> list[dict[str, Any]]:
    """Steps a runner or agent reported, validated and with long results cut; ValueError
    naming the first bad step otherwise."""
    if not isinstance(value, list):
        raise ValueError(f"a trajectory must be a list of steps, got {type(value).__name__}")
    steps: list[dict[str, Any]] = []
    for index, raw in enumerate(value):
        if not isinstance(raw, dict):
            raise ValueError(f"trajectory step {index} must be an object")
        step = dict(raw)
        if step.get("type") == "tool":
            for key in ("result", "error"):
                text = step.get(key)
                if isinstance(text, str) and len(text) > RESULT_LIMIT:
                    step[key] = text[:RESULT_LIMIT]
                    step["result_chars"] = max(len(text), step.get("result_chars") or 0)
        steps.append(step)
    try:
        parsed = STEPS.validate_python(steps)
    except ValueError as exc:
        raise ValueError(f"bad trajectory: {_first_error(exc)}") from None
    return [s.model_dump(exclude_none=True) for s in parsed]


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"step {where}: {first['msg']}"
    return str(exc)


def tool_calls(steps: list[ToolCall | ModelTurn] | None) -> list[ToolCall]:
    """The tool calls of a trajectory, in order."""
    return [s for s in steps or [] if isinstance(s, ToolCall)]


def is_schema(expected: dict[str, Any]) -> bool:
    """Whether an `expect.tools.args` value is a JSON Schema (it names one with a `$schema`
    key) rather than a JSON subset of the arguments."""
    return "$schema" in expected


def schema_validator(schema: dict[str, Any]) -> Validator:
    """The validator of a tool's argument schema, checked and bounded (core/bounded.py:
    references inside the schema only, patterns and validation time-limited); ValueError
    saying what is wrong."""
    return bounded_validator(schema, require_dialect=True)


def arguments_match(arguments: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether a call's arguments meet an `expect.tools.args` value: valid against it when it
    is a JSON Schema (`is_schema`), else containing it as a JSON subset (`json_contains`).
    Raises LimitExceeded when checking the schema runs past a limit (core/bounded.py)."""
    if is_schema(expected):
        return schema_valid(schema_validator(expected), arguments)
    return json_contains(arguments, expected)


def json_contains(actual: Any, expected: Any) -> bool:
    """Whether `actual` contains `expected` as a JSON subset: objects by key, recursively;
    lists item by item, of the same length; scalars equal, a boolean never equal to a
    number."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and json_contains(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(json_contains(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and actual == expected
    return bool(actual == expected)


def subset_difference(actual: Any, expected: Any, path: str = "") -> str | None:
    """Where `actual` first fails to contain `expected` as a JSON subset (`json_contains`),
    in words: `argument reason missing`, `argument urgency is "low", expected "high"`; None
    when it contains it."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            at = f"{path}.{key}" if path else str(key)
            if key not in actual:
                return f"argument {at} missing"
            found = subset_difference(actual[key], value, at)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list) and len(actual) == len(expected):
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = subset_difference(a, e, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if json_contains(actual, expected):
        return None
    what = f"argument {path}" if path else "the arguments"
    return f"{what} is {_shown(actual)}, expected {_shown(expected)}"


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return cut(text, 80)


def _checked_args(expected: dict[str, Any]) -> dict[str, Any]:
    if is_schema(expected):
        schema_validator(expected)
    return expected


class ToolsExpect(BaseModel):
    """What a case expects of the trial's tool calls (`expect.tools`; every key optional).

    `must_call`: tools called at least once; `must_not_call`: tools never called (a call is
    a blocking finding); `order`: the expected sequence of tool names, compared with the
    calls under `match` (agentevals' modes: `strict` the same calls in the same order,
    `unordered` the same calls in any order, `subset` no call beyond those listed, `superset`
    at least the calls listed; repeated names count); `args`: per tool, a JSON object that
    the arguments of at least one of its calls contain (a JSON subset), or a JSON Schema
    they validate against (an object with a `$schema` key; checked when the catalogue is
    read); `max_steps`: the most steps (model turns and tool calls) a trial may take."""

    model_config = ConfigDict(strict=True, extra="forbid", defer_build=True)
    must_call: list[_Name] | None = None
    must_not_call: list[_Name] | None = None
    order: list[_Name] | None = None
    match: MatchMode = "strict"
    args: dict[str, Annotated[dict[str, Any], AfterValidator(_checked_args)]] | None = None
    max_steps: Annotated[int, Field(ge=1, le=2**53)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ToolsExpect:
        forbidden = set(self.must_not_call or ())
        both = forbidden & (set(self.must_call or ()) | set(self.order or ()))
        if both:
            raise ValueError(f"{', '.join(sorted(both))}: both required and in must_not_call")
        forbidden_args = forbidden & set(self.args or {})
        if forbidden_args:
            raise ValueError(
                f"args given for {', '.join(sorted(forbidden_args))}, which is in must_not_call"
            )
        return self

    @property
    def expected(self) -> list[str]:
        """The tools the case expects called (`must_call`, `order` and `args`), each once."""
        return list(
            dict.fromkeys([*(self.must_call or ()), *(self.order or ()), *(self.args or {})])
        )
