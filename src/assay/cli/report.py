"""`assay report`: write report.md, report.json, report.junit.xml and report.html from
stored outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.options import Corpus
from assay.cli.output import annotate, err, out


@app.command()
def report(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder the reports are written to.")],
    scores: Annotated[
        Path | None, typer.Option(help="Score rows (JSONL) from judges or human review.")
    ] = None,
    trials: Annotated[Path | None, typer.Option(help="Trials (JSONL) of the run.")] = None,
    run_id: Annotated[
        str | None, typer.Option("--run", help="Read the trials of this run from the store.")
    ] = None,
    cases: Annotated[
        Path | None, typer.Option(help="The case catalogue (risk, category, expectations).")
    ] = None,
    comparisons: Annotated[
        Path | None, typer.Option(help="Pairwise comparisons (JSONL) to summarise.")
    ] = None,
    scorer: Annotated[
        list[str] | None,
        typer.Option(help="Deterministic scorer to run on the trials (repeatable)."),
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="A suite file: scorers, thresholds, weights, gate and report settings."),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Comma-separated: md, json, junit, html (default: the suite's [report]"
            " formats, else md,json,junit).",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Human and judge labels (JSONL, as for assay calibrate): adds each judge's"
            " confusion matrix."
        ),
    ] = None,
    drilldown: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Cases in the per-case drill-down, blockers and worst regressions first"
            " (default: the suite's [report] drilldown, else 20).",
        ),
    ] = None,
    gate: Annotated[
        Literal["seed", "stats"] | None, typer.Option(help="Gate mode (default stats).")
    ] = None,
    candidate: Annotated[
        str | None, typer.Option(help="The condition the gate decides for (default candidate).")
    ] = None,
    weights: Annotated[str | None, typer.Option(help="METRIC=W,... (normalised).")] = None,
    store: Annotated[Path, typer.Option(help="The SQLite run store (for --run).")] = DEFAULT_STORE,
    corpus: Corpus = None,
) -> None:
    """Write the reports: Markdown for a PR comment, JSON (assay schema report), JUnit XML,
    and a self-contained HTML page. Exit 0 when the gate passes, 1 when it fails or is
    inconclusive, 2 on bad input, 3 when evidence is missing (INCOMPLETE).

    With $GITHUB_STEP_SUMMARY set the Markdown report is appended to it; on GitHub Actions
    each failing case is annotated at its line in the case catalogue."""
    from assay.api.evaluation import evaluate

    result = evaluate(
        suite,
        trials=trials,
        scores=scores,
        comparisons=comparisons,
        cases=cases,
        labels=labels,
        run=run_id,
        store=store,
        gate=gate,
        candidate=candidate,
        weights=weights,
        scorers=scorer,
        drilldown=drilldown,
        formats=output_format,
        out=out_dir,
        corpus=corpus,
    )
    from assay.api.ci import publish

    for path in result.written:
        out(f"wrote {path}")
    published = publish(result)  # $GITHUB_STEP_SUMMARY, and annotations on GitHub Actions
    for line in published.annotations:
        annotate(line)
    for line in published.warnings:
        err(line)
    decided = result.evaluation.analysis.gate
    out(decided.headline)
    for reason in decided.reasons:
        out(f"  - {reason}")
    raise typer.Exit(result.exit_code)
