"""What one judge read from a response (direct) or a pair (pairwise): the per-judge records
that a single judge's row and a panel's aggregate are both made from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.scorers.judge.aggregate import Winner


@dataclass(slots=True)
class Reading:
    """One judge's rubric reading of one response."""

    judge: str
    scores: dict[str, int]
    evidence: dict[str, list[str]]
    justification: dict[str, str]
    blocker: bool
    blocker_reason: str
    improvement: str
    confidence: float
    raw: list[str]
    adequacy: float | None = None  # the screen template's 0-1 adequacy


@dataclass(slots=True)
class PairReading:
    """One judge's verdict on a pair over its passes (already mapped back to a and b)."""

    judge: str
    verdict: Winner
    confidence: float
    consistent: bool
    preference: float
    criteria: dict[str, Any]
    evidence: list[str]
    passes: list[dict[str, Any]]
    raw: list[str]
