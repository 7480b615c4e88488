"""`assay.evaluate`: trials, score rows or a whole suite → a typed verdict and its report.

The one function behind `assay score`, `assay report` and `assay run SUITE.toml`: inputs are
loaded (files, a run in the store, or objects), the suite's judges run when the suite is
run, and `assay.verdict.pipeline.evaluate` gives the verdict. The report model is built
from the same evaluation when it is asked for.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.api.inputs import load_trials
from assay.api.results import Result
from assay.api.run_inputs import with_corpus
from assay.core.cases import load_cases
from assay.core.errors import EXIT_INCOMPLETE, Incomplete, InputError
from assay.core.jsonl import load_records
from assay.core.records import Case, Comparison, Label, ScoreRow, Trial
from assay.core.rubric import Rubric
from assay.core.suite import Suite, Threshold, load_suite, load_suite_cases, unfinished_source
from assay.core.writable import Output, check_outputs
from assay.store import DEFAULT_STORE, Store
from assay.store.spend import Spend, run_spend
from assay.verdict.analysis import join_cases
from assay.verdict.config import EvalConfig, resolve
from assay.verdict.names import check_config_metrics
from assay.verdict.pipeline import Inputs, rows_from_scores
from assay.verdict.pipeline import evaluate as evaluate_inputs
from assay.verdict.rows import BASELINE, ScoredTrial, check_pairing, load_scores

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult

Source = str | Path


def evaluate(
    suite: Source | Suite | None = None,
    *,
    trials: Source | Sequence[Trial] | None = None,
    scores: Source | Sequence[ScoreRow] | None = None,
    comparisons: Source | Sequence[Comparison] | None = None,
    cases: Source | Sequence[Case] | None = None,
    labels: Source | None = None,
    run: str | None = None,
    store: Source = DEFAULT_STORE,
    gate: str | None = None,
    candidate: str | None = None,
    weights: str | dict[str, float] | None = None,
    scorers: Sequence[str] | None = None,
    drilldown: int | None = None,
    formats: str | Sequence[Any] | None = None,
    out: Source | None = None,
    corpus: Sequence[str] | Mapping[str, Threshold] | None = None,
    sequential: bool | None = None,
    params: Mapping[str, Any] | None = None,
) -> Result:
    """Evaluate and gate.

    - `evaluate("suite.toml")` runs the suite (cached and resumable, as `assay run` does),
      judges, scores, gates and writes its reports: the same verdict as `assay run`.
    - `evaluate(scores=..., trials=..., cases=..., suite=...)` evaluates stored outputs
      (files or objects; `run` reads a run's trials from `store`), as `assay score` and
      `assay report` do; with `out` the reports are written there.
    - One condition (a suite with one `[[conditions]]`, score rows or trials of one
      condition) is gated on its own: no baseline comparison, blockers and thresholds.
    - `corpus` adds corpus thresholds (`["hallucination<=0.2"]` or `{"hallucination":
      Threshold(max=0.2)}`), replacing the suite's `[scoring.corpus]` bound of each metric.
    - `sequential` (a suite's run; default its `[gate] sequential`) runs the cases in looks
      and stops once the verdict is settled (docs/sequential.md).
    - `params` sets condition parameters for every condition of a suite that is run (as
      `assay run --param KEY=VALUE`: `params={"temperature": 0.2}`).
    Returns a `Result` (`verdict`, `passed`, `exit_code`, `checks`, `comparisons`, `report`).
    """
    loaded = load_suite(Path(suite)) if isinstance(suite, str | Path) else suite
    store_path = Path(store)
    out_path = Path(out) if out is not None else None
    if out_path is not None:
        _check_out(out_path, loaded, store_path, trials, scores, comparisons, cases, labels)
    if loaded is not None and trials is None and scores is None and run is None:
        if corpus is not None:
            loaded = with_corpus(loaded, corpus)
        return _run_suite(loaded, store_path, out_path, sequential, params)
    if sequential:
        raise InputError("ERROR: sequential: only a suite's run can stop early (give no trials)")
    if params is not None:
        raise InputError(
            "ERROR: assay.evaluate: params: condition parameters apply when a suite is run"
            " (give the suite alone, without trials, scores or run)"
        )
    settings = functools.partial(
        resolve,
        gate=gate,
        candidate=candidate,
        weights=weights,
        scorers=scorers,
        cases=Path(cases) if isinstance(cases, str | Path) else None,
        drilldown=drilldown,
        formats=formats,
        output=out_path,
        corpus=corpus,
    )
    config = settings(loaded)
    trial_rows = load_trials(trials, run, store_path)
    judged = _score_rows(scores, config, trial_rows)
    notes: list[str] = []
    if loaded is not None:
        config, notes = _judge(loaded, config, settings, {m for r in judged for m in r.metrics})
    if not judged and not (config.scorers and trial_rows) and not _unscored_why(trial_rows, config):
        raise InputError(
            "ERROR: nothing to report: give --scores, or trials (--trials/--run) with scorers"
            " (--scorer/--suite)"
        )
    _check_comparison(judged, trial_rows, config, loaded, scores)
    catalogue = _cases(cases, config)
    if catalogue is not None and judged and isinstance(scores, str | Path):
        join_cases(judged, catalogue, scores)
    result = Result(
        evaluation=evaluate_inputs(
            Inputs(
                trials=trial_rows,
                scores=judged,
                comparisons=_comparisons(comparisons),
                cases={c.id: c for c in catalogue} if catalogue is not None else None,
            ),
            config,
            store=store_path,
        ),
        calibration=calibrate_labels(Path(labels)) if labels is not None else None,
        output=out_path,
        run_spend=_stored_spend(run, store_path),
    )
    result.evaluation.notes.extend(notes)
    if out_path is not None:
        result.write_reports(out_path)
    return result


def _check_comparison(
    judged: Sequence[ScoredTrial],
    trials: Sequence[Trial],
    config: EvalConfig,
    suite: Suite | None,
    scores: object,
) -> None:
    """Score rows whose only condition (with the trials') is the gate's candidate are a
    comparison missing its baseline, not a single system: an input error naming them, unless the suite gates a
    single system (one `[[conditions]]`, the candidate)."""
    conditions = {r.condition for r in judged} | {t.condition for t in trials}
    if not judged or conditions != {config.candidate}:
        return  # trials alone of the candidate: its deterministic checks, gated on their own
    if suite is not None and [c.name for c in suite.conditions] == [config.candidate]:
        return
    where = scores if isinstance(scores, str | Path) else "scores"
    raise InputError(
        f"ERROR: {where}: condition: every row is {config.candidate!r}, the gate's candidate,"
        f" and none is {BASELINE!r}: a comparison without its baseline. Add the baseline's"
        " rows, or gate a single system: name its condition otherwise (rows of one other"
        " condition are gated on their own) or use a suite whose one [[conditions]] is it"
    )


def _check_out(out: Path, suite: Suite | None, store: Path, *given: object) -> None:
    """Refuse, before any work, a report folder that cannot be written or whose reports
    would overwrite an input (`assay.core.writable`); `given`: trials, scores, comparisons,
    cases and labels as passed (files or objects)."""
    from assay.reports.files import REPORT_FILES

    names = ("trials", "scores", "comparisons", "cases", "labels")
    inputs: list[tuple[str, Path | None]] = [
        (f"the {name} (--{name})", Path(value) if isinstance(value, str | Path) else None)
        for name, value in zip(names, given, strict=True)
    ]
    inputs.append(("the store (--store)", store))
    if suite is not None:
        inputs.extend(suite.inputs())
    files = tuple(REPORT_FILES.values())
    check_outputs([Output("--out", out, folder=True, files=files)], inputs)


def _stored_spend(run: str | None, store: Path) -> Spend | None:
    """What a stored run has cost in all, by role (its report shows it, as the run's did)."""
    if run is None:
        return None
    handle = Store(store)
    try:
        return run_spend(handle, run)
    finally:
        handle.close()


def _judge(
    suite: Suite,
    config: EvalConfig,
    settings: Callable[[Suite | None], EvalConfig],
    carried: set[str],
) -> tuple[EvalConfig, list[str]]:
    """The config with the suite's judge status: when a judge's key is not set, its
    model-backed scorers (the grounding judge) are evaluated without it, as `assay run`
    does (`assay.api.keys`); score rows judged earlier still count. Metric names are
    checked on the suite as written first, so a typo is never taken for a skipped name."""
    from assay.api.keys import judge_status, without_judge
    from assay.scorers.judge.config import suite_judge
    from assay.scorers.runner import build_scorers

    # The corpus bounds as given (`--corpus` too), so those the judge alone could meet are
    # listed as skipped.
    judge = judge_status(with_corpus(suite, config.corpus), carried=carried)
    if judge is None:
        return config, []
    if not judge.disabled:
        return dataclasses.replace(config, judge=judge), []
    check_config_metrics(config, build_scorers(config.scorers, *suite_judge(suite)), carried)
    reduced, notes = without_judge(suite, judge, carried)
    return dataclasses.replace(settings(reduced), judge=judge), notes


def calibrate_labels(path: Path) -> dict[str, DimensionResult]:
    """`assay calibrate`'s agreement figures on the labels (default thresholds), for the
    report's confusion matrices."""
    from assay.measure.agreement import Thresholds, calibrate

    records = load_records(path, Label)
    if not records:
        raise InputError(f"ERROR: {path}: no labels in the file")
    return calibrate(path, records, Thresholds())


def _run_suite(
    suite: Suite,
    store: Path,
    out: Path | None,
    sequential: bool | None,
    params: Mapping[str, Any] | None,
) -> Result:
    from assay.api.running import run

    outcome = run(suite, store=store, out=out, sequential=sequential, params=params)
    if outcome.evaluation is None:
        messages = outcome.notes or ["ERROR: the suite's run did not finish"]
        if outcome.exit_code == EXIT_INCOMPLETE:
            raise Incomplete([*messages, "ERROR: run the same command again to resume"])
        raise InputError(messages)
    outcome.evaluation.run = outcome.run
    return outcome.evaluation


def _unscored_why(trials: Sequence[Trial], config: EvalConfig) -> bool:
    """Whether no score row at all is a verdict (INCOMPLETE, with every report) rather than
    bad input: errored trials, or an imported run that did not finish, tell why."""
    return any(t.error is not None for t in trials) or unfinished_source(config.suite)


def _score_rows(
    scores: Source | Sequence[ScoreRow] | None, config: EvalConfig, trials: Sequence[Trial]
) -> list[ScoredTrial]:
    """Judge/human score rows, validated on the rubric and paired with baseline (rows of
    one condition are gated on their own: there is nothing to pair). With the trial records
    given, the coverage check pairs them instead: a key without a row (an errored trial,
    which has none by design, or one never run) is a gap of the verdict, not an input error."""
    if scores is None:
        return []
    rubric = Rubric.from_weights(config.weights, config.scale)
    if isinstance(scores, str | Path):
        rows = load_scores(
            Path(scores),
            rubric,
            infer_weights=config.weights is None,
            check_names=lambda carried: check_config_metrics(config, carried=carried),
            allow_empty=_unscored_why(trials, config),  # INCOMPLETE, not exit 2
        )
        where: object = scores
    else:
        rows = rows_from_scores(list(scores), rubric)
        where = "scores"
    if len({r.condition for r in rows}) > 1 and not trials:
        check_pairing(rows, [BASELINE, config.candidate], where)
    return rows


def _cases(cases: Source | Sequence[Case] | None, config: EvalConfig) -> list[Case] | None:
    if cases is not None and not isinstance(cases, str | Path):
        return list(cases)
    if config.cases is None:
        return None
    if config.suite is not None:
        return list(load_suite_cases(config.suite, config.cases))  # a pinned set is checked
    return load_cases(config.cases)


def _comparisons(comparisons: Source | Sequence[Comparison] | None) -> list[Comparison]:
    if comparisons is None:
        return []
    if isinstance(comparisons, str | Path):
        return [c for _, c in load_records(Path(comparisons), Comparison)]
    return list(comparisons)
