"""Structured output: the response parses as JSON and validates against a JSON Schema."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

from assay.core.bounded import schema_valid, schema_validator
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
    `expect.json_schema` (or the `schema` option). Skipped when there is no schema.

    The schema is checked and validated within limits (core/bounded.py: references inside
    the schema only, patterns and validation time-limited); a validation past a limit is an
    errored score row."""

    name = "json_schema"
    metrics = ("json_valid", "json_schema")
    primary = ("json_schema",)

    def __init__(self, schema: dict[str, Any] | None = None) -> None:
        self.schema = self._validator(schema, "option schema") if schema is not None else None

    @staticmethod
    def _validator(schema: dict[str, Any], where: str) -> Validator:
        try:
            return schema_validator(schema)
        except ValueError as exc:
            raise InputError(f"ERROR: scorer 'json_schema': {where}: {exc}") from None

    def check(self, ctx: ScoreContext) -> Metrics | None:
        validator = self.schema
        expect = ctx.case.expect
        if validator is None and expect is not None and expect.json_schema is not None:
            validator = self._validator(
                expect.json_schema, f"case {ctx.case.id}: expect.json_schema"
            )
        if validator is None:
            return None
        ok, value = parse_json(ctx.trial.response)
        return {"json_valid": flag(ok), "json_schema": flag(ok and schema_valid(validator, value))}
