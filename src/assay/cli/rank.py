"""`assay rank`: Bradley–Terry strengths of every model or condition, with bootstrap CIs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import out, print_json
from assay.core.text import not_available


@app.command("rank")
def rank_command(
    comparisons: Annotated[Path, typer.Option(help="JSONL comparisons; each record is one game.")],
    bootstrap: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples for the CIs (0: none).")
    ] = 200,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    json_output: Annotated[bool, typer.Option("--json", help="Print the ratings as JSON.")] = False,
) -> None:
    """Rank models by Bradley–Terry strength (games scored as winrate scores them, judges pooled)."""
    from assay.api.measuring import rank

    result = rank(comparisons, bootstrap=bootstrap, seed=seed)
    if json_output:
        print_json(result.as_json())
        return
    ratings = result.ratings
    width = max(len(r.name) for r in ratings)
    out(f"{'rank':>4}  {'name':<{width}}  strength  games  95% CI")
    for position, r in enumerate(ratings, start=1):
        if r.ci_low is None or r.ci_high is None:
            ci = not_available(r.undefined.get("ci_low", "no bootstrap"))
        else:
            ci = f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        out(f"{position:>4}  {r.name:<{width}}  {r.strength:8.4f}  {r.games:>5}  {ci}")
