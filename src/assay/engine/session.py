"""A whole run: build the models, check the budget rules, run the plan, write the output."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core import aio
from assay.core.errors import InputError
from assay.core.jsonl import write_jsonl
from assay.core.records import Case
from assay.core.redact import scrub_known, scrub_value
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.engine.executors import create_executor
from assay.engine.plan import Condition, WorkItem, build_plan, run_id_for
from assay.engine.preflight import check_prompts, plan_warning
from assay.engine.runner import Engine, Follower, Progress, RunResult, RunSettings
from assay.models.base import Model, ServerMismatch
from assay.models.registry import (
    METERING,
    ModelOptions,
    create_model,
    missing_key,
    model_price,
    unpriceable,
)
from assay.store import Store
from assay.store.lease import HEARTBEAT_S, release_lease, renew_lease, take_lease
from assay.store.spend import Role, spent_so_far


@dataclass(slots=True)
class RunRequest:
    """Everything `assay run` needs, from flags or a suite file."""

    cases: Sequence[Case]
    conditions: Sequence[Condition]
    trials: int
    settings: RunSettings
    options: ModelOptions
    allow_unmetered: bool = False
    output: Path | None = None
    catalogue: Path | None = None
    """The case catalogue file the cases were read from (None: given as objects)."""
    executor: str = "local"
    ray_address: str | None = None
    only: Sequence[Case] | None = None
    """The cases this invocation runs (a sequential run's looks so far); None: every case.
    The run, its id and its record are still those of `cases`."""
    alone: Sequence[Case] = ()
    """Cases this invocation runs under one condition only (`alone_condition`), beside `only`:
    a sequential run's per-case checks, the candidate's trials on cases not looked at."""
    alone_condition: str | None = None


def check_keys(conditions: Sequence[Condition], options: ModelOptions) -> None:
    """InputError, before any call, naming each condition whose model's API key is not set
    (the system under test cannot run without it, so this is never just a warning)."""
    problems = []
    for condition in conditions:
        missing = missing_key(condition.model, options)
        if missing is not None:
            hint = f" ({missing.hint})" if missing.hint else ""
            problems.append(
                f"ERROR: condition {condition.name!r}: model {condition.model} needs"
                f" {missing.variable}, which is not set{hint}"
            )
    if problems:
        raise InputError(problems)


def build_models(conditions: Sequence[Condition], options: ModelOptions) -> dict[str, Model]:
    """One model instance per distinct spec (and CLI settings), shared by its conditions;
    every condition's key is checked first (`check_keys`)."""
    check_keys(conditions, options)
    by_spec: dict[tuple[str, str | None, Path | None], Model] = {}
    models: dict[str, Model] = {}
    for condition in conditions:
        key = (condition.model, condition.response_format, condition.workdir)
        if key not in by_spec:
            own = dataclasses.replace(
                options,
                response_format=condition.response_format or options.response_format,
                workdir=condition.workdir or options.workdir,
            )
            by_spec[key] = create_model(condition.model, own)
        models[condition.name] = by_spec[key]
    return models


def check_metered(
    models: dict[str, Model], allow_unmetered: bool, metering: tuple[str, str] = METERING
) -> None:
    """Refuse, before any call, a model whose cost cannot be bounded; each error says what
    would meter it (`metering`: the price setting, the setting that allows no price), and
    never a price to a runner no price can meter (`unpriceable`)."""
    if allow_unmetered:
        return
    price, allow = metering
    unmetered = {m.spec: m for m in models.values() if model_price(m) is None}
    problems = []
    for spec, model in sorted(unmetered.items()):
        why_not = unpriceable(model)
        fix = f"give {price} or pass {allow}" if why_not is None else f"{why_not}: pass {allow}"
        problems.append(
            f"ERROR: {scrub_known(spec)}: no price is known, so the budget cannot bound its"
            f" cost; {fix}"
        )
    if problems:
        raise InputError(problems)


def execute(
    request: RunRequest,
    store: Store,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
    follower: Follower | None = None,
) -> RunResult:
    """Run the plan to completion (or to the budget) and write `output` from the store;
    `follower` sees each trial as it is recorded (a suite's judges, pipelined with the run).

    Before any call: prompts no model can be given are refused (`check_prompts`), and an
    absurd plan is reported to `warn` with its estimated calls and cost (`plan_warning`).
    """
    if not request.cases:
        raise InputError("ERROR: the catalogue has no cases to run")
    names = [c.name for c in request.conditions]
    if len(set(names)) != len(names):
        raise InputError(f"ERROR: conditions: duplicate condition names in {names}")
    models = build_models(request.conditions, request.options)
    check_metered(models, request.allow_unmetered)
    identities = {c.name: models[c.name].identity() for c in request.conditions}
    params = {
        "max_tokens": request.settings.max_tokens,
        "temperature": request.settings.temperature,
    }
    run_id = run_id_for(request.cases, request.conditions, request.trials, identities, params)
    if any(hasattr(m, "prompt_refusal") for m in models.values()):  # every trial alike
        check_prompts(_plan(request, 1, identities), models)
    warning = plan_warning(request.cases, request.conditions, request.trials, models, identities,
                           request.settings.max_tokens)  # fmt: skip
    if warning is not None and warn is not None:
        warn(warning)
    take_lease(store, run_id)  # one process per run: a second would make every call twice
    try:
        return _run(request, store, models, identities, params, run_id, progress, follower)
    finally:
        release_lease(store, run_id)


def _plan(
    request: RunRequest, trials: int, identities: dict[str, dict[str, Any]]
) -> Iterator[WorkItem]:
    """The work items this invocation runs: every condition of `only` (every case when None),
    and `alone_condition`'s of the `alone` cases."""
    running = request.cases if request.only is None else request.only
    seq = 0
    for item in build_plan(running, request.conditions, trials, identities):
        seq = item.seq + 1
        yield item
    chosen, rest = _alone(request)
    for item in build_plan(rest, chosen, trials, identities):
        yield dataclasses.replace(item, seq=seq + item.seq)


def _alone(request: RunRequest) -> tuple[list[Condition], list[Case]]:
    """The condition run alone and the `alone` cases it runs (those `only` does not hold)."""
    if not request.alone or request.alone_condition is None:
        return [], []
    chosen = [c for c in request.conditions if c.name == request.alone_condition]
    running = request.cases if request.only is None else request.only
    done = {c.id for c in running}
    return chosen, [c for c in request.alone if c.id not in done]


def _run(
    request: RunRequest,
    store: Store,
    models: dict[str, Model],
    identities: dict[str, dict[str, Any]],
    params: dict[str, Any],
    run_id: str,
    progress: Progress | None,
    follower: Follower | None = None,
) -> RunResult:
    """Record the run, run its plan under the lease (renewed every `HEARTBEAT_S`), and write
    `output` from the store."""
    store.save_run(
        run_id,
        scrub_value(
            {
                "conditions": [
                    {"name": c.name, "model": c.model, "skill_sha256": c.skill_sha256}
                    for c in request.conditions
                ],
                "identities": identities,
                "trials": request.trials,
                "cases": len(request.cases),
                **params,
            }
        ),
    )
    running = request.cases if request.only is None else request.only
    chosen, rest = _alone(request)
    total = (len(running) * len(request.conditions) + len(rest) * len(chosen)) * request.trials
    items = _plan(request, request.trials, identities)  # lazy: a plan item per trial adds up
    executor = create_executor(request.executor, request.options, address=request.ray_address)
    engine = Engine(
        store, models, request.settings, progress=progress, executor=executor, follower=follower
    )

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            if not renew_lease(store, run_id):  # taken over: the other process runs it now
                engine.stop("lease")
                return

    async def go() -> RunResult:
        heartbeat = asyncio.create_task(beat())
        try:
            return await engine.run(run_id, items, total)
        finally:
            heartbeat.cancel()
            for model in {id(m): m for m in models.values()}.values():
                await model.aclose()
            await executor.aclose()

    mismatch = False
    try:
        return aio.run(go())
    except ServerMismatch:
        mismatch = True  # a wrong URL or model name (exit 2): no output file is written
        raise
    finally:
        store.flush()
        if request.output is not None and not mismatch:
            write_jsonl(request.output, store.trial_records(run_id))


def run_caller(
    store: Store,
    run_id: str | None,
    settings: RunSettings,
    cap: float | None = None,
    role: Role = "judges",
) -> Caller:
    """A Caller metered by a run's budget: what the run has spent so far counts, and what it
    spends is recorded under the run, as `role`'s (so judges and model-backed scorers of a
    suite share the run's cap, across reruns). `cap` limits what this caller may add (a
    suite's [judge] budget_usd). Without a run id the budget starts at zero and is not
    recorded."""
    spent = spent_so_far(store, run_id) if run_id else 0.0
    limit = settings.budget_usd
    if cap is not None:
        limit = spent + cap if limit is None else min(limit, spent + cap)
    budget = Budget(limit, spent)
    return Caller(
        store,
        budget,
        concurrency=settings.concurrency,
        retries=settings.retries,
        backoff_initial_s=settings.backoff_initial_s,
        backoff_max_s=settings.backoff_max_s,
        ledger=run_id,
        batch=settings.collector(store),
        role=role,
    )
