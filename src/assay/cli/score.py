"""`assay score`: summarise Score rows, compare conditions with baseline, gate the candidate
(score rows of one condition: gated on their own, on blockers and thresholds)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.api.results import BASELINE, Analysis, interval_text
from assay.cli.app import app
from assay.cli.options import Corpus
from assay.cli.output import out, print_json


def table_lines(analysis: Analysis) -> list[str]:
    """The summary as aligned plain lines, for people."""
    lines = []
    metrics = [*analysis.metrics, "weighted_score"]
    width = max(len(m) for m in [*metrics, "metric"]) + 2
    names = analysis.conditions
    wrapped = [_wrap(n, 14) for n in names]  # long names over several lines, never cut
    for row in range(max(len(w) for w in wrapped)):
        label = "metric" if row == 0 else ""
        heading = "".join((w[row] if row < len(w) else "").rjust(16) for w in wrapped)
        lines.append((label.ljust(width) + heading).rstrip())
    for metric in metrics:
        cells = []
        for name in names:
            s = analysis.summaries[name]
            value = s.weighted_score if metric == "weighted_score" else s.means.get(metric)
            cells.append(("-" if value is None else f"{value:.3f}").rjust(16))
        lines.append(metric.ljust(width) + "".join(cells))
    lines.append(
        "blockers".ljust(width)
        + "".join(str(analysis.summaries[n].blocking_findings).rjust(16) for n in names)
    )
    for name, paired in analysis.paired.items():
        lines.append("")
        lines.append(f"{name} - {BASELINE} (paired by case, 95% CI):")
        for metric, d in paired.intervals.items():
            cases = f"{d.cases} case{'' if d.cases == 1 else 's'}"
            lines.append(
                f"  {metric.ljust(width)}{d.delta:+.3f}  {interval_text(d.ci_low, d.ci_high, d.cases)}"
                f"  ({cases})"
            )
    gate = analysis.gate
    lines.append("")
    lines.append(gate.headline)
    lines.extend(f"  - {reason}" for reason in gate.explanation)
    return lines


def _wrap(name: str, width: int) -> list[str]:
    """`name` in lines of at most `width` characters, broken after `:`, `/`, `-`, `_` or
    `.` where it can be (a longer part is cut into widths)."""
    lines = [""]
    for part in re.split(r"(?<=[:/\-_.])", name):
        while part:
            room = width - len(lines[-1])
            if len(part) <= room:
                lines[-1] += part
                part = ""
            elif lines[-1]:
                lines.append("")
            else:
                lines[-1], part = part[:width], part[width:]
                lines.append("")
    return [line for line in lines if line]


@app.command()
def score(
    scores: Annotated[Path, typer.Argument(metavar="SCORES.jsonl", help="Score rows (JSONL).")],
    cases: Annotated[
        Path | None,
        typer.Option(help="The case catalogue: joins each case's risk for the tier checks."),
    ] = None,
    weights: Annotated[
        str | None,
        typer.Option(
            help="METRIC=W,... (normalised). Default: the suite's; else 0.3/0.2/0.2/0.2/0.1 when"
            " the rows carry the five default metrics; else equal weights over the metrics on"
            " every row (e.g. a rubric judge's criteria)."
        ),
    ] = None,
    gate: Annotated[
        Literal["seed", "stats"] | None,
        typer.Option(
            help="Gate mode: stats (intervals over the per-case paired deltas, default) or seed"
            " (the old rule)."
        ),
    ] = None,
    candidate: Annotated[
        str | None, typer.Option(help="The condition the gate decides for (default candidate).")
    ] = None,
    output_format: Annotated[
        Literal["json", "table"], typer.Option("--format", help="json (default) or table.")
    ] = "json",
    suite: Annotated[
        Path | None,
        typer.Option(help="A suite file: weights, scale, gate settings and its case catalogue."),
    ] = None,
    store: Annotated[
        Path,
        typer.Option(
            help="The run store judge calibrations are read from (require_calibrated_judge)."
        ),
    ] = DEFAULT_STORE,
    corpus: Corpus = None,
    json_output: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Summarise Score rows and gate the candidate: exit 0 PASS, 1 FAIL or INCONCLUSIVE, 2 bad
    input, 3 INCOMPLETE (a case errored, was not run or was not scored)."""
    from assay.api.evaluation import evaluate

    result = evaluate(
        suite,
        scores=scores,
        cases=cases,
        gate=gate,
        candidate=candidate,
        weights=weights,
        store=store,
        corpus=corpus,
    )
    if output_format == "table" and not json_output:
        for line in table_lines(result.evaluation.analysis):
            out(line)
    else:
        print_json(result.summary().as_json())
    raise typer.Exit(result.exit_code)
