"""The Jinja2 environment of assay's web apps (the review app, the viewer): HTML escaped
everywhere, undefined names an error, block tags that leave no blank lines; the filter
`steps` makes a recorded trajectory its lines (core/trajectory_text.py)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from assay.core.trajectory_text import recorded_lines

SHARED = Path(__file__).resolve().parent / "templates"


def environment(folder: Path) -> Environment:
    """An environment over one app's template folder, then the shared one (`page.html`,
    which each app's `base.html` extends)."""
    env = Environment(
        loader=FileSystemLoader([folder, SHARED]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["steps"] = recorded_lines
    return env
