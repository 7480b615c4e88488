"""Command-line options that several commands take, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

Corpus = Annotated[
    list[str] | None,
    typer.Option(
        help="A corpus threshold on the gated condition, METRIC<=X or METRIC>=X (e.g."
        " hallucination<=0.2; repeatable): the mean over its cases (each case's mean over its"
        " trials) must stay within it. Replaces the suite's [scoring.corpus] bound of that"
        " metric.",
    ),
]
