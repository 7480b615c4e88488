"""The Ray executor: each model call (a completion or an agent run) is a task on a cluster.

The driver keeps everything stateful — call cache, budget, retries, adaptive concurrency and
the store — and only ships `(spec, options, request)` to a worker. The worker rebuilds the
model from its spec once per process, keeps it (connections, loaded weights) for later
calls, runs it on a private event loop, and returns the Response, or the error as a value so
the driver's retry logic sees exactly what it would see locally.

API keys are never shipped: a worker's model reads them from the worker's own environment.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import pickle
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from assay.core.environ import restore_user_env
from assay.core.errors import InputError
from assay.core.redact import scrub
from assay.models.base import Model, ModelError, Request, Response
from assay.models.registry import ModelOptions, create_model

# -- the worker side --------------------------------------------------------------------------

_models: dict[tuple[str, bytes], Model] = {}
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


class RemoteCallError(Exception):
    """An exception raised by a model on a worker that could not travel back as itself."""


def _worker_loop() -> asyncio.AbstractEventLoop:
    """One event loop per worker process, in a daemon thread, shared by its cached models."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="assay-models", daemon=True).start()
            _loop = loop
        return _loop


def _worker_model(spec: str, options: ModelOptions) -> Model:
    key = (spec, pickle.dumps(options))
    with _lock:
        model = _models.get(key)
        if model is None:
            if not _models:
                atexit.register(close_worker_models)
            model = _models[key] = create_model(spec, options)
        return model


def close_worker_models(timeout_s: float = 5.0) -> None:
    """Close this process's cached models (connections, weights); runs at worker exit."""
    with _lock:
        models = list(_models.values())
        _models.clear()
    loop = _loop
    if loop is None:
        return
    for model in models:
        try:
            asyncio.run_coroutine_threadsafe(model.aclose(), loop).result(timeout_s)
        except Exception:  # closing is best effort at exit
            continue


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when it pickles, else one that carries its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        failure = RemoteCallError(scrub(f"{type(exc).__name__}: {exc}"))
        failure.__cause__ = None
        return failure
    return exc


def run_call(spec: str, options: ModelOptions, request: Request) -> Response | BaseException:
    """The Ray task body: answer one request on this worker; errors come back as values."""
    try:
        model = _worker_model(spec, options)
        future = asyncio.run_coroutine_threadsafe(model.generate(request), _worker_loop())
        return future.result()
    except ModelError as exc:
        return exc
    except Exception as exc:  # an agent's own exception: the engine records it as an error
        exc.__traceback__ = None  # tracebacks do not travel; the text and type do
        return _portable(exc)


# -- the driver side --------------------------------------------------------------------------

_HOST_PORT = re.compile(r"^(?:ray://)?\[?([^\[\]/]+?)\]?:(\d+)$")
CONNECT_TIMEOUT_S = 5.0


def check_reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on (ray.init would retry for minutes)."""
    match = _HOST_PORT.match(address.strip())
    if match is None:
        return  # "auto" or another form Ray resolves itself
    host, port = match.group(1), int(match.group(2))
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise InputError(
            f"ERROR: --ray-address: nothing answers at {address}: {exc.strerror or exc}"
        ) from None


def _ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(
            "ERROR: --executor ray needs the ray package: pip install 'ray[default]'"
        ) from None
    return ray


def connect(address: str | None) -> bool:
    """Connect this process to the Ray cluster at `address` (None: start a local one) unless
    it is connected already; whether this call made the connection (and so owns it)."""
    ray = _ray_module()
    if ray.is_initialized():
        return False
    if address is not None:
        check_reachable(address)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no telemetry, ever
    restore_user_env()  # a local cluster's workers run the system under test
    try:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or "a local cluster"
        raise InputError(f"ERROR: --ray-address: cannot connect to {where}: {exc}") from None
    return True


@contextmanager
def held(address: str | None) -> Iterator[None]:
    """One connection for several engine runs (a sequential run's looks): their executors
    find it made and leave it open; it is dropped (a local cluster stopped) at the end."""
    owned = connect(address)
    try:
        yield
    finally:
        ray = _ray_module()
        if owned and ray.is_initialized():
            ray.shutdown()


class RayExecutor:
    """Submits each call as a Ray task and awaits its result on the driver's event loop."""

    name = "ray"

    def __init__(
        self, options: ModelOptions, *, address: str | None = None, num_cpus: float = 1.0
    ) -> None:
        ray = _ray_module()
        self._ray = ray
        self.options = options
        self._owns_connection = connect(address)
        resources: dict[str, float] = ray.cluster_resources()
        cpus = float(resources.get("CPU", 1.0))
        self.slots: int | None = max(1, int(cpus // num_cpus)) if num_cpus > 0 else None
        self._task: Any = ray.remote(num_cpus=num_cpus, max_retries=0)(run_call).options(
            scheduling_strategy="SPREAD"
        )

    async def generate(self, model: Model, request: Request) -> Response:
        ref = self._task.remote(model.spec, self.options, request)
        try:
            outcome = await ref
        except asyncio.CancelledError:  # the driver's timeout: stop the task as well
            self._ray.cancel(ref)
            raise
        except self._ray.exceptions.RayError as exc:  # a worker or node died mid-call
            raise ModelError(
                scrub(f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"),
                retryable=True,
            ) from None
        if isinstance(outcome, BaseException):
            raise outcome
        if not isinstance(outcome, Response):
            raise ModelError(f"ray: the task returned {type(outcome).__name__}, not a Response")
        return outcome

    async def aclose(self) -> None:
        if self._owns_connection and self._ray.is_initialized():
            self._ray.shutdown()
