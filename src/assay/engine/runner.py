"""The run engine: turn a plan into Trial records in the store, concurrently and resumably."""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

from assay.core.errors import EXIT_INCOMPLETE, EXIT_OK
from assay.core.money import checked_budget
from assay.core.records import MAX_INT
from assay.core.redact import scrub, scrub_known, scrub_record
from assay.engine.batching import WORKERS as BATCH_WORKERS
from assay.engine.batching import BatchCollector
from assay.engine.budget import Budget
from assay.engine.calls import BudgetExhausted, Caller
from assay.engine.executors import Executor
from assay.engine.plan import WorkItem
from assay.models.base import Message, Model, ModelError, Request, Response, ServerMismatch
from assay.models.registry import model_price
from assay.store import Store, now_iso
from assay.store.spend import Spend, run_spend, spent_so_far

FLUSH_EVERY_S = 0.2
FLUSH_EVERY_ROWS = 512


@dataclass(slots=True)
class RunSettings:
    """Per-call parameters and the run's limits."""

    max_tokens: int = 1024
    temperature: float = 0.0
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 4
    budget_usd: float | None = None
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    batch: bool = False  # --batch: calls to openai:/anthropic: go through provider batch APIs
    batch_poll_s: float = 30.0  # the first wait between polls of a batch (it grows from there)

    def __post_init__(self) -> None:
        # a NaN, infinite or negative cap would run nothing, silently, or cap nothing
        checked_budget(self.budget_usd, "--budget-usd (budget_usd)")

    def collector(self, store: Store) -> BatchCollector | None:
        """The batch path of a Caller with these settings (None without --batch)."""
        return BatchCollector(store, self.batch_poll_s) if self.batch else None


@dataclass(slots=True)
class RunResult:
    """What a run did; `exit_code` follows docs/design.md (0 all answered, 3 incomplete)."""

    run_id: str
    total: int = 0
    answered: int = 0
    errored: int = 0
    resumed: int = 0
    not_run: int = 0
    calls: int = 0
    cache_hits: int = 0
    spend: Spend = field(default_factory=Spend)
    """What this invocation's calls cost, by role (the judges pipelined with the run too)."""
    run_spend: Spend = field(default_factory=Spend)
    """What the run has cost in all its invocations, by role (`store.spend.run_spend`)."""
    stopped: str | None = None
    overrun: str | None = None  # why the budget stopped new calls early (a call cost too much)
    unmetered: list[str] = field(default_factory=list)
    """The specs of the run's models no price meters (`--allow-unmetered`): their calls count
    as $0 in every spend figure."""
    errors: list[str] = field(default_factory=list)

    @property
    def unmetered_note(self) -> str | None:
        """The warning that the spend figures leave out the calls of unmetered models."""
        if not (self.unmetered and self.calls):
            return None
        return (
            f"WARNING: {', '.join(self.unmetered)}: unmetered (no price, --allow-unmetered):"
            " the spend figures count its calls as $0, not what they cost; --price IN,OUT"
            " meters it"
        )

    @property
    def spent_usd(self) -> float:
        """What this invocation's calls cost, every role's."""
        return self.spend.total or 0.0

    @property
    def run_spent_usd(self) -> float:
        """What the run has cost in all its invocations (the budget's figure)."""
        return self.run_spend.total or 0.0

    @property
    def exit_code(self) -> int:
        complete = self.answered + self.resumed == self.total
        return EXIT_OK if complete and not self.stopped else EXIT_INCOMPLETE


@dataclass(frozen=True, slots=True)
class Spent:
    """What a run has spent so far (in all its invocations, the judges' calls included) and
    its budget (None: none)."""

    spent_usd: float
    budget_usd: float | None = None

    @property
    def left_usd(self) -> float | None:
        """What the budget leaves (None: no budget)."""
        return None if self.budget_usd is None else max(0.0, self.budget_usd - self.spent_usd)


class Tick(Protocol):
    """What the engine calls per finished trial: `ok` (answered, not errored) and the spend
    so far (None from callers that do not know it)."""

    def __call__(self, ok: bool, spent: Spent | None = None, /) -> None: ...


Progress = Callable[[bool], None] | Callable[[bool, Spent | None], None]
"""A progress callback as callers give it: of `ok` alone, or of `ok` and the run's spend so
far (`Spent`); `told_spend` makes either a `Tick`."""


def told_spend(callback: Progress | None) -> Tick:
    """`callback` as a Tick: one that takes `ok` alone is called without the spend."""
    if callback is None:
        return lambda ok, spent=None, /: None
    try:
        taken = [
            p.kind
            for p in inspect.signature(callback).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
    except (TypeError, ValueError):  # no signature to read: assume it takes both
        taken = [inspect.Parameter.VAR_POSITIONAL]
    if len(taken) >= 2 or inspect.Parameter.VAR_POSITIONAL in taken:
        return cast(Tick, callback)
    alone = cast(Callable[[bool], None], callback)
    return lambda ok, spent=None, /: alone(ok)


class Follower(Protocol):
    """Work that follows the run's trials as they are recorded, in the run's event loop and
    through its caller (the suite's judges, pipelined with the run: `assay.scorers.judge.
    follow`). The engine knows nothing of what it does."""

    def begin(self, caller: Caller, run_id: str) -> None:
        """Called once before the first call of the run, in its event loop."""

    def recorded(self, record: dict[str, Any]) -> None:
        """A trial's record, as just queued for the store (answered or errored)."""

    async def finish(self) -> None:
        """Wait for the work started so far (the run has made its last call)."""

    @property
    def spent_usd(self) -> float:
        """What its calls have spent (counted in the run's budget, as the judges' spend)."""


F = TypeVar("F", bound=Follower)


class DeferredFollower(Generic[F]):
    """A follower built when the run's first trial is recorded (or, when none is, as the run
    ends), not before the run's first call: the run's first calls are already out while it
    is built (the suite's judges: their modules and models). It then begins, exactly as it
    would have before the first call (the trials recorded earlier by a resumed run are
    those the store holds at the first new record), and is handed that record, so every
    trial still reaches it as soon as it is recorded. `build` returns None when there is
    nothing to follow (the work is then left for after the run); `built` is what it made."""

    def __init__(self, build: Callable[[], F | None]) -> None:
        self._build: Callable[[], F | None] | None = build
        self._begin: tuple[Caller, str] | None = None
        self.built: F | None = None

    def begin(self, caller: Caller, run_id: str) -> None:
        self._begin = (caller, run_id)

    def _follower(self) -> F | None:
        if self._build is not None:
            build, self._build = self._build, None
            self.built = build()
            if self.built is not None and self._begin is not None:
                self.built.begin(*self._begin)
        return self.built

    def recorded(self, record: dict[str, Any]) -> None:
        follower = self._follower()
        if follower is not None:
            follower.recorded(record)

    async def finish(self) -> None:
        follower = self._follower()
        if follower is not None:
            await follower.finish()

    @property
    def spent_usd(self) -> float:
        return self.built.spent_usd if self.built is not None else 0.0


def _state(response: Response) -> dict[str, Any] | None:
    return dict(response.state) if response.state is not None else None


class Engine:
    """Runs work items against their conditions' models; the store is the only writer."""

    def __init__(
        self,
        store: Store,
        models: dict[str, Model],
        settings: RunSettings,
        *,
        progress: Progress | None = None,
        executor: Executor | None = None,
        follower: Follower | None = None,
    ) -> None:
        self.store = store
        self.follower = follower
        self.models = models
        self.settings = settings
        self.budget = Budget(settings.budget_usd)
        slots = executor.slots if executor is not None else None
        # Never more calls in flight than the executor can run at once: a call queued on a
        # busy cluster would otherwise spend its timeout waiting for a slot.
        self.concurrency = max(1, min(settings.concurrency, slots or settings.concurrency))
        self.caller = Caller(
            store,
            self.budget,
            concurrency=self.concurrency,
            retries=settings.retries,
            backoff_initial_s=settings.backoff_initial_s,
            backoff_max_s=settings.backoff_max_s,
            executor=executor,
            batch=settings.collector(store),
        )
        # With --batch a batch gathers the requests waiting at once: run many more trials
        # at a time than calls (models without a batch API keep their concurrency limit).
        batching = self.caller.batch is not None and any(
            self.caller.batch.api(m) is not None for m in models.values()
        )
        self.workers = max(self.concurrency, BATCH_WORKERS) if batching else self.concurrency
        self.progress = told_spend(progress)
        self._stop: str | None = None

    async def run(self, run_id: str, items: Iterable[WorkItem], total: int) -> RunResult:
        """Produce every item not already answered in this run; flush as it goes."""
        result = RunResult(run_id=run_id, total=total)
        self.budget.spent = spent_so_far(self.store, run_id)
        self.caller.ledger = run_id
        done = self.store.answered_keys(run_id)
        pending = self._skip_answered(items, done, result)
        if self.follower is not None:
            self.follower.begin(self.caller, run_id)
        flusher = asyncio.create_task(self._flush_periodically())
        self.store.periodic = True  # the judges pipelined with the run commit with it
        try:
            workers = [
                asyncio.create_task(self._worker(pending, run_id, result))
                for _ in range(max(1, min(self.workers, total)))
            ]
            try:
                await asyncio.gather(*workers)
            except BaseException:  # e.g. ServerMismatch: the other workers stop too
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
            if self.follower is not None:
                await self.follower.finish()
        finally:
            flusher.cancel()
            self.store.periodic = False
            if self.caller.batch is not None:
                await self.caller.batch.aclose()
            self.store.flush()
        result.calls = self.caller.calls
        result.cache_hits = self.caller.cache_hits
        followed = self.follower.spent_usd if self.follower is not None else 0.0
        result.spend = Spend(system=self.caller.spent, judges=followed)
        result.run_spend = run_spend(self.store, run_id)
        result.stopped = self._stop
        result.overrun = self.budget.overrun
        result.unmetered = sorted(
            {scrub_known(m.spec) for m in self.models.values() if model_price(m) is None}
        )  # a key in a command: runner's arguments is never printed
        result.not_run = total - result.answered - result.errored - result.resumed
        return result

    def _skip_answered(
        self, items: Iterable[WorkItem], done: set[str], result: RunResult
    ) -> Iterator[WorkItem]:
        for item in items:
            if item.key in done:
                result.resumed += 1
                self.progress(True, self.spent())
            else:
                yield item

    async def _flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY_S)
            self.store.flush()

    def stop(self, reason: str) -> None:
        """Start no more trials (those in flight finish); the run ends as stopped by `reason`."""
        self._stop = self._stop or reason

    async def _worker(self, items: Iterator[WorkItem], run_id: str, result: RunResult) -> None:
        for item in items:
            if self._stop:
                return
            record, detail = await self._trial(item, run_id)
            if record is None:
                return  # budget exhausted before the trial could start a call
            self.store.queue_trial(run_id, item.key, item.seq, record, detail)
            if self.follower is not None:
                self.follower.recorded(record)
            if self.store.pending() >= FLUSH_EVERY_ROWS:
                self.store.flush()
            if record["error"] is None:
                result.answered += 1
            else:
                result.errored += 1
                if len(result.errors) < 20:
                    result.errors.append(
                        f"{item.case.id} [{item.condition.name} #{item.trial}]: {record['error']}"
                    )
            self.progress(record["error"] is None, self.spent())

    def spent(self) -> Spent:
        """The run's spend so far and its budget."""
        return Spent(self.budget.spent, self.budget.limit)

    async def _trial(self, item: WorkItem, run_id: str) -> tuple[dict[str, Any] | None, str | None]:
        """Run every turn of one trial; return its record and any error detail."""
        condition = item.condition
        model = self.models[condition.name]
        messages = list(item.messages)
        turns: list[str | None] = [None, *(item.case.turns or [])]
        input_tokens = output_tokens = 0
        cost: float | None = 0.0
        text = ""
        state: dict[str, Any] | None = None
        trajectory: list[dict[str, Any]] | None = None
        model_name: str | None = None
        error: str | None = None
        detail: str | None = None
        started = time.perf_counter()
        for turn in turns:
            if turn is not None:
                messages = [*messages, Message("assistant", text), Message("user", turn)]
            request = Request(
                messages=messages,
                max_tokens=self.settings.max_tokens,
                temperature=self.settings.temperature,
                trial=item.trial,
                case=item.case,
                settings={
                    "condition": condition.name,
                    "skill": condition.skill,
                    "model": condition.model,
                    **condition.params,
                },
                timeout_s=self.settings.timeout_s,
            )
            try:
                response = await self.caller.call(model, request)
            except BudgetExhausted:
                self._stop = "budget"
                if turn is None:
                    return None, None
                error = "budget exhausted before the trial's last turn"
                break
            except (ServerMismatch, sqlite3.Error):
                raise  # a wrong URL or model name, or the store failed: the run stops
            except ModelError as exc:
                error, detail = str(exc), exc.detail or None
                if cost is not None and exc.counted_usd:  # what the failed call counts as
                    cost += exc.counted_usd
                break
            except Exception as exc:  # a provider bug or an agent's own exception
                error = f"{type(exc).__name__}: {exc}"
                detail = traceback.format_exc()
                break
            text = response.text
            input_tokens += response.input_tokens
            output_tokens += response.output_tokens
            cost = None if cost is None or response.cost_usd is None else cost + response.cost_usd
            state = _state(response)
            if response.trajectory is not None:  # a multi-turn trial's steps, turn after turn
                trajectory = [*(trajectory or []), *response.trajectory]
            model_name = response.model
        usage: dict[str, int] | None = None
        if 0 <= input_tokens <= MAX_INT and 0 <= output_tokens <= MAX_INT:
            usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        else:
            error = error or (
                f"the model reported {input_tokens:,} input and {output_tokens:,} output tokens:"
                " token counts outside 0 to 2^53 cannot be accounted for"
            )
        record = {
            "case_id": item.case.id,
            "trial": item.trial,
            "condition": condition.name,
            "runner": condition.model,
            "response": "" if error else text,
            "usage": usage,
            "cost_usd": cost,
            "model": model_name,
            "latency_s": round(time.perf_counter() - started, 6),
            "error": error,
            "state": None if error else state,
            "prompt_sha256": item.prompt_sha256,
            "skill_sha256": condition.skill_sha256,
            "run_id": run_id,
            "created_at": now_iso(),
            "trajectory": None if error else trajectory,  # None: the runner reports no steps
        }
        # The one place a trial's recorded strings are scrubbed (its error and the reply's
        # model, usage and state): what is queued here is what the store and --output hold.
        secrets = self.caller.secrets
        return scrub_record(record, secrets), scrub(detail, secrets) if detail else None
