"""`assay import`: gate what other harnesses ran (promptfoo results, Inspect AI logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.output import err, out, print_output

EXAMPLE = """\b
Examples:
  promptfoo eval -c promptfooconfig.yaml --output results.json
  assay import promptfoo results.json --output imported
  assay score imported/scores.jsonl --suite imported/suite.toml

\b
  inspect eval task.py --model openai/gpt-4o-mini,openai/gpt-4o --epochs 3
  assay import inspect logs/ --output imported --baseline openai/gpt-4o-mini
  assay report --suite imported/suite.toml --scores imported/scores.jsonl \\
    --trials imported/trials.jsonl --out imported/report
"""


@app.command("import", epilog=EXAMPLE)
def import_command(
    tool: Annotated[
        str,
        typer.Argument(
            metavar="TOOL",
            help="promptfoo (results JSON) or inspect (Inspect AI .eval/.json logs).",
        ),
    ],
    sources: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE...",
            help="promptfoo: results files (`promptfoo eval --output results.json`);"
            " inspect: log files or folders of them (one log per model or task variant).",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(help="Folder for cases.jsonl, trials.jsonl, scores.jsonl and suite.toml."),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            help="The condition the others are compared with; written as `baseline`"
            " (promptfoo: label a provider `baseline` instead)."
        ),
    ] = None,
    candidate: Annotated[
        str | None,
        typer.Option(
            help="The condition the suite's gate decides for (default: the only other one)."
        ),
    ] = None,
    source_gate: Annotated[
        bool,
        typer.Option(
            "--source-gate/--no-source-gate",
            help="Gate each case on the source's own verdict of its test (promptfoo's pass:"
            " a test that failed in any repeat fails its case, as promptfoo exits 100);"
            " --no-source-gate leaves it out.",
        ),
    ] = True,
    store: Annotated[
        Path, typer.Option(help="Record the run in this store too, so `assay view` shows it.")
    ] = DEFAULT_STORE,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace cases.jsonl, trials.jsonl, scores.jsonl and suite.toml in --output"
            " even when an earlier import did not write them or they were changed since"
            " (without it they are refused, exit 2).",
        ),
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print what was imported as JSON (import-summary).")
    ] = False,
) -> None:
    """Convert a promptfoo or Inspect AI run into assay cases, trials and score rows, so that
    assay score, report and review gate, report and review it. Providers (promptfoo) and
    models or task variants (Inspect) become conditions, repeats and epochs become trials,
    assertions and scorers become metrics. A run that did not finish in the source (an
    Inspect log cancelled, errored or killed) is written as incomplete (`[source] complete =
    false`: the gate says INCOMPLETE, exit 3). Exit 2 on malformed or unknown input, naming the
    file and the place, and on a file in --output that an earlier import did not write (or
    that was changed since; --overwrite replaces it); nothing is written then."""
    from assay.api.importing import import_results

    result = import_results(
        tool,
        sources,
        output,
        baseline=baseline,
        candidate=candidate,
        source_gate=source_gate,
        store=store,
        overwrite=overwrite,
    )
    summary = result.summary()
    if json_output:
        print_output("import-summary", summary.model_dump(mode="json"))
        return
    out(
        f"imported {summary.trials} trials of {summary.cases} cases under"
        f" {len(summary.conditions)} conditions ({', '.join(summary.conditions)})"
        f" and {summary.scores} score rows (metrics: {', '.join(summary.metrics) or 'none'})"
    )
    for path in summary.files:
        out(f"wrote {path}")
    if summary.run_id is not None:
        out(f"recorded as run {summary.run_id} in {store} (assay view shows it)")
    for reason in summary.reasons:
        err(f"incomplete: {reason}")
    for note in summary.notes:
        err(f"note: {note}")
    single = len(summary.conditions) == 1  # gated as a single system
    if summary.baseline is not None or single:
        folder = Path(summary.output)
        suite = folder / "suite.toml"
        candidate_flag = "" if summary.candidate or single else " --candidate CONDITION"
        report = (
            f"assay report --suite {suite} --scores {folder / 'scores.jsonl'}"
            f" --trials {folder / 'trials.jsonl'} --out {folder / 'report'}{candidate_flag}"
        )
        if summary.errored or not summary.scores:
            # only the trials tell an errored trial from a missing row
            out(f"next: {report}")
            return
        out(f"next: assay score {folder / 'scores.jsonl'} --suite {suite}{candidate_flag}")
        out(f"      {report}")
