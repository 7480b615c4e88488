"""Where a model call runs: in this process (`local`) or as a task on a Ray cluster (`ray`).

The engine's driver keeps the call cache, the budget, retries and the store; an executor only
answers one `generate` at a time, so results are the same whichever one runs the calls.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from assay.core.errors import InputError
from assay.engine.executors.local import LocalExecutor
from assay.models.base import Model, Request, Response
from assay.models.registry import ModelOptions

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs one model call (a completion or an agent run) and returns its Response."""

    name: str
    slots: int | None  # calls it can run at once (None: no limit of its own)

    async def generate(self, model: Model, request: Request) -> Response:
        """Answer `request` with `model`, or raise ModelError."""
        ...

    async def aclose(self) -> None:
        """Release what the executor holds (a Ray connection)."""
        ...


def create_executor(name: str, options: ModelOptions, *, address: str | None = None) -> Executor:
    """The executor called `name`; `address` is the Ray cluster's (None starts a local one)."""
    if name == "local":
        if address is not None:
            raise InputError("ERROR: --ray-address: needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        from assay.engine.executors.ray import RayExecutor

        return RayExecutor(options, address=address)
    raise InputError(
        f"ERROR: --executor: unknown executor {name!r} (known: {', '.join(EXECUTORS)})"
    )


def held(name: str, address: str | None) -> AbstractContextManager[None]:
    """Keep what executor `name` connects to open across several engine runs (a sequential
    run's looks): for `ray`, one cluster connection (a local cluster started once) instead
    of one per run; nothing for `local`."""
    if name != "ray":
        return nullcontext()
    from assay.engine.executors.ray import held as ray_held

    return ray_held(address)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "create_executor", "held"]
