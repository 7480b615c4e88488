"""`assay view`: the read-only results explorer over the run store, in the browser, or as
static files (`--export DIR`)."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.options import Host, Port, ViewToken
from assay.cli.output import out


def serve_view(
    store: Path, host: str, port: int, token: str | None, open_browser: bool, run: str | None
) -> None:
    """Serve the viewer until Ctrl+C, printing its address (the run's page when `run` is
    given, opened in the default browser with `open_browser`)."""
    from assay.api.viewing import open_viewer

    viewer = open_viewer(store, host, port, token)
    url = viewer.run_url(run) if run is not None else viewer.url
    out(f"view: {url} ({viewer.runs} runs in {store}, read-only; Ctrl+C stops)")
    sys.stdout.flush()  # the address, before serving: a caller may be reading for it
    if token is not None:
        out("every request needs the token: open the address once with ?token=TOKEN")
    if open_browser:
        webbrowser.open(url)
    viewer.serve()
    out("view: stopped")


@app.command()
def view(
    store: Annotated[
        Path, typer.Option(help="The SQLite run store to show (opened read-only).")
    ] = DEFAULT_STORE,
    host: Host = "127.0.0.1",
    port: Port = 8766,
    token: ViewToken = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the runs page in the default browser.")
    ] = False,
    export: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Write the explorer as static files into DIR (a CI artifact: open"
            " DIR/index.html, no server) instead of serving it.",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option(help="With --export: replace DIR when it is not empty.")
    ] = False,
) -> None:
    """Explore the store's runs in the browser (read-only): the verdict, the case matrix
    with filters, each case's responses side by side with a word diff, two runs compared,
    each suite's history. Serves on 127.0.0.1 until Ctrl+C; the store is opened read-only
    and never written. With --export DIR, writes the same pages as files instead."""
    if export is not None:
        from assay.api.viewing import export_view

        done = export_view(store, export, force=force)
        out(f"view: {done.pages} pages of {done.runs} runs in {done.folder} (open index.html)")
        return
    serve_view(store, host, port, token, open_browser, None)
