"""An aiohttp app served on 127.0.0.1 from its own event loop in a background thread: the one
plumbing of the tests' servers (the mock model server, the batch and the hostile servers)."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web
from mock_server import serve_app


class AppThread:
    """Serves `app` until `stop`; `port` is the port it is bound to."""

    def __init__(self, app: web.Application) -> None:
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.runner, self.port = self.loop.run_until_complete(serve_app(app))
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if not self.thread.is_alive():
            return  # stopped already (a test may stop it early)
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
