"""Running a coroutine to completion on the fastest event loop available.

uvloop (libuv) when it is installed — a dependency on Linux and macOS — cuts the CPU the event
loop and aiohttp spend per model call; asyncio's own loop otherwise (Windows, or
ASSAY_EVENT_LOOP=asyncio to rule the loop out when chasing a problem).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


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
