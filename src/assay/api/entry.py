"""How the public functions are called from async code: from a running event loop, and their
`async` twins.

`public(fn)` is `fn` as `assay.fn` hands it out (after `api/arguments.py` has wrapped it in
its argument checks): called from a thread whose event loop is running (Jupyter,
pytest-asyncio, an async service) it runs in a worker thread with a loop of its own
(`assay.core.aio.call_blocking`) instead of failing, and the caller waits. `twin(fn)` is its
`async` twin (`await assay.aevaluate(...)`): the same work in a worker thread
(`asyncio.to_thread`), so the caller's loop goes on serving meanwhile. Cancelling the await
does not stop the work already started; what it finished is in the store, and calling again
resumes it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from assay.core import aio

P = ParamSpec("P")
R = TypeVar("R")


def public(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, callable from a thread with a running event loop."""

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return aio.call_blocking(fn, *args, **kwargs)

    return call


def twin(fn: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """The `async` twin of `fn`: awaited, it runs `fn` in a worker thread."""

    @functools.wraps(fn)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(fn, *args, **kwargs)

    name = fn.__name__
    call.__name__ = call.__qualname__ = f"a{name}"
    call.__doc__ = (
        f"The async twin of `assay.{name}`: `await assay.a{name}(...)` does the same work in"
        f" a worker thread while the event loop goes on.\n\n" + (fn.__doc__ or "")
    )
    return call
