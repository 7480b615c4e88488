"""`assay rubric`: ask a model for a rubric, validate it, and return a `Rubric`."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from assay.core import aio
from assay.core.jsonl import describe_validation_error
from assay.core.rubric import Rubric, Scale, Strictness, scale_bounds
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.models.base import Request
from assay.models.registry import ModelOptions, create_model
from assay.scorers.judge.ask import ask_json
from assay.scorers.judge.prompts import chat, render
from assay.scorers.judge.verdicts import TEXT_CHARS, ReplyError, extract_json
from assay.store import Store

STRICTNESS_NOTES: dict[str, str] = {
    "lenient": "give credit for partial success; reserve the lowest levels for responses that"
    " are wrong or unusable",
    "balanced": "the top level needs a response with nothing material missing; the middle"
    " level is a usable response with clear gaps",
    "strict": "the top level only for flawless responses; any factual error or unsafe advice"
    " caps the score at the lower half",
}


def rubric_schema(low: int, high: int) -> dict[str, Any]:
    """The JSON a model must return: one level per scale point, guidelines, edge cases."""

    def string(limit: int = TEXT_CHARS) -> dict[str, Any]:
        return {"type": "string", "maxLength": limit}

    def obj(properties: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        }

    count = high - low + 1
    level = obj(
        {
            "score": {"type": "integer", "enum": list(range(low, high + 1))},
            "label": string(60),
            "description": string(),
            "characteristics": {"type": "array", "items": string(200), "maxItems": 4},
            "example": string(),
        }
    )
    return {
        "title": "rubric",
        **obj(
            {
                "levels": {"type": "array", "items": level, "minItems": count, "maxItems": count},
                "scoring_guidelines": {"type": "array", "items": string(300), "maxItems": 6},
                "edge_cases": {
                    "type": "array",
                    "items": obj({"situation": string(300), "guidance": string(300)}),
                    "maxItems": 5,
                },
            }
        ),
    }


def parse_rubric(
    text: str, name: str, description: str, domain: str, scale: Scale, strictness: Strictness
) -> Rubric:
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ReplyError("the reply is JSON but not an object")
    for level in data.get("levels") or []:
        if isinstance(level, dict) and level.get("example") == "":
            level["example"] = None
    try:
        return Rubric.model_validate(
            {
                **data,
                "name": name,
                "description": description,
                "domain": domain,
                "scale": scale,
                "strictness": strictness,
            }
        )
    except ValidationError as exc:
        raise ReplyError("; ".join(describe_validation_error(exc)[:5])) from None


def generate_rubric(
    name: str,
    description: str,
    domain: str,
    scale: Scale,
    strictness: Strictness,
    model_spec: str,
    store: Store,
    *,
    options: ModelOptions | None = None,
    max_tokens: int = 2048,
    budget_usd: float | None = None,
    timeout_s: float = 300.0,
) -> Rubric:
    """Ask `model_spec` for a rubric; one repair attempt; JudgeFailure keeps the raw reply."""
    low, high = scale_bounds(scale)
    model = create_model(model_spec, options)
    prompt = render(
        "rubric",
        name=name,
        description=description,
        domain=domain,
        low=low,
        high=high,
        strictness=strictness,
        strictness_note=STRICTNESS_NOTES[strictness],
    )
    request = Request(
        messages=chat(prompt),
        max_tokens=max_tokens,
        json_schema=rubric_schema(low, high),
        timeout_s=timeout_s,
    )
    caller = Caller(store, Budget(budget_usd), concurrency=1)

    async def go() -> Rubric:
        try:
            rubric, _ = await ask_json(
                caller,
                model,
                request,
                lambda t: parse_rubric(t, name, description, domain, scale, strictness),
            )
            result: Rubric = rubric
            return result
        finally:
            await model.aclose()
            store.flush()

    return aio.run(go())
