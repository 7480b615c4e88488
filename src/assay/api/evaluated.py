"""A suite's run as it is evaluated: the suite without a disabled judge, the judges
pipelined with the run (`assay.scorers.judge.follow`), and the modules the evaluation after
the run imports (loaded while the run waits on the network: `assay.api.warming`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.api.warming import evaluation_modules
from assay.core.errors import InputError
from assay.core.suite import Suite
from assay.engine import Condition, RunRequest
from assay.engine.runner import DeferredFollower
from assay.store import Store

if TYPE_CHECKING:
    from assay.scorers.judge.follow import JudgeFollower
    from assay.verdict.checks import JudgeStatus


def as_evaluated(
    suite: Suite, judge: JudgeStatus | None, conditions: Sequence[Condition]
) -> tuple[Suite, list[str], str | None]:
    """The suite as its run is evaluated (without a disabled judge, `assay.api.keys`), the
    changes that made, and a note saying why nothing is evaluated (None: it is).

    One condition is gated on its own (no baseline comparison); with several, the [gate]
    candidate is compared with baseline."""
    changes: list[str] = []
    if judge is not None and judge.disabled:
        from assay.api.keys import without_judge

        suite, changes = without_judge(suite, judge)
    names = {c.name for c in conditions}
    if len(names) > 1 and "baseline" not in names and suite.gate.candidate not in names:
        return (
            suite,
            changes,
            f"note: the suite has no baseline and no [gate] candidate among its conditions"
            f" ({', '.join(sorted(names))}), so nothing is gated",
        )
    if not suite.scoring.scorers and not suite.judge.judges:
        disabled = judge is not None and judge.disabled
        what = "no scorers besides its disabled judge" if disabled else "no scorers and no judges"
        return suite, changes, f"note: the suite names {what}, so nothing is scored or gated"
    return suite, changes, None


def judge_follower(
    suite: Suite, judge: JudgeStatus | None, request: RunRequest, store: Store
) -> DeferredFollower[JudgeFollower] | None:
    """The suite's judges, pipelined with its run (`assay.scorers.judge.follow`), or None:
    when the run is not judged; when the run has a budget cap (the trials come first, so a
    budget stop cuts the judging, never the trials: the judges then run after the run, as
    its spend allows); with provider batches (`[run]` or `[judge]` batch: the judges' calls
    then go in batches of their own after the run). The judges are built once the run's
    first calls are out (`DeferredFollower`: at its first recorded trial); when the judging
    cannot start, they are not, and the judging after the run reports why as it always has."""
    evaluated, _, note = as_evaluated(suite, judge, request.conditions)
    if note is not None or not evaluated.judge.judges or request.settings.budget_usd is not None:
        return None
    if request.settings.batch or evaluated.judge.batch:
        return None

    def build() -> JudgeFollower | None:
        from assay.scorers.judge import config_from_suite
        from assay.scorers.judge.follow import JudgeFollower

        try:
            return JudgeFollower(
                config_from_suite(evaluated),
                request.cases if request.only is None else request.only,  # a look's cases
                [c.name for c in request.conditions],
                request.trials,
                store,
                evaluated.judge.budget_usd,
            )
        except InputError:
            return None

    return DeferredFollower(build)


def evaluation_imports(
    suite: Suite, judge: JudgeStatus | None, request: RunRequest
) -> tuple[str, ...]:
    """The modules the evaluation after this run will import (none: it evaluates nothing)."""
    evaluated, _, note = as_evaluated(suite, judge, request.conditions)
    return () if note is not None else evaluation_modules(evaluated)
