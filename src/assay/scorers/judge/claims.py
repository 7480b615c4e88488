"""Judge-backed grounding: the judge's side of `groundedness`, `faithfulness`, `hallucination`.

The procedures follow RAGAS and DeepEval (see README, "Grounding"):

* claims (RAGAS faithfulness, DeepEval FaithfulnessMetric): the judge breaks the response
  into self-contained claims (`claims` template, one call that sees the task and the
  response, never the documents), then gives each claim a verdict against the documents —
  `supported`, `contradicted` or `unverifiable` (DeepEval's yes / no / idk) — with the
  passage of the documents that decides it, quoted word for word (`claim_verdicts`, one
  call for all the claims of a response);
* contexts (DeepEval HallucinationMetric): the judge decides for each document whether the
  response contradicts it (`context_verdicts`, one call), quoting the contradicting words.

Every call goes through the run's `Caller` (call cache, budget, retries, concurrency) with a
JSON Schema for structured output, and gets one repair attempt (`ask.ask_json`). The claims
of one response are judged once per caller even when `groundedness` and `faithfulness` both
ask at the same moment, so the two scorers never pay twice for the same calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, get_args
from weakref import WeakKeyDictionary

from pydantic import Field, StringConstraints

from assay.engine.calls import Caller
from assay.engine.plan import sha256_json, sha256_text
from assay.models.base import Model, Request
from assay.scorers.judge.ask import ask_json, verified_quotes
from assay.scorers.judge.prompts import chat, neutralise, render, template_source
from assay.scorers.judge.verdicts import (
    QUOTE_CHARS,
    TEXT_CHARS,
    Reply,
    ReplyError,
    _object,
    _string,
    _validate,
)

DOCUMENT_CHARS = 4000
"""Characters of each document the judge is shown."""
MAX_CLAIMS = 40
EXTRACT_TOKENS = 1024
VERDICT_TOKENS = (256, 192, 4096)
"""A verdicts reply may use 256 tokens plus 192 per verdict, at most 4096 (what the budget
reserves for the call)."""
TEMPLATES = ("claims", "claim_verdicts", "context_verdicts", "repair")
PROMPT_SHA256 = sha256_text("".join(template_source(n) for n in TEMPLATES))
"""Recorded with every judged grounding score: editing a template changes it."""

ClaimLabel = Literal["supported", "contradicted", "unverifiable"]
ContextLabel = Literal["consistent", "contradicted"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ClaimVerdict:
    """One claim of the response and the judge's verdict on it against the documents;
    `quote_found` says whether the quoted passage really occurs in them."""

    claim: str
    verdict: ClaimLabel
    quote: str
    reason: str
    quote_found: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "verdict": self.verdict,
            "quote": self.quote,
            "quote_found": self.quote_found,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class ContextVerdict:
    """Whether the response contradicts one document (`context`: its id), with the
    contradicting words of the response quoted."""

    context: str
    verdict: ContextLabel
    quote: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "verdict": self.verdict,
            "quote": self.quote,
            "reason": self.reason,
        }


Text = Annotated[str, StringConstraints(max_length=TEXT_CHARS * 2)]
Quote = Annotated[str, StringConstraints(max_length=QUOTE_CHARS * 2)]


class ClaimsReply(Reply):
    claims: Annotated[list[Text], Field(max_length=MAX_CLAIMS)]


class ClaimItem(Reply):
    claim: int
    verdict: ClaimLabel
    quote: Quote
    reason: Text


class ClaimVerdictsReply(Reply):
    verdicts: list[ClaimItem]


class ContextItem(Reply):
    document: int
    verdict: ContextLabel
    quote: Quote
    reason: Text


class ContextVerdictsReply(Reply):
    verdicts: list[ContextItem]


def claims_schema() -> dict[str, Any]:
    claims = {"type": "array", "items": _string(TEXT_CHARS), "maxItems": MAX_CLAIMS}
    return _object("claim_extraction", {"claims": claims})


def _verdicts_schema(title: str, key: str, labels: Sequence[str], count: int) -> dict[str, Any]:
    item = _object(
        None,
        {
            key: {"type": "integer", "minimum": 1, "maximum": count},
            "verdict": {"type": "string", "enum": list(labels)},
            "quote": _string(QUOTE_CHARS),
            "reason": _string(TEXT_CHARS),
        },
    )
    array = {"type": "array", "items": item, "minItems": count, "maxItems": count}
    return _object(title, {"verdicts": array})


def claim_verdicts_schema(count: int) -> dict[str, Any]:
    return _verdicts_schema("claim_verdicts", "claim", get_args(ClaimLabel), count)


def context_verdicts_schema(count: int) -> dict[str, Any]:
    return _verdicts_schema("context_verdicts", "document", get_args(ContextLabel), count)


def _one_each(numbers: Sequence[int], count: int, what: str) -> None:
    """ReplyError unless the verdicts number 1..count, each exactly once."""
    if sorted(numbers) != list(range(1, count + 1)):
        raise ReplyError(
            f"verdicts: give exactly one verdict for each {what} 1..{count} (got {what}s {numbers})"
        )


def parse_claims(text: str) -> ClaimsReply:
    reply: ClaimsReply = _validate(ClaimsReply, text)
    return reply


def parse_claim_verdicts(text: str, count: int) -> ClaimVerdictsReply:
    reply: ClaimVerdictsReply = _validate(ClaimVerdictsReply, text)
    _one_each([v.claim for v in reply.verdicts], count, "claim")
    reply.verdicts.sort(key=lambda v: v.claim)
    return reply


def parse_context_verdicts(text: str, count: int) -> ContextVerdictsReply:
    reply: ContextVerdictsReply = _validate(ContextVerdictsReply, text)
    _one_each([v.document for v in reply.verdicts], count, "document")
    reply.verdicts.sort(key=lambda v: v.document)
    return reply


def _request(prompt: str, schema: dict[str, Any], verdicts: int = 0) -> Request:
    """The judge request; `verdicts`: how many verdicts the reply holds (0: the claims)."""
    base, each, most = VERDICT_TOKENS
    tokens = min(most, base + each * verdicts) if verdicts else EXTRACT_TOKENS
    return Request(messages=chat(prompt), max_tokens=tokens, json_schema=schema)


def _shown(documents: Sequence[str]) -> list[str]:
    return [neutralise(d[:DOCUMENT_CHARS]) for d in documents]


def _one_line(text: str) -> str:
    return " ".join(neutralise(text).split())


async def extract_claims(caller: Caller, model: Model, task: str, response: str) -> list[str]:
    """The response's claims, as the judge states them (blank ones dropped)."""
    prompt = render(
        "claims", prompt=neutralise(task), response=neutralise(response), limit=MAX_CLAIMS
    )
    reply, _ = await ask_json(caller, model, _request(prompt, claims_schema()), parse_claims)
    return [c.strip() for c in reply.claims if c.strip()]


async def verify_claims(
    caller: Caller, model: Model, claims: Sequence[str], documents: Sequence[str]
) -> list[ClaimVerdict]:
    """The judge's verdict on each claim against the documents, in the claims' order."""
    prompt = render(
        "claim_verdicts", documents=_shown(documents), claims=[_one_line(c) for c in claims]
    )
    request = _request(prompt, claim_verdicts_schema(len(claims)), len(claims))
    reply, _ = await ask_json(
        caller, model, request, lambda text: parse_claim_verdicts(text, len(claims))
    )
    return [
        ClaimVerdict(
            claim=claim,
            verdict=item.verdict,
            quote=item.quote,
            reason=item.reason,
            quote_found=bool(item.quote) and verified_quotes([item.quote], *documents) == 1,
        )
        for claim, item in zip(claims, reply.verdicts, strict=True)
    ]


async def judge_claims(
    caller: Caller, model: Model, task: str, response: str, documents: Sequence[str]
) -> list[ClaimVerdict]:
    """Extract the response's claims, then verify them (no claims: no second call)."""

    async def both() -> list[ClaimVerdict]:
        found = await extract_claims(caller, model, task, response)
        return await verify_claims(caller, model, found, documents) if found else []

    key = sha256_json(["claims", model.identity(), task, response, list(documents)])
    return await _once(caller, key, both)


async def judge_contexts(
    caller: Caller,
    model: Model,
    response: str,
    documents: Sequence[str],
    ids: Sequence[str],
) -> list[ContextVerdict]:
    """For each document (named by `ids`), whether the response contradicts it."""
    prompt = render("context_verdicts", documents=_shown(documents), response=neutralise(response))
    request = _request(prompt, context_verdicts_schema(len(documents)), len(documents))
    reply, _ = await ask_json(
        caller, model, request, lambda text: parse_context_verdicts(text, len(documents))
    )
    return [
        ContextVerdict(context=name, verdict=item.verdict, quote=item.quote, reason=item.reason)
        for name, item in zip(ids, reply.verdicts, strict=True)
    ]


_PENDING: WeakKeyDictionary[Caller, dict[str, asyncio.Future[Any]]] = WeakKeyDictionary()


async def _once(caller: Caller, key: str, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` once per caller and key: a second asker awaits the first one's result
    (a failed or cancelled attempt is not kept, so asking again retries it)."""
    pending = _PENDING.setdefault(caller, {})
    future = pending.get(key)
    if future is None or (future.done() and (future.cancelled() or future.exception())):
        future = pending[key] = asyncio.ensure_future(work())
    result: T = await asyncio.shield(future)
    return result
