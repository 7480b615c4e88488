"""Scripted answers to the grounding judge's prompts (`scorers/judge/claims.py`), for the mock
judges of `mock.py`: deterministic, so tests can assert exact figures.

Claims are the response's sentences with three or more words. A `Check` compares one claim
with one document sentence; a claim's verdict is the best over the documents' sentences
(supported, else contradicted, else unverifiable), quoting the deciding sentence. A document
is contradicted when one of the response's claims is contradicted by one of its sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from assay.scorers.judge.prompts import BOUNDARY

Check = Callable[[str, str], str]
"""(claim, document sentence) → "supported", "contradicted" or "unverifiable"."""

WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
DOCUMENT = re.compile(rf'<document-({BOUNDARY}) id="(\d+)">\n(.*?)\n</document-\1>', re.DOTALL)
CLAIMS = re.compile(rf"<claims-({BOUNDARY})>\n(.*?)</claims-\1>", re.DOTALL)
RESPONSE = re.compile(rf"<response-({BOUNDARY})>\n(.*?)\n</response-\1>", re.DOTALL)
NEGATION = frozenset({"not", "never", "no", "cannot"})
LIGHT = frozenset({"the", "and", "was", "were", "with", "for", "are", "that", "this", "its"})
RANK = {"supported": 0, "contradicted": 1, "unverifiable": 2}


def sentences(text: str, least: int = 3) -> list[str]:
    """The sentences of a text with at least `least` words."""
    pieces = (p.strip() for p in SENTENCE.split(text))
    return [p for p in pieces if len(WORD.findall(p.lower())) >= least]


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 2 or w.isdigit()} - LIGHT


def overlap_check(claim: str, sentence: str) -> str:
    """Supported when half the claim's words or more occur in the sentence with the same
    numbers and negation; contradicted when the words match but a number or the negation
    differs; else unverifiable."""
    wanted, seen = _words(claim), _words(sentence)
    if not wanted or len(wanted & seen) / len(wanted) < 0.5:
        return "unverifiable"
    said, stated = set(WORD.findall(claim.lower())), set(WORD.findall(sentence.lower()))
    numbers_agree = {w for w in said if w.isdigit()} <= {w for w in stated if w.isdigit()}
    negation_agrees = bool(said & NEGATION) == bool(stated & NEGATION)
    return "supported" if numbers_agree and negation_agrees else "contradicted"


def _verdict(claim: str, documents: list[str], check: Check) -> tuple[str, str]:
    """The best verdict on a claim over every document sentence, and the sentence quoted."""
    best, quote = "unverifiable", ""
    for document in documents:
        for sentence in sentences(document, least=1):
            verdict = check(claim, sentence)
            if RANK[verdict] < RANK[best]:
                best, quote = verdict, sentence
    return best, quote


def _documents(prompt: str) -> list[str]:
    return [text for _, _, text in DOCUMENT.findall(prompt)]


def extract(prompt: str, check: Check) -> dict[str, Any]:
    found = RESPONSE.search(prompt)
    return {"claims": sentences(found.group(2)) if found else []}


def verify(prompt: str, check: Check) -> dict[str, Any]:
    documents = _documents(prompt)
    block = CLAIMS.search(prompt)
    lines = block.group(2).splitlines() if block else []
    verdicts = []
    for line in lines:
        number, _, claim = line.partition(". ")
        verdict, quote = _verdict(claim, documents, check)
        verdicts.append(
            {"claim": int(number), "verdict": verdict, "quote": quote, "reason": "scripted"}
        )
    return {"verdicts": verdicts}


def contradicted(prompt: str, check: Check) -> dict[str, Any]:
    found = RESPONSE.search(prompt)
    claims = sentences(found.group(2)) if found else []
    verdicts = []
    for number, document in enumerate(_documents(prompt), start=1):
        against = [c for c in claims if _verdict(c, [document], check)[0] == "contradicted"]
        verdicts.append(
            {
                "document": number,
                "verdict": "contradicted" if against else "consistent",
                "quote": against[0] if against else "",
                "reason": "scripted",
            }
        )
    return {"verdicts": verdicts}


GROUNDING: dict[str, Callable[[str, Check], dict[str, Any]]] = {
    "claim_extraction": extract,
    "claim_verdicts": verify,
    "context_verdicts": contradicted,
}
"""Schema title → the scripted reply to that grounding prompt."""
