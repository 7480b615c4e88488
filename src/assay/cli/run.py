"""`assay run`: run a case catalogue (or a suite file) through the system under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from assay.cli.app import app
from assay.cli.output import err, out, print_json, progress
from assay.core.cases import DEFAULT_CASES, load_cases
from assay.core.errors import InputError
from assay.core.records import Case
from assay.core.suite import DEFAULT_MODEL, Suite, load_suite
from assay.engine import Condition, RunRequest, RunResult, RunSettings, execute
from assay.models.cli_formats import FORMATS
from assay.models.llamacpp import QUALITY_NOTE
from assay.models.pricing import parse_price
from assay.models.registry import ModelOptions
from assay.scorers.runner import build_scorers
from assay.store import DEFAULT_STORE, Store


def select_cases(cases: list[Case], wanted: list[str] | None) -> list[Case]:
    """Keep the cases named by --case (in catalogue order); unknown ids are an error."""
    if not wanted:
        return cases
    known = {c.id for c in cases}
    missing = [w for w in wanted if w not in known]
    if missing:
        raise InputError(f"ERROR: --case: unknown case id(s): {', '.join(missing)}")
    keep = set(wanted)
    return [c for c in cases if c.id in keep]


def flag_conditions(model: str, skill: Path | None, only: list[str] | None) -> list[Condition]:
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


def suite_conditions(suite: Suite, only: list[str] | None) -> list[Condition]:
    conditions = [
        Condition(
            name=c.name,
            model=c.model or suite.model,
            skill=None,
            system=c.system,
            params=dict(c.params),
            response_format=c.format,
            workdir=suite.path(c.workdir) if c.workdir else None,
        )
        for c in suite.conditions
    ]
    for condition, section in zip(conditions, suite.conditions, strict=True):
        if section.skill is not None:
            loaded = Condition.with_skill_file(
                condition.name, condition.model, suite.path(section.skill)
            )
            condition.skill, condition.skill_path = loaded.skill, loaded.skill_path
    if only:
        conditions = [c for c in conditions if c.name in only]
        if not conditions:
            raise InputError(f"ERROR: --condition: none of {only} is in the suite")
    return conditions


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """`--param KEY=VALUE` pairs; a VALUE that is valid JSON is taken as JSON, else as text."""
    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"ERROR: --param: expected KEY=VALUE, got {item!r}")
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value
    return params


def apply_overrides(
    conditions: list[Condition],
    params: dict[str, Any],
    response_format: str | None,
    workdir: Path | None,
) -> None:
    """Flags win over the suite: --param, --format and --workdir apply to every condition."""
    if response_format is not None and response_format not in FORMATS:
        raise InputError(
            f"ERROR: --format: unknown response format {response_format!r}"
            f" (known: {', '.join(FORMATS)})"
        )
    for condition in conditions:
        condition.params.update(params)
        if response_format is not None:
            condition.response_format = response_format
        if workdir is not None:
            condition.workdir = workdir


def report_result(result: RunResult, output: Path | None, store: Path, as_json: bool) -> None:
    """Print what the run did, plainly."""
    if as_json:
        print_json(
            {
                "run_id": result.run_id,
                "total": result.total,
                "answered": result.answered + result.resumed,
                "errored": result.errored,
                "not_run": result.not_run,
                "calls": result.calls,
                "cache_hits": result.cache_hits,
                "spent_usd": round(result.spent_usd, 6),
                "run_spent_usd": round(result.run_spent_usd, 6),
                "stopped": result.stopped,
                "output": str(output) if output else None,
                "store": str(store),
                "exit_code": result.exit_code,
            }
        )
        return
    out(
        f"run {result.run_id}: {result.answered + result.resumed}/{result.total} trials answered"
        f" ({result.resumed} already in the store, {result.cache_hits} from the call cache),"
        f" {result.errored} errored, {result.not_run} not run; {result.calls} model calls,"
        f" ${result.spent_usd:.4f} spent (${result.run_spent_usd:.4f} by this run in all)"
    )
    for line in result.errors:
        err(f"ERROR: trial {line}")
    if result.stopped == "budget":
        err(
            "ERROR: the budget cannot cover another call; it caps the whole run, across reruns:"
            " raise --budget-usd and run again to finish"
        )
    elif result.exit_code:
        err("ERROR: some trials did not finish; run the same command again to retry just those")
    if output:
        out(f"trials: {output}")
    out(f"store: {store}")


def chain_after_run(
    suite: Suite, request: RunRequest, result: RunResult, store: Path, as_json: bool
) -> int:
    """`assay run SUITE.toml`: score, gate and report the run; 3 still wins when incomplete."""
    from assay.core.records import Trial
    from assay.evaluate.pipeline import gate_exit_code, run_chain

    names = {c.name for c in request.conditions}
    if "baseline" not in names or len(names) < 2:
        err("note: the suite has no baseline and candidate to compare, so nothing is gated")
        return result.exit_code
    if not suite.scoring.scorers and not suite.judge.judges:
        err("note: the suite names no scorers and no judges, so nothing is scored or gated")
        return result.exit_code
    handle = Store(store)
    try:
        trials = [Trial.model_validate(r) for r in handle.trial_records(result.run_id)]
        evaluation, out_dir, judging_code = run_chain(suite, list(request.cases), trials, handle)
    except InputError as exc:
        if not result.exit_code:
            raise
        for message in exc.messages:  # the incomplete run is the news; 3 wins
            err(message)
        return result.exit_code
    finally:
        handle.close()
    gate = evaluation.analysis.gate
    say = err if as_json else out
    say(f"release gate ({gate.mode}, candidate {gate.candidate}): {gate.verdict}")
    for reason in gate.reasons:
        say(f"  - {reason}")
    say(f"reports: {out_dir}")
    return result.exit_code or judging_code or gate_exit_code(evaluation)


@app.command()
def run(
    suite_file: Annotated[
        Path | None, typer.Argument(metavar="[SUITE.toml]", help="A suite file (optional).")
    ] = None,
    cases: Annotated[Path | None, typer.Option(help="The JSONL case catalogue.")] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "--runner", help=f"Model spec (default {DEFAULT_MODEL})."),
    ] = None,
    condition: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Run only this condition (repeatable)."),
    ] = None,
    condition_skill: Annotated[
        Path | None,
        typer.Option(help="Skill file: the candidate condition wraps the prompt in it."),
    ] = None,
    trials: Annotated[
        int | None, typer.Option(min=1, help="Trials per case and condition.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Write the run's trials here (JSONL).")
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option(min=0, help="Hard spending cap in USD.")
    ] = None,
    allow_unmetered: Annotated[
        bool, typer.Option(help="Allow models whose cost is unknown.")
    ] = False,
    case: Annotated[
        list[str] | None, typer.Option(help="Run only this case id (repeatable).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=1024, help="Concurrent calls.")
    ] = None,
    timeout: Annotated[float | None, typer.Option(min=0.001, help="Seconds per call.")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Output tokens per call.")] = None,
    price: Annotated[
        str | None, typer.Option(help="IN,OUT: USD per million input/output tokens.")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    retries: Annotated[int | None, typer.Option(min=0, help="Retries per call.")] = None,
    response_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="How command: models print answers: text, claude-json or codex-jsonl.",
        ),
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(help="Working folder of CLI models (default: a fresh temporary one)."),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(metavar="KEY=VALUE", help="Set a condition parameter for every condition."),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(
            metavar="local|ray",
            help="Where model calls run: this process (local, default) or Ray tasks (ray).",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Ray cluster to join (HOST:PORT); without it --executor ray starts one."),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for a suite's outputs (default: the suite's `output`)."),
    ] = None,
    store: Annotated[Path, typer.Option(help="The SQLite run store.")] = DEFAULT_STORE,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run cases × conditions × trials; exit 0 when every trial answered, 3 when incomplete.

    With a suite file the run is then scored (the suite's scorers, and judges when
    configured), gated and reported into the suite's output folder (default
    assay-out/<suite name>); the exit code is then the gate's (0 PASS, 1 otherwise), and 3
    still wins when the run is incomplete."""
    suite = load_suite(suite_file) if suite_file is not None else None
    if suite is not None:
        if out_dir is not None:
            suite.output = str(out_dir.resolve())
        catalogue = load_cases(cases or suite.path(suite.cases))
        if model is not None:
            suite.model = model
            for entry in suite.conditions:
                entry.model = None
        conditions = suite_conditions(suite, condition)
        section = suite.run
        trials = trials or suite.trials
        allow_unmetered = allow_unmetered or section.allow_unmetered
    else:
        catalogue = load_cases(cases or DEFAULT_CASES)
        conditions = flag_conditions(model or DEFAULT_MODEL, condition_skill, condition)
        section = Suite().run
        trials = trials or 3
    settings = RunSettings(
        max_tokens=max_tokens or section.max_tokens,
        temperature=section.temperature,
        concurrency=concurrency or section.concurrency,
        timeout_s=timeout or section.timeout,
        retries=section.retries if retries is None else retries,
        budget_usd=section.budget_usd if budget_usd is None else budget_usd,
    )
    apply_overrides(conditions, parse_params(param), response_format, workdir)
    price_text = price or section.price
    options = ModelOptions(
        base_url=base_url or section.base_url,
        price=parse_price(price_text) if price_text else None,
        extra={"root": suite.root} if suite is not None else {},
    )
    request = RunRequest(
        cases=select_cases(catalogue, case),
        conditions=conditions,
        trials=trials,
        settings=settings,
        options=options,
        allow_unmetered=allow_unmetered,
        output=output,
        executor=executor or section.executor,
        ray_address=ray_address or section.ray_address,
    )
    if suite is not None:
        build_scorers(suite.scoring.scorers)  # bad scorer options fail before any call
    handle = Store(store)
    try:
        total = len(request.cases) * len(conditions) * trials
        with progress(total, "trials") as tick:
            result = execute(request, handle, tick)
    finally:
        handle.close()
    report_result(result, output, store, json_output)
    if any(c.model.startswith("llamacpp:") for c in conditions) and not json_output:
        out(f"note: answers {QUALITY_NOTE}")
    if suite is not None:
        raise typer.Exit(chain_after_run(suite, request, result, store, json_output))
    raise typer.Exit(result.exit_code)
