"""Serve a web app (review, view) with uvicorn on a socket bound up front (so port 0 works)."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from types import FrameType

import uvicorn
from starlette.types import ASGIApp

from assay.core.errors import InputError


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InputError(
            f"ERROR: --host/--port: cannot listen on {host}:{port}: {exc.strerror}"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def make_server(app: ASGIApp) -> uvicorn.Server:
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", server_header=False, access_log=False
    )
    return uvicorn.Server(config)


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve(app: ASGIApp, sock: socket.socket) -> None:
    """Run until Ctrl+C or SIGTERM, the normal ways to stop a server (so: exit 0).

    uvicorn shuts down cleanly on either signal, then re-raises it to the handler that was
    there before; ours turns SIGTERM into the same quiet stop as Ctrl+C.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stopped)
    with contextlib.suppress(KeyboardInterrupt):
        make_server(app).run(sockets=[sock])
