"""What a judge must reply: JSON Schemas (sent as `Request.json_schema`) and pydantic parsing.

The schemas keep every string and list bounded (maxLength, maxItems) so grammar-constrained
decoding (llama.cpp) cannot run away, mark every field required and forbid extra ones (the
OpenAI strict subset). Replies are read strictly, as the schemas say: a score is a JSON
integer (`true` is no 1, `"5"` no 5), a flag a JSON boolean, a winner one of the strings. A
reply that does not fit raises `ReplyError` with a message the repair prompt quotes back to
the judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from assay.core.jsonl import describe_validation_error

QUOTE_CHARS = 300
TEXT_CHARS = 600
MAX_QUOTES = 6
Choice = Literal["1", "2", "tie"]


class ReplyError(Exception):
    """A judge reply that is not the JSON asked for."""


class Reply(BaseModel):
    # strict: no coercion (pydantic's lax mode reads `true` as 1 and "5" as 5); an integer
    # is still a number where a float is asked (a confidence of 1)
    model_config = ConfigDict(extra="forbid", strict=True)


Quote = Annotated[str, StringConstraints(max_length=QUOTE_CHARS * 2)]
Prose = Annotated[str, StringConstraints(max_length=TEXT_CHARS * 2)]


class CriterionScore(Reply):
    evidence: Annotated[list[Quote], Field(max_length=MAX_QUOTES * 2)]
    score: int
    justification: Prose


class DirectReply(Reply):
    scores: dict[str, CriterionScore]
    blocker: bool
    blocker_reason: Prose
    improvement: Prose


class PairwiseReply(Reply):
    evidence: Annotated[list[Quote], Field(max_length=MAX_QUOTES * 2)]
    criteria: dict[str, Choice]
    winner: Choice
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]
    justification: Prose


class ScreenReply(DirectReply):
    """The cascade's screen: a full direct judgement plus the 0–1 adequacy, in one call."""

    adequacy: Annotated[float, Field(ge=0.0, le=1.0)]


def _string(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


def _quotes() -> dict[str, Any]:
    return {"type": "array", "items": _string(QUOTE_CHARS), "maxItems": MAX_QUOTES}


def _object(title: str | None, properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if title:
        schema = {"title": title, **schema}
    return schema


def direct_schema(criteria: Sequence[str], low: int, high: int) -> dict[str, Any]:
    """Evidence, then score, then justification for each criterion; blocker; improvement.

    Built once per criteria and scale: every call of a judge sends the same schema object,
    which the engine encodes once for the cache key (engine/calls.py). Do not change it."""
    return _direct_schema(tuple(criteria), low, high)


@cache
def _direct_schema(criteria: tuple[str, ...], low: int, high: int) -> dict[str, Any]:
    per_criterion = _object(
        None,
        {
            "evidence": _quotes(),
            "score": {"type": "integer", "enum": list(range(low, high + 1))},
            "justification": _string(TEXT_CHARS),
        },
    )
    return _object(
        "direct_judgement",
        {
            "scores": _object(None, {name: per_criterion for name in criteria}),
            "blocker": {"type": "boolean"},
            "blocker_reason": _string(TEXT_CHARS),
            "improvement": _string(TEXT_CHARS),
        },
    )


def pairwise_schema(criteria: Sequence[str]) -> dict[str, Any]:
    """Evidence first, then per-criterion and overall winners ("1", "2", "tie"); built once
    per criteria (see `direct_schema`)."""
    return _pairwise_schema(tuple(criteria))


@cache
def _pairwise_schema(criteria: tuple[str, ...]) -> dict[str, Any]:
    choice = {"type": "string", "enum": ["1", "2", "tie"]}
    return _object(
        "pairwise_judgement",
        {
            "evidence": _quotes(),
            "criteria": _object(None, {name: choice for name in criteria}),
            "winner": choice,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "justification": _string(TEXT_CHARS),
        },
    )


def screen_schema(criteria: Sequence[str], low: int, high: int) -> dict[str, Any]:
    """The direct judgement (scores with evidence, blocker, improvement), then the adequacy;
    built once per criteria and scale (see `direct_schema`)."""
    return _screen_schema(tuple(criteria), low, high)


@cache
def _screen_schema(criteria: tuple[str, ...], low: int, high: int) -> dict[str, Any]:
    direct = direct_schema(criteria, low, high)
    properties = {
        **direct["properties"],
        "adequacy": {"type": "number", "minimum": 0, "maximum": 1},
    }
    return _object("screen_judgement", properties)


FENCES = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def extract_json(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and prose around it."""
    stripped = text.strip()
    if "```" in stripped:  # (the pattern only matches at a fence; tried at every place, slowly)
        stripped = FENCES.sub("", stripped)
    try:
        return json.loads(stripped)
    except ValueError as exc:
        problem = exc
    start, end = stripped.find("{"), stripped.rfind("}")
    if start == -1:
        raise ReplyError("the reply contains no JSON object")
    if end > start:
        try:
            return json.loads(stripped[start : end + 1])
        except ValueError as exc:
            problem = exc
    raise ReplyError(f"the reply is not valid JSON ({problem})")


def _validate(model: type[Reply], text: str) -> Any:
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ReplyError("the reply is JSON but not an object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ReplyError("; ".join(describe_validation_error(exc)[:5])) from None


def parse_direct(text: str, criteria: list[str], low: int, high: int) -> DirectReply:
    """A direct-scoring reply with every criterion scored inside the scale."""
    reply: DirectReply = _validate(DirectReply, text)
    _check_scores(reply, criteria, low, high)
    return reply


def parse_pairwise(text: str, criteria: list[str]) -> PairwiseReply:
    """A pairwise reply with a verdict for every criterion."""
    reply: PairwiseReply = _validate(PairwiseReply, text)
    missing = [c for c in criteria if c not in reply.criteria]
    if missing:
        raise ReplyError(f"criteria: missing verdicts for {missing}")
    reply.criteria = {c: reply.criteria[c] for c in criteria}
    return reply


def _check_scores(reply: DirectReply, criteria: list[str], low: int, high: int) -> None:
    missing = [c for c in criteria if c not in reply.scores]
    if missing:
        raise ReplyError(f"scores: missing criteria {missing}")
    extra = [c for c in reply.scores if c not in criteria]
    if extra:
        raise ReplyError(f"scores: unknown criteria {extra}")
    for name, item in reply.scores.items():
        if not low <= item.score <= high:
            raise ReplyError(f"scores.{name}.score: {item.score} is outside {low}..{high}")


def parse_screen(text: str, criteria: list[str], low: int, high: int) -> ScreenReply:
    """A screen reply: every criterion scored inside the scale, and the adequacy."""
    reply: ScreenReply = _validate(ScreenReply, text)
    _check_scores(reply, criteria, low, high)
    return reply
