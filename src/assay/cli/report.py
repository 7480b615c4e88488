"""`assay report`: write report.md, report.json, report.junit.xml and report.html from
stored outputs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from assay.cli.app import app
from assay.cli.output import out
from assay.core.cases import load_cases
from assay.core.errors import InputError
from assay.core.jsonl import load_records
from assay.core.records import Comparison, Trial
from assay.core.rubric import DEFAULT_WEIGHTS, Rubric, parse_weights
from assay.core.suite import GateSection, ScorerEntry, Suite, load_suite, suite_cases
from assay.evaluate.pipeline import calibration_store, evaluate, gate_exit_code
from assay.evaluate.rows import BASELINE, check_pairing, load_scores
from assay.reports.build import DRILLDOWN
from assay.reports.render import write_reports
from assay.scorers.runner import build_scorers
from assay.store import DEFAULT_STORE, Store

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult

FORMATS = ("md", "json", "junit", "html")


def parse_formats(text: str) -> list[str]:
    names = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in names if f not in FORMATS]
    if unknown or not names:
        raise InputError(
            f"ERROR: --format: {', '.join(unknown) or text!r}: use md, json, junit, html"
        )
    return names


def load_trials(trials: Path | None, run_id: str | None, store: Path) -> list[Trial]:
    if trials is not None:
        return [t for _, t in load_records(trials, Trial)]
    if run_id is None:
        return []
    handle = Store(store)
    try:
        if run_id not in {r for r, _, _ in handle.runs()}:
            raise InputError(f"ERROR: --run: {run_id!r} is not in the store {store}")
        return [Trial.model_validate(r) for r in handle.trial_records(run_id)]
    finally:
        handle.close()


def calibrate_labels(path: Path) -> dict[str, DimensionResult]:
    """`assay calibrate`'s agreement figures on the labels (default thresholds), for the
    report's confusion matrices."""
    from assay.core.jsonl import load_records
    from assay.core.records import Label
    from assay.measure.agreement import Thresholds, calibrate

    records = load_records(path, Label)
    if not records:
        raise InputError(f"ERROR: {path}: no labels in the file")
    return calibrate(path, records, Thresholds())


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
        str, typer.Option("--format", help="Comma-separated: md, json, junit, html.")
    ] = "md,json,junit",
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
) -> None:
    """Write the reports: Markdown for a PR comment, JSON (assay schema report), JUnit XML,
    and a self-contained HTML page. Exit 0 when the gate passes, 1 otherwise, 2 on bad input."""
    formats = parse_formats(output_format)
    if trials is not None and run_id is not None:
        raise InputError("ERROR: --trials and --run: give one of them")
    loaded: Suite | None = load_suite(suite) if suite is not None else None
    config = loaded.gate.model_copy() if loaded else GateSection()
    if gate is not None:
        config.mode = gate
    name = candidate or config.candidate
    if name == BASELINE:
        raise InputError(
            "ERROR: --candidate: the candidate must be another condition than baseline"
        )
    scale = (loaded.scoring.scale[0], loaded.scoring.scale[1]) if loaded else (1.0, 5.0)
    weight_map = (
        parse_weights(weights)
        if weights
        else (loaded.scoring.weights if loaded and loaded.scoring.weights else None)
    )
    judged = []
    if scores is not None:
        judged = load_scores(
            scores, Rubric(weights=weight_map or dict(DEFAULT_WEIGHTS), scale=scale)
        )
        check_pairing(judged, [BASELINE, name], scores)
    entries = [ScorerEntry(name=n) for n in scorer or []] or (
        loaded.scoring.scorers if loaded else []
    )
    trial_rows = load_trials(trials, run_id, store)
    if trials is not None and not trial_rows:
        raise InputError(f"ERROR: {trials}: no trials in the file")
    if not judged and not (entries and trial_rows):
        raise InputError(
            "ERROR: nothing to report: give --scores, or trials (--trials/--run) with scorers"
            " (--scorer/--suite)"
        )
    case_path = cases or suite_cases(loaded)
    catalogue = {c.id: c for c in load_cases(case_path)} if case_path else None
    if entries and trial_rows and catalogue is None:
        raise InputError("ERROR: --cases: the deterministic scorers need the case catalogue")
    pairs = [c for _, c in load_records(comparisons, Comparison)] if comparisons else []
    calibration = calibrate_labels(labels) if labels is not None else None
    calibrations = calibration_store(config, store)
    try:
        evaluation = evaluate(
            cases=catalogue,
            trials=trial_rows,
            judged=judged,
            scorers=build_scorers(entries),
            thresholds=loaded.scoring.thresholds if loaded else {},
            config=config,
            candidate=name,
            weights=weight_map,
            scale=scale,
            comparisons=pairs,
            title=(loaded.report.title or loaded.name) if loaded else "assay report",
            worst=loaded.report.worst if loaded else 10,
            calibration=calibration,
            cases_shown=drilldown
            if drilldown is not None
            else (loaded.report.drilldown if loaded else DRILLDOWN),
            store=calibrations,
        )
    finally:
        if calibrations is not None:
            calibrations.close()
    for path in write_reports(evaluation.report, out_dir, formats):
        out(f"wrote {path}")
    gate_result = evaluation.analysis.gate
    out(
        f"release gate ({gate_result.mode}, candidate {gate_result.candidate}): {gate_result.verdict}"
    )
    raise typer.Exit(gate_exit_code(evaluation))
