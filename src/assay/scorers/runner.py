"""Running scorers over trials: every scorer on every answered trial, as Scores.

Deterministic checks run inline; scorers that call models (`models` not empty) run
concurrently, all through the one `Caller` given (the run's cache, budget, retries and
adaptive concurrency). Errored trials and trials of unknown cases are never scored; a
scorer's None (nothing to check) leaves no Score. Scores come back in trial order, then
scorer order, whatever order the calls finish in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Mapping, Sequence

from assay.core import aio
from assay.core.records import Case, Trial
from assay.core.suite import ScorerEntry
from assay.engine.calls import Caller
from assay.models.registry import ModelOptions
from assay.scorers.base import Score, ScoreContext, Scorer, create_scorer, scorer_factory


def build_scorers(
    entries: Sequence[ScorerEntry],
    judge: str | None = None,
    judge_options: ModelOptions | None = None,
) -> list[Scorer]:
    """The suite's `[[scoring.scorers]]`, built from the registry.

    `judge` is the suite's judge (its `[judge] judges[0]`, with the [judge] model settings
    `judge_options`): a scorer that takes the suite's judge (`suite_judge`, the grounding
    scorers) gets it when its options name no judge of their own (`judge = false` keeps it
    off); with its own judge it gets those settings when it names the same model."""
    scorers = []
    for entry in entries:
        options = dict(entry.options)
        if judge is not None and getattr(scorer_factory(entry.name), "suite_judge", False):
            options.setdefault("judge", judge)
            if options["judge"] == judge and judge_options is not None:
                options["judge_options"] = judge_options
        scorers.append(create_scorer(entry.name, **options))
    return scorers


def primary_metrics(scorer: Scorer) -> tuple[str, ...]:
    """The scorer's metrics that feed the release gate."""
    return tuple(getattr(scorer, "primary", ()))


def lower_metrics(scorers: Sequence[Scorer]) -> set[str]:
    """The scorers' lower-is-better metrics (optional `lower_is_better`: shares in [0, 1]
    the weighted score counts as 1 − value, e.g. `hallucination`)."""
    return {m for s in scorers for m in getattr(s, "lower_is_better", ())}


async def score_trials(
    scorers: Sequence[Scorer],
    cases: Mapping[str, Case],
    trials: Iterable[Trial],
    documents: Mapping[str, str] | None = None,
    caller: Caller | None = None,
) -> list[Score]:
    """Score every answered trial with every scorer (see the module docstring)."""
    docs = dict(documents or {})
    slots: list[Score | None] = []
    calling: list[Awaitable[None]] = []

    async def fill(index: int, pending: Awaitable[Score | None]) -> None:
        slots[index] = await pending

    for trial in trials:
        case = cases.get(trial.case_id)
        if trial.error is not None or case is None:
            continue
        ctx = ScoreContext(case, (trial,), docs, caller)
        for scorer in scorers:
            if getattr(scorer, "models", ()):
                slots.append(None)
                calling.append(fill(len(slots) - 1, scorer.score(ctx)))
            else:
                slots.append(await scorer.score(ctx))
    try:
        await asyncio.gather(*calling)
    finally:
        for scorer in scorers:
            close = getattr(scorer, "aclose", None)
            if close is not None:
                await close()
    return [score for score in slots if score is not None]


def run_scorers(
    scorers: Sequence[Scorer],
    cases: Mapping[str, Case],
    trials: Iterable[Trial],
    documents: Mapping[str, str] | None = None,
    caller: Caller | None = None,
) -> list[Score]:
    """`score_trials` from synchronous code, in its own event loop.

    Scoring was synchronous before scorers became async, so callers with an event loop
    already running in their thread (a notebook, a Playwright script) must keep working:
    the loop then runs in a worker thread (`assay.core.aio.call_blocking`).
    """
    return aio.call_blocking(aio.run, score_trials(scorers, cases, trials, documents, caller))
