"""Citation scorers: coverage of the expected sources, and correctness of every citation."""

from __future__ import annotations

from assay.scorers.base import CheckScorer, Metrics, ScoreContext, register
from assay.scorers.common import flag, state_of


@register("citation_coverage")
class CitationCoverage(CheckScorer):
    """1 when the trial cites at least one of `expect.cite_one_of`, else 0.

    Skipped when the case lists no acceptable sources or the trial has no agent state.
    """

    name = "citation_coverage"
    metrics = ("citation_coverage",)
    primary = ("citation_coverage",)

    def check(self, ctx: ScoreContext) -> Metrics | None:
        expect = ctx.case.expect
        state = state_of(ctx.trial)
        if expect is None or not expect.cite_one_of or state is None:
            return None
        return {"citation_coverage": flag(bool(set(state.citations) & set(expect.cite_one_of)))}


@register("citation_correctness")
class CitationCorrectness(CheckScorer):
    """1 when every cited id exists in the knowledge base (the documents) or the case context.

    Also reports `invalid_citations` (how many did not). Skipped when nothing is cited.
    """

    name = "citation_correctness"
    metrics = ("citation_correctness", "invalid_citations")
    primary = ("citation_correctness",)

    def check(self, ctx: ScoreContext) -> Metrics | None:
        state = state_of(ctx.trial)
        if state is None or not state.citations:
            return None
        known = set(ctx.documents) | {doc.id for doc in ctx.case.context or []}
        invalid = [c for c in state.citations if c not in known]
        return {"citation_correctness": flag(not invalid), "invalid_citations": float(len(invalid))}
