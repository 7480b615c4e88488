"""`assay run`: run a case catalogue (or a suite file) through the system under test."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay.api.defaults import DEFAULT_STORE, ROLES, Spend
from assay.cli.app import app
from assay.cli.options import Corpus
from assay.cli.output import annotate, err, out, print_json, progress
from assay.core.cases import DEFAULT_CASES
from assay.core.errors import InputError
from assay.core.suite import DEFAULT_MODEL, Suite

if TYPE_CHECKING:
    from assay.api.running import RunOutcome

# Without a suite a run takes a default suite's settings; with one, the suite's own.
DEFAULTS = Suite()
RUN = DEFAULTS.run


def run_default(key: str) -> str:
    """`default V, or the suite's [run] KEY` for a --help text."""
    return f"default {getattr(RUN, key):g}, or the suite's [run] {key}"


def spend_text(spend: Spend, what: str) -> str:
    """`$0.1259 spent (system $0.0016, judges $0.1243, scorers $0.0000)` for what="spent"."""
    roles = ", ".join(f"{role} ${getattr(spend, role):.4f}" for role in ROLES)
    return f"${spend.total or 0.0:.4f} {what} ({roles})"


def print_outcome(outcome: RunOutcome, as_json: bool) -> None:
    """Print what the run did, plainly (or as JSON), then the suite's verdict."""
    result = outcome.run
    if as_json:
        print_json(outcome.summary().model_dump(mode="json"))
    else:
        out(
            f"run {result.run_id}: {result.answered + result.resumed}/{result.total} trials"
            f" answered ({result.resumed} already in the store, {result.cache_hits} from the call"
            f" cache), {result.errored} errored, {result.not_run} not run; {result.calls} model"
            f" calls, {spend_text(outcome.spend, 'spent')};"
            f" {spend_text(result.run_spend, 'by this run in all')}"
        )
    for line in result.errors:
        err(f"ERROR: trial {line}")
    if result.stopped == "budget":
        err(
            "ERROR: the budget cannot cover another call; it caps the whole run, across reruns:"
            " raise --budget-usd and run again to finish"
        )
    elif result.stopped == "lease":
        err(
            "ERROR: another process took this run over (this one's lease went stale); it stopped"
            " so no call is made twice: let the other finish, or run the same command again"
        )
    elif result.exit_code:
        err("ERROR: some trials did not finish; run the same command again to retry just those")
    if not as_json:
        if outcome.request.output:
            out(f"trials: {outcome.request.output}")
        out(f"store: {outcome.store}")
        if any(c.model.startswith("llamacpp:") for c in outcome.request.conditions):
            from assay.core.embedded import QUALITY_NOTE

            out(f"note: answers {QUALITY_NOTE}")
    for note in outcome.notes:
        err(note)
    evaluation = outcome.evaluation
    judged = evaluation.judged if evaluation is not None else None
    if judged is not None:
        for line in judged.failures:
            err(f"ERROR: judging failed: {line}")
        if judged.stopped == "budget":
            err(
                "ERROR: judging stopped: the run's budget cannot cover another judge call (judge"
                " calls count against the run's budget); raise --budget-usd and run again"
            )
        elif judged.exit_code:
            err("ERROR: some items were not judged; run the same command again to retry just those")
    if evaluation is not None:
        gate = evaluation.evaluation.analysis.gate
        say = err if as_json else out
        say(gate.headline)
        for reason in gate.explanation:
            say(f"  - {reason}")
        if gate.sequential is not None:
            say(gate.sequential.headline)
        say(f"reports: {evaluation.output}")
        from assay.api.ci import publish

        published = publish(evaluation)  # $GITHUB_STEP_SUMMARY; annotations on GitHub Actions
        for line in published.annotations:
            annotate(line, stderr=as_json)
        for line in published.warnings:
            err(line)


@app.command()
def run(
    suite_file: Annotated[
        Path | None, typer.Argument(metavar="[SUITE.toml]", help="A suite file (optional).")
    ] = None,
    cases: Annotated[
        Path | None,
        typer.Option(
            help=f"The JSONL case catalogue (default: the suite's `cases`, else {DEFAULT_CASES})."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "--runner",
            help=f"Model spec (default {DEFAULT_MODEL}, or the suite's); `mock` (alias `stub`)"
            " answers offline.",
        ),
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
        int | None,
        typer.Option(
            min=1,
            help=f"Trials per case and condition (default {DEFAULTS.trials}, or the suite's"
            " `trials`).",
        ),
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
        int | None,
        typer.Option(min=1, max=1024, help=f"Concurrent calls ({run_default('concurrency')})."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(min=0.001, help=f"Seconds per call ({run_default('timeout')})."),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=1, help=f"Output tokens per call ({run_default('max_tokens')})."),
    ] = None,
    price: Annotated[
        str | None, typer.Option(help="IN,OUT: USD per million input/output tokens.")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    max_reply_bytes: Annotated[
        int | None,
        typer.Option(
            min=1024,
            help="Cap on one reply (an HTTP body or a CLI's output); a longer one is an"
            f" errored call (default {RUN.max_reply_bytes}, 8 MiB, or the suite's [run]"
            " max_reply_bytes).",
        ),
    ] = None,
    retries: Annotated[
        int | None,
        typer.Option(min=0, help=f"Retries per call ({run_default('retries')})."),
    ] = None,
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
    batch: Annotated[
        bool | None,
        typer.Option(
            "--batch/--no-batch",
            help="Send the calls of openai: and anthropic: models through their provider's"
            " batch API: half the price, answers within 24 h; a rerun waits for the batches"
            " already submitted (default: the suite's [run] batch).",
        ),
    ] = None,
    batch_poll_s: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="With --batch: seconds before the first poll of a batch (later polls wait"
            " longer, up to 10x; default 30, or the suite's [run] batch_poll_s).",
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for a suite's outputs (default: the suite's `output`, else"
            " assay-out/<suite name>).",
        ),
    ] = None,
    require_judge: Annotated[
        bool,
        typer.Option(
            "--require-judge",
            help="Exit 2 before any call when a judge's API key is not set (default: the"
            " judge is disabled and the run goes on; or the suite's [judge] required).",
        ),
    ] = False,
    sequential: Annotated[
        bool | None,
        typer.Option(
            "--sequential/--no-sequential",
            help="Run the cases in looks and stop as soon as the verdict is settled (a suite's"
            " stats gate; default: the suite's [gate] sequential). See docs/sequential.md.",
        ),
    ] = None,
    store: Annotated[Path, typer.Option(help="The SQLite run store.")] = DEFAULT_STORE,
    corpus: Corpus = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
    view: Annotated[
        bool,
        typer.Option(
            "--view",
            help="When the run ends, serve `assay view` on 127.0.0.1 (a free port) and open"
            " the run's page in the browser; Ctrl+C stops it, then the exit code is the run's.",
        ),
    ] = False,
) -> None:
    """Run cases × conditions × trials; exit 0 when every trial answered, 3 when incomplete.

    With a suite file the run is then scored (the suite's scorers, and judges when
    configured), gated and reported into the suite's output folder (default
    assay-out/<suite name>); the exit code is then the gate's (0 PASS, 1 otherwise), and 3
    still wins when the run is incomplete. With $GITHUB_STEP_SUMMARY set the Markdown report
    is appended to it, and on GitHub Actions each failing case is annotated at its line in
    the case catalogue. A judge whose API key is not set is disabled
    (the run goes on with the deterministic scorers and every report says so) unless
    --require-judge; a missing key of the system under test is exit 2 before any call."""

    from assay.api.run_inputs import load, parse_params, with_corpus
    from assay.api.running import execute_run, run_request

    suite = load(suite_file)
    if corpus:
        if suite is None:
            raise InputError("ERROR: --corpus: needs a suite file (without one nothing is gated)")
        suite = with_corpus(suite, corpus)
    request = run_request(
        suite,
        cases=cases,
        model=model,
        conditions=condition,
        condition_skill=condition_skill,
        trials=trials,
        output=output,
        budget_usd=budget_usd,
        allow_unmetered=allow_unmetered,
        case_ids=case,
        concurrency=concurrency,
        timeout=timeout,
        max_tokens=max_tokens,
        price=price,
        base_url=base_url,
        retries=retries,
        response_format=response_format,
        workdir=workdir,
        params=parse_params(param),
        executor=executor,
        ray_address=ray_address,
        batch=batch,
        batch_poll_s=batch_poll_s,
        max_reply_bytes=max_reply_bytes,
    )
    total = len(request.cases) * len(request.conditions) * request.trials
    with progress(total, "trials") as tick:
        outcome = execute_run(
            suite,
            request,
            store=store,
            out=out_dir,
            progress=tick,
            require_judge=require_judge,
            warn=err,
            sequential=sequential,
        )
    print_outcome(outcome, json_output)
    if view:
        from assay.cli.view import serve_view

        serve_view(store, "127.0.0.1", 0, None, True, outcome.run.run_id)
    raise typer.Exit(outcome.exit_code)
