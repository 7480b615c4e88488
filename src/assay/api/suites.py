"""A suite's evaluation after its run: the suite's judges, then the one route to a verdict
(`assay.verdict.pipeline.evaluate`), then every output into the suite's folder."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.api.recording import record_results
from assay.api.results import Judged, Result
from assay.api.viewing import run_view_url
from assay.core.cases import CaseFile
from assay.core.errors import Incomplete, InputError
from assay.core.jsonl import atomic_writer, model_line, write_jsonl
from assay.core.records import Case, Trial
from assay.core.rubric import Rubric
from assay.core.suite import Suite, load_suite_cases
from assay.engine import RunRequest, run_caller
from assay.engine.calls import Caller
from assay.reports.files import COMPARISONS, DETERMINISTIC, SCORES, SUMMARY, TRIALS
from assay.store import Store
from assay.store.spend import Spend, run_spend
from assay.verdict.checks import JudgeStatus, Sequential
from assay.verdict.config import resolve
from assay.verdict.pipeline import Inputs, rows_from_scores
from assay.verdict.pipeline import evaluate as evaluate_inputs

if TYPE_CHECKING:
    from assay.scorers.judge.follow import JudgeFollower


def evaluate_run(
    suite: Suite,
    request: RunRequest,
    run_id: str,
    trials: Sequence[Trial],
    store: Store,
    out: Path | None,
    judge: JudgeStatus | None = None,
    notes: Sequence[str] = (),
    ahead: JudgeFollower | None = None,
    lines: Sequence[str] | None = None,
    stop: Sequential | None = None,
    write: bool = True,
) -> Result:
    """After a suite's run: judges → scorers → gate → reports into the output folder.

    Judge calls and model-backed scorers (the grounding judge) go through one Caller metered
    by the run's budget (what the run spent counts, what they spend is recorded under the run),
    capped together by [judge] budget_usd, and cached in the run's store. `judge` is whether
    the suite's judges run (a disabled judge's suite comes without them,
    `assay.api.keys.without_judge`); every report shows it, with `notes`. `ahead` is the
    judging pipelined with the run (`assay.scorers.judge.follow`): what it judged is taken as
    judged, and what it spent counts against [judge] budget_usd. `lines`: the trials'
    trials.jsonl lines when made already (`model_line`). `stop`: a sequential run's look
    (`assay.api.sequential`): `trials` are its cases'. Without `write` nothing is written
    (`write_run` writes it later)."""
    config = dataclasses.replace(resolve(suite, output=out), judge=judge)
    cases = held_catalogue(request.cases, ahead)  # the run's
    pinned = pinned_catalogue(suite, request.cases)
    catalogue = cases if pinned is request.cases else held_catalogue(pinned, None)
    cap = suite.judge.budget_usd
    if cap is not None and ahead is not None:
        cap = max(0.0, cap - ahead.spent_usd)
    judging = dataclasses.replace(request.settings, batch=suite.judge.batch)  # [judge] batch
    judge_caller = run_caller(store, run_id, judging, cap)
    judged = judge_trials(suite, cases, trials, store, judge_caller, ahead)
    scorer_caller = judge_caller.for_role("scorers")  # the same budget, spend of its own
    scale = Rubric.from_weights(scale=config.scale) if judged.scores else None
    try:
        evaluation = evaluate_inputs(
            Inputs(
                trials=trials,
                scores=rows_from_scores(judged.scores, scale),
                comparisons=judged.comparisons,
                cases={c.id: c for c in catalogue},
                planned_trials=request.trials,
                sequential=stop,
                judging=judged.gap,
            ),
            config,
            store=store.path,
            caller=scorer_caller,  # the model-backed scorers call judges (grounding)
        )
    except InputError as exc:
        if not judged.exit_code:
            raise
        # Nothing to gate because the judging stopped: that is the news, and it is resumable.
        reason = "the budget ran out" if judged.stopped == "budget" else "some items failed"
        raise Incomplete(
            [*exc.messages, f"ERROR: judging did not finish ({reason}); run again to resume"]
        ) from None
    evaluation.notes.extend(notes)
    store.flush()
    result = Result(
        evaluation=evaluation,
        judged=judged,
        output=config.output,
        spend=Spend(judges=judge_caller.spent, scorers=scorer_caller.spent),
        run_spend=run_spend(store, run_id),  # flushed above: every call of the run so far
        view_url=run_view_url(suite.report.view_url, run_id),
    )
    if write:
        write_run(result, suite, cases, run_id, store, lines)
    return result


def write_run(
    result: Result,
    suite: Suite,
    cases: Sequence[Case],
    run_id: str,
    store: Store,
    lines: Sequence[str] | None = None,
) -> None:
    """A suite run's outputs into its folder (trials, results, summary, reports) and its
    results into the store (`record_results`)."""
    evaluation, judged = result.evaluation, result.judged or Judged()
    trials = evaluation.inputs.trials
    folder = evaluation.config.output
    assert folder is not None  # a suite's config always has one
    write_jsonl(folder / TRIALS, lines if lines is not None else map(model_line, trials))
    write_jsonl(folder / DETERMINISTIC, [r.as_json() for r in evaluation.results])
    if judged.scores:
        lines = judged.score_lines if len(judged.score_lines) == len(judged.scores) else None
        write_jsonl(folder / SCORES, lines or judged.scores)
    if judged.comparisons:
        write_jsonl(folder / COMPARISONS, judged.comparisons)
    with atomic_writer(folder / SUMMARY) as handle:
        handle.write(json.dumps(result.summary().as_json(), indent=2, ensure_ascii=False) + "\n")
    result.write_reports(folder)
    held = evaluation.inputs.cases  # the cases the gate expected, as the evaluation holds them
    record_results(
        store,
        run_id,
        suite.name,
        list(held.values()) if held is not None else pinned_catalogue(suite, cases),
        evaluation,
        result.report,
        judged.scores,
    )


def pinned_catalogue(suite: Suite, cases: Sequence[Case]) -> Sequence[Case]:
    """The cases the gate expects answers for: the run's, or with a pinned golden set
    (`cases_sha256`) every case of it, also when `--case` ran only some."""
    if suite.cases_sha256 is None or isinstance(cases, CaseFile):
        return cases
    return load_suite_cases(suite)


def held_catalogue(cases: Sequence[Case], ahead: JudgeFollower | None) -> Sequence[Case]:
    """The catalogue in memory for the evaluation, read once: a streamed one (`CaseFile`) is
    read here, or taken from the judges that followed the run (they hold it already)."""
    if not isinstance(cases, CaseFile):
        return cases
    if ahead is not None and len(ahead.cases) == len(cases):
        return list(ahead.cases.values())
    return list(cases)


def judge_trials(
    suite: Suite,
    cases: Sequence[Case],
    trials: Sequence[Trial],
    store: Store,
    caller: Caller | None = None,
    ahead: JudgeFollower | None = None,
) -> Judged:
    """Run the suite's judges (none configured: nothing) over the answered trials, through
    `caller` when given (the run's); `ahead`: the judges that followed the run (the items
    they judged, and the keys they made, are taken as they are)."""
    if not suite.judge.judges:
        return Judged()
    from assay.scorers.judge import config_from_suite, run_judging

    config = config_from_suite(suite)
    answered = [t for t in trials if t.error is None]
    result = run_judging(
        answered,
        cases,
        config,
        store,
        caller=caller,
        ahead=ahead.outcomes if ahead is not None else None,
        known=ahead.direct_key if ahead is not None else None,
    )
    if config.mode == "pairwise":
        comparisons = [c.comparison() for c in result.comparisons]
        return Judged(
            comparisons=comparisons,
            exit_code=result.exit_code,
            stopped=result.stopped,
            failures=result.failures,
            total=result.total,
            failed_by=result.failed_by,
        )
    return Judged(
        scores=result.score_rows,
        score_lines=result.score_lines,
        exit_code=result.exit_code,
        stopped=result.stopped,
        failures=result.failures,
        total=result.total,
        failed_by=result.failed_by,
    )
