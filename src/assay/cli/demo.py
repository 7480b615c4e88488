"""`assay demo`: the bundled support-agent example, end to end, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.output import out, progress
from assay.cli.run import print_outcome
from assay.core.embedded import QUALITY_NOTE
from assay.core.errors import EXIT_INCOMPLETE
from assay.core.paths import examples_dir
from assay.core.suite import DEFAULT_MODEL

# A cross-section of the support-agent catalogue: answerable, out-of-scope, unsafe, urgent.
DEMO_CASES = [
    "sa-001", "sa-002", "sa-003", "sa-004", "sa-005", "sa-006",
    "sa-101", "sa-102", "sa-201", "sa-202", "sa-301", "sa-302",
]  # fmt: skip


@app.command()
def demo(
    model: Annotated[
        str, typer.Option("--model", help="The agent's inner model (mock: instant, offline).")
    ] = DEFAULT_MODEL,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the demo writes its files.")] = Path(
        "assay-out/demo"
    ),
    full: Annotated[
        bool, typer.Option(help="Run all 48 cases instead of a cross-section.")
    ] = False,
    store: Annotated[Path, typer.Option(help="The SQLite run store.")] = DEFAULT_STORE,
) -> None:
    """Run the support-agent example (a LangGraph agent with and without guardrails) as
    baseline against candidate: deterministic scorers, the release gate and reports."""
    suite = examples_dir() / "support-agent" / "suite.toml"
    cases = None if full else DEMO_CASES
    out(
        f"assay demo: {suite} on {model} ({'all' if full else len(DEMO_CASES)} cases x 2 conditions)"
    )
    if model.startswith("llamacpp:"):
        out(f"note: answers are {QUALITY_NOTE}.")
    from assay.api.run_inputs import load
    from assay.api.running import execute_run, run_request

    loaded = load(suite)
    request = run_request(
        loaded,
        trials=1,
        allow_unmetered=True,
        case_ids=cases,
        params={"agent_model": model, "max_tokens": 96, "top_k": 2},
    )
    with progress(len(request.cases) * len(request.conditions), "trials") as tick:
        outcome = execute_run(loaded, request, store=store, out=out_dir, progress=tick)
    print_outcome(outcome, as_json=False)
    code = outcome.exit_code
    out(f"report: {out_dir / 'report.md'} (also report.json, report.junit.xml)")
    out("next:   assay score / assay judge / assay review: see README.md")
    # The demo succeeded when the pipeline ran; the gate's verdict is its result, not a failure.
    raise typer.Exit(EXIT_INCOMPLETE if code == EXIT_INCOMPLETE else code if code == 2 else 0)
