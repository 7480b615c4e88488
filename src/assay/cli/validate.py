"""`assay validate`: check a case catalogue (and print the hash that pins it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.app import app
from assay.cli.output import out, print_json
from assay.core.cases import DEFAULT_CASES, file_sha256, load_cases


@app.command()
def validate(
    cases: Annotated[Path, typer.Option(help="The JSONL case catalogue.")] = DEFAULT_CASES,
    print_sha256: Annotated[
        bool,
        typer.Option(
            "--print-sha256",
            help="Print only the SHA-256 of the file's bytes, to pin the golden set in a suite"
            ' (cases_sha256 = "..."); with --json it is added as `sha256`.',
        ),
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Check a case catalogue; every problem is reported as ERROR: PATH:LINE: message."""
    loaded = load_cases(cases)
    digest = file_sha256(cases) if print_sha256 else None
    if json_output:
        summary: dict[str, object] = {"valid": True, "cases": len(loaded), "path": str(cases)}
        if digest is not None:
            summary["sha256"] = digest
        print_json(summary)
    elif digest is not None:
        out(digest)
    else:
        out("Evaluation cases are valid.")
