"""`assay view`: the results explorer over a store opened read-only — served (`open_viewer`),
or written as static files (`export_view`); and the viewer's address of a run or a case, for
`assay run --view` and the reports' links (`[report] view_url`, `ASSAY_VIEW_URL`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.core.errors import InputError
from assay.core.suite import view_url_problem
from assay.view.links import Links

if TYPE_CHECKING:
    import socket

    from starlette.applications import Starlette

    # Imported where used: the store's reader brings the calibrations' statistics (scipy.stats,
    # sklearn, pandas), which a run that only links its reports to the viewer must not load.
    from assay.store.views import ReadOnlyStore
    from assay.view.export import Exported

VIEW_URL_VARIABLE = "ASSAY_VIEW_URL"


@dataclass
class Viewer:
    """A viewer bound to its socket, not yet serving: `url` is where it answers."""

    store: ReadOnlyStore
    app: Starlette
    sock: socket.socket
    url: str

    @property
    def runs(self) -> int:
        return len(self.store.runs())

    def run_url(self, run_id: str) -> str:
        return self.url.rstrip("/") + Links().run(run_id)

    def serve(self) -> None:
        """Serve until Ctrl+C or SIGTERM, then close the store."""
        from assay.web.server import serve

        try:
            serve(self.app, self.sock)
        finally:
            self.store.close()
            self.sock.close()


def open_viewer(store: Path, host: str, port: int, token: str | None) -> Viewer:
    """Open `store` read-only and bind the viewer on host:port (0: a free port); InputError
    (exit 2) for a missing or newer store, an address beyond loopback without a strong token,
    or a port that cannot be bound."""
    from assay.view.app import ViewConfig, create_app
    from assay.web.security import check_listening
    from assay.web.server import bind, url_of

    check_listening(host, token, "ASSAY_VIEW_TOKEN", "read every prompt and response in the store")
    from assay.store.views import ReadOnlyStore

    readonly = ReadOnlyStore(store)
    try:
        app = create_app(ViewConfig(store=readonly, token=token))
        sock = bind(host, port)
    except BaseException:
        readonly.close()
        raise
    return Viewer(readonly, app, sock, url_of(sock))


def export_view(store: Path, folder: Path, *, force: bool = False) -> Exported:
    """Write the explorer of `store` as static files into `folder` (`view/export.py`): a
    folder that holds the store or the current folder, or anything an export did not write,
    is refused, an earlier export is replaced only with `force`, and one that cannot be
    written is refused before any page is made (InputError, exit 2; `view/target.py`)."""
    from assay.core.writable import Output, prove_writable
    from assay.view.export import export
    from assay.view.target import check_target, protected_paths

    # refused before the store is read
    target = check_target(folder, force, protected_paths(store))
    prove_writable(Output("--export", target.parent, folder=True))
    from assay.store.views import ReadOnlyStore

    readonly = ReadOnlyStore(store)
    try:
        return export(readonly, folder, force=force)
    finally:
        readonly.close()


def view_base_url(configured: str | None = None) -> str | None:
    """The viewer's address the reports link to: `ASSAY_VIEW_URL`, else the suite's
    `[report] view_url`; None when neither is set. InputError for an address that is not
    plain http(s), or that holds credentials, a query or a fragment (`view_url_problem`: the
    address is not repeated, so a password in it is not printed either)."""
    value = os.environ.get(VIEW_URL_VARIABLE, "").strip()
    problem = view_url_problem(value) if value else None
    if problem is not None:
        raise InputError(f"ERROR: {VIEW_URL_VARIABLE}: the address {problem}")
    if configured is not None and (problem := view_url_problem(configured)) is not None:
        raise InputError(f"ERROR: [report] view_url: the address {problem}")
    chosen = (value or configured or "").rstrip("/")
    return chosen or None


def run_view_url(configured: str | None, run_id: str) -> str | None:
    """The run's page in the viewer at `view_base_url(configured)` (None: not configured)."""
    base = view_base_url(configured)
    return base + Links().run(run_id) if base is not None else None
