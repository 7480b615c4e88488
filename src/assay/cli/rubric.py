"""`assay rubric`: generate a grading rubric with a model and write it as YAML or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from assay.api.defaults import DEFAULT_STORE, ModelOptions, parse_price
from assay.api.rubrics import (
    STRICTNESS_NOTES,
    BudgetExhausted,
    JudgeFailure,
    Store,
    generate_rubric,
)
from assay.cli.app import app
from assay.cli.output import err, out, print_json
from assay.core.errors import EXIT_INCOMPLETE, InputError
from assay.core.jsonl import atomic_writer
from assay.core.rubric import SCALES, Scale, Strictness, dump_rubric
from assay.core.suite import DEFAULT_MODEL
from assay.core.writable import Output, check_outputs


@app.command()
def rubric(
    name: Annotated[str, typer.Argument(help="The rubric's name, e.g. helpfulness.")],
    description: Annotated[str, typer.Option(help="What the rubric measures.")],
    output: Annotated[Path, typer.Option(help="Write the rubric here (.yaml, .yml or .json).")],
    domain: Annotated[str, typer.Option(help="The domain, e.g. customer support.")] = "general",
    scale: Annotated[str, typer.Option(help="1-3, 1-5 or 1-10.")] = "1-5",
    strictness: Annotated[str, typer.Option(help="lenient, balanced or strict.")] = "balanced",
    model: Annotated[str, typer.Option(help="Model spec that writes the rubric.")] = DEFAULT_MODEL,
    max_tokens: Annotated[int, typer.Option(min=64, help="Output tokens.")] = 2048,
    budget_usd: Annotated[float | None, typer.Option(min=0, help="Hard spending cap.")] = None,
    price: Annotated[str | None, typer.Option(help="IN,OUT: USD per million tokens.")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    store: Annotated[Path, typer.Option(help="The SQLite store (call cache).")] = DEFAULT_STORE,
    json_output: Annotated[bool, typer.Option("--json", help="Print the rubric as JSON.")] = False,
) -> None:
    """Ask a model for a rubric (one level per scale point, guidelines, edge cases)."""
    if scale not in SCALES:
        raise InputError(f"ERROR: --scale: expected 1-3, 1-5 or 1-10, got {scale!r}")
    if strictness not in STRICTNESS_NOTES:
        raise InputError(
            f"ERROR: --strictness: expected lenient, balanced or strict, got {strictness!r}"
        )
    if output.suffix not in (".yaml", ".yml", ".json"):
        raise InputError(f"ERROR: --output {output}: use a .yaml, .yml or .json file")
    check_outputs([Output("--output", output)], [("the store (--store)", store)])
    options = ModelOptions(base_url=base_url, price=parse_price(price) if price else None)
    handle = Store(store)
    try:
        made = generate_rubric(
            name,
            description,
            domain,
            cast(Scale, scale),
            cast(Strictness, strictness),
            model,
            handle,
            options=options,
            max_tokens=max_tokens,
            budget_usd=budget_usd,
        )
    except JudgeFailure as exc:
        err(f"ERROR: rubric: {exc}")
        for raw in exc.raw:
            err(f"raw reply: {raw[:2000]}")
        raise typer.Exit(EXIT_INCOMPLETE) from None
    except BudgetExhausted:
        err("ERROR: rubric: the budget cannot cover the call; raise --budget-usd")
        raise typer.Exit(EXIT_INCOMPLETE) from None
    finally:
        handle.close()
    with atomic_writer(output) as handle_out:
        handle_out.write(dump_rubric(made, output))
    if json_output:
        print_json(made.model_dump(exclude_none=True))
    else:
        out(f"rubric {name}: {len(made.levels)} levels, {len(made.edge_cases)} edge cases")
        out(f"output: {output}")
