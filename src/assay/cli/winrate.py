"""`assay winrate`: every model's win rate against a baseline, raw and length-controlled."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import err, out, print_output
from assay.core.errors import InputError


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
    from assay.measure.inputs import load_comparisons, load_trial_lengths
    from assay.measure.winrate import win_rates

    records = [c for _, c in load_comparisons(comparisons)]
    lengths = load_trial_lengths(trials) if trials is not None else None
    rates, skipped = win_rates(
        records, baseline, trial_lengths=lengths, length_controlled_rates=length_controlled
    )
    if not rates:
        raise InputError(f"ERROR: {comparisons}: no comparison involves the baseline {baseline!r}")
    if length_controlled:
        unfitted = sorted(n for n, r in rates.items() if r.length_controlled_win_rate is None)
        if unfitted:
            err(
                f"NOTE: --length-controlled: no LC win rate for {', '.join(unfitted)}: response"
                " lengths are missing (give len_a/len_b on every comparison, or --trials)"
            )
    if json_output:
        print_output(
            "winrate",
            {
                "baseline": baseline,
                "skipped": skipped,
                "models": {name: asdict(rate) for name, rate in rates.items()},
            },
        )
        return
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
