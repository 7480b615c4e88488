"""`assay validate`: check a case catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import out, print_json
from assay.core.cases import DEFAULT_CASES, load_cases


@app.command()
def validate(
    cases: Annotated[Path, typer.Option(help="The JSONL case catalogue.")] = DEFAULT_CASES,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Check a case catalogue; every problem is reported as ERROR: PATH:LINE: message."""
    loaded = load_cases(cases)
    if json_output:
        print_json({"valid": True, "cases": len(loaded), "path": str(cases)})
    else:
        out("Evaluation cases are valid.")
