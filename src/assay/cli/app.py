"""The Typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="assay",
    help="Evaluate LLM prompts, models and agents before they ship: run, score, judge, gate, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
