"""`assay winrate`: every model's win rate against a baseline, raw and length-controlled."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import err, out, print_json


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


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
            " lengths (len_a/len_b or --trials) on every comparison: a model missing some gets -"
            " (null) and a note on stderr; the raw rates still print and the exit code is 0.",
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
    if result.unfitted:
        err(
            f"NOTE: --length-controlled: no LC win rate for {', '.join(result.unfitted)}: response"
            " lengths are missing (give len_a/len_b on every comparison, or --trials)"
        )
    if json_output:
        print_json(result.as_json())
        return
    rates, skipped = result.models, result.skipped
    out(
        f"baseline: {baseline}"
        + (f" ({skipped} comparisons without it skipped)" if skipped else "")
    )
    width = max(len(name) for name in rates)
    header = f"{'model':<{width}}  win_rate  std_err      n  avg_len"
    out(header + ("  lc_win_rate" if length_controlled else ""))
    for name, rate in sorted(rates.items(), key=lambda kv: -(kv[1].win_rate or 0.0)):
        line = (
            f"{name:<{width}}  {_fmt(rate.win_rate):>8}  {_fmt(rate.standard_error):>7}"
            f"  {rate.n:>5}  {rate.avg_length if rate.avg_length is not None else '-':>7}"
        )
        if length_controlled:
            line += f"  {_fmt(rate.length_controlled_win_rate):>11}"
        out(line)
