"""The direct judge as a scorer: one trial → one Score with a number per rubric criterion.

Each judge reads the response against the rubric (evidence quotes first, then the score,
per criterion) and may flag a blocker. One judge's reading becomes the Score as is; a panel's
readings are combined by `panel.py` (median per criterion, spread, majority blocker).
`overall` is the weighted mean of the criteria; with `length_normalised`, `overall_ln`
takes half a scale point per doubling of length beyond the case's median response length.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from assay.core.errors import InputError
from assay.core.records import Case, Trial
from assay.core.trajectory_text import judged_text
from assay.engine.calls import Caller
from assay.scorers.base import Metrics, Score, ScoreContext, mean_aggregate
from assay.scorers.judge import aggregate as agg
from assay.scorers.judge.ask import JudgeSetup, Quotes, shown, words
from assay.scorers.judge.panel import panel_direct
from assay.scorers.judge.prompts import case_values, template_sha256
from assay.scorers.judge.provenance import stamp
from assay.scorers.judge.readings import Reading
from assay.scorers.judge.verdicts import direct_schema, parse_direct, parse_screen, screen_schema

Template = Literal["direct", "screen"]


def require_caller(ctx: ScoreContext, scorer: str) -> Caller:
    """The context's caller; an InputError naming the scorer when there is none."""
    if ctx.caller is None:
        raise InputError(
            f"ERROR: scorer {scorer!r} calls judge models: it needs the run's call machinery"
            " (call cache, budget, retries)"
        )
    return ctx.caller


class DirectJudge:
    """The rubric judge (one judge or a panel) as a scorer of one trial.

    `median_words` (case id → median response length in words over the judged trials)
    feeds `overall_ln` when the configuration asks for length normalisation.
    """

    name = "judge"

    def __init__(
        self,
        setup: JudgeSetup,
        judges: Sequence[str] | None = None,
        template: Template = "direct",
        median_words: Mapping[str, float] | None = None,
    ) -> None:
        self.setup = setup
        self.judges = tuple(judges if judges is not None else setup.config.judges)
        self.template: Template = template
        self.prompt_sha256 = template_sha256(template)
        self.median_words = dict(median_words or {})

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.setup.names)

    @property
    def primary(self) -> tuple[str, ...]:
        return self.metrics

    @property
    def models(self) -> tuple[str, ...]:
        return self.judges

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)

    async def read(self, caller: Caller, spec: str, case: Case, trial: Trial) -> Reading:
        """One judge's reading; the `screen` template adds `adequacy`."""
        setup = self.setup
        names, low, high = setup.names, setup.low, setup.high
        response = shown(judged_text(trial, setup.config.over))
        prompt = setup.prompt(self.template).render(**case_values(case), response=response)
        screening = self.template == "screen"
        schema = (screen_schema if screening else direct_schema)(names, low, high)
        parse_reply = parse_screen if screening else parse_direct
        reply, raw = await setup.ask(
            caller, spec, prompt, schema, lambda t: parse_reply(t, names, low, high), case
        )
        found = Quotes(response)
        quotes = sum(min(1, found.count(reply.scores[n].evidence)) for n in names)
        return Reading(
            judge=spec,
            scores={n: reply.scores[n].score for n in names},
            evidence={n: reply.scores[n].evidence for n in names},
            justification={n: reply.scores[n].justification for n in names},
            blocker=reply.blocker,
            blocker_reason=reply.blocker_reason,
            improvement=reply.improvement,
            confidence=agg.direct_confidence(quotes, len(names)),
            raw=raw,
            adequacy=getattr(reply, "adequacy", None),
        )

    def combine(self, trial: Trial, readings: Sequence[Reading]) -> Score:
        """The Score of one trial from its judges' readings (no provenance tail yet)."""
        names = self.setup.names
        if len(readings) == 1:
            one = readings[0]
            scores: dict[str, float] = {k: float(v) for k, v in one.scores.items()}
            blocker, confidence = one.blocker, one.confidence
            extra: dict[str, Any] = {
                "evidence": one.evidence,
                "justification": one.justification,
                "improvement": one.improvement,
            }
        else:
            scores, blocker, confidence, extra = panel_direct(readings, names, self.setup)
        reasons = [r.blocker_reason for r in readings if r.blocker and r.blocker_reason]
        overall = agg.weighted_overall(scores, self.setup.weights)
        fields: dict[str, Any] = {
            "overall": overall,
            "blocker": blocker,
            "notes": "; ".join(reasons) or None,
            "source": "judge:" + "+".join(r.judge for r in readings),
            "confidence": confidence,
            **extra,
        }
        if self.setup.config.length_normalised:
            fields["overall_ln"] = agg.length_normalised(
                overall,
                words(trial.response),
                self.median_words.get(trial.case_id, 0.0),
                self.setup.low,
                self.setup.high,
            )
        if self.template == "screen" and len(readings) == 1:
            fields["adequacy"] = readings[0].adequacy
        return Score(trial.case_id, trial.trial, trial.condition, self.name, scores, fields)

    async def readings(self, ctx: ScoreContext) -> list[Reading]:
        """Every judge's reading of the context's trial, asked concurrently."""
        caller = require_caller(ctx, self.name)
        if len(self.judges) == 1:  # (no task of its own for the one judge)
            return [await self.read(caller, self.judges[0], ctx.case, ctx.trial)]
        return list(
            await asyncio.gather(*(self.read(caller, j, ctx.case, ctx.trial) for j in self.judges))
        )

    async def score(self, ctx: ScoreContext) -> Score:
        """The judged Score (tier `judge`), its raw replies in `replies`."""
        readings = await self.readings(ctx)
        score = self.combine(ctx.trial, readings)
        score.replies = [r for reading in readings for r in reading.raw]
        self.stamp(score, "judge")
        return score

    def stamp(self, score: Score, tier: str, review: str | None = None) -> None:
        """The provenance tail: this scorer's judges, prompt hash and scale."""
        stamp(
            score.fields,
            tier=tier,
            judges=self.judges,
            prompt_sha256=self.prompt_sha256,
            scale=self.setup.scale,
            review=review,
        )
