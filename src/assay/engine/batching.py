"""The batch path (`--batch`): a run's calls to `openai:` and `anthropic:` models go through
their provider's batch API (half the price, answers within 24 h) instead of one by one.

The Caller keeps everything else: a call is answered from the cache first, reserves its
worst case from the budget before it is queued here, and its answer (at batch prices) is
recorded, cached and settled exactly as a direct call's. This module only collects the
queued requests into batches (up to the provider's caps), submits them, records each
batch id in the store with the cache keys of its requests, polls with backoff and hands
back each answer or per-request error.

A restarted run finds its requests' batch ids in the store and waits for those batches
instead of submitting again. A request its batch did not answer (a per-request error, a
failed, cancelled or expired batch) becomes that call's error and is forgotten by the store,
so the next run submits it again.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from assay.core.redact import scrub
from assay.models.base import Model, ModelError, Request, Response
from assay.models.batch import BatchAPI, batch_api_of
from assay.store import Store
from assay.store.batches import (
    batch_holding,
    queue_batch_status,
    queue_drop_requests,
    save_batch,
)

GATHER_S = 0.2  # a batch is submitted once no request has joined it for this long
WORKERS = 10_000  # requests a batch run keeps waiting at once (the most one batch gathers)
POLL_GROWTH = 1.5  # each poll waits this much longer than the last, up to 10× the first


@dataclass(slots=True)
class _Queue:
    """Requests of one endpoint waiting to be submitted."""

    api: BatchAPI
    requests: dict[str, Request] = field(default_factory=dict)
    size: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class BatchCollector:
    """Collects calls into provider batches; shared by one Caller."""

    def __init__(self, store: Store, poll_s: float = 30.0, gather_s: float = GATHER_S) -> None:
        self.store = store
        self.poll_s = poll_s
        self.gather_s = gather_s
        self.submitted = 0  # batches this process submitted
        self._queues: dict[str, _Queue] = {}
        self._waiters: dict[tuple[str, str], list[asyncio.Future[Response]]] = {}
        self._requests: dict[tuple[str, str], Request] = {}
        self._watching: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._apis: dict[int, BatchAPI | None] = {}
        self._members: dict[tuple[str, str], set[str]] = {}  # a watched batch's waiting keys

    def api(self, model: Model) -> BatchAPI | None:
        """The model's batch API (None: its provider has none); one per model."""
        if id(model) not in self._apis:
            self._apis[id(model)] = batch_api_of(model)
        return self._apis[id(model)]

    async def generate(self, model: Model, request: Request, key: str) -> Response:
        """The answer to `request` (cache key `key`) from a batch: one submitted earlier
        (by this or a killed process) that holds it, or the next one submitted."""
        api = self.api(model)
        if api is None:
            raise ModelError(f"{model.spec}: no batch API")
        slot = (api.endpoint, key)
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        waiting = self._waiters.setdefault(slot, [])
        waiting.append(future)
        self._requests.setdefault(slot, request)
        if len(waiting) == 1:  # the first ask for this request: find or queue it
            batch_id = batch_holding(self.store, api.endpoint, key)
            if batch_id is not None:
                self._watch(api, batch_id, [key])
            else:
                self._enqueue(api, key, request)
        return await future

    def _enqueue(self, api: BatchAPI, key: str, request: Request) -> None:
        queue = self._queues.get(api.endpoint)
        if queue is None:
            queue = self._queues[api.endpoint] = _Queue(api)
        line = api.line(key, request)
        size = len(json.dumps(line, ensure_ascii=False).encode()) + 1
        if queue.requests and (
            len(queue.requests) >= api.max_requests or queue.size + size > api.max_bytes
        ):
            self._submit_now(queue)
            queue = self._queues[api.endpoint] = _Queue(api)
        queue.requests[key] = request
        queue.lines.append(line)
        queue.size += size
        if queue.task is None:
            queue.task = self._spawn(self._gather(queue))

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _gather(self, queue: _Queue) -> None:
        """Wait until no request has joined for `gather_s`, then submit what is queued."""
        seen = -1
        while seen != len(queue.requests):
            seen = len(queue.requests)
            await asyncio.sleep(self.gather_s)
        if self._queues.get(queue.api.endpoint) is queue:
            del self._queues[queue.api.endpoint]
            await self._submit(queue)

    def _submit_now(self, queue: _Queue) -> None:
        """A full queue goes at once (its gathering task is told it is gone)."""
        del self._queues[queue.api.endpoint]
        self._spawn(self._submit(queue))

    async def _submit(self, queue: _Queue) -> None:
        api, keys = queue.api, list(queue.requests)
        try:
            batch_id = await api.submit(queue.lines)
        except BaseException as exc:
            failure = exc if isinstance(exc, ModelError) else ModelError(scrub(str(exc)))
            for key in keys:
                self._resolve((api.endpoint, key), failure)
            if not isinstance(exc, Exception):
                raise
            return
        save_batch(self.store, api.endpoint, batch_id, keys)
        self.submitted += 1
        self._watch(api, batch_id, keys)

    def _watch(self, api: BatchAPI, batch_id: str, keys: list[str]) -> None:
        """Wait for the batch's answers to `keys` (one poller per batch)."""
        self._members.setdefault((api.endpoint, batch_id), set()).update(keys)
        if (api.endpoint, batch_id) not in self._watching:
            self._watching[(api.endpoint, batch_id)] = self._spawn(self._poll(api, batch_id))

    async def _poll(self, api: BatchAPI, batch_id: str) -> None:
        """Poll until the batch ends (waiting longer each time), then hand out its answers."""
        wait = self.poll_s
        while True:
            try:
                state = await api.state(batch_id)
            except ModelError as exc:
                if not exc.retryable:
                    self._fail_batch(api, batch_id, f"batch {batch_id}: {exc}")
                    return
            else:
                if state.ended:
                    break
            await asyncio.sleep(wait)
            wait = min(wait * POLL_GROWTH, 10 * self.poll_s)
        queue_batch_status(self.store, api.endpoint, batch_id, state.status)
        try:
            entries = await api.results(batch_id)
        except ModelError as exc:
            self._fail_batch(api, batch_id, f"batch {batch_id}: results: {exc}")
            return
        why = f"batch {batch_id} {state.status}" + (f": {state.error}" if state.error else "")
        dropped: list[str] = []
        del self._watching[(api.endpoint, batch_id)]
        for key in self._members.pop((api.endpoint, batch_id), set()):
            request = self._requests.get((api.endpoint, key))
            if request is None:
                continue
            entry = entries.get(key)
            try:
                if entry is None:
                    raise ModelError(f"{why}: the request did not run")
                outcome: Response | ModelError = api.parse(entry, request)
            except ModelError as exc:
                outcome = exc
                dropped.append(key)
            self._resolve((api.endpoint, key), outcome)
        queue_drop_requests(self.store, api.endpoint, dropped)

    def _fail_batch(self, api: BatchAPI, batch_id: str, message: str) -> None:
        """The batch cannot be read: its waiting requests fail (the store keeps it, so a
        later run looks again)."""
        self._watching.pop((api.endpoint, batch_id), None)
        for key in self._members.pop((api.endpoint, batch_id), set()):
            self._resolve((api.endpoint, key), ModelError(message))

    def _resolve(self, slot: tuple[str, str], outcome: Response | BaseException) -> None:
        self._requests.pop(slot, None)
        for future in self._waiters.pop(slot, []):
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    async def aclose(self) -> None:
        """Stop gathering and polling (a batch already submitted runs on; the store has it)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
