"""The pairwise judge as a scorer of a pair: two trials of one case → one Comparison.

Every comparison is asked in both orders (A/B then B/A; `shuffles` > 2 alternates), the
verdicts mapped back to the original labels a and b and combined (`aggregate.py`): two
passes that disagree are a tie. Two rules decide without a call (tier `rule`): two responses
that are the same (after anonymising) are a tie; and, unless `expectations_first` is off, a
response that fails the case's deterministic expectations (`expect`: JSON Schema, required
or forbidden strings, regex, refusal, escalation; `scorers/expectations.py`) loses to one
that meets them, the row naming what each missed under `expectations`. When both fail or
both pass, the judge is asked as usual. The Comparison is kept as the row written (`PairScore.row`),
so its JSON stays as assay always wrote it; `PairScore.comparison()` validates it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.core.bounded import LimitExceeded
from assay.core.records import Comparison
from assay.core.trajectory_text import judged_text
from assay.engine.calls import Caller
from assay.scorers.base import ScoreContext
from assay.scorers.expectations import Expectations
from assay.scorers.judge import aggregate as agg
from assay.scorers.judge.ask import JudgeSetup, shown, verified_quotes
from assay.scorers.judge.direct import require_caller
from assay.scorers.judge.panel import panel_pairwise
from assay.scorers.judge.prompts import case_values, template_sha256
from assay.scorers.judge.provenance import stamp
from assay.scorers.judge.readings import PairReading
from assay.scorers.judge.verdicts import pairwise_schema, parse_pairwise


@dataclass(slots=True)
class PairScore:
    """A pair scorer's result: the Comparison row as written, and the raw judge replies."""

    row: dict[str, Any]
    replies: list[str] = field(default_factory=list)

    def comparison(self) -> Comparison:
        return Comparison.model_validate(self.row)


def same_text(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


class PairJudge:
    """The pairwise judge (one judge or a panel); `ctx.trials` is (trial a, trial b) and
    the labels a and b are their conditions."""

    name = "pairwise"
    metrics = ("verdict",)
    primary = ()

    def __init__(self, setup: JudgeSetup, judges: Sequence[str] | None = None) -> None:
        self.setup = setup
        self.judges = tuple(judges if judges is not None else setup.config.judges)
        self.prompt_sha256 = template_sha256("pairwise")
        self.expectations = Expectations()

    @property
    def models(self) -> tuple[str, ...]:
        return self.judges

    async def read(self, caller: Caller, spec: str, ctx: ScoreContext, passes: int) -> PairReading:
        """One judge's passes over the pair, combined into its verdict."""
        setup = self.setup
        names = setup.names
        first, second = (shown(judged_text(t, setup.config.over)) for t in ctx.trials)
        values = case_values(ctx.case)
        template = setup.prompt("pairwise")
        schema = pairwise_schema(names)

        async def one_pass(index: int) -> tuple[agg.PassResult, list[str]]:
            order: Literal["ab", "ba"] = "ab" if index % 2 == 0 else "ba"
            shown_pair = (first, second) if order == "ab" else (second, first)
            prompt = template.render(**values, first=shown_pair[0], second=shown_pair[1])
            reply, raw = await setup.ask(
                caller,
                spec,
                prompt,
                schema,
                lambda t: parse_pairwise(t, names),
                ctx.case,
                index + 1,
            )
            result = agg.PassResult(
                order=order,
                winner=agg.map_back(reply.winner, order),
                confidence=reply.confidence,
                criteria={n: agg.map_back(reply.criteria[n], order) for n in names},
                quotes=verified_quotes(reply.evidence, first, second),
                evidence=list(reply.evidence),
            )
            return result, raw

        outcomes = await asyncio.gather(
            *(one_pass(i) for i in range(passes)), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        results = [o[0] for o in outcomes if not isinstance(o, BaseException)]
        raws = [r for o in outcomes if not isinstance(o, BaseException) for r in o[1]]
        combined = agg.combine_passes(results)
        return PairReading(
            judge=spec,
            verdict=combined["verdict"],
            confidence=combined["confidence"],
            consistent=combined["consistent"],
            preference=combined["preference"],
            criteria=combined["criteria"],
            evidence=list(dict.fromkeys(q for p in results for q in p.evidence)),
            passes=[
                {"order": p.order, "winner": p.winner, "confidence": p.confidence, "judge": spec}
                for p in results
            ],
            raw=raws,
        )

    def combine(self, ctx: ScoreContext, readings: Sequence[PairReading]) -> dict[str, Any]:
        """The Comparison row from the judges' verdicts (no provenance tail yet)."""
        trial_a, trial_b = ctx.trials
        if len(readings) == 1:
            one = readings[0]
            verdict: dict[str, Any] = {
                "verdict": one.verdict,
                "confidence": one.confidence,
                "consistent": one.consistent,
                "preference": one.preference,
                "criteria": one.criteria,
            }
            extra: dict[str, Any] = {}
        else:
            verdict, extra = panel_pairwise(readings)
        return {
            "case_id": trial_a.case_id,
            "trial": trial_a.trial,
            "a": trial_a.condition,
            "b": trial_b.condition,
            "judge": "+".join(r.judge for r in readings),
            "passes": [p for r in readings for p in r.passes],
            **verdict,
            "evidence": list(dict.fromkeys(q for r in readings for q in r.evidence))[:12],
            "len_a": len(trial_a.response),
            "len_b": len(trial_b.response),
            **extra,
        }

    def identical(self, ctx: ScoreContext) -> PairScore | None:
        """A tie by rule, without a call, when both responses read the same to a judge."""
        trial_a, trial_b = ctx.trials
        over = self.setup.config.over
        if not same_text(shown(judged_text(trial_a, over)), shown(judged_text(trial_b, over))):
            return None
        criteria = {n: {"verdict": "tie", "consistent": True} for n in self.setup.names}
        return self.ruled(ctx, "tie", criteria, identical=True)

    def expected(self, ctx: ScoreContext) -> PairScore | None:
        """The verdict by the case's expectations, without a call, when exactly one response
        fails them (and `expectations_first` is on); else None: the judge decides."""
        if not self.setup.config.expectations_first:
            return None
        trial_a, trial_b = ctx.trials
        try:
            failed_a = self.expectations.failed(ctx.case, trial_a)
            failed_b = self.expectations.failed(ctx.case, trial_b)
        except LimitExceeded:  # a check with no answer decides nothing: the judge does
            return None
        if bool(failed_a) == bool(failed_b):
            return None
        winner: Literal["a", "b"] = "b" if failed_a else "a"
        return self.ruled(ctx, winner, None, expectations={"a": failed_a, "b": failed_b})

    def ruled(
        self,
        ctx: ScoreContext,
        verdict: Literal["a", "b", "tie"],
        criteria: dict[str, Any] | None,
        **extra: Any,
    ) -> PairScore:
        """A Comparison decided by rule (tier `rule`, no judge pass), as assay writes it."""
        trial_a, trial_b = ctx.trials
        row: dict[str, Any] = {
            "case_id": trial_a.case_id,
            "trial": trial_a.trial,
            "a": trial_a.condition,
            "b": trial_b.condition,
            "judge": "+".join(self.judges),
            "passes": [],
            "verdict": verdict,
            "confidence": agg.CAP,
            "consistent": True,
            "preference": {"a": 0.0, "b": 1.0, "tie": 0.5}[verdict],
        }
        if criteria is not None:
            row["criteria"] = criteria
        row.update(len_a=len(trial_a.response), len_b=len(trial_b.response), **extra)
        self.stamp(row, "rule")
        return PairScore(row)

    async def readings(self, ctx: ScoreContext, passes: int) -> list[PairReading]:
        caller = require_caller(ctx, self.name)
        return list(await asyncio.gather(*(self.read(caller, j, ctx, passes) for j in self.judges)))

    async def score(self, ctx: ScoreContext) -> PairScore:
        """The pair's Comparison (tier `rule` for identical responses or a verdict by the
        case's expectations, else `judge`)."""
        ruled = self.identical(ctx) or self.expected(ctx)
        if ruled is not None:
            return ruled
        readings = await self.readings(ctx, self.setup.config.shuffles)
        row = self.combine(ctx, readings)
        self.stamp(row, "judge")
        return PairScore(row, [r for reading in readings for r in reading.raw])

    def stamp(self, row: dict[str, Any], tier: str, review: str | None = None) -> None:
        stamp(row, tier=tier, judges=self.judges, prompt_sha256=self.prompt_sha256, review=review)
