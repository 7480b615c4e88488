"""`assay review`: the human review web app, and export of its answers as records."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.options import Host, Port, ReviewToken
from assay.cli.output import err, out, print_json
from assay.core.cases import DEFAULT_CASES
from assay.core.errors import InputError
from assay.core.writable import Output, check_outputs

review_app = typer.Typer(
    help="Human review in the browser: score or compare responses, then export the answers.",
    no_args_is_help=False,
)
app.add_typer(review_app, name="review")

Trials = Annotated[Path | None, typer.Option(help="A trials JSONL file to review (with --cases).")]
Cases = Annotated[Path, typer.Option(help="The JSONL case catalogue the trials answer.")]
Run = Annotated[str | None, typer.Option("--run", help="Review this run's trials in the store.")]
ModeOpt = Annotated[
    str, typer.Option(help="scores: rubric 1–5 per response; pairwise: pick a winner.")
]
A = Annotated[
    str | None,
    typer.Option(
        "--a",
        help="The baseline condition (default: baseline). --a X --b X reviews X's responses"
        " alone (scores mode), as does a run of one condition by default.",
    ),
]
B = Annotated[str | None, typer.Option("--b", help="The candidate condition (default: candidate).")]
StoreOpt = Annotated[Path, typer.Option(help="The SQLite store answers are saved to.")]


def _serve(
    trials: Path | None,
    cases: Path,
    run: str | None,
    mode: str,
    a: str | None,
    b: str | None,
    host: str,
    port: int,
    token: str | None,
    store: Path,
) -> None:
    from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set
    from assay.review.items import parse_mode
    from assay.web.security import check_listening
    from assay.web.server import bind, serve, url_of

    check_listening(
        host,
        token,
        "ASSAY_REVIEW_TOKEN",
        "read the responses and write answers",
    )
    review = open_review_set(
        trials_path=trials, cases_path=cases, run_id=run, store_path=store, a=a, b=b, mode=mode
    )
    checked = parse_mode(mode)
    config = ReviewConfig(review=review, store=ReviewStore(store), mode=checked, token=token)
    asgi = create_app(config)
    sock = bind(host, port)
    answerable = sum(1 for i in review.items if i.answerable(checked))
    shown = (
        f"the responses of {review.a} alone"
        if review.single
        else f"{review.a} and {review.b} side by side"
    )
    out(
        f"review: {url_of(sock)} ({len(review.items)} items, {answerable} to review, {mode} mode,"
        f" {shown}; Ctrl+C stops)"
    )
    if token is not None:
        out("every request needs the token: open the address once with ?token=TOKEN")
    out(f"answers: {store} (dataset {review.dataset})")
    serve(asgi, sock)
    out("review: stopped; every answer is in the store")


@review_app.callback(invoke_without_command=True)
def review(
    ctx: typer.Context,
    trials: Trials = None,
    cases: Cases = DEFAULT_CASES,
    run: Run = None,
    mode: ModeOpt = "scores",
    a: A = None,
    b: B = None,
    host: Host = "127.0.0.1",
    port: Port = 8765,
    token: ReviewToken = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Serve the review app (same as `assay review serve`), or run a subcommand."""
    if ctx.invoked_subcommand is None:
        _serve(trials, cases, run, mode, a, b, host, port, token, store)


@review_app.command("serve")
def serve_command(
    trials: Trials = None,
    cases: Cases = DEFAULT_CASES,
    run: Run = None,
    mode: ModeOpt = "scores",
    a: A = None,
    b: B = None,
    host: Host = "127.0.0.1",
    port: Port = 8765,
    token: ReviewToken = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Serve the review web app on 127.0.0.1 until Ctrl+C; every answer is saved at once."""
    _serve(trials, cases, run, mode, a, b, host, port, token, store)


@review_app.command("export")
def export_command(
    output: Annotated[Path, typer.Option(help="Write Score rows (source=human:ID) here.")],
    labels: Annotated[
        Path | None, typer.Option(help="Also write Labels for `assay calibrate` here.")
    ] = None,
    comparisons: Annotated[
        Path | None, typer.Option(help="Also write Comparisons (pairwise answers) here.")
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "--run",
            help="Only answers about this run id (or the dataset id `serve` printed).",
        ),
    ] = None,
    reviewer: Annotated[
        list[str] | None, typer.Option(help="Only this reviewer's answers (repeatable).")
    ] = None,
    store: StoreOpt = DEFAULT_STORE,
    json_output: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Export review answers as Score rows, Labels and Comparisons (atomic writes)."""
    from assay.review import ReviewStore, export

    check_outputs(
        [
            Output(flag, path)
            for flag, path in (
                ("--output", output),
                ("--labels", labels),
                ("--comparisons", comparisons),
            )
            if path is not None
        ],
        [("the store (--store)", store)],
    )
    if not store.exists():
        raise InputError(f"ERROR: {store}: no store here (pass --store PATH)")
    answers = ReviewStore(store).answers(dataset=dataset)
    if reviewer:
        answers = [x for x in answers if x.reviewer in set(reviewer)]
    summary = export(answers, output, labels, comparisons)
    if json_output:
        print_json(
            {
                "answers": summary.answers,
                "scores": summary.scores,
                "labels": summary.labels,
                "comparisons": summary.comparisons,
                "output": str(output),
            }
        )
        return
    if not answers:
        err("WARNING: no review answers in the store match; the files are empty")
    out(f"{summary.scores} score rows from {summary.answers} answers: {output}")
    if labels is not None:
        out(f"{summary.labels} labels: {labels}")
    if comparisons is not None:
        out(f"{summary.comparisons} comparisons: {comparisons}")
