"""`assay history`: monitor each judge configuration across runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.output import out, print_json


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@app.command("history")
def history_command(
    store: Annotated[Path, typer.Option(help="The run store.")] = DEFAULT_STORE,
    add_scores: Annotated[
        Path | None, typer.Option(help="Record this JSONL of score rows (judges and humans) first.")
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(help="The run id the added score rows belong to (with --add-scores)."),
    ] = None,
    trials: Annotated[
        Path | None, typer.Option(help="JSONL trials giving response lengths of the added rows.")
    ] = None,
    metric: Annotated[
        str | None, typer.Option(help="Score metric to monitor (default: mean of numeric metrics).")
    ] = None,
    window: Annotated[
        int, typer.Option(min=1, help="Spot checks in the rolling agreement window.")
    ] = 100,
    min_checks: Annotated[
        int, typer.Option(min=1, help="Checks needed before agreement is shown.")
    ] = 10,
    tolerance: Annotated[
        float, typer.Option(min=0, help="Largest judge–human score gap that agrees.")
    ] = 0.5,
    min_agreement: Annotated[float, typer.Option(help="Alert below this rolling agreement.")] = 0.7,
    drift_p: Annotated[
        float, typer.Option(help="Alert when the drift test's p is below this.")
    ] = 0.01,
    fail_on_alert: Annotated[bool, typer.Option(help="Exit 1 when there is any alert.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Rolling agreement with human spot checks, score drift between runs, length bias, alerts."""
    from assay.api.measuring import history

    result = history(
        store,
        add_scores=add_scores,
        run=run,
        trials=trials,
        metric=metric,
        window=window,
        min_checks=min_checks,
        tolerance=tolerance,
        min_agreement=min_agreement,
        drift_p=drift_p,
        fail_on_alert=fail_on_alert,
    )
    if json_output:
        print_json(result.as_json())
    else:
        if not result.judges:
            out(f"No judge scores or calibrations in {store} yet.")
        for name, judge in result.judges.items():
            out(
                f"{name}: {len(judge['runs'])} runs, {judge['checks']} human spot checks,"
                f" rolling agreement {_fmt(judge['rolling_agreement'])}"
            )
            for r in judge["runs"]:
                drift = r["drift"]
                drift_text = "-" if drift is None else f"KS {drift['ks']:.3f} p={drift['p']:.2g}"
                out(
                    f"  {r['run_id']}: rows={r['rows']} mean={_fmt(r['mean_score'])}"
                    f" agreement={_fmt(r['rolling_agreement'])} drift={drift_text}"
                    f" length_rho={_fmt(r['length_score_rho'])}"
                )
            for c in judge["calibration"]:
                out(
                    f"  calibration {c['dimension']}: {c['verdict']} (n={c['n']}, {c['created_at']})"
                )
            for alert in judge["alerts"]:
                out(f"  ALERT: {alert}")
    if result.exit_code:
        raise typer.Exit(result.exit_code)
