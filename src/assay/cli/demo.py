"""`assay demo`: the bundled quickstart, offline, on the embedded model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cases import load_cases
from assay.cli.app import app
from assay.cli.output import out, progress
from assay.engine import Condition, RunRequest, RunSettings, execute
from assay.models.llamacpp import QUALITY_NOTE
from assay.models.registry import ModelOptions
from assay.paths import examples_dir
from assay.store import DEFAULT_STORE, Store
from assay.suite import DEFAULT_MODEL


@app.command()
def demo(
    model: Annotated[
        str, typer.Option("--model", help="Model spec to run the demo on.")
    ] = DEFAULT_MODEL,
    out_dir: Annotated[Path, typer.Option("--out", help="Where the demo writes its files.")] = Path(
        "assay-out/demo"
    ),
    trials: Annotated[int, typer.Option(min=1, help="Trials per case and condition.")] = 1,
    store: Annotated[Path, typer.Option(help="The SQLite run store.")] = DEFAULT_STORE,
) -> None:
    """Run the quickstart cases under baseline and candidate (the skill file) and say where
    everything went."""
    quickstart = examples_dir() / "quickstart"
    cases = load_cases(quickstart / "cases.jsonl")
    conditions = [
        Condition(name="baseline", model=model),
        Condition.with_skill_file("candidate", model, quickstart / "skill.md"),
    ]
    trials_path = out_dir / "trials.jsonl"
    request = RunRequest(
        cases=cases,
        conditions=conditions,
        trials=trials,
        settings=RunSettings(max_tokens=160, concurrency=2, timeout_s=300),
        options=ModelOptions(),
        output=trials_path,
    )
    out(
        f"assay demo: {len(cases)} quickstart cases x baseline/candidate x {trials} trial(s) on {model}"
    )
    if model.startswith("llamacpp:"):
        out(f"note: output {QUALITY_NOTE}.")
    handle = Store(store)
    try:
        with progress(len(cases) * len(conditions) * trials, "trials") as tick:
            result = execute(request, handle, tick)
    finally:
        handle.close()
    out(
        f"run {result.run_id}: {result.answered + result.resumed}/{result.total} trials answered,"
        f" {result.errored} errored, {result.calls} model calls"
    )
    out(f"trials: {trials_path}")
    out(f"store:  {store}")
    out("next:   assay validate --cases examples/quickstart/cases.jsonl")
    raise typer.Exit(result.exit_code)
