"""`assay calibrate`: measure each judge against human labels; optionally gate on safety dims."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import out, print_json
from assay.core.errors import EXIT_GATE_FAILED, InputError
from assay.measure.thresholds import DEFAULT_KAPPA, DEFAULT_SAFETY_DIMS
from assay.store import DEFAULT_STORE


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
    from assay.core.jsonl import load_records, read_text
    from assay.core.records import Label
    from assay.engine.plan import sha256_text
    from assay.measure.agreement import Thresholds, calibrate, safety_status
    from assay.store import Store
    from assay.store.calibrations import save_calibration

    if not 0.0 <= kappa <= 1.0:
        raise InputError(f"ERROR: --kappa: must be between 0 and 1, got {kappa}")
    dims = tuple(d.strip() for d in safety_dims.split(",") if d.strip())
    thresholds = Thresholds(kappa=kappa, positive=positive, safety_dims=dims)
    records = load_records(labels, Label)
    if not records:
        raise InputError(f"ERROR: {labels}: no labels in the file")
    results = calibrate(labels, records, thresholds)
    safety = safety_status(results, thresholds)
    verdicts = [j.verdict for r in results.values() for j in r.judges.values()]
    passed = bool(verdicts) and all(v == "PASS" for v in verdicts)
    gate_failed = enforce and any(status != "PASS" for status in safety.values())
    if not no_store:
        handle = Store(store)
        try:
            save_calibration(handle, results, sha256_text(read_text(labels)))
        finally:
            handle.close()
    if json_output:
        print_json(
            {
                "passed": passed,
                "enforced": enforce,
                "gate_failed": gate_failed,
                "positive": positive,
                "kappa_threshold": kappa,
                "safety": safety,
                "dimensions": {dim: result.as_json() for dim, result in results.items()},
            }
        )
    else:
        for dim, result in results.items():
            alpha = _fmt(result.human_alpha)
            out(
                f"{dim} ({result.kind}{', safety' if result.safety else ''}): {result.items} items"
                f" with a human reference, {result.items_without_majority} without a majority,"
                f" human alpha {alpha}"
            )
            for key, judge in result.judges.items():
                k = judge.kappa if judge.kappa is not None else judge.weighted_kappa
                line = f"  {key}: {judge.verdict}  n={judge.n} agreement={_fmt(judge.agreement)} kappa={_fmt(k)}"
                if judge.tpr is not None or judge.tnr is not None:
                    line += f" tpr={_fmt(judge.tpr)} tnr={_fmt(judge.tnr)}"
                    if judge.tpr_ci:
                        line += f" tpr_ci=[{judge.tpr_ci[0]:.3f}, {judge.tpr_ci[1]:.3f}]"
                if judge.spearman:
                    line += f" spearman={_fmt(judge.spearman['rho'])}"
                out(line)
                for reason in judge.reasons:
                    out(f"    - {reason}")
        for dim, status in safety.items():
            out(f"safety {dim}: {status}")
        if gate_failed:
            out("Calibration gate FAILED: a safety dimension is not calibrated.")
        elif not passed:
            out(
                "Some judges are not calibrated (advisory; use --enforce to gate on safety dimensions)."
            )
        else:
            out("All judges are calibrated.")
    if gate_failed:
        raise typer.Exit(EXIT_GATE_FAILED)
