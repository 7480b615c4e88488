"""The documented records (docs/design.md): Case, Trial, Score row, Comparison, Label.

Every output file assay writes is one of these, so `assay schema NAME` can print its JSON
Schema and any stage can be re-run from stored outputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from assay.core.bounded import compile_regex, schema_validator
from assay.core.errors import InputError
from assay.core.jsonl import describe_validation_error
from assay.core.trajectory import Step, ToolsExpect

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
Risk = Literal["low", "medium", "high"]
Kind = Literal["answer", "refusal", "escalation"]

MAX_INT = 2**53
"""The largest integer a record holds (a trial number, a token count, a length): exact as a
float and in JavaScript's JSON (the HTML report), and far within the signed 64-bit INTEGER
that SQLite stores (the store's trial columns; a sum of 1,024 of them still fits)."""
TrialNumber = Annotated[int, Field(ge=1, le=MAX_INT)]
Count = Annotated[int, Field(ge=0, le=MAX_INT)]


class Record(BaseModel):
    """Strict base: JSON types are checked, never coerced ("1" is not 1).

    Each record builds its validator when first used, not when this module is imported: a
    run validates Cases before its first call and makes Trials only after it, `assay schema
    case` needs the Case alone, and most commands never touch a Label."""

    model_config = ConfigDict(strict=True, defer_build=True)


class Output(BaseModel):
    """A JSON document a command prints or writes (summaries, reports): unknown keys are
    refused when validating, so its JSON Schema (`assay schema`) is exact. Like a record, it
    builds its validator when first used (a run reaches its first call without building the
    summaries and reports it writes after it)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class ContextDoc(Record):
    """A document the case supplies to the system under test."""

    model_config = ConfigDict(extra="allow")
    id: NonEmpty
    text: str
    title: str | None = None


def _compiles(pattern: str) -> str:
    compile_regex(pattern)
    return pattern


def _checked_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema_validator(schema)
    return schema


class Expect(Record):
    """What deterministic scorers check a response against.

    `regex` must compile and `json_schema` must be a valid JSON Schema whose references stay
    inside it (core/bounded.py): checked when the catalogue is read, so a bad one is refused
    naming file, line and field before any call."""

    model_config = ConfigDict(extra="forbid")
    refuse: bool | None = None
    escalate: bool | None = None
    cite_one_of: list[NonEmpty] | None = None
    retrieve: list[NonEmpty] | None = None
    contains: list[str] | None = None
    not_contains: list[str] | None = None
    regex: Annotated[str, AfterValidator(_compiles)] | None = None
    json_schema: Annotated[dict[str, Any], AfterValidator(_checked_schema)] | None = None
    tools: ToolsExpect | None = None
    """What the trial's tool calls must do (core/trajectory.py; the `tools` scorer)."""


class Case(Record):
    """One evaluation case of a JSONL catalogue."""

    model_config = ConfigDict(extra="allow")
    id: NonEmpty
    category: NonEmpty
    prompt: NonEmpty
    risk: Risk
    criteria: Annotated[list[NonEmpty], Field(min_length=1)]
    reference: str | None = None
    context: list[ContextDoc] | None = None
    turns: list[NonEmpty] | None = None
    expect: Expect | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    cluster: NonEmpty | None = None
    """Cases sharing this value are one unit of evidence (a template, a source document, a
    conversation): intervals, looks and corpus bounds average them first
    (`verdict.clusters`). A case without one is its own unit."""

    @field_validator("id", "category", "cluster")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("criteria")
    @classmethod
    def _criteria_not_blank(cls, value: list[str]) -> list[str]:
        for index, item in enumerate(value):
            if not item.strip():
                raise ValueError(f"criterion {index} must not be blank")
        return value


class Usage(Record):
    """Token counts of one trial (summed over its model calls)."""

    input_tokens: Count = 0
    output_tokens: Count = 0


class AgentState(Record):
    """An agent's final state, as the deterministic scorers read it."""

    model_config = ConfigDict(extra="allow")
    kind: Kind = "answer"
    citations: list[str] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list)


class Trial(Record):
    """One response of the system under test to one case, under one condition."""

    case_id: NonEmpty
    trial: TrialNumber
    condition: NonEmpty
    runner: str
    response: str
    usage: Usage | None = None
    cost_usd: float | None = None
    model: str | None = None
    latency_s: float | None = None
    error: str | None = None
    state: AgentState | None = None
    prompt_sha256: str | None = None
    skill_sha256: str | None = None
    run_id: str | None = None
    created_at: str | None = None
    trajectory: list[Step] | None = None
    """The agent's steps, model turns and tool calls in order (core/trajectory.py), when
    its runner reports them: the claude and codex CLIs, a python: agent."""


def stored_trials(records: Iterable[dict[str, Any]], run_id: str) -> list[Trial]:
    """A run's trial records from the store, validated. A record that is not a Trial (one
    an older assay stored, or a damaged store) is an InputError naming the run, the trial
    and the field, never a traceback."""
    trials = []
    for number, record in enumerate(records, start=1):
        try:
            trials.append(Trial.model_validate(record))
        except ValidationError as exc:
            details = "; ".join(describe_validation_error(exc))
            which = ", ".join(
                f"{key} {record.get(key)!r}" for key in ("case_id", "trial", "condition")
            )
            raise InputError(
                f"ERROR: run {run_id}: trial {number} ({which}): {details} (stored by"
                " an older assay, or the store is damaged): run it again with a fresh store"
            ) from None
    return trials


class ScoreRow(Record):
    """Scores of one trial: one number per rubric metric (extra numeric fields)."""

    model_config = ConfigDict(extra="allow", strict=True)
    case_id: NonEmpty
    trial: TrialNumber
    condition: NonEmpty
    blocker: bool = False
    notes: str | None = None
    source: str | None = None
    confidence: float | None = None
    evidence: str | list[str] | dict[str, Any] | None = None
    # Judge annotations (assay judge): not metrics, so they are declared here.
    overall: float | None = None
    overall_ln: float | None = None
    adequacy: float | None = None
    justification: str | dict[str, Any] | None = None
    improvement: str | None = None
    tier: str | None = None
    judge_model: str | None = None
    judge_prompt_sha256: str | None = None
    scale: str | None = None
    spread: dict[str, Any] | None = None
    judges: list[dict[str, Any]] | None = None
    # How a grounding scorer's figure was made: "lexical" (word overlap) or "judge:<model>".
    method: str | None = None


Winner = Literal["a", "b", "tie"]


class Pass(Record):
    """One judging pass of a pairwise comparison, mapped back to the original labels."""

    order: Literal["ab", "ba"]
    winner: Winner
    confidence: float | None = None
    judge: str | None = None
    """The panel judge that made the pass (a panel's comparison holds every judge's passes)."""


class Comparison(Record):
    """A pairwise verdict between two responses to the same case and trial."""

    model_config = ConfigDict(extra="allow", strict=True)
    case_id: NonEmpty
    trial: TrialNumber = 1
    a: NonEmpty
    b: NonEmpty
    judge: str | None = None
    passes: list[Pass] = Field(default_factory=list)
    verdict: Winner
    confidence: float | None = None
    consistent: bool | None = None
    preference: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    len_a: Count | None = None
    len_b: Count | None = None
    criteria: dict[str, Any] | None = None
    expectations: dict[Literal["a", "b"], list[str]] | None = None
    """Set when the case's deterministic expectations decided the verdict without a judge
    call: the checks each response missed (e.g. `{"a": [], "b": ["json_schema"]}`)."""

    @property
    def by_rule(self) -> bool:
        """Decided by a rule, not by a judge: the case's expectations, or identical responses
        (tier `rule`). Bias audits of the judge leave these out."""
        return self.expectations is not None or (self.model_extra or {}).get("tier") == "rule"


class Label(Record):
    """One rating of one item on one dimension, by a human or a judge (calibration)."""

    model_config = ConfigDict(extra="allow", strict=True)
    item_id: NonEmpty
    dimension: NonEmpty
    rater: NonEmpty
    value: float | str
    scale: str | None = None
    """The declared rating scale of a numeric dimension, `LOW-HIGH` (`1-5`): calibrate
    reports and uses it rather than the range the values happen to cover."""

    @field_validator("scale")
    @classmethod
    def _scale(cls, value: str | None) -> str | None:
        if value is not None:
            low, sep, high = value.partition("-")
            if not (sep and low.isdigit() and high.isdigit() and int(low) < int(high)):
                raise ValueError(
                    f"must be LOW-HIGH with whole numbers, LOW < HIGH (1-5), got {value!r}"
                )
        return value

    @property
    def scale_range(self) -> tuple[float, float] | None:
        """The declared scale as (low, high), None when not declared."""
        if self.scale is None:
            return None
        low, _, high = self.scale.partition("-")
        return float(low), float(high)

    @field_validator("value")
    @classmethod
    def _no_bool(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("must be a number or a category, not a boolean")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value}")
        return value
