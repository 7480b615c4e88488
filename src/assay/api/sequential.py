"""A sequential run (`[gate] sequential = true`, `assay run SUITE --sequential`): the cases
in looks, the gate after each, and a stop as soon as the verdict is settled.

The cases are taken in `verdict.looks.look_order` (seeded by `[gate] seed`; protected cases
first), in looks of `[gate] look` cases. Each look runs its cases (every condition × trial)
with the suite's judges pipelined with it (they see the looked cases only, so no judge call
is made for a case never run; on Ray, one cluster connection serves every look), then evaluates the gate on every case looked at so far, at
the level the looks spend (`verdict.sequential.look_level`). A PASS or a settled FAIL
(`verdict.sequential.settled`) ends the run; so do an INCOMPLETE look (errors beyond `[gate]
max_errored`, exit 3, resumable) and a run stopped by its budget or lease; else the next
look runs. The last look holds every case: the fixed design, at the gate's own level.

It is one run in the store (the run id of every case): a rerun, or a later run of every
case, finds the looks' trials there and makes only the calls not made yet. Only the
evaluation the run ends with is written (reports, summary, history).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from assay.core.records import Case
from assay.core.suite import Suite
from assay.engine import RunRequest, RunResult
from assay.engine.executors import held
from assay.engine.runner import Progress
from assay.store.spend import Spend
from assay.verdict.checks import Sequential
from assay.verdict.looks import look_ends, look_order, look_size
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
    for a suite, the evaluation, written or not)."""

    run: RunPart
    ended: Ended[OutcomeT]


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
    ends = look_ends(len(order), look_size(len(order), suite.gate.look))
    results: list[RunResult] = []
    spend = Spend()  # the evaluations' calls at the looks before the last
    fractions: list[float] = []
    for index, end in enumerate(ends, 1):
        fractions.append(end / len(order))
        part = dataclasses.replace(request, only=order[:end])
        result, ahead = steps.run(part, progress, warn if index == 1 else None)
        results.append(result)
        run = combined(results)
        stop = _stop(suite, request, order[:end], run, index, len(ends), fractions)
        last = index == len(ends)
        outcome = steps.ended(part, run, ahead, stop, last)
        evaluation = outcome.evaluation
        if last or evaluation is None or outcome.incomplete:
            break  # the last look (written), or nothing to gate: as a whole run would end
        gate = evaluation.evaluation.analysis.gate
        done = gate.verdict in ("PASS", "FAIL") and settled(gate.checks)
        if done or gate.verdict == "INCOMPLETE" or result.stopped:
            stop.stopped_early = done
            outcome = steps.ended(part, run, ahead, stop, True)  # this look's, written
            break
        spend = spend.plus(evaluation.spend)
    if outcome.evaluation is not None:
        outcome.evaluation.spend = spend.plus(outcome.evaluation.spend)
    return outcome


def _stop(
    suite: Suite,
    request: RunRequest,
    looked: Sequence[Case],
    run: RunResult,
    look: int,
    looks: int,
    fractions: Sequence[float],
) -> Sequential:
    """The look as the evaluation and the reports know it."""
    per_case = len(request.conditions) * request.trials
    made = len(looked) * per_case
    not_made = (len(request.cases) - len(looked)) * per_case
    spent = run.run_spend.total or 0.0
    level = look_level(suite.gate.level, fractions)
    return Sequential(
        method=METHOD.name,
        guarantee=METHOD.guarantee(suite.gate.level, _planned(fractions, looks)),
        look=look,
        looks=looks,
        cases=len(looked),
        total_cases=len(request.cases),
        level=level,
        stopped_early=False,  # set when a look before the last settles the verdict
        calls_made=made,
        calls_not_made=not_made,
        usd_not_spent=round(spent / made * not_made, 6) if spent and made else None,
        case_ids=[c.id for c in looked],
    )


def _planned(fractions: Sequence[float], looks: int) -> list[float]:
    """Every planned look's information fraction, from the looks made so far and their count
    (looks of one size: the last look takes what is left)."""
    if len(fractions) >= looks or not fractions:
        return list(fractions)
    step = fractions[0]
    return [min(step * k, 1.0) for k in range(1, looks)] + [1.0]


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
