"""One model call with the engine's guarantees: cache, budget, retries, timeout, backoff."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.core.errors import InputError
from assay.core.memo import ByObject
from assay.core.redact import scrub_cut, scrub_record, secret_values
from assay.engine.batching import BatchCollector
from assay.engine.budget import TOLERANCE, Budget
from assay.engine.claims import claims_for
from assay.engine.costs import Priciest, Tally, one_turn
from assay.engine.executors import Executor, LocalExecutor
from assay.engine.limiter import AdaptiveLimiter
from assay.engine.plan import canonical_json, sha256_text
from assay.engine.retrying import Backoff, RetryAfterTooLong, retryable
from assay.models.base import Model, ModelError, Request, Response, Served, ServerMismatch
from assay.models.pricing import Price
from assay.models.registry import is_agent, model_price
from assay.store import Store
from assay.store.lease import this_process
from assay.store.servers import queue_form, remembered_form
from assay.store.spend import Role, hold_reservation, queue_release, queue_spend

if TYPE_CHECKING:
    # tenacity is imported by the first retry, not with the engine: most runs never retry,
    # and importing it costs start-up time (with tornado installed, tenacity imports that too).
    from tenacity import RetryCallState


class BudgetExhausted(Exception):
    """The budget cannot cover the worst case of another call."""


def cache_key(identity: dict[str, Any], request: Request) -> str:
    """Content address of a call: model identity, parameters, messages and trial index.

    The bytes hashed are exactly `sha256_json([identity, messages, max_tokens, temperature,
    trial, json_schema, settings])` (existing caches and resume keys depend on them); the
    schema part, the same large object for every call of a judge, is encoded once."""
    messages = [[m.role, m.content] for m in request.messages]
    if request.json_schema is None:  # one encoding of the whole list
        return sha256_text(
            canonical_json(
                [
                    identity,
                    messages,
                    request.max_tokens,
                    request.temperature,
                    request.trial,
                    None,
                    request.settings,
                ]
            )
        )
    head = canonical_json(
        [identity, messages, request.max_tokens, request.temperature, request.trial]
    )
    schema = _schema_json(request.json_schema)
    settings = canonical_json(request.settings) if request.settings else "{}"
    return sha256_text(f"{head[:-1]}, {schema}, {settings}]")


# Canonical encodings of the request schemas seen, by object: a schema is built once per judge
# setup and never changed after it is sent.
_SCHEMA_JSON: ByObject[str] = ByObject()


def _schema_json(schema: dict[str, Any] | None) -> str:
    """`canonical_json(schema)`, remembered per schema object."""
    if schema is None:
        return "null"
    return _SCHEMA_JSON.get(schema, lambda: canonical_json(schema))


def without_secrets(response: Response, secrets: Sequence[str]) -> Response:
    """The response with its recorded strings scrubbed (`scrub_record`: text and agent state
    of the secret values assay holds, the reported `model` of every key shape too).

    Every model call goes through the Caller, so this one place keeps an echoed key out of
    the call cache, trials, judgments and everything derived from them.
    """
    return _scrubbed(response, secrets)[0]


def _scrubbed(response: Response, secrets: Sequence[str]) -> tuple[Response, dict[str, Any]]:
    """`without_secrets(response)` and its recorded form (`as_dict`, what the cache holds)."""
    recorded = response.as_dict()
    scrubbed = scrub_record(recorded, secrets)
    if scrubbed == recorded:
        return response, recorded
    return dataclasses.replace(response, **scrubbed), scrubbed


class Caller:
    """Makes model calls for one run; shared by all its workers.

    The executor only runs `generate` (here or on a Ray worker); cache, budget, retries and
    concurrency stay with the caller, so results do not depend on where calls run.
    """

    def __init__(
        self,
        store: Store,
        budget: Budget,
        *,
        concurrency: int,
        retries: int = 4,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 30.0,
        executor: Executor | None = None,
        ledger: str | None = None,
        batch: BatchCollector | None = None,
        role: Role = "system",
    ) -> None:
        self.store = store
        self.role = role  # whose calls these are: the spend is recorded under it
        self.spent = 0.0  # what this caller's calls have cost
        self.executor: Executor = executor if executor is not None else LocalExecutor()
        self.ledger = ledger  # a run id: real spend is recorded in the store under it
        self.batch = batch  # --batch: calls to models with a batch API go through it
        self.budget = budget
        self.retries = retries
        self.backoff = Backoff(backoff_initial_s, backoff_max_s)
        self._too_long = RetryAfterTooLong(backoff_max_s)
        self._limiters: dict[str, AdaptiveLimiter] = {}
        self._concurrency = concurrency
        self._priciest = Priciest(store)  # spec -> the most one call has cost
        self._checked: dict[int, BaseException | None] = {}  # id(model) -> its server check
        self._checking: dict[int, asyncio.Task[None]] = {}
        self._forms: dict[int, str | None] = {}  # id(served model) -> the form the store holds
        self._served: dict[int, Served] = {}  # the served models whose server check passed
        self._open: set[int] = set()  # served models whose structured calls need no gate
        self._unlisted: set[int] = set()  # served models their server does not list (yet)
        self._gates: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = {}
        self.calls = 0
        self.cache_hits = 0
        self.secrets = secret_values()  # read once: the environment's keys when the run starts

    def sharing(self, budget: Budget, role: Role) -> Caller:
        """A caller for other work of the same run (the suite's judges, pipelined with it):
        the same store (its cache), ledger, per-model limiters and retry settings, metered
        by `budget` (one drawing on this caller's, `Budget.within`); its own call counts and
        spend, recorded under `role`. Calls run here, not on this caller's executor, as the
        judges' always have."""
        other = Caller(
            self.store,
            budget,
            concurrency=self._concurrency,
            retries=self.retries,
            ledger=self.ledger,
            role=role,
        )
        other.backoff, other._too_long = self.backoff, self._too_long
        other._limiters, other._priciest = self._limiters, self._priciest
        return other

    def for_role(self, role: Role) -> Caller:
        """This caller (its budget, cache, batches, limiters, server checks) for calls of
        another role: their spend is recorded, and counted, under `role`."""
        other = copy.copy(self)
        other.role, other.spent, other.calls, other.cache_hits = role, 0.0, 0, 0
        return other

    def limiter(self, model: Model) -> AdaptiveLimiter:
        """One adaptive limit per model."""
        limiter = self._limiters.get(model.spec)
        if limiter is None:
            limiter = self._limiters[model.spec] = AdaptiveLimiter(self._concurrency)
        return limiter

    async def call(self, model: Model, request: Request, *, use_cache: bool = True) -> Response:
        """Answer from the cache, or claim the call (`engine/claims.py`, batched with the
        calls asked for at the same time: a call another process or task is making is waited
        for and answered from its reply), reserve budget and call the model with retries."""
        key = cache_key(model.identity(), request)
        if not use_cache:
            return (await self._paid(model, request, key, False))[0]
        claims = claims_for(self.store)
        hit = await claims.claim(key)
        if hit is None:  # this task holds the call's claim
            recorded: dict[str, Any] | None = None
            try:
                response, recorded = await self._paid(model, request, key, True)
            finally:
                claims.release(key, recorded)
            return response
        self.cache_hits += 1
        return without_secrets(Response(**hit), self.secrets)

    async def _paid(
        self, model: Model, request: Request, key: str, use_cache: bool
    ) -> tuple[Response, dict[str, Any]]:
        """Reserve budget and call the model with retries; the response and its recorded
        form (cached when `use_cache`)."""
        await self._ready(model)
        reserved = await self._reserve(model, request)
        tally = Tally(reserved, self.budget.limit is not None, turn=one_turn(model, reserved))
        # A batched call's durable record is its batch in the store (a rerun collects and
        # pays for it), so it holds no reservation that a rerun would count as spent.
        if not self._batched(model):
            self._hold(tally, reserved)
        answered = False
        try:
            response = await self._answer(model, request, tally, key)
            counted = tally.charge(response.cost_usd)
            if tally.cost != (response.cost_usd or 0.0):
                # a cost not to be trusted (its worst case), or failed attempts that cost too:
                # the answer records what the call counts as
                response = dataclasses.replace(response, cost_usd=tally.cost or counted)
            response, recorded = _scrubbed(response, self.secrets)
            answered = True
        except ModelError as exc:
            exc.counted_usd = tally.cost  # what the failed call counts as (its trial's cost)
            raise
        except asyncio.CancelledError:
            if tally.sent:  # stopped in flight: it may be billed all the same
                tally.charge(None, billed=True)
            raise
        finally:
            self._settle(model, tally, answered)
        if use_cache:
            self.store.queue_cache(key, recorded)
        self._remember_form(model)
        return response, recorded

    def _settle(self, model: Model, tally: Tally, answered: bool) -> None:
        """Release the call's reservation at what it cost, recorded under this caller's role
        with the release (one commit). A call stopped in flight (Ctrl+C, a scorer's failure
        cancelling its siblings) has counted at its reservation: it may be billed all the
        same. One stopped before it was sent costs nothing. Only a process killed before this
        commit leaves a durable reservation behind (counted as spent by later invocations)."""
        self.budget.settle(tally.held, tally.cost)
        self.spent += tally.cost
        if tally.cost and self.ledger is not None:
            queue_spend(self.store, self.ledger, tally.cost, self.role)
        for held in tally.holds:
            queue_release(self.store, held)
        if answered or tally.seen:
            self._priciest.saw(model.spec, tally.seen)
        self.budget.overran(model.spec, tally.held, tally.cost)

    async def _answer(self, model: Model, request: Request, tally: Tally, key: str) -> Response:
        """A direct call with retries, or (`--batch`, a model with a batch API) the answer
        from a provider batch: no per-call timeout, limiter or retry (a request its batch
        did not answer is an error now and is submitted again by the next run)."""
        if self._batched(model):
            assert self.batch is not None
            self.calls += 1
            return await self.batch.generate(model, request, key)
        return await self._with_retries(model, request, tally)

    def _batched(self, model: Model) -> bool:
        """Whether the model's calls go through its provider's batch API (`--batch`)."""
        return self.batch is not None and self.batch.api(model) is not None

    def _hold(self, tally: Tally, amount: float) -> None:
        """Record a reservation in the store before the call is sent (with a budget and a
        run to charge): if this process is killed with the call in flight, the call may be
        billed but never recorded, so the next invocation counts the reservation as spent
        (store/spend.py). Nothing is recorded when there is nothing to record."""
        if self.ledger is None or self.budget.limit is None or amount <= 0:
            return
        tally.holds.append(hold_reservation(self.store, self.ledger, this_process(), amount))

    async def _ready(self, model: Model) -> None:
        """Before a served model's first call that reaches its server: check the server once
        (ServerMismatch stops the command) and start from the structured-output form the
        store remembers for it. Concurrent first calls share the one check."""
        key = id(model)
        if key in self._checked:
            failure = self._checked[key]
            if failure is not None:
                raise failure
            return
        if not isinstance(model, Served):
            self._checked[key] = None
            return
        task = self._checking.get(key)
        loop = asyncio.get_running_loop()
        if task is None or task.get_loop() is not loop:
            task = self._checking[key] = loop.create_task(self._check(model))
        await asyncio.shield(task)

    async def _check(self, model: Served) -> None:
        key = id(model)
        try:
            if await model.check_server() is False:
                self._unlisted.add(key)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                self._checked[key] = exc
            raise
        form = remembered_form(self.store, *model.server_key())
        if form is not None:
            model.assume_structured_form(form)
        self._forms[key] = form
        self._served[key] = model
        self._checked[key] = None

    def _remember_form(self, model: Model) -> None:
        """Keep in the store the structured-output form a served model's server accepted.

        (Served models are known by their check: a runtime Protocol `isinstance` per call
        costs more than the rest of this.)"""
        served = self._served.get(id(model))
        if served is None:
            return  # not a served model, or its server check has not passed
        form = served.structured_form()
        if form is not None and self._forms[id(model)] != form:
            self._forms[id(model)] = form
            queue_form(self.store, *served.server_key(), form)

    async def _reserve(self, model: Model, request: Request) -> float:
        """Hold the call's reservation, or raise BudgetExhausted.

        A priced model's call reserves its price's worst case. An agent's call (`is_agent`) or
        an unpriced one reserves at least that and the most one of its calls has cost (in this
        store, so also in an earlier invocation: `Priciest`), and up to a `concurrency`-th of
        what is left; until one of its calls has answered or reported a cost, a call runs
        alone with all that is left. The call is told its reservation (`Request.budget_usd`,
        claude's `--max-budget-usd`).
        """
        price: Price | None = model_price(model)
        worst = price.worst_case(request) if price is not None else 0.0
        if price is not None and not is_agent(model):
            if not await self.budget.reserve_when_settled(worst):
                raise BudgetExhausted
            return worst

        def least() -> float | None:
            known = self._priciest.get(model.spec)  # in this process, else in the store
            return None if known is None else max(worst, known)

        held = await self.budget.reserve_share(least, self._concurrency)
        if held is None:
            raise BudgetExhausted
        return held

    def forget(self, model: Model, request: Request) -> None:
        """Drop the cached reply to `request`: its caller found it unusable (e.g. a judge's
        broken JSON), so a later run must ask the model again rather than replay it."""
        key = cache_key(model.identity(), request)
        claims_for(self.store).forget(key)
        self.store.queue_uncache(key)

    async def _with_retries(self, model: Model, request: Request, tally: Tally) -> Response:
        """The first attempt runs bare (the common case costs no retry machinery); after a
        retryable failure tenacity retries with backoff, never sooner than Retry-After."""
        limiter = self.limiter(model)
        try:
            return await self._attempt(model, request, limiter, tally)
        except ModelError as exc:
            if not exc.retryable or self.retries == 0 or self._too_long.exceeds(exc):
                raise
            await asyncio.sleep(self.backoff.first(exc))
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

        attempts, too_long = stop_after_attempt(self.retries), self._too_long

        def stop(state: RetryCallState) -> bool:
            return attempts(state) or too_long(state)

        retrying = AsyncRetrying(
            stop=stop,
            wait=self.backoff.later,
            retry=retry_if_exception(retryable),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._attempt(model, request, limiter, tally)
        raise AssertionError("unreachable")  # pragma: no cover  (reraise=True)

    async def _attempt(
        self, model: Model, request: Request, limiter: AdaptiveLimiter, tally: Tally
    ) -> Response:
        """One call within the model's concurrency limit and the per-call timeout, told what
        is left of its reservation; a failed attempt's reported cost is counted (one that may
        have been billed unreported, at its worst case: a retry of a one-turn call then
        reserves its worst case again, `_top_up`)."""
        if tally.turn is not None and tally.worst() < tally.turn - TOLERANCE:
            await self._top_up(tally, tally.turn - tally.worst())
        request.budget_usd = tally.left()
        if tally.cost and request.budget_usd is not None and request.budget_usd <= TOLERANCE:
            # (a free model's call reserves $0 and may always go ahead)
            raise ModelError("the call's reservation was spent by its failed attempts")
        gate = self._gate(model, request)
        if gate is not None:
            async with gate:
                failure = self._checked.get(id(model))
                if failure is not None:  # the server refused the name while this call waited
                    raise failure
                if self._alone(model, request):
                    try:
                        response = await self._send(model, request, limiter, tally)
                    except ServerMismatch as exc:
                        self._checked[id(model)] = exc
                        raise
                    self._unlisted.discard(id(model))
                    if request.json_schema is not None:
                        self._open.add(id(model))
                    return response
        return await self._send(model, request, limiter, tally)

    async def _top_up(self, tally: Tally, amount: float) -> None:
        """Add `amount` to a call's reservation for another attempt (waiting for calls in
        flight to settle, not for its own); when the budget cannot hold it, the call fails
        (it records what it counted, and the budget stops the next trial)."""
        if not await self.budget.reserve_when_settled(amount, own=tally.held):
            raise ModelError("the budget cannot cover another attempt of this call")
        tally.held += amount
        self._hold(tally, amount)

    def _alone(self, model: Model, request: Request) -> bool:
        """Whether this call must go alone: the first answered call of a model its server does
        not list (it answers, or it refuses the name once with one clear error), or, until a
        served model has answered one call with a JSON Schema, such calls (a server that
        refuses the structured-output form refuses it once, not once per concurrent call, and
        the form it takes is known before the next call is sent: models/forms.py)."""
        key = id(model)
        if key in self._unlisted:
            return True
        return request.json_schema is not None and key not in self._open and key in self._forms

    def _gate(self, model: Model, request: Request) -> asyncio.Lock | None:
        """The lock calls that must go alone (`_alone`) wait on, before their timeout starts;
        None: no need."""
        key = id(model)
        if not self._alone(model, request):
            return None
        loop = asyncio.get_running_loop()
        held = self._gates.get(key)
        if held is None or held[0] is not loop:
            held = self._gates[key] = (loop, asyncio.Lock())
        return held[1]

    async def _send(
        self, model: Model, request: Request, limiter: AdaptiveLimiter, tally: Tally
    ) -> Response:
        await limiter.acquire()
        self.calls += 1
        tally.sent = True
        try:
            async with asyncio.timeout(request.timeout_s):
                response = await self.executor.generate(model, request)
        except TimeoutError:
            tally.charge(None, billed=True)  # it may have been billed: at its worst case
            raise ModelError(f"timeout after {request.timeout_s}s", retryable=True) from None
        except ModelError as exc:
            tally.charge(exc.cost_usd, exc.may_be_billed())
            if exc.overload:
                limiter.on_overload()
            raise
        except InputError:
            raise  # the server refused the model's name (ServerMismatch): the command stops
        except Exception as exc:
            # anything else after the request was sent (an agent's exception that is not a
            # ModelError, a reply nested too deep to read, a count too large for a float):
            # it may have been billed, so it counts at its reservation, and the trial errs
            tally.charge(None, billed=True)
            what = scrub_cut(f"{type(exc).__name__}: {exc}", 300)
            raise ModelError(f"{model.spec}: the call failed with {what}") from None
        finally:
            limiter.release()
        limiter.on_success()
        if not isinstance(response.text, str):  # a provider's bug: never recorded as an answer
            tally.charge(response.cost_usd, billed=True)  # it answered, so it may be billed
            what = type(response.text).__name__
            raise ModelError(f"{model.spec} answered with a {what} where text was expected")
        return response
