"""`assay bias`: position and length bias of each judge."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from assay.cli.app import app
from assay.cli.output import out, print_json


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


@app.command("bias")
def bias_command(
    comparisons: Annotated[Path, typer.Option(help="JSONL comparisons with their passes.")],
    scores: Annotated[
        Path | None, typer.Option(help="JSONL score rows: length–score correlation per source.")
    ] = None,
    trials: Annotated[
        Path | None, typer.Option(help="JSONL trials: response lengths (needed with --scores).")
    ] = None,
    metric: Annotated[
        str | None, typer.Option(help="The score metric to correlate (default: mean of metrics).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the audit as JSON.")] = False,
) -> None:
    """Audit each judge for position bias and length bias."""
    from assay.api.measuring import bias

    result = bias(comparisons, scores=scores, trials=trials, metric=metric)
    if json_output:
        print_json(result.as_json())
        return
    for judge, e in result.judges.items():
        out(f"{judge}: {e['comparisons']} comparisons, {e['two_order_comparisons']} in both orders")
        out(
            f"  position consistency {_fmt(e['position_consistency'])}; inconsistent: first"
            f" {e['first_position_wins']}, second {e['second_position_wins']},"
            f" first share {_fmt(e['first_position_share'])} z={_fmt(e['z'])} p={_fmt(e['p'])}"
            + ("  FLAGGED position bias" if e["flagged"] else "")
        )
        out(
            f"  prefers the longer response {_fmt(e['p_prefer_longer'])}"
            f" of {e['length_decided_comparisons']} unequal-length decided comparisons"
            f" z={_fmt(e['length_preference_z'])} p={_fmt(e['length_preference_p'])}"
            + ("  FLAGGED length preference" if e["length_preference_flagged"] else "")
        )
        if e.get("length_score_rho") is not None:
            out(
                f"  length-score spearman {_fmt(e['length_score_rho'])} (p={_fmt(e['length_score_p'])})"
                + ("  FLAGGED length bias" if e["length_flagged"] else "")
            )
