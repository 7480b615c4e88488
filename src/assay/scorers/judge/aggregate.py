"""Turning judge replies into verdicts: position swap, shuffles, confidence, panels.

Confidence (always capped at CAP = 0.95, never 1):

* Evidence factor: `f = 0.6 + 0.4 * min(1, q / Q)`, where `q` is the number of evidence
  quotes that really occur in the judged response(s) (quotes the judge made up do not count)
  and `Q` the number expected (pairwise: 3 per pass; direct: 1 per criterion).
* Pairwise, two passes (A/B then B/A): when both mapped-back verdicts agree,
  `confidence = min(CAP, mean(pass confidences) * f)`; when they disagree the verdict is
  TIE, `consistent = false` and `confidence = 0.5`.
* Pairwise, N > 2 passes (`--shuffles N`, alternating order): the verdict is the majority
  of the N votes (a split between a and b is a TIE), `confidence = min(CAP, share * f)`
  where `share` is the verdict's share of the votes; `consistent` = all votes agree.
* Direct: `confidence = min(CAP, 0.5 + 0.45 * min(1, q / Q))` (evidence only: one pass).
* Panels: direct — the mean of the judges' confidences times `1 - mean spread / range`;
  pairwise — the share of judges backing the majority verdict times their mean confidence.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

CAP = 0.95
TIE_CONFIDENCE = 0.5
QUOTES_PER_PASS = 3
LENGTH_PENALTY = 0.5  # scale points per doubling of length beyond the case's median
Winner = Literal["a", "b", "tie"]


@dataclass(slots=True)
class PassResult:
    """One pairwise pass, already mapped back to the original labels a and b."""

    order: Literal["ab", "ba"]
    winner: Winner
    confidence: float
    criteria: dict[str, Winner]
    quotes: int
    evidence: list[str] = field(default_factory=list)


def map_back(choice: str, order: str) -> Winner:
    """ "1"/"2"/"tie" of a pass shown in `order` → "a"/"b"/"tie"."""
    if choice == "tie":
        return "tie"
    first_is_a = order == "ab"
    return "a" if (choice == "1") == first_is_a else "b"


def evidence_factor(quotes: float, expected: float) -> float:
    return 0.6 + 0.4 * min(1.0, quotes / expected) if expected > 0 else 0.6


def vote(winners: Sequence[Winner]) -> tuple[Winner, float, bool]:
    """(verdict, share of votes, unanimous). Two passes that disagree, or a split, → tie."""
    counts = Counter(winners)
    n = len(winners)
    unanimous = len(counts) == 1
    if len(winners) == 2 and not unanimous:
        return "tie", 0.5, False
    top, top_count = counts.most_common(1)[0]
    if sum(1 for c in counts.values() if c == top_count) > 1:
        return "tie", top_count / n, unanimous
    return top, top_count / n, unanimous


def combine_passes(passes: Sequence[PassResult]) -> dict[str, Any]:
    """The verdict of one judge over its passes (position swap or shuffles)."""
    winners = [p.winner for p in passes]
    verdict, share, consistent = vote(winners)
    factor = evidence_factor(sum(p.quotes for p in passes) / len(passes), QUOTES_PER_PASS)
    if len(passes) == 2:
        if consistent:
            confidence = min(CAP, statistics.fmean(p.confidence for p in passes) * factor)
        else:
            confidence = TIE_CONFIDENCE
    else:
        confidence = min(CAP, share * factor)
    criteria: dict[str, Any] = {}
    for name in passes[0].criteria:
        c_verdict, _share, c_consistent = vote([p.criteria[name] for p in passes])
        criteria[name] = {"verdict": c_verdict, "consistent": c_consistent}
    b_votes = sum(1.0 if w == "b" else 0.5 if w == "tie" else 0.0 for w in winners)
    return {
        "verdict": verdict,
        "confidence": round(confidence, 4),
        "consistent": consistent,
        "preference": round(b_votes / len(winners), 4),
        "criteria": criteria,
    }


def direct_confidence(quotes: int, criteria: int) -> float:
    return round(min(CAP, 0.5 + 0.45 * min(1.0, quotes / max(1, criteria))), 4)


def weighted_overall(scores: dict[str, float], weights: dict[str, float]) -> float:
    """The weighted mean of the criteria scores (weights normalised to sum to 1)."""
    total = sum(weights[name] for name in scores)
    return round(sum(scores[name] * weights[name] / total for name in scores), 4)


def length_normalised(
    overall: float, words: int, reference_words: float, low: int, high: int
) -> float:
    """`overall - 0.5 * max(0, log2(words / median words for the case))`, clipped to the scale.

    Only responses longer than the case's median lose points: half a scale point for each
    doubling of length. Shorter responses are not rewarded for brevity.
    """
    if words <= 0 or reference_words <= 0:
        return overall
    penalty = LENGTH_PENALTY * max(0.0, math.log2(words / reference_words))
    return round(min(high, max(low, overall - penalty)), 4)


def panel_direct(
    per_judge: Sequence[dict[str, Any]], criteria: Sequence[str], low: int, high: int
) -> dict[str, Any]:
    """Median score per criterion with its spread (max - min); blocker by majority."""
    scores: dict[str, float] = {}
    spread: dict[str, float] = {}
    for name in criteria:
        values = [j["scores"][name] for j in per_judge]
        scores[name] = float(statistics.median(values))
        spread[name] = float(max(values) - min(values))
    blockers = sum(1 for j in per_judge if j["blocker"])
    mean_spread = statistics.fmean(spread.values()) if spread else 0.0
    confidence = statistics.fmean(j["confidence"] for j in per_judge) * (
        1 - mean_spread / max(1, high - low)
    )
    return {
        "scores": scores,
        "spread": spread,
        "blocker": blockers * 2 > len(per_judge),
        "confidence": round(min(CAP, confidence), 4),
    }


def panel_pairwise(per_judge: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Majority verdict of the judges (no majority → tie), per criterion too."""
    verdicts: list[Winner] = [j["verdict"] for j in per_judge]
    counts = Counter(verdicts)
    top, top_count = counts.most_common(1)[0]
    verdict: Winner = top if top_count * 2 > len(verdicts) else "tie"
    backing = [j for j in per_judge if j["verdict"] == verdict]
    share = len(backing) / len(per_judge)
    confidence = share * statistics.fmean(j["confidence"] for j in backing) if backing else 0.5
    criteria: dict[str, Any] = {}
    for name in per_judge[0]["criteria"]:
        votes = Counter(j["criteria"][name]["verdict"] for j in per_judge)
        c_top, c_count = votes.most_common(1)[0]
        criteria[name] = {
            "verdict": c_top if c_count * 2 > len(per_judge) else "tie",
            "consistent": len(votes) == 1,
        }
    return {
        "verdict": verdict,
        "confidence": round(min(CAP, confidence), 4),
        "consistent": all(j["consistent"] for j in per_judge) and len(counts) == 1,
        "preference": round(statistics.fmean(j["preference"] for j in per_judge), 4),
        "criteria": criteria,
    }


CODES = {"a": 0.0, "b": 1.0, "tie": 2.0}
"""Pairwise verdicts as numbers, for the panel's nominal alpha."""
