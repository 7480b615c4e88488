"""Retrieval quality of `state.retrieved` against the gold `expect.retrieve`."""

from __future__ import annotations

import math

from assay.core.errors import InputError
from assay.scorers.base import CheckScorer, Metrics, ScoreContext, register
from assay.scorers.common import state_of


@register("retrieval")
class Retrieval(CheckScorer):
    """hit@k, recall@k and nDCG@k (binary relevance). Cases without gold emit nothing."""

    name = "retrieval"

    def __init__(self, k: int = 5) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"ERROR: scorer 'retrieval': k must be a positive integer, got {k!r}")
        self.k = k

    @property
    def metrics(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"hit@{self.k}", f"recall@{self.k}", f"ndcg@{self.k}")

    @property
    def primary(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"recall@{self.k}",)

    def check(self, ctx: ScoreContext) -> Metrics | None:
        expect = ctx.case.expect
        state = state_of(ctx.trial)
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
