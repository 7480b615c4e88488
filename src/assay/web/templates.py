"""The Jinja2 environment of assay's web apps (the review app, the viewer): HTML escaped
everywhere, undefined names an error, block tags that leave no blank lines."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

SHARED = Path(__file__).resolve().parent / "templates"


def environment(folder: Path) -> Environment:
    """An environment over one app's template folder, then the shared one (`page.html`,
    which each app's `base.html` extends)."""
    return Environment(
        loader=FileSystemLoader([folder, SHARED]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
