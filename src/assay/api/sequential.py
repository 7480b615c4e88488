"""A sequential run (`[gate] sequential = true`, `assay run SUITE --sequential`): the cases
in looks, the gate after each, and a stop as soon as the verdict is settled.

The cases are taken in `verdict.looks.look_order` (seeded by `[gate] seed`; every look holds
each stratum in proportion), in looks of `[gate] look` cases. Each look runs its cases (every
condition × trial) and the candidate alone on every protected case (their per-case checks
first: a blocking finding there FAILs the first look), with the suite's judges pipelined
with it (no judge call is made for a trial never run; on Ray, one cluster connection serves
every look), then evaluates the gate at the level the looks spend
(`verdict.sequential.look_level`): the comparison on the cases looked at, the per-case checks
on every case checked (`verdict.percase`). A settled FAIL (`verdict.sequential.settled`)
ends the run; so do an INCOMPLETE look (errors beyond `[gate] max_errored`, exit 3,
resumable) and a run stopped by its budget or lease. A settled PASS ends it only once the
per-case checks ran on every case: in an A/B the candidate then runs alone on the cases not
looked at and the gate is evaluated again (a blocking finding or per-case threshold there
FAILs); a single-system run goes on to its next look; a suite with `[gate] sampled_checks`
passes on the cases checked, the Clopper-Pearson bound stated. The last look holds every
case: the fixed design, at the gate's own level.

It is one run in the store (the run id of every case): a rerun, or a later run of every
case, finds the looks' trials there and makes only the calls not made yet. Only the
evaluation the run ends with is written (reports, summary, history).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from assay.core.records import Case
from assay.core.suite import Suite
from assay.engine import RunRequest, RunResult
from assay.engine.executors import held
from assay.engine.runner import Progress
from assay.store import Store
from assay.store.spend import Spend, run_spend
from assay.verdict.checks import Sequential
from assay.verdict.clusters import unit_ends
from assay.verdict.coverage import protected
from assay.verdict.looks import look_ends, look_order, look_size
from assay.verdict.percase import sampled_text
from assay.verdict.pipeline import pick_candidate
from assay.verdict.sequential import METHOD, look_level, settled

if TYPE_CHECKING:
    from assay.api.results import Result
    from assay.scorers.judge.follow import JudgeFollower

Warn = Callable[[str], None]


class Outcome(Protocol):
    """What a look ended with (`assay.api.running.RunOutcome`)."""

    evaluation: Result | None
    incomplete: bool


OutcomeT = TypeVar("OutcomeT", bound=Outcome)
OutcomeT_co = TypeVar("OutcomeT_co", bound=Outcome, covariant=True)


class RunPart(Protocol):
    def __call__(
        self, request: RunRequest, progress: Progress | None, warn: Warn | None
    ) -> tuple[RunResult, JudgeFollower | None]: ...


class Ended(Protocol[OutcomeT_co]):
    def __call__(
        self,
        request: RunRequest,
        result: RunResult,
        ahead: JudgeFollower | None,
        stop: Sequential | None = None,
        write: bool = True,
    ) -> OutcomeT_co: ...


@dataclass(frozen=True, slots=True)
class Steps(Generic[OutcomeT]):
    """What a look does, given by `assay.api.running` (which imports this module): run a
    request's cases (`run`), and make the outcome of what has run (`ended`: the notes and,
    for a suite, the evaluation, written or not); `store`: the run's."""

    run: RunPart
    ended: Ended[OutcomeT]
    store: Path


def run_looks(
    suite: Suite,
    request: RunRequest,
    steps: Steps[OutcomeT],
    progress: Progress | None = None,
    warn: Warn | None = None,
) -> OutcomeT:
    """Run the suite's cases look by look until the verdict is settled (the module's
    docstring); the outcome of the look it ended at, written as a whole run's is."""
    with held(request.executor, request.ray_address):  # Ray: one cluster for every look
        return _looks(suite, request, steps, progress, warn)


def _looks(
    suite: Suite,
    request: RunRequest,
    steps: Steps[OutcomeT],
    progress: Progress | None,
    warn: Warn | None,
) -> OutcomeT:
    order = look_order(request.cases, suite.gate.seed)
    ends = unit_ends(order, look_ends(len(order), look_size(len(order), suite.gate.look)))
    names = [c.name for c in request.conditions]
    candidate = pick_candidate(suite.gate.candidate, names)
    # The candidate alone on a case is a saving only beside another condition (an A/B): a
    # single-system run's per-case checks need every case run, which is its last look.
    apart = len(names) > 1
    first = [c for c in order if protected(c)]  # their per-case checks from the first look
    results: list[RunResult] = []
    spend = Spend()  # the calls of the evaluations not written (each look's before the last)
    fractions: list[float] = []
    for index, end in enumerate(ends, 1):
        fractions.append(end / len(order))
        looked, last = order[:end], index == len(ends)
        part = _part(request, looked, [] if last else first, candidate)
        result, ahead = steps.run(part, progress, warn if index == 1 else None)
        results.append(result)
        run = combined(results)
        stop = _stop(suite, steps, part, run, index, len(ends), fractions)
        outcome = steps.ended(part, run, ahead, stop, last)
        evaluation = outcome.evaluation
        if last or evaluation is None or outcome.incomplete:
            break  # the last look (written), or nothing to gate: as a whole run would end
        spend = spend.plus(evaluation.spend)
        gate = evaluation.evaluation.analysis.gate
        done = gate.verdict in ("PASS", "FAIL") and settled(gate.checks)
        if done and gate.verdict == "PASS" and stop.checked < len(order) and not result.stopped:
            if suite.gate.sampled_checks:  # the suite opted in: the bound is stated
                stop.sampled = _sampled(suite, stop, looked, len(order))
            elif apart:  # the candidate's per-case checks on every case, then the verdict
                part = _part(request, looked, order[end:], candidate)
                result, ahead = steps.run(part, progress, None)
                results.append(result)
                run = combined(results)
                stop = _stop(suite, steps, part, run, index, len(ends), fractions)
                outcome = steps.ended(part, run, ahead, stop, False)
                evaluation = outcome.evaluation
                if evaluation is None or outcome.incomplete:
                    outcome = steps.ended(part, run, ahead, stop, True)
                    break
                spend = spend.plus(evaluation.spend)
                gate = evaluation.evaluation.analysis.gate
                done = gate.verdict in ("PASS", "FAIL") and settled(gate.checks)
            else:
                done = False  # every case runs (the next looks), as the checks need
        if done or gate.verdict == "INCOMPLETE" or result.stopped:
            stop.stopped_early = done
            outcome = steps.ended(part, run, ahead, stop, True)  # this look's, written
            break
    if outcome.evaluation is not None:
        outcome.evaluation.spend = spend.plus(outcome.evaluation.spend)
    return outcome


def _part(
    request: RunRequest, looked: Sequence[Case], alone: Sequence[Case], candidate: str
) -> RunRequest:
    """A look's request: every condition on the looked cases, the candidate alone on `alone`
    (its per-case checks: the protected cases from the first look, the rest before a PASS)."""
    ids = {c.id for c in looked}
    rest = [c for c in alone if c.id not in ids]
    return dataclasses.replace(request, only=looked, alone=rest, alone_condition=candidate)


def _sampled(suite: Suite, stop: Sequential, looked: Sequence[Case], total: int) -> str:
    """The stated bound of per-case checks sampled on the looked cases: the bound rests on
    those drawn at random (the protected cases were all checked, not drawn)."""
    drawn = sum(1 for c in looked if not protected(c))
    return sampled_text(0, stop.checked, total, drawn, suite.gate.level)


def _stop(
    suite: Suite,
    steps: Steps[OutcomeT],
    part: RunRequest,
    run: RunResult,
    look: int,
    looks: int,
    fractions: Sequence[float],
) -> Sequential:
    """The look as the evaluation and the reports know it. The calls not made are the planned
    trials the store does not hold (a rerun after a run of every case makes none), priced at
    what the run's system-under-test calls cost on average."""
    looked = list(part.only or ())
    per_case = len(part.conditions) * part.trials
    made = len(looked) * per_case + len(part.alone) * part.trials
    planned = len(part.cases) * per_case
    recorded, price = _recorded(steps.store, run.run_id)
    not_made = max(0, planned - max(made, recorded))
    level = look_level(suite.gate.level, fractions)
    return Sequential(
        method=METHOD.name,
        guarantee=METHOD.guarantee(suite.gate.level, _planned(fractions, looks)),
        look=look,
        looks=looks,
        cases=len(looked),
        total_cases=len(part.cases),
        level=level,
        stopped_early=False,  # set when a look before the last settles the verdict
        calls_made=made,
        calls_not_made=not_made,
        usd_not_spent=round(price * not_made, 6) if price and not_made else None,
        checked=len(looked) + len(part.alone),
        case_ids=[c.id for c in looked],
        checked_ids=[c.id for c in part.alone],
    )


def _planned(fractions: Sequence[float], looks: int) -> list[float]:
    """Every planned look's information fraction, from the looks made so far and their count
    (looks of one size: the last look takes what is left)."""
    if len(fractions) >= looks or not fractions:
        return list(fractions)
    step = fractions[0]
    return [min(step * k, 1.0) for k in range(1, looks)] + [1.0]


def _recorded(store: Path, run_id: str) -> tuple[int, float]:
    """The run's answered trials the store holds (every invocation's), and the mean price
    of one: the run's system-under-test spend over them."""
    handle = Store(store)
    try:
        held = len(handle.answered_keys(run_id))
        system = run_spend(handle, run_id).system
    finally:
        handle.close()
    return held, system / held if held else 0.0


def combined(results: Sequence[RunResult]) -> RunResult:
    """The looks' runs as one: the last look's trials (every case looked at), what this
    invocation made in all its looks (answered, calls, cache hits, spend), and the trials
    answered before it (`resumed`)."""
    last = results[-1]
    answered = sum(r.answered for r in results)
    spend = Spend()
    for result in results:
        spend = spend.plus(result.spend)
    return dataclasses.replace(
        last,
        answered=answered,
        resumed=last.answered + last.resumed - answered,
        calls=sum(r.calls for r in results),
        cache_hits=sum(r.cache_hits for r in results),
        spend=spend,
        errors=list(last.errors),
    )
