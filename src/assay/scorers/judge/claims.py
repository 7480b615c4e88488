"""Judge-backed claim checking for the grounding scorers (`judge="SPEC"`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.engine.calls import Caller
from assay.models.base import Model, Request
from assay.scorers.judge.ask import JudgeFailure, ask_json
from assay.scorers.judge.prompts import chat, neutralise, render
from assay.scorers.judge.verdicts import TEXT_CHARS, ReplyError, extract_json

DOCUMENT_CHARS = 4000


class ClaimReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str
    supported: bool


def claim_schema() -> dict[str, Any]:
    return {
        "title": "claim_support",
        "type": "object",
        "properties": {
            "reason": {"type": "string", "maxLength": TEXT_CHARS},
            "supported": {"type": "boolean"},
        },
        "required": ["reason", "supported"],
        "additionalProperties": False,
    }


def parse_claim(text: str) -> ClaimReply:
    try:
        return ClaimReply.model_validate(extract_json(text))
    except ValidationError as exc:
        raise ReplyError(str(exc.errors()[0]["msg"])) from None


async def ask_supported(caller: Caller, model: Model, claim: str, documents: Sequence[str]) -> bool:
    """Whether the model finds the claim supported; a reply it cannot give counts as not."""
    prompt = render(
        "claim",
        documents=[neutralise(d[:DOCUMENT_CHARS]) for d in documents],
        claim=neutralise(claim),
    )
    request = Request(messages=chat(prompt), max_tokens=256, json_schema=claim_schema())
    try:
        reply, _ = await ask_json(caller, model, request, parse_claim)
    except JudgeFailure:
        return False
    return bool(reply.supported)
