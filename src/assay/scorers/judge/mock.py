"""Scripted judges for tests and demos, registered as mock behaviours (`mock:first`, ...).

They recognise what is asked from the request's JSON Schema title (direct, pairwise, screen,
rubric) and find the responses between the prompt's frame tags, so they answer every judge
prompt with valid JSON — except `mock:malformed`, which never does, and `mock:repairable`,
which only does when asked to repair its reply.

* `first`    — pairwise: always prefers the response shown first; direct/screen: high marks;
  grounding: every claim supported, no document contradicted.
* `longer`   — pairwise: always prefers the longer response (characters; a tie only on
  equal length); direct/screen: marks grow with length (capped at 60 words).
* `fair`     — prefers the response closer to the case's `reference` (token F1), whatever
  the order; a tie when both are equally close; direct/screen: marks from that closeness;
  grounding: the claims are the response's sentences (three or more words); a claim is
  checked against the document sentence sharing most of its words — with half its words
  or more there, it is supported when its numbers and negation match that sentence, else
  contradicted; with fewer, unverifiable. A document is contradicted when a claim is.
  DeepEval's and RAGAS's own prompts get answers by the same rule (`mock_external.py`).
* `gold`     — pairwise: prefers the response the case's `metadata.gold_response` names (a
  tie when `metadata.gold` is `tie`), whatever the order: the perfect judge of a labelled set
  (`assay judge-bench`); direct/screen: like `fair`.
* `malformed` — broken JSON, always.
* `repairable` — broken JSON first, a valid (fair) reply to the repair prompt.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from assay.models.base import Request
from assay.models.mock import BEHAVIOURS
from assay.scorers.judge.mock_external import EXTERNAL
from assay.scorers.judge.mock_grounding import GROUNDING, Check, overlap_check
from assay.scorers.judge.prompts import framed_responses, neutralise

Quality = Callable[[str, Request], float]
TOKEN = re.compile(r"[a-z0-9]+")


def _first_user(request: Request) -> str:
    return next((m.content for m in request.messages if m.role == "user"), "")


def token_f1(text: str, reference: str) -> float:
    """Token-overlap F1 between two texts (0 when either is empty)."""
    a, b = Counter(TOKEN.findall(text.lower())), Counter(TOKEN.findall(reference.lower()))
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def _closeness(text: str, request: Request) -> float:
    reference = request.case.reference if request.case is not None else None
    return token_f1(text, reference) if reference else 0.5


def _length(text: str, request: Request) -> float:
    return min(1.0, len(text.split()) / 60)


def _longer(first: str, second: str, request: Request) -> str:
    """Pairwise: the longer response wins, however long both are; a tie on equal length."""
    if len(first) == len(second):
        return "tie"
    return "1" if len(first) > len(second) else "2"


def _high(text: str, request: Request) -> float:
    return 0.8


def _quote(text: str) -> list[str]:
    snippet = " ".join(text.split()[:8])
    return [snippet] if snippet else []


def _schema_title(request: Request) -> str:
    return str((request.json_schema or {}).get("title", ""))


def _direct(request: Request, quality: Quality) -> dict[str, Any]:
    schema = request.json_schema or {}
    per = schema["properties"]["scores"]["properties"]
    text = framed_responses(_first_user(request)).get("response", "")
    q = quality(text, request)
    out: dict[str, Any] = {}
    for name, spec in per.items():
        points = spec["properties"]["score"]["enum"]
        score = points[min(len(points) - 1, round(q * (len(points) - 1)))]
        out[name] = {"evidence": _quote(text), "score": score, "justification": f"q={q:.2f}"}
    return {"scores": out, "blocker": False, "blocker_reason": "", "improvement": "Be precise."}


def _pairwise(request: Request, rule: Callable[[str, str, Request], str]) -> dict[str, Any]:
    schema = request.json_schema or {}
    names = list(schema["properties"]["criteria"]["properties"])
    shown = framed_responses(_first_user(request))
    first, second = shown.get("response_1", ""), shown.get("response_2", "")
    winner = rule(first, second, request)
    return {
        "evidence": _quote(first) + _quote(second),
        "criteria": {name: winner for name in names},
        "winner": winner,
        "confidence": 0.9,
        "justification": "scripted",
    }


def _by(quality: Quality) -> Callable[[str, str, Request], str]:
    def rule(first: str, second: str, request: Request) -> str:
        q1, q2 = quality(first, request), quality(second, request)
        if abs(q1 - q2) < 1e-9:
            return "tie"
        return "1" if q1 > q2 else "2"

    return rule


def _rubric(request: Request) -> dict[str, Any]:
    schema = request.json_schema or {}
    count = int(schema["properties"]["levels"].get("minItems", 5))
    return {
        "levels": [
            {
                "score": i + 1,
                "label": f"level {i + 1}",
                "description": f"meets {i + 1} of {count} expectations",
                "characteristics": [f"characteristic {i + 1}"],
                "example": "",
            }
            for i in range(count)
        ],
        "scoring_guidelines": ["Judge substance, not length."],
        "edge_cases": [{"situation": "empty response", "guidance": "lowest level"}],
    }


def judge_behaviour(
    quality: Quality,
    pairwise: Callable[[str, str, Request], str],
    grounding: Check = lambda claim, sentence: "supported",
) -> Callable[[Request], str]:
    """A mock behaviour answering every judge prompt (and plain prompts) from its rules."""

    def behave(request: Request) -> str:
        title = _schema_title(request)
        if title == "direct_judgement":
            return json.dumps(_direct(request, quality))
        if title == "pairwise_judgement":
            return json.dumps(_pairwise(request, pairwise))
        if title == "screen_judgement":
            text = framed_responses(_first_user(request)).get("response", "")
            adequacy = round(quality(text, request), 4)
            return json.dumps({**_direct(request, quality), "adequacy": adequacy})
        if title == "rubric":
            return json.dumps(_rubric(request))
        if title in GROUNDING:
            return json.dumps(GROUNDING[title](_first_user(request), grounding))
        if title in EXTERNAL:
            return json.dumps(EXTERNAL[title](_first_user(request), grounding))
        return "I am a scripted judge."

    return behave


def _gold(first: str, second: str, request: Request) -> str:
    """Pairwise: the response the case's metadata names as the gold winner."""
    metadata = (request.case.metadata if request.case is not None else None) or {}
    winner = metadata.get("gold_response")
    if metadata.get("gold") == "tie" or not isinstance(winner, str):
        return "tie"
    shown = neutralise(winner).strip()
    if first.strip() == shown:
        return "1"
    if second.strip() == shown:
        return "2"
    return _by(lambda text, _: token_f1(text, winner))(first, second, request)


def _malformed(request: Request) -> str:
    return '{"scores": {"correctness": {"evidence": ["unterminated'


_fair = judge_behaviour(_closeness, _by(_closeness), overlap_check)


def _repairable(request: Request) -> str:
    if any(m.role == "assistant" for m in request.messages):
        return _fair(request)
    return _malformed(request)


JUDGE_BEHAVIOURS: dict[str, Callable[[Request], str]] = {
    "first": judge_behaviour(_high, lambda first, second, request: "1"),
    "longer": judge_behaviour(_length, _longer),
    "fair": _fair,
    "gold": judge_behaviour(_closeness, _gold, overlap_check),
    "malformed": _malformed,
    "repairable": _repairable,
}
BEHAVIOURS.update(JUDGE_BEHAVIOURS)
