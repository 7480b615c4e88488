"""The Jinja2 environment of assay's web apps (the review app, the viewer): HTML escaped
everywhere, undefined names an error, block tags that leave no blank lines."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined


def environment(folder: Path) -> Environment:
    """An environment over one app's template folder."""
    return Environment(
        loader=FileSystemLoader(folder),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
