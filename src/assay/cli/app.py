"""The Typer application every command module registers on."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

# `assay --help` lists the commands in pipeline order.
PIPELINE_ORDER = [
    "validate", "run", "import", "judge", "review", "score", "calibrate", "bias",
    "judge-bench", "winrate", "rank", "report", "history", "rubric", "schema", "demo",
]  # fmt: skip


class PipelineGroup(TyperGroup):
    """A command group that lists its commands in the order the pipeline uses them."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: index for index, name in enumerate(PIPELINE_ORDER)}
        return sorted(names, key=lambda name: rank.get(name, len(rank)))


app = typer.Typer(
    name="assay",
    cls=PipelineGroup,
    help="Evaluate LLM prompts, models and agents before they ship: run, score, judge, gate, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def print_version(wanted: bool) -> None:
    """`assay --version`: the version and the store schema version it reads and writes (for bug
    reports and CI logs). Imports happen only here, so `assay --help` stays fast."""
    if not wanted:
        return
    from importlib.metadata import PackageNotFoundError, version

    from assay.store.schema import SCHEMA_VERSION

    try:
        installed = version("assay")
    except PackageNotFoundError:
        installed = "unknown (not installed)"
    typer.echo(f"assay {installed} (store schema version {SCHEMA_VERSION})")
    raise typer.Exit()


@app.callback()
def options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=print_version,
            is_eager=True,
            help="Print assay's version and its store schema version, then exit.",
        ),
    ] = False,
) -> None:
    """Options that come before the command."""
