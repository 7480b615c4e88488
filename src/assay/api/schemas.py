"""JSON Schemas of every record assay reads or writes, and of the JSON summaries its
commands print (`assay schema NAME`; see `assay.api.outputs`).

The models are named here by where they live and imported only when one is asked for:
`assay schema case` then builds the Case model alone, not every output and report model.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

# The records assay reads or writes: name -> "module:class".
RECORD_MODELS: dict[str, str] = {
    "case": "assay.core.records:Case",
    "trial": "assay.core.records:Trial",
    "score": "assay.core.records:ScoreRow",
    "comparison": "assay.core.records:Comparison",
    "label": "assay.core.records:Label",
    "rubric": "assay.core.rubric:Rubric",
    "report": "assay.reports.model:Report",
}

# The JSON summaries the commands print (`--json`): name -> "module:class".
OUTPUT_MODELS: dict[str, str] = {
    "run-summary": "assay.api.outputs:RunSummary",
    "judge-summary": "assay.api.outputs:JudgeSummary",
    "summary": "assay.verdict.checks:ScoreSummary",
    "calibration": "assay.api.outputs:Calibration",
    "bias": "assay.api.outputs:BiasReport",
    "winrate": "assay.api.outputs:WinRates",
    "rank": "assay.api.outputs:Ranking",
    "history": "assay.api.outputs:History",
    "import-summary": "assay.api.outputs:ImportSummary",
    "judge-bench": "assay.api.outputs:JudgeBench",
}


class LazyModels(Mapping[str, "type[BaseModel]"]):
    """A read-only name -> pydantic model mapping whose names are known up front and whose
    models are imported on first access (listing the names imports nothing)."""

    def __init__(self, where: Mapping[str, str]) -> None:
        self._where = dict(where)

    def __getitem__(self, name: str) -> type[BaseModel]:
        module, _, attr = self._where[name].partition(":")
        model: type[BaseModel] = getattr(importlib.import_module(module), attr)
        return model

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


SCHEMAS: Mapping[str, type[BaseModel]] = LazyModels({**RECORD_MODELS, **OUTPUT_MODELS})


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a named record."""
    schema = SCHEMAS[name].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
