"""`assay winrate`: every model's win rate against a baseline, raw and length-controlled."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import err, out, print_json
from assay.core.text import figure_text

ALTERNATIVE = (
    "compare two or more models with the baseline on the same cases in one file (the"
    " instructions' difficulty is estimated across them), or read the raw rate with"
    " `assay bias` (the judge's preference for the longer response)"
)


@app.command("winrate")
def winrate_command(
    comparisons: Annotated[Path, typer.Option(help="JSONL comparisons (a, b, verdict, ...).")],
    baseline: Annotated[
        str, typer.Option(help="The model or condition every other is compared with.")
    ],
    length_controlled: Annotated[
        bool,
        typer.Option(
            "--length-controlled",
            help="Also fit AlpacaEval 2's length-controlled win rate. It needs response"
            " lengths (len_a/len_b or --trials) on every comparison and two or more models"
            " compared with the baseline on the same cases: a model without one gets n/a (null)"
            " and a note on stderr; the raw rates still print and the exit code is 0.",
        ),
    ] = False,
    trials: Annotated[
        Path | None, typer.Option(help="JSONL trials: response lengths instead of len_a/len_b.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Raw win rate (ties half) with its standard error, and optionally the LC win rate."""
    from assay.api.measuring import winrate

    result = winrate(
        comparisons, baseline=baseline, length_controlled=length_controlled, trials=trials
    )
    for name, why in result.unfitted.items():
        note = f"NOTE: --length-controlled: no LC win rate for {name}: {why}"
        if why.startswith("response lengths"):
            note += " (give len_a/len_b on every comparison, or --trials)"
        elif "difficulty" in why:
            note += f"; {ALTERNATIVE}"
        err(note)
    if json_output:
        print_json(result.as_json())
        return
    rates, skipped = result.models, result.skipped
    out(
        f"baseline: {baseline}"
        + (f" ({skipped} comparisons without it skipped)" if skipped else "")
    )
    header = ["model", "win_rate", "std_err", "n", "avg_len"]
    if length_controlled:
        header.append("lc_win_rate")
    table = [header]
    for name, rate in sorted(rates.items(), key=lambda kv: -(kv[1].win_rate or 0.0)):
        undefined = rate.undefined
        row = [
            name,
            figure_text(rate.win_rate, ".2f", undefined.get("win_rate")),
            figure_text(rate.standard_error, ".2f", undefined.get("standard_error")),
            str(rate.n),
            "-" if rate.avg_length is None else str(rate.avg_length),
        ]
        if length_controlled:
            row.append(
                figure_text(
                    rate.length_controlled_win_rate,
                    ".2f",
                    undefined.get("length_controlled_win_rate"),
                )
            )
        table.append(row)
    # the LC column comes last and may hold a reason: its numbers align, its reasons run on
    widths = [max(len(row[k]) for row in table) for k in range(5)]
    if length_controlled:
        widths.append(max(len(row[5]) for row in table if not row[5].startswith("n/a")))
    for row in table:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out("  ".join(cells).rstrip())
