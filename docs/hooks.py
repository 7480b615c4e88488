"""MkDocs hook: the command reference (docs/reference/commands.md) generated from the CLI.

The page's marker line is replaced, at build time, by every command's `--help` text as the
command line prints it (Typer's click commands walked from the application, groups and their
subcommands included), so the reference cannot drift from the code. The checkout's `src/` comes
first on the path, as for mkdocstrings (`paths: [src]` in mkdocs.yml): the site documents the
code beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = "reference/commands.md"
MARKER = "<!-- the commands' --help, generated at build time by docs/hooks.py -->"
WIDTH = 100  # the command line's own max_content_width (cli/app.py)


def command_help() -> str:
    """Markdown: one section per command (`## assay run`), its --help text in a text block."""
    sys.path.insert(0, str(ROOT / "src"))
    import typer
    from typer import _click as click
    from typer.core import TyperGroup

    from assay.cli.app import app

    root = typer.main.get_command(app)
    sections: list[str] = []

    def walk(command: Any, parent: Any, name: str, heading: str) -> None:
        ctx = click.Context(
            command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
        )
        text = command.get_help(ctx)
        if parent is None:  # the application: its help first, then each command's section
            sections.append(f"```text\n{text}\n```\n")
        else:
            sections.append(f"{heading} `{ctx.command_path}`\n\n```text\n{text}\n```\n")
        if isinstance(command, TyperGroup):
            below = "##" if parent is None else heading + "#"
            for sub in command.list_commands(ctx):
                walk(command.get_command(ctx, sub), ctx, sub, below)

    walk(root, None, "assay", "")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE}: the marker line is missing: {MARKER}")
    return markdown.replace(MARKER, command_help())
