"""The cascade: a cheap screen judge first, the full judge (or panel) only when it must.

Direct mode: one call to the screen judge with the `screen` template, which asks for the
rubric scores (evidence first) and a 0-1 adequacy; an item at or above the threshold
without a blocker keeps those scores (tier `screen`), so screen-tier rows are Score rows like
any other. Pairwise: one two-order pass, settled when consistent and confident. Everything
else goes to the full judge (tier `judge`), and to human review (tier `review`, with the
reason) when the full verdict is still inconsistent or below the review threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.scorers.base import Metrics, Score, ScoreContext, mean_aggregate
from assay.scorers.judge.ask import JudgeFailure, JudgeSetup
from assay.scorers.judge.direct import DirectJudge, require_caller
from assay.scorers.judge.pairwise import PairJudge, PairScore

JudgeScorer = DirectJudge | PairJudge


def review_reason(fields: Mapping[str, Any], threshold: float) -> str | None:
    """Why a full judge's verdict still needs a human, or None."""
    if fields.get("consistent") is False:
        return "inconsistent verdict across positions"
    if fields.get("confidence", 1.0) < threshold:
        return f"low confidence {fields['confidence']:.2f} < {threshold}"
    return None


class Cascade:
    """Screen, then the full judge; a scorer of one trial (direct) or of a pair."""

    name = "cascade"

    def __init__(self, setup: JudgeSetup, full: JudgeScorer, screen: str) -> None:
        self.setup = setup
        self.full = full
        self.screen_spec = screen
        self.pairwise = isinstance(full, PairJudge)
        self.screen: JudgeScorer = (
            PairJudge(setup, [screen])
            if isinstance(full, PairJudge)
            else DirectJudge(setup, [screen], "screen", full.median_words)
        )

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.full.metrics

    @property
    def primary(self) -> tuple[str, ...]:
        return self.full.primary

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.full.models, self.screen_spec]))

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)

    def calls_per_item(self) -> tuple[int, int]:
        """(screen calls, full-judge calls) one item costs."""
        if self.pairwise:
            return 2, self.setup.config.shuffles * len(self.setup.config.judges)
        return 1, len(self.setup.config.judges)

    async def screened(self, ctx: ScoreContext) -> Score | PairScore | None:
        """The screen's row when it settles the item, else None (go to the full judge)."""
        threshold = self.setup.config.screen_threshold
        caller = require_caller(ctx, self.name)
        try:
            if isinstance(self.screen, PairJudge):
                pair = await self.screen.read(caller, self.screen_spec, ctx, 2)
                if not (pair.consistent and pair.confidence >= threshold):
                    return None
                row = self.screen.combine(ctx, [pair])
                row["adequacy"] = pair.confidence
                self.screen.stamp(row, "screen")
                return PairScore(row)
            one = await self.screen.read(caller, self.screen_spec, ctx.case, ctx.trial)
        except JudgeFailure:
            return None
        if one.adequacy is None or one.adequacy < threshold or one.blocker:
            return None  # doubtful, or a blocking finding: the full judge decides
        score = self.screen.combine(ctx.trial, [one])
        self.screen.stamp(score, "screen")
        return score

    async def score(self, ctx: ScoreContext) -> Score | PairScore:
        if isinstance(self.full, PairJudge):
            ruled = self.full.identical(ctx) or self.full.expected(ctx)
            if ruled is not None:
                return ruled
        settled = await self.screened(ctx)
        if settled is not None:
            return settled
        result = await self.full.score(ctx)
        fields = result.row if isinstance(result, PairScore) else result.fields
        reason = review_reason(fields, self.setup.config.review_threshold)
        if reason:
            if isinstance(result, PairScore):
                assert isinstance(self.full, PairJudge)
                self.full.stamp(result.row, "review", reason)
            else:
                assert isinstance(self.full, DirectJudge)
                self.full.stamp(result, "review", reason)
        return result
