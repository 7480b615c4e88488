"""`assay.run`: run a case catalogue (or a suite) through the system under test.

With a suite, the run is then judged, scored, gated and reported through the one evaluation
route (`assay.api.evaluation`). Settings resolve in one place (`run_request`): flags win over
the suite, the suite over the defaults, and the loaded suite is never changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.api.outputs import RunSummary
from assay.api.results import Result
from assay.api.suites import evaluate_run
from assay.core.cases import DEFAULT_CASES, load_cases
from assay.core.errors import EXIT_INCOMPLETE, Incomplete, InputError
from assay.core.jsonl import check_output
from assay.core.records import Case, Trial
from assay.core.suite import Suite, load_suite
from assay.engine import Condition, RunRequest, RunResult, RunSettings, execute
from assay.models.cli_formats import FORMATS
from assay.models.pricing import parse_price
from assay.models.registry import ModelOptions
from assay.store import DEFAULT_STORE, Store
from assay.verdict.config import output_dir

Progress = Callable[[bool], None]


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

    @property
    def exit_code(self) -> int:
        """3 when the run (or the judging) is incomplete; else the gate's (0 PASS, 1 not)."""
        if self.run.exit_code:
            return self.run.exit_code
        if self.incomplete:
            return EXIT_INCOMPLETE
        return self.evaluation.exit_code if self.evaluation is not None else 0

    def summary(self) -> RunSummary:
        """`assay run --json` (`assay schema run-summary`)."""
        result, evaluation = self.run, self.evaluation
        return RunSummary(
            run_id=result.run_id,
            total=result.total,
            answered=result.answered + result.resumed,
            errored=result.errored,
            not_run=result.not_run,
            calls=result.calls,
            cache_hits=result.cache_hits,
            spent_usd=round(result.spent_usd, 6),
            run_spent_usd=round(result.run_spent_usd, 6),
            stopped=result.stopped,
            output=str(self.request.output) if self.request.output else None,
            store=str(self.store),
            exit_code=self.exit_code,
            release_gate=evaluation.summary().release_gate if evaluation is not None else None,
            reports=str(evaluation.output) if evaluation is not None else None,
            notes=list(self.notes),
        )


def select_cases(cases: Sequence[Case], wanted: Sequence[str] | None) -> list[Case]:
    """Keep the cases named by --case (in catalogue order); unknown ids are an error."""
    if not wanted:
        return list(cases)
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
) -> RunRequest:
    """Everything a run needs, from a suite (or none) and the given overrides."""
    skill, folder = _path(condition_skill), _path(workdir)
    if isinstance(cases, str | Path) or cases is None:
        default = suite.path(suite.cases) if suite is not None else DEFAULT_CASES
        catalogue = load_cases(_path(cases) or default)
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
        ),
        options=ModelOptions(
            base_url=base_url or section.base_url,
            price=parse_price(price_text) if price_text else None,
            extra={"root": suite.root} if suite is not None else {},
        ),
        allow_unmetered=allow_unmetered,
        output=_path(output),
        executor=executor or section.executor,
        ray_address=ray_address or section.ray_address,
    )


def run(
    suite: str | Path | Suite | None = None,
    *,
    store: str | Path = DEFAULT_STORE,
    out: str | Path | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
    **options: Any,
) -> RunOutcome:
    """Run cases × conditions × trials; with a suite, judge, score, gate and report the run.

    `options` are `run_request`'s (cases, model, trials, budget_usd, ...). `out` is the suite's
    output folder (default: the suite's `output`, else assay-out/<suite name>). `warn` is
    told, before any call, of an absurd plan (its estimated calls and cost)."""
    loaded = load(suite)
    return execute_run(
        loaded, run_request(loaded, **options), store=store, out=out, progress=progress, warn=warn
    )


def execute_run(
    suite: Suite | None,
    request: RunRequest,
    *,
    store: str | Path = DEFAULT_STORE,
    out: str | Path | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run a resolved request (see `run_request`); with a suite, evaluate the run."""
    check_run_outputs(suite, request, out)
    if suite is not None:
        from assay.scorers.runner import build_scorers

        build_scorers(suite.scoring.scorers)  # bad scorer options fail before any call
    handle = Store(Path(store))
    try:
        result = execute(request, handle, progress, warn)
    finally:
        handle.close()
    outcome = RunOutcome(run=result, request=request, store=Path(store))
    if result.overrun is not None:
        outcome.notes.append(f"ERROR: {result.overrun}")
    if suite is not None:
        _evaluate_run(outcome, suite, Path(out) if out is not None else None)
    return outcome


def check_run_outputs(suite: Suite | None, request: RunRequest, out: str | Path | None) -> None:
    """Refuse a trials file or a suite output folder that cannot be written, before any call."""
    if request.output is not None:
        check_output(request.output, "--output")
    if suite is not None:
        folder, flag = (
            (Path(out), "--out") if out is not None else (output_dir(suite), "the suite's output")
        )
        check_output(folder, flag, folder=True)


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def load(suite: str | Path | Suite | None) -> Suite | None:
    """A suite from its path (or as given)."""
    if suite is None or isinstance(suite, Suite):
        return suite
    return load_suite(Path(suite))


def _evaluate_run(outcome: RunOutcome, suite: Suite, out: Path | None) -> None:
    """`assay run SUITE.toml`: judge, score, gate and report the run into the output folder."""
    names = {c.name for c in outcome.request.conditions}
    if "baseline" not in names or len(names) < 2:
        outcome.notes.append(
            "note: the suite has no baseline and candidate to compare, so nothing is gated"
        )
        return
    if not suite.scoring.scorers and not suite.judge.judges:
        outcome.notes.append(
            "note: the suite names no scorers and no judges, so nothing is scored or gated"
        )
        return
    handle = Store(outcome.store)
    try:
        trials = [Trial.model_validate(r) for r in handle.trial_records(outcome.run.run_id)]
        outcome.evaluation = evaluate_run(
            suite, outcome.request, outcome.run.run_id, trials, handle, out
        )
    except Incomplete as exc:
        outcome.incomplete = True
        outcome.notes.extend(exc.messages)
    except InputError as exc:
        if not outcome.run.exit_code:
            raise
        outcome.notes.extend(exc.messages)  # the incomplete run is the news; 3 wins
    finally:
        handle.close()
