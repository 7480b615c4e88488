"""`assay.run`: run a case catalogue (or a suite) through the system under test.

With a suite, the run is then judged, scored, gated and reported through the one evaluation
route (`assay.api.evaluation`). Settings resolve in one place (`run_request`): flags win over
the suite, the suite over the defaults, and the loaded suite is never changed.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.api.evaluated import as_evaluated as _as_evaluated
from assay.api.evaluated import evaluation_imports as _evaluation_modules
from assay.api.evaluated import judge_follower as _follower
from assay.api.provenance import record_run_time
from assay.api.run_inputs import (
    check_evaluation_inputs,
    check_run_outputs,
    in_looks,
    load,
    with_run_base_url,
)
from assay.api.warming import warming
from assay.core.cases import DEFAULT_CASES, CaseFile, scan_cases
from assay.core.errors import EXIT_INCOMPLETE, Incomplete, InputError
from assay.core.jsonl import model_line, paused_gc
from assay.core.records import Case, Trial
from assay.core.suite import Suite, load_suite_cases
from assay.engine import Condition, RunRequest, RunResult, RunSettings, execute
from assay.engine.runner import Progress
from assay.engine.runner import Spent as Spent  # re-exported: the CLI's progress display
from assay.engine.runner import Tick as Tick
from assay.engine.session import check_keys
from assay.models.cli_formats import FORMATS
from assay.models.pricing import parse_price
from assay.models.registry import ModelOptions
from assay.store import DEFAULT_STORE, Store
from assay.store.spend import Spend, run_spend

if TYPE_CHECKING:
    # Imported where used: the evaluation after the run (numpy, the report models) is not
    # loaded before the run's first model call.
    from assay.api.outputs import RunSummary
    from assay.api.results import Result
    from assay.scorers.judge.follow import JudgeFollower
    from assay.verdict.checks import JudgeStatus, Sequential


@dataclass(slots=True)
class RunOutcome:
    """What `assay.run` did: the run, and for a suite its evaluation (None when the suite has
    nothing to gate, or when the run was incomplete and could not be scored)."""

    run: RunResult
    request: RunRequest
    store: Path
    evaluation: Result | None = None
    notes: list[str] = field(default_factory=list)
    """Plain notices for people (why nothing was gated, input problems of an incomplete run)."""
    incomplete: bool = False
    """The suite's evaluation stopped before a verdict (its judging did not finish)."""
    judge: JudgeStatus | None = None
    """Whether the suite's LLM judges ran (None: the suite configures none)."""
    unfinished_spend: Spend = field(default_factory=Spend)
    """What an evaluation that did not finish spent, by role, as the store recorded it."""

    @property
    def exit_code(self) -> int:
        """3 when the run (or the judging) is incomplete and `max_errored` did not tolerate
        its gaps; else the gate's (0 PASS, 1 FAIL/INCONCLUSIVE, 3 INCOMPLETE)."""
        if self.run.exit_code and not (self.evaluation and self.evaluation.tolerated):
            return self.run.exit_code
        if self.incomplete:
            return EXIT_INCOMPLETE
        return self.evaluation.exit_code if self.evaluation is not None else 0

    @property
    def spend(self) -> Spend:
        """What this invocation's calls cost, by role: the run's, then its evaluation's."""
        after = self.evaluation.spend if self.evaluation is not None else self.unfinished_spend
        return self.run.spend.plus(after)

    def summary(self) -> RunSummary:
        """`assay run --json` (`assay schema run-summary`)."""
        from assay.api.outputs import RunSummary
        from assay.verdict.checks import SpendFigures

        result, evaluation, spend = self.run, self.evaluation, self.spend
        return RunSummary(
            run_id=result.run_id,
            total=result.total,
            answered=result.answered + result.resumed,
            errored=result.errored,
            not_run=result.not_run,
            calls=result.calls,
            cache_hits=result.cache_hits,
            spent_usd=round(spend.total or 0.0, 6),
            run_spent_usd=round(result.run_spent_usd, 6),
            spend=SpendFigures(**spend.rounded()),
            run_spend=SpendFigures(**result.run_spend.rounded()),
            stopped=result.stopped,
            output=str(self.request.output) if self.request.output else None,
            store=str(self.store),
            exit_code=self.exit_code,
            release_gate=evaluation.summary().release_gate if evaluation is not None else None,
            reports=str(evaluation.output) if evaluation is not None else None,
            notes=list(self.notes),
            judge=self.judge,
        )


def select_cases(cases: Sequence[Case], wanted: Sequence[str] | None) -> Sequence[Case]:
    """Keep the cases named by --case (in catalogue order); unknown ids are an error.

    Without --case a large catalogue read from its file stays a `CaseFile` (streamed, never
    held)."""
    if not wanted:
        return cases if isinstance(cases, CaseFile) else list(cases)
    known = {c.id for c in cases}
    missing = [w for w in wanted if w not in known]
    if missing:
        raise InputError(f"ERROR: --case: unknown case id(s): {', '.join(missing)}")
    keep = set(wanted)
    return [c for c in cases if c.id in keep]


def flag_conditions(model: str, skill: Path | None, only: Sequence[str] | None) -> list[Condition]:
    """baseline (bare prompt) and, with a skill file, candidate; --condition picks some."""
    conditions = [Condition(name="baseline", model=model)]
    if skill is not None:
        conditions.append(Condition.with_skill_file("candidate", model, skill))
    if only:
        names = {c.name for c in conditions}
        unknown = [n for n in only if n not in names]
        if unknown:
            hint = " (candidate needs --condition-skill)" if "candidate" in unknown else ""
            raise InputError(f"ERROR: --condition: unknown condition(s) {', '.join(unknown)}{hint}")
        conditions = [c for c in conditions if c.name in only]
    return conditions


def suite_conditions(
    suite: Suite, only: Sequence[str] | None, model: str | None = None
) -> list[Condition]:
    """The suite's conditions; `model` (a --model flag) replaces every condition's model."""
    conditions = []
    for section in suite.conditions:
        spec = model or section.model or suite.model
        skill = suite.path(section.skill) if section.skill is not None else None
        condition = Condition.with_skill_file(section.name, spec, skill)
        condition.system = section.system
        condition.params = dict(section.params)
        condition.response_format = section.format
        condition.workdir = suite.path(section.workdir) if section.workdir else None
        conditions.append(condition)
    if only:
        conditions = [c for c in conditions if c.name in only]
        if not conditions:
            raise InputError(f"ERROR: --condition: none of {list(only)} is in the suite")
    return conditions


def _overridden(
    conditions: list[Condition],
    params: Mapping[str, Any],
    response_format: str | None,
    workdir: Path | None,
) -> list[Condition]:
    """Flags win over the suite: params, format and workdir apply to every condition."""
    if response_format is not None and response_format not in FORMATS:
        raise InputError(
            f"ERROR: --format: unknown response format {response_format!r}"
            f" (known: {', '.join(FORMATS)})"
        )
    return [
        dataclasses.replace(
            c,
            params={**c.params, **params},
            response_format=response_format if response_format is not None else c.response_format,
            workdir=workdir if workdir is not None else c.workdir,
        )
        for c in conditions
    ]


def run_request(
    suite: Suite | None = None,
    *,
    cases: str | Path | Sequence[Case] | None = None,
    model: str | None = None,
    conditions: Sequence[str] | None = None,
    condition_skill: str | Path | None = None,
    trials: int | None = None,
    output: str | Path | None = None,
    budget_usd: float | None = None,
    allow_unmetered: bool = False,
    case_ids: Sequence[str] | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_tokens: int | None = None,
    price: str | None = None,
    base_url: str | None = None,
    retries: int | None = None,
    response_format: str | None = None,
    workdir: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
    executor: str | None = None,
    ray_address: str | None = None,
    batch: bool | None = None,
    batch_poll_s: float | None = None,
    max_reply_bytes: int | None = None,
) -> RunRequest:
    """Everything a run needs, from a suite (or none) and the given overrides."""
    skill, folder = _path(condition_skill), _path(workdir)
    source: Path | None = None
    if suite is not None and (isinstance(cases, str | Path) or cases is None):
        source = _path(cases) or suite.path(suite.cases)
        catalogue: Sequence[Case] = load_suite_cases(suite, source)  # pinned: checked
    elif isinstance(cases, str | Path) or cases is None:
        source = _path(cases) or DEFAULT_CASES
        catalogue = scan_cases(source)
    else:
        catalogue = list(cases)
    if suite is not None:
        chosen = suite_conditions(suite, conditions, model)
        section = suite.run
        trials = trials or suite.trials
        allow_unmetered = allow_unmetered or section.allow_unmetered
    else:
        defaults = Suite()
        chosen = flag_conditions(model or defaults.model, skill, conditions)
        section = defaults.run
        trials = trials or defaults.trials
    price_text = price or section.price
    return RunRequest(
        cases=select_cases(catalogue, case_ids),
        conditions=_overridden(chosen, params or {}, response_format, folder),
        trials=trials,
        settings=RunSettings(
            max_tokens=max_tokens or section.max_tokens,
            temperature=section.temperature,
            concurrency=concurrency or section.concurrency,
            timeout_s=timeout or section.timeout,
            retries=section.retries if retries is None else retries,
            budget_usd=section.budget_usd if budget_usd is None else budget_usd,
            batch=section.batch if batch is None else batch,
            batch_poll_s=batch_poll_s or section.batch_poll_s,
        ),
        options=ModelOptions(
            base_url=base_url or section.base_url,
            price=parse_price(price_text) if price_text else None,
            max_reply_bytes=max_reply_bytes or section.max_reply_bytes,
            extra={"root": suite.root} if suite is not None else {},
        ),
        allow_unmetered=allow_unmetered,
        output=_path(output),
        catalogue=source,
        executor=executor or section.executor,
        ray_address=ray_address or section.ray_address,
    )


def run(
    suite: str | Path | Suite | None = None,
    *,
    store: str | Path = DEFAULT_STORE,
    out: str | Path | None = None,
    progress: Progress | None = None,
    require_judge: bool = False,
    warn: Callable[[str], None] | None = None,
    sequential: bool | None = None,
    **options: Any,
) -> RunOutcome:
    """Run cases × conditions × trials; with a suite, judge, score, gate and report the run.

    `options` are `run_request`'s (cases, model, trials, budget_usd, ...). `out` is the suite's
    output folder (default: the suite's `output`, else assay-out/<suite name>).
    `require_judge` (or the suite's `[judge] required`) makes a judge's missing API key an
    InputError before any call; otherwise that judge is disabled (see `assay.api.keys`).
    `warn` is told, before any call, of an absurd plan (its estimated calls and cost).
    `sequential` (default: the suite's `[gate] sequential`) runs the cases in looks and stops
    once the verdict is settled (`assay.api.sequential`)."""
    from assay.api.arguments import checked

    loaded = load(suite)
    return execute_run(
        loaded,
        checked(run_request, "assay.run")(loaded, **options),
        store=store,
        out=out,
        progress=progress,
        require_judge=require_judge,
        warn=warn,
        sequential=sequential,
    )


def execute_run(
    suite: Suite | None,
    request: RunRequest,
    *,
    store: str | Path = DEFAULT_STORE,
    out: str | Path | None = None,
    progress: Progress | None = None,
    require_judge: bool = False,
    warn: Callable[[str], None] | None = None,
    sequential: bool | None = None,
) -> RunOutcome:
    """Run a resolved request (see `run_request`); with a suite, evaluate the run (in looks
    when `sequential`, or the suite's `[gate] sequential`: `assay.api.sequential`).

    Every configured model's API key is checked before the store is opened: the system
    under test's missing key is an InputError; a judge's disables it (or, with
    `require_judge` or `[judge] required`, is an InputError too)."""
    started = time.monotonic()
    check_run_outputs(suite, request, out, store)
    check_keys(request.conditions, request.options)
    judge = None
    if suite is not None:
        options = request.options
        suite = with_run_base_url(suite, options.base_url, options.max_reply_bytes)
        from assay.api.keys import judge_status
        from assay.scorers.inputs import check_inputs
        from assay.scorers.runner import build_scorers
        from assay.verdict.config import resolve
        from assay.verdict.names import check_config_metrics

        # Bad scorer options, metric names nothing produces and case fields a scorer
        # requires that a case lacks fail before any call.
        scorers = build_scorers(suite.scoring.scorers)
        check_config_metrics(resolve(suite), scorers)
        check_inputs(scorers, request.cases, request.catalogue, bool(suite.scoring.knowledge_base))
        judge = judge_status(suite, require_judge)
        check_evaluation_inputs(suite, judge)
    where, folder = Path(store), Path(out) if out is not None else None
    if in_looks(suite, sequential):
        assert suite is not None  # in_looks: only a suite's gate can stop a run
        # Imported for a run in looks only: the looks' order and levels bring scipy, which
        # a run of every case imports while it waits on its first replies (`warming`).
        from assay.api.sequential import Steps, run_looks

        run_part = functools.partial(_run_part, suite, judge, store=where)
        ended = functools.partial(_outcome, suite, judge, where, folder)
        outcome = run_looks(suite, request, Steps(run_part, ended, where), progress, warn)
    else:
        result, ahead = _run_part(suite, judge, request, progress, warn, store=where)
        outcome = _outcome(suite, judge, where, folder, request, result, ahead)
    record_run_time(where, outcome.run.run_id, time.monotonic() - started)
    return outcome


def _run_part(
    suite: Suite | None,
    judge: JudgeStatus | None,
    request: RunRequest,
    progress: Progress | None,
    warn: Callable[[str], None] | None,
    *,
    store: Path,
) -> tuple[RunResult, JudgeFollower | None]:
    """Run the request (a suite's judges pipelined with it); the run and what they judged."""
    handle = Store(store)
    try:
        follower = None
        if suite is not None:
            follower = _follower(suite, judge, request, handle)
            progress = warming(progress, _evaluation_modules(suite, judge, request))
        result = execute(request, handle, progress, warn, follower)
    finally:
        handle.close()
    return result, follower.built if follower is not None else None


def _outcome(
    suite: Suite | None,
    judge: JudgeStatus | None,
    store: Path,
    out: Path | None,
    request: RunRequest,
    result: RunResult,
    ahead: JudgeFollower | None,
    stop: Sequential | None = None,
    write: bool = True,
) -> RunOutcome:
    """What the run did, with its notes; with a suite, its evaluation (`_evaluate_run`)."""
    outcome = RunOutcome(run=result, request=request, store=store, judge=judge)
    if judge is not None and judge.disabled:
        skipped = (
            f"; thresholds skipped: {', '.join(judge.skipped + judge.skipped_corpus)}"
            if (judge.skipped or judge.skipped_corpus)
            else ""
        )
        outcome.notes.append(
            f"WARNING: {judge.headline}: the run went on without it, with the deterministic"
            f" scorers{skipped} (`[judge] required = true` or --require-judge makes this an"
            " error)"
        )
    if result.overrun is not None:
        outcome.notes.append(f"ERROR: {result.overrun}")
    if result.unmetered_note is not None:
        outcome.notes.append(result.unmetered_note)
    if suite is not None:
        _evaluate_run(outcome, suite, out, ahead, stop, write)
    return outcome


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def _evaluate_run(
    outcome: RunOutcome,
    suite: Suite,
    out: Path | None,
    ahead: JudgeFollower | None = None,
    stop: Sequential | None = None,
    write: bool = True,
) -> None:
    """`assay run SUITE.toml`: judge (what `ahead` has not judged while the run went on),
    score, gate and report the run into the output folder (see `_as_evaluated`); `stop`:
    a sequential run's look (its cases' trials only), `write`: see `evaluate_run`."""
    judge = outcome.judge
    suite, changes, note = _as_evaluated(suite, judge, outcome.request.conditions)
    if note is not None:
        outcome.notes.append(note)
        return
    handle = Store(outcome.store)
    before = run_spend(handle, outcome.run.run_id)
    try:
        # No collector passes: the evaluation builds tens of thousands of objects that all
        # live until it ends (they took a fifth of its CPU time).
        with paused_gc():
            from assay.api.suites import evaluate_run

            held = None
            if stop is not None:
                from assay.verdict.percase import held as look_holds
                from assay.verdict.pipeline import pick_candidate

                names = [c.name for c in outcome.request.conditions]
                held = look_holds(stop, pick_candidate(suite.gate.candidate, names))
            trials, lines = _run_trials(handle, outcome.run.run_id, ahead, held)
            outcome.evaluation = evaluate_run(
                suite,
                outcome.request,
                outcome.run.run_id,
                trials,
                handle,
                out,
                judge,
                changes,
                ahead,
                lines,
                stop,
                write,
            )
    except Incomplete as exc:
        outcome.incomplete = True
        outcome.notes.extend(exc.messages)
    except InputError as exc:
        if not outcome.run.exit_code:
            raise
        outcome.notes.extend(exc.messages)  # the incomplete run is the news; 3 wins
    finally:
        handle.flush()  # the evaluation's spend counts in the run's
        outcome.run.run_spend = run_spend(handle, outcome.run.run_id)
        if outcome.evaluation is None:  # it stopped: what it spent is the store's
            outcome.unfinished_spend = outcome.run.run_spend.minus(before)
        handle.close()


def _run_trials(
    store: Store,
    run_id: str,
    ahead: JudgeFollower | None,
    held: Callable[[Trial], bool] | None = None,
) -> tuple[list[Trial], list[str]]:
    """The run's trials as the store holds them (with `held`, those it holds), and
    their trials.jsonl lines: those the judges pipelined with the run made as each was
    recorded (`JudgeFollower.trials`), the others made here."""
    made = ahead.trials if ahead is not None else {}
    trials: list[Trial] = []
    lines: list[str] = []
    for text in store.trial_texts(run_id):
        found = made.get(text)
        if found is None:
            trial = Trial.model_validate_json(text)
            found = (trial, model_line(trial))
        if held is not None and not held(found[0]):
            continue
        trials.append(found[0])
        lines.append(found[1])
    return trials, lines
