"""Structured output: the response parses as JSON and validates against a JSON Schema."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

from assay.core.errors import InputError
from assay.scorers.base import CheckScorer, Metrics, ScoreContext, register
from assay.scorers.common import flag

FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def parse_json(text: str) -> tuple[bool, Any]:
    """Parse a response as JSON, tolerating one surrounding Markdown code fence."""
    match = FENCE.match(text)
    try:
        return True, json.loads(match.group(1) if match else text)
    except (json.JSONDecodeError, RecursionError):
        return False, None


@register("json_schema")
class JsonSchema(CheckScorer):
    """`json_valid`: the response is JSON; `json_schema`: it validates against the case's
    `expect.json_schema` (or the `schema` option). Skipped when there is no schema."""

    name = "json_schema"
    metrics = ("json_valid", "json_schema")
    primary = ("json_schema",)

    def __init__(self, schema: dict[str, Any] | None = None) -> None:
        self.schema = self._validator(schema, "option schema") if schema is not None else None
        self._cache: dict[str, Draft202012Validator] = {}

    @staticmethod
    def _validator(schema: dict[str, Any], where: str) -> Draft202012Validator:
        # jsonschema is imported here, when a schema is checked: `assay run` starts without it.
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise InputError(
                f"ERROR: scorer 'json_schema': {where}: invalid JSON Schema: {exc.message}"
            ) from None
        return Draft202012Validator(schema)

    def check(self, ctx: ScoreContext) -> Metrics | None:
        validator = self.schema
        expect = ctx.case.expect
        if validator is None and expect is not None and expect.json_schema is not None:
            key = json.dumps(expect.json_schema, sort_keys=True)
            if key not in self._cache:
                self._cache[key] = self._validator(
                    expect.json_schema, f"case {ctx.case.id}: expect.json_schema"
                )
            validator = self._cache[key]
        if validator is None:
            return None
        ok, value = parse_json(ctx.trial.response)
        return {"json_valid": flag(ok), "json_schema": flag(ok and validator.is_valid(value))}
