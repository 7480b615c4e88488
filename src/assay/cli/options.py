"""Command-line options that several commands take, defined once (a shared `Annotated` type
keeps the flag, its bounds and its help the same everywhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Corpus = Annotated[
    list[str] | None,
    typer.Option(
        help="A corpus threshold on the gated condition, METRIC<=X or METRIC>=X (e.g."
        " hallucination<=0.2; repeatable): the mean over its cases (each case's mean over its"
        " trials) must stay within it, by default its whole 95% interval over cases (else"
        ' INCONCLUSIVE; [scoring] corpus_decide = "estimate" decides on the mean). Replaces'
        " the suite's [scoring.corpus] bound of that metric.",
    ),
]

# The judge settings `assay judge` and `assay judge-bench` share.
MaxTokens = Annotated[int, typer.Option(min=16, help="Judge output tokens per call.")]
Temperature = Annotated[float, typer.Option(min=0.0, help="Judge temperature.")]
JudgeBudget = Annotated[float | None, typer.Option(min=0, help="Hard spending cap in USD.")]
AllowUnmetered = Annotated[bool, typer.Option(help="Allow judges whose cost is unknown.")]
JudgePrice = Annotated[
    str | None, typer.Option(help="IN,OUT: USD per million input/output tokens.")
]
BaseUrl = Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")]
Concurrency = Annotated[int, typer.Option(min=1, max=1024, help="Concurrent calls.")]
Timeout = Annotated[float, typer.Option(min=0.001, help="Seconds per call.")]
Retries = Annotated[int, typer.Option(min=0, help="Retries per call.")]
StorePath = Annotated[Path, typer.Option(help="The SQLite run store.")]

# The web apps' (`assay review`, `assay view`): where they listen and the token they ask for.
Host = Annotated[str, typer.Option(help="Address to listen on; beyond loopback needs --token.")]
Port = Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")]
TOKEN_HELP = (
    "Require this token on every request (Bearer header, or ?token= once); a random one with"
    " real entropy (12+ characters, no whitespace or repeated pattern)."
)
ReviewToken = Annotated[str | None, typer.Option(envvar="ASSAY_REVIEW_TOKEN", help=TOKEN_HELP)]
ViewToken = Annotated[str | None, typer.Option(envvar="ASSAY_VIEW_TOKEN", help=TOKEN_HELP)]
