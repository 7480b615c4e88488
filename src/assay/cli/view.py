"""`assay view`: the read-only results explorer over the run store, in the browser."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from assay.api.defaults import DEFAULT_STORE
from assay.cli.app import app
from assay.cli.output import out


@app.command()
def view(
    store: Annotated[
        Path, typer.Option(help="The SQLite run store to show (opened read-only).")
    ] = DEFAULT_STORE,
    host: Annotated[
        str, typer.Option(help="Address to listen on; beyond loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8766,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="ASSAY_VIEW_TOKEN",
            help="Require this token on every request (Bearer header, or ?token= once); a"
            " random one with real entropy (12+ characters, no whitespace or repeated pattern).",
        ),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the runs page in the default browser.")
    ] = False,
) -> None:
    """Explore the store's runs in the browser (read-only): the verdict, the case matrix
    with filters, each case's responses side by side with a word diff, two runs compared.
    Serves on 127.0.0.1 until Ctrl+C; the store is opened read-only and never written."""
    from assay.api.viewing import ReadOnlyStore
    from assay.view.app import ViewConfig, create_app
    from assay.web.security import check_listening
    from assay.web.server import bind, serve, url_of

    check_listening(host, token, "ASSAY_VIEW_TOKEN", "read every prompt and response in the store")
    readonly = ReadOnlyStore(store)
    try:
        asgi = create_app(ViewConfig(store=readonly, token=token))
        sock = bind(host, port)
        url = url_of(sock)
        runs = len(readonly.runs())
        out(f"view: {url} ({runs} runs in {store}, read-only; Ctrl+C stops)")
        if token is not None:
            out("every request needs the token: open the address once with ?token=TOKEN")
        if open_browser:
            webbrowser.open(url)
        serve(asgi, sock)
    finally:
        readonly.close()
    out("view: stopped")
