"""JSON Schemas of every record assay reads or writes, and of the JSON summaries its
commands print (`assay schema NAME`; see `assay.api.outputs`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from assay.api.outputs import OUTPUTS
from assay.core.records import Case, Comparison, Label, ScoreRow, Trial
from assay.core.rubric import Rubric
from assay.reports.model import Report

SCHEMAS: dict[str, type[BaseModel]] = {
    "case": Case,
    "trial": Trial,
    "score": ScoreRow,
    "comparison": Comparison,
    "label": Label,
    "rubric": Rubric,
    "report": Report,
    **OUTPUTS,
}


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a named record."""
    schema = SCHEMAS[name].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
