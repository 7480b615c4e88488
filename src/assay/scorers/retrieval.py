"""Retrieval quality of `state.retrieved` against the gold `expect.retrieve`."""

from __future__ import annotations

import math

from assay.core.errors import InputError
from assay.scorers.base import Metrics, ScoreInput, register
from assay.scorers.common import BaseScorer, state_of


@register("retrieval")
class Retrieval(BaseScorer):
    """hit@k, recall@k and nDCG@k (binary relevance). Cases without gold emit nothing."""

    name = "retrieval"

    def __init__(self, k: int = 5) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"ERROR: scorer 'retrieval': k must be a positive integer, got {k!r}")
        self.k = k

    @property
    def primary(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"recall@{self.k}",)

    def score(self, item: ScoreInput) -> Metrics | None:
        expect = item.case.expect
        state = state_of(item.trial)
        if expect is None or not expect.retrieve or state is None:
            return None
        gold = set(expect.retrieve)
        top = list(dict.fromkeys(state.retrieved))[: self.k]
        found = [doc in gold for doc in top]
        dcg = sum(1.0 / math.log2(rank + 2) for rank, hit in enumerate(found) if hit)
        ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(self.k, len(gold))))
        return {
            f"hit@{self.k}": 1.0 if any(found) else 0.0,
            f"recall@{self.k}": sum(found) / len(gold),
            f"ndcg@{self.k}": dcg / ideal,
        }
