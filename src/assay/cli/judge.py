"""`assay judge`: LLM judges turn trials into Score rows (direct) or Comparisons (pairwise)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from assay.api.defaults import DEFAULT_STORE, ModelOptions, parse_price
from assay.api.judge_settings import JudgeConfig, JudgeResult, family_warnings
from assay.cli.app import app
from assay.cli.options import (
    AllowUnmetered,
    BaseUrl,
    Concurrency,
    JudgeBudget,
    JudgePrice,
    MaxTokens,
    Retries,
    StorePath,
    Temperature,
    Timeout,
)
from assay.cli.output import err, out, print_output, progress
from assay.core.cases import DEFAULT_CASES
from assay.core.errors import InputError
from assay.core.rubric import load_rubric


def cascade_text(cascade: dict[str, Any], settled: int) -> str:
    """The cascade's savings in words: what the screen settled and what it cost or saved."""
    avoided, spent = cascade["full_judge_calls_avoided"], cascade["screen_calls"]
    saved = cascade["calls_saved"]
    if not avoided:
        return f"cascade: the screen cost {spent} extra calls and settled none"
    done = f"cascade: the screen settled {settled} item(s), avoiding {avoided} full-judge calls"
    if saved > 0:
        return f"{done}, for {spent} screen calls: {saved} calls saved"
    if saved == 0:
        return f"{done}, but cost {spent} calls: as many as the full judge alone"
    return f"{done}, but cost {spent} calls: {-saved} more than the full judge alone"


def print_summary(data: dict[str, Any], result: JudgeResult) -> None:
    out(
        f"judged {data['judged']}/{data['items']} items ({data['resumed']} already in the store),"
        f" {data['failed']} failed, {data['not_run']} not run; {data['calls']} judge calls,"
        f" {data['cache_hits']} from the call cache, ${data['spent_usd']:.4f} spent"
    )
    if data["skipped_errored_trials"] or data["unpaired_trials"]:
        out(
            f"skipped: {data['skipped_errored_trials']} errored trials,"
            f" {data['unpaired_trials']} trials without a partner"
        )
    if data["by_expectations"]:
        out(
            f"decided by the case's expectations (one response failed them), without a judge"
            f" call: {data['by_expectations']}"
        )
    if data["tiers"]:
        out("settled by tier: " + ", ".join(f"{k} {v}" for k, v in data["tiers"].items()))
    cascade = data.get("cascade")
    if cascade:
        out(cascade_text(cascade, data["tiers"].get("screen", 0)))
    for name, value in (data.get("krippendorff_alpha") or {}).items():
        out(f"krippendorff alpha ({name}): {'n/a' if value is None else f'{value:.3f}'}")
    for line in result.failures:
        err(f"ERROR: judging failed: {line}")
    if result.stopped == "budget":
        err(
            "ERROR: the budget cannot cover another call; it caps the whole judging, across"
            " reruns: raise --budget-usd and run again to finish"
        )
    elif result.exit_code:
        err("ERROR: some items were not judged; run the same command again to retry just those")
    out(f"output: {data['output']}")
    out(f"store: {data['store']}")


@app.command()
def judge(
    judge_specs: Annotated[
        list[str],
        typer.Option("--judge", help="Judge model spec; repeat for a panel."),
    ],
    output: Annotated[Path, typer.Option(help="Write Score rows / Comparisons here (JSONL).")],
    trials: Annotated[Path | None, typer.Option(help="Trials to judge (JSONL).")] = None,
    run_id: Annotated[
        str | None, typer.Option("--run", help="Judge this run's trials from the store.")
    ] = None,
    cases: Annotated[
        Path, typer.Option(help="The case catalogue the trials answer.")
    ] = DEFAULT_CASES,
    mode: Annotated[
        str, typer.Option(help="direct (rubric scores) or pairwise (a against b).")
    ] = "direct",
    a: Annotated[str, typer.Option("--a", help="Pairwise: condition a.")] = "baseline",
    b: Annotated[str, typer.Option("--b", help="Pairwise: condition b.")] = "candidate",
    shuffles: Annotated[
        int, typer.Option(min=2, help="Pairwise passes in alternating order (majority).")
    ] = 2,
    screen: Annotated[
        str | None, typer.Option(help="Cascade: a cheap judge that screens every item first.")
    ] = None,
    screen_threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Cascade: accept at the screen from here.")
    ] = 0.7,
    review_threshold: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Cascade: queue for human review below this."),
    ] = 0.6,
    strict_judge: Annotated[
        bool, typer.Option(help="Refuse a judge of the same family as a generator.")
    ] = False,
    rubric: Annotated[
        Path | None, typer.Option(help="Rubric file (.yaml/.json, see `assay rubric`).")
    ] = None,
    scale: Annotated[str, typer.Option(help="1-3, 1-5 or 1-10 (1-10 needs --rubric).")] = "1-5",
    length_normalised: Annotated[
        bool,
        typer.Option(help="Direct: add overall_ln, -0.5 per doubling beyond the case median."),
    ] = False,
    concision: Annotated[
        bool, typer.Option(help="Add the explicit concision criterion if the rubric lacks it.")
    ] = False,
    expectations_first: Annotated[
        bool,
        typer.Option(
            help="Pairwise: a response that fails the case's `expect` (JSON Schema, contains,"
            " not_contains, regex, refuse, escalate) loses to one that meets it, without a"
            " judge call; --no-expectations-first asks the judge about every pair."
        ),
    ] = True,
    over: Annotated[
        str,
        typer.Option(
            help="What the judges read of a trial: response, or trajectory (its steps, one"
            " line each, then its response: for criteria on what an agent did).",
        ),
    ] = "response",
    max_tokens: MaxTokens = 1024,
    temperature: Temperature = 0.0,
    budget_usd: JudgeBudget = None,
    allow_unmetered: AllowUnmetered = False,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send the calls of openai: and anthropic: judges through their provider's"
            " batch API: half the price, answers within 24 h; a rerun waits for the batches"
            " already submitted.",
        ),
    ] = False,
    batch_poll_s: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="With --batch: seconds before the first poll of a batch (later polls wait"
            " longer, up to 10x).",
        ),
    ] = 30.0,
    price: JudgePrice = None,
    base_url: BaseUrl = None,
    concurrency: Concurrency = 8,
    timeout: Timeout = 120.0,
    retries: Retries = 4,
    store: StorePath = DEFAULT_STORE,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Also write the verdicts as Labels (rater judge:MODEL, prompt_sha256) for"
            " `assay calibrate`, next to the humans' from `assay review export --labels`."
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Judge trials; exit 0 when every item was judged, 3 when some failed (resumable).

    Direct mode writes Score rows (one number per rubric criterion) and records them in the
    store's judge_scores table under the trials' run id, for `assay history`. With --screen
    (the cascade) the cheap judge scores the rubric and gives a 0-1 adequacy in one call:
    responses at or above --screen-threshold without a blocker keep the screen's scores
    (tier "screen", so every row feeds `assay score` alike); the rest go to the full judge
    (tier "judge", or "review" when still doubtful). Pairwise mode writes Comparisons; a
    pair where exactly one response fails the case's expectations is decided without a call
    (tier "rule", `expectations` names what each missed) unless --no-expectations-first.

    Confidence, capped at 0.95: f = 0.6 + 0.4 * min(1, q/Q), q = evidence quotes found
    verbatim in the response(s), Q = quotes expected (3 per pairwise pass, 1 per criterion).
    Pairwise, 2 passes agreeing: min(0.95, mean pass confidence * f); disagreeing: TIE,
    consistent=false, 0.5. N shuffles: majority verdict, min(0.95, vote share * f). Direct:
    min(0.95, 0.5 + 0.45 * min(1, q/Q)). Panels: direct, mean confidence * (1 - mean
    spread / scale range); pairwise, share backing the majority * their mean confidence."""
    if mode not in ("direct", "pairwise"):
        raise InputError(f"ERROR: --mode: expected direct or pairwise, got {mode!r}")
    if scale not in ("1-3", "1-5", "1-10"):
        raise InputError(f"ERROR: --scale: expected 1-3, 1-5 or 1-10, got {scale!r}")
    if over not in ("response", "trajectory"):
        raise InputError(f"ERROR: --over: expected response or trajectory, got {over!r}")
    config = JudgeConfig(
        judges=list(judge_specs),
        mode="direct" if mode == "direct" else "pairwise",
        a=a,
        b=b,
        shuffles=shuffles,
        screen=screen,
        screen_threshold=screen_threshold,
        review_threshold=review_threshold,
        strict_judge=strict_judge,
        rubric=load_rubric(rubric) if rubric is not None else None,
        scale=scale,
        length_normalised=length_normalised,
        concision=concision,
        expectations_first=expectations_first,
        max_tokens=max_tokens,
        temperature=temperature,
        concurrency=concurrency,
        timeout_s=timeout,
        retries=retries,
        budget_usd=budget_usd,
        allow_unmetered=allow_unmetered,
        options=ModelOptions(base_url=base_url, price=parse_price(price) if price else None),
        batch=batch,
        batch_poll_s=batch_poll_s,
        over="trajectory" if over == "trajectory" else "response",
    )
    from assay.api.inputs import load_trials
    from assay.api.judging import check_judge_outputs, summary
    from assay.api.judging import judge as judge_api

    check_judge_outputs(output, labels, trials=trials, cases=cases, store=store, rubric=rubric)
    # Read a trials file before opening the store, so bad input leaves no store behind.
    records = load_trials(trials, run_id, store, required=True)
    for warning in family_warnings(config, records):
        err(warning)
    expected = len(records) if config.mode == "direct" else len(records) // 2
    with progress(expected, "judged") as tick:
        result = judge_api(
            records,
            config=config,
            cases=cases,
            store=store,
            output=output,
            labels=labels,
            progress=tick,
        )
    data = summary(result, config, output, store)
    if json_output:
        print_output("judge-summary", data)
    else:
        print_summary(data, result)
    raise typer.Exit(result.exit_code)
