"""`assay judge-bench`: a judge against public human-labelled pairwise sets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from assay.api.defaults import DEFAULT_STORE, ModelOptions, parse_price
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

SET_NAMES = "llmbar-natural, llmbar-adversarial, prd-vicuna80, pandalm"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(interval: list[float] | None) -> str:
    return "" if not interval else f" [{interval[0]:.3f}, {interval[1]:.3f}]"


def print_bench(data: dict[str, Any]) -> None:
    for name, f in data["sets"].items():
        out(f"{name}: {f['items']} items, judge {data['judge']}")
        pooled = ", pooled over the subsets' items" if f.get("subsets") else ""
        out(
            f"  accuracy {_num(f['accuracy'])}{_ci(f['accuracy_ci'])} (mean over both orders{pooled});"
        )
        out(
            f"  after the swap rule {_num(f['verdict_accuracy'])}{_ci(f['verdict_accuracy_ci'])};"
            f" kappa {_num(f['kappa'])}{_ci(f['kappa_ci'])}"
        )
        out(
            f"  position consistency {_num(f['position_consistency'])}"
            f"{_ci(f['position_consistency_ci'])}; first-position share"
            f" {_num(f['first_position_share'])}{_ci(f['first_position_share_ci'])}"
            f" (p {_num(f['p'])}{', FLAGGED' if f['flagged'] else ''});"
            f" position bias {_num(f['position_bias'])}"
        )
        out(
            f"  longer response won {_num(f['p_prefer_longer'])}{_ci(f['p_prefer_longer_ci'])}"
            f" of {f['length_decided_comparisons']} (p {_num(f['length_preference_p'])}"
            f"{', FLAGGED' if f['length_preference_flagged'] else ''})"
        )
        if f.get("subsets"):
            parts = ", ".join(
                f"{k} {_num(v['accuracy'])} ({v['items']})" for k, v in f["subsets"].items()
            )
            mean = f["subset_mean"]
            out(
                f"  per subset: accuracy {parts}; mean of subsets: accuracy"
                f" {_num(mean['accuracy'])}, position consistency"
                f" {_num(mean['position_consistency'])} (as the references below)"
            )
        for ref in f["references"]:
            if ref["subsets"]:
                parts = ", ".join(f"{k} {v['accuracy']:.3f}" for k, v in ref["subsets"].items())
                scope = f"mean of subsets: {parts}; {ref['items']} items"
            else:
                scope = f"whole set, {ref['items']} items"
            out(
                f"  reference {ref['judge']} ({ref['model']}): accuracy {ref['accuracy']:.3f},"
                f" position consistency {ref['position_consistency']:.3f} ({scope})"
            )
    out(
        f"{data['calls']} judge calls, {data['cache_hits']} from the call cache,"
        f" {data['resumed']} items already in the store, ${data['spent_usd']:.4f} spent"
    )
    for failure in data["gate_failures"]:
        err(f"GATE: {failure}")
    if data["failed"] or data["not_run"] or data["stopped"]:
        err("ERROR: some items were not judged; run the same command again to retry just those")
    if data["output"]:
        out(f"output: {data['output']}")
    if data["report"]:
        out(f"report: {data['report']}")
    out(f"store: {data['store']}")


@app.command("judge-bench")
def judge_bench(
    judge: Annotated[str, typer.Option("--judge", help="The judge model spec to benchmark.")],
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help=f"A set to run (repeatable; default all): {SET_NAMES}."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N items per set (a seeded choice).")
    ] = None,
    rubric: Annotated[
        Path | None, typer.Option(help="Rubric file (.yaml/.json, see `assay rubric`).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(help="Folder for comparisons, labels, cases and trials (JSONL)."),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            help="Read the sets from this folder (their public layout) instead of fetching"
            " their pinned upstream files."
        ),
    ] = None,
    mirror: Annotated[
        str | None,
        typer.Option(
            help="Fetch the sets' pinned files from this URL (serving their public layout)"
            " instead of their upstream repositories [env: ASSAY_JUDGE_BENCH_MIRROR]."
        ),
    ] = None,
    min_accuracy: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Exit 1 when a set's accuracy is lower.")
    ] = None,
    max_position_bias: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Exit 1 when a set's position bias is higher."),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(help="Write an HTML leaderboard of every judge benchmarked in the store."),
    ] = None,
    shuffles: Annotated[
        int, typer.Option(min=2, help="Passes in alternating order (majority).")
    ] = 2,
    max_tokens: MaxTokens = 1024,
    temperature: Temperature = 0.0,
    budget_usd: JudgeBudget = None,
    allow_unmetered: AllowUnmetered = False,
    price: JudgePrice = None,
    base_url: BaseUrl = None,
    concurrency: Concurrency = 8,
    timeout: Timeout = 120.0,
    retries: Retries = 4,
    store: StorePath = DEFAULT_STORE,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Benchmark a judge on public human-labelled pairwise sets; exit 0, 1 below a gate bar,
    3 when some items were not judged (run again to resume).

    The judge runs as `assay judge --mode pairwise` runs it (same templates, both orders,
    the swap rule, budget, call cache, resume). Per set: accuracy against the gold or
    human-majority label (mean over both orders, ties as the set defines them), Cohen's
    kappa, position consistency, first-position share and length preference with their
    tests, each with a 95% interval, next to published judges' figures on the same set.
    position bias = |first-position wins - second-position wins| / two-order comparisons.

    Without --data, the sets' pinned public files are fetched once from their upstream
    repositories (or --mirror), checked by SHA-256 and cached under ~/.cache/assay/judge-bench
    (ASSAY_CACHE moves it)."""
    from assay.api.judge_settings import JudgeConfig
    from assay.api.judgebench import SETS, bench_summary, load_items
    from assay.api.judgebench import judge_bench as bench_api
    from assay.api.judgebench.run import check_bench_outputs
    from assay.core.rubric import load_rubric

    check_bench_outputs(output, report, store)

    config = JudgeConfig(
        judges=[judge],
        shuffles=shuffles,
        rubric=load_rubric(rubric) if rubric is not None else None,
        max_tokens=max_tokens,
        temperature=temperature,
        concurrency=concurrency,
        timeout_s=timeout,
        retries=retries,
        budget_usd=budget_usd,
        allow_unmetered=allow_unmetered,
        options=ModelOptions(base_url=base_url, price=parse_price(price) if price else None),
    )
    items = load_items(sets or SETS, limit, data, mirror)
    with progress(len(items), "judged") as tick:
        result = bench_api(
            judge,
            items=items,
            output=output,
            store=store,
            min_accuracy=min_accuracy,
            max_position_bias=max_position_bias,
            report=report,
            progress=tick,
            config=config,
        )
    summary = bench_summary(result, store)
    if json_output:
        print_output("judge-bench", summary)
    else:
        print_bench(summary)
    raise typer.Exit(result.exit_code)
