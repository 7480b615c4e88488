"""Running a coroutine to completion on the fastest event loop available.

uvloop (libuv) when it is installed — a dependency on Linux and macOS — cuts the CPU the event
loop and aiohttp spend per model call; asyncio's own loop otherwise (Windows, or
ASSAY_EVENT_LOOP=asyncio to rule the loop out when chasing a problem). `call_blocking` runs
such synchronous work from code whose thread has an event loop running already.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory, or None for asyncio's default loop."""
    if os.environ.get("ASSAY_EVENT_LOOP", "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop of `loop_factory()`."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def call_blocking(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)`, which runs an event loop of its own (`run`), from synchronous
    code that may have one running already in its thread (a notebook, pytest-asyncio, an
    async service, a Playwright script): there it runs in a worker thread, with this
    thread's context variables, and this thread waits for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args, **kwargs)
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="assay-loop") as pool:
        return pool.submit(context.run, functools.partial(fn, *args, **kwargs)).result()
