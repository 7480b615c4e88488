"""Checks of a run's plan before any call: prompts a model cannot be given, absurd sizes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from assay.core.errors import InputError
from assay.core.records import Case
from assay.engine.plan import Condition, WorkItem, build_plan
from assay.models.base import Model, Request
from assay.models.registry import model_price

# A plan with more trials than this is reported before it starts (`plan_warning`): more
# than any evaluation needs, and likely a typo in `trials` (say 1000000000).
ABSURD_TRIALS = 100_000


def check_prompts(items: Iterable[WorkItem], models: dict[str, Model]) -> None:
    """Refuse, before any call, a prompt a model cannot be given (a `prompt_refusal` of the
    model, e.g. a CLI prompt too long for one argument), naming each case and condition."""
    refusals: dict[tuple[str, str], str] = {}
    for item in items:
        refuse = getattr(models[item.condition.name], "prompt_refusal", None)
        key = (item.case.id, item.condition.name)
        if refuse is None or key in refusals:
            continue
        reason = refuse(item.messages)
        if reason is not None:
            refusals[key] = f"ERROR: case {key[0]} [{key[1]}]: {reason}"
    if refusals:
        raise InputError(list(refusals.values()))


def plan_warning(
    cases: Sequence[Case],
    conditions: Sequence[Condition],
    trials: int,
    models: dict[str, Model],
    identities: dict[str, dict[str, Any]],
    max_tokens: int,
) -> str | None:
    """A warning for a plan over `ABSURD_TRIALS` trials, with its size, the model calls it
    makes (each turn of each trial, before retries) and their worst-case cost; None for a
    plan of ordinary size. Estimated from one trial per case and condition (all alike)."""
    total = len(cases) * len(conditions) * trials
    if total <= ABSURD_TRIALS:
        return None
    calls = 0
    worst = 0.0
    unpriced: set[str] = set()
    for item in build_plan(cases, conditions, 1, identities):
        turns = 1 + len(item.case.turns or [])
        calls += turns * trials
        model = models[item.condition.name]
        price = model_price(model)
        if price is None:
            unpriced.add(model.spec)
            continue
        request = Request(messages=item.messages, max_tokens=max_tokens)
        worst += price.worst_case(request) * turns * trials
    cost = f"worst case ${worst:,.2f}" + (
        f" (and unpriced: {', '.join(sorted(unpriced))})" if unpriced else ""
    )
    return (
        f"WARNING: an absurd plan: {len(cases):,} cases × {len(conditions):,} conditions × "
        f"{trials:,} trials = {total:,} trials, {calls:,} model calls before retries, {cost}."
        " Check `trials` and the cases; --budget-usd caps the spend; Ctrl+C stops (the run "
        "resumes where it stopped)."
    )
