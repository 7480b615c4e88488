"""`assay schema NAME`: print the JSON Schema of a record assay reads or writes."""

from __future__ import annotations

from typing import Annotated

import typer

from assay.api.schemas import SCHEMAS, schema_of
from assay.cli.app import app
from assay.cli.output import print_json
from assay.core.errors import InputError


@app.command()
def schema(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMAS)}.")],
) -> None:
    """Print the JSON Schema of a record (case, trial, score, comparison, label, rubric, report)
    or of a command's JSON output (run-summary, judge-summary, summary, calibration, bias,
    winrate, rank, history, import-summary)."""
    if name not in SCHEMAS:
        raise InputError(f"ERROR: schema {name!r}: unknown (known: {', '.join(SCHEMAS)})")
    print_json(schema_of(name))
