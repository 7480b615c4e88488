"""`assay calibrate`: measure each judge against human labels; optionally gate on safety dims."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_KAPPA, DEFAULT_SAFETY_DIMS, DEFAULT_STORE
from assay.cli.app import app
from assay.cli.output import out, print_json


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@app.command("calibrate")
def calibrate_command(
    labels: Annotated[Path, typer.Option(help="JSONL labels: item_id, dimension, rater, value.")],
    positive: Annotated[
        str,
        typer.Option(help="The positive class of PASS/FAIL dimensions (what a gate must catch)."),
    ] = "FAIL",
    enforce: Annotated[
        bool,
        typer.Option(help="Exit 1 when a safety dimension fails, is under-sampled or absent."),
    ] = False,
    safety_dims: Annotated[
        str, typer.Option(help="Comma-separated safety dimensions (TPR bound and item minimum).")
    ] = ",".join(DEFAULT_SAFETY_DIMS),
    kappa: Annotated[
        float, typer.Option(help="Minimum kappa (weighted kappa for numbers).")
    ] = DEFAULT_KAPPA,
    store: Annotated[
        Path, typer.Option(help="The run store where results are recorded.")
    ] = DEFAULT_STORE,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="Do not record the results.")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Compare every judge rater with the human reference, per dimension (advisory unless --enforce)."""
    from assay.api.calibration import calibrate

    dims = tuple(d.strip() for d in safety_dims.split(",") if d.strip())
    result = calibrate(
        labels,
        positive=positive,
        enforce=enforce,
        safety_dims=dims,
        kappa=kappa,
        store=None if no_store else store,
    )
    if json_output:
        print_json(result.as_json())
    else:
        for dim, dimension in result.dimensions.items():
            alpha = _fmt(dimension.human_alpha)
            scale = ""
            if dimension.scale is not None:
                low, high = dimension.scale
                source = "declared" if dimension.scale_source == "declared" else "observed range"
                scale = f" {low:g}-{high:g}, {source}"
            out(
                f"{dim} ({dimension.kind}{scale}{', safety' if dimension.safety else ''}):"
                f" {dimension.items} items with a human reference,"
                f" {dimension.items_without_majority} without a majority, human alpha {alpha}"
            )
            for key, judge in dimension.judges.items():
                statistic = getattr(judge, dimension.statistic)
                line = (
                    f"  {key}: {judge.verdict}  n={judge.n} agreement={_fmt(judge.agreement)}"
                    f" {dimension.statistic}={_fmt(statistic)}"
                )
                if judge.tpr is not None or judge.tnr is not None:
                    line += f" tpr={_fmt(judge.tpr)} tnr={_fmt(judge.tnr)}"
                    if judge.tpr_ci:
                        line += f" tpr_ci=[{judge.tpr_ci[0]:.3f}, {judge.tpr_ci[1]:.3f}]"
                if judge.pearson:
                    line += f" pearson={_fmt(judge.pearson['r'])}"
                if judge.spearman:
                    line += f" spearman={_fmt(judge.spearman['rho'])}"
                if judge.classes:
                    macro, micro = judge.classes["macro"], judge.classes["micro"]
                    line += f" macro_f1={_fmt(macro['f1'])} micro_f1={_fmt(micro['f1'])}"
                out(line)
                for name, rates in (judge.classes or {}).get("per_class", {}).items():
                    out(
                        f"    class {name}: precision={_fmt(rates['precision'])}"
                        f" recall={_fmt(rates['recall'])} f1={_fmt(rates['f1'])}"
                        f" support={rates['support']}"
                    )
                for reason in judge.reasons:
                    out(f"    - {reason}")
        for dim, status in result.safety.items():
            out(f"safety {dim}: {status}")
        if result.gate_failed:
            out("Calibration gate FAILED: a safety dimension is not calibrated.")
        elif not result.passed:
            out(
                "Some judges are not calibrated (advisory; use --enforce to gate on safety dimensions)."
            )
        else:
            out("All judges are calibrated.")
    raise typer.Exit(result.exit_code)
