"""The one route to a verdict: trials and score rows → scorers → rows → comparison → gate.

`evaluate(inputs, config)` is what `assay score`, `assay report`, `assay run SUITE.toml` and
the Python API (`assay.evaluate`) all call. How deterministic results feed the gate is told
in `verdict.deterministic`; judge and human Score rows join them trial by trial. Inputs of
one condition are gated on their own (no baseline comparison): blockers, per-case and
corpus thresholds (`verdict.thresholds`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from assay.core.embedded import QUALITY_NOTE
from assay.core.errors import EXIT_GATE_FAILED, EXIT_INCOMPLETE, EXIT_OK, InputError
from assay.core.jsonl import load_records
from assay.core.numbers import plain_number
from assay.core.records import Case, Comparison, ScoreRow, Trial
from assay.core.rubric import DEFAULT_WEIGHTS, Rubric
from assay.core.suite import Threshold, unfinished_source
from assay.engine import RunSettings, run_caller
from assay.engine.calls import Caller
from assay.scorers import Score, Scorer
from assay.scorers.runner import build_scorers, lower_metrics, primary_metrics, run_scorers
from assay.store import DEFAULT_STORE, Store
from assay.verdict import coverage
from assay.verdict.analysis import Analysis, analyse
from assay.verdict.calibrated import calibration_checks
from assay.verdict.checks import Check, Coverage, Sequential, Verdict
from assay.verdict.clusters import cluster_map
from assay.verdict.compare import Delta
from assay.verdict.config import EvalConfig
from assay.verdict.corpus import corpus_checks
from assay.verdict.coverage import coverage_check
from assay.verdict.deterministic import error_checks, merge_rows, scored_trials
from assay.verdict.gate import NO_BASELINE
from assay.verdict.names import check_config_metrics
from assay.verdict.percase import looked_rows, with_blockers
from assay.verdict.rows import (
    BASELINE,
    ScoredTrial,
    implied_weights,
    metric_errors,
)
from assay.verdict.thresholds import scorer_corpus, threshold_checks


@dataclass(slots=True)
class Inputs:
    """What is evaluated: trials (for the scorers), judge/human score rows, comparisons and
    the case catalogue (risk tiers, expectations)."""

    trials: Sequence[Trial] = ()
    scores: Sequence[ScoredTrial] = ()
    comparisons: Sequence[Comparison] = ()
    cases: Mapping[str, Case] | None = None
    planned_trials: int | None = None
    """Trials each case was meant to have (a run's plan); None: the suite's `trials` when it
    sets it, else per case the most it has under any gated condition (`verdict.coverage`)."""
    sequential: Sequential | None = None
    """A sequential run's look (`verdict.looks`): the gate is evaluated at its level, and the
    evidence expected is the cases it looked at (a run stopped early is not incomplete)."""
    judging: str | None = None
    """Why the judges' scores are missing, when their judging did not finish (which judge,
    how many items): the verdict is INCOMPLETE with it as its first reason, and the weights
    may name the metrics the judge would have scored."""


@dataclass(slots=True)
class Evaluation:
    """The verdict and everything it rests on: the analysis (means, paired deltas, gate), the
    deterministic results, and the scorers that made them."""

    analysis: Analysis
    results: list[Score]
    scorers: list[Scorer]
    inputs: Inputs
    config: EvalConfig
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        return self.analysis.gate.verdict

    @property
    def passed(self) -> bool:
        return self.analysis.gate.passed

    @property
    def checks(self) -> list[Check]:
        return list(self.analysis.gate.checks)

    @property
    def comparisons(self) -> dict[str, dict[str, Delta]]:
        """condition → metric → paired delta against baseline, with its interval."""
        return {name: dict(p.intervals) for name, p in self.analysis.paired.items()}

    @property
    def coverage(self) -> Coverage | None:
        """The evidence expected and found (`verdict.coverage`)."""
        return self.analysis.gate.coverage

    @property
    def exit_code(self) -> int:
        """0 when the gate passes, 1 when it fails or is inconclusive, 3 when evidence is
        missing (INCOMPLETE)."""
        if self.verdict == "INCOMPLETE":
            return EXIT_INCOMPLETE
        return EXIT_OK if self.passed else EXIT_GATE_FAILED


def rows_from_scores(scores: Sequence[ScoreRow], rubric: Rubric | None = None) -> list[ScoredTrial]:
    """Score rows as gate rows; with a rubric, metrics off its scale are an input error."""
    checked: list[dict[str, float]] = []
    if rubric is not None:
        problems: list[str] = []
        for s in scores:
            metrics, found = metric_errors(dict(s.model_extra or {}), rubric, require=False)
            checked.append(metrics)  # without a problem, every extra field: as below
            problems.extend(
                f"ERROR: judge score {s.case_id}#{s.trial} {s.condition}: {problem}"
                for problem in found
            )
        if problems:
            raise InputError(problems[:50])
    return [
        ScoredTrial(
            case_id=s.case_id,
            trial=s.trial,
            condition=s.condition,
            metrics=checked[index]
            if checked
            else {
                k: float(v)
                for k, v in (s.model_extra or {}).items()
                if isinstance(plain_number(v), int | float) and not isinstance(v, bool)
            },
            blocker=s.blocker,
            flagged=s.blocker,
            source=s.source,
            notes=s.notes,
            scored=s,  # its evidence text is made if a report shows it
            judge_prompt_sha256=s.judge_prompt_sha256,
            judge_model=s.judge_model,
        )
        for index, s in enumerate(scores)
    ]


def choose_weights(
    configured: Mapping[str, float] | None,
    judged: Sequence[ScoredTrial],
    scorers: Sequence[Scorer],
    rows: Sequence[ScoredTrial],
    standins: Collection[str] = (),
    *,
    unjudged: bool = False,
) -> dict[str, float]:
    """The configured weights (with `unjudged`, judging that did not finish, they may name
    metrics no row carries: the verdict is INCOMPLETE for the judge); else, when there are judge/human scores, the weights their
    metrics imply (`implied_weights`: the default rubric's, or equal weights over a rubric
    judge's criteria); else equal weights over the deterministic scorers' primary metrics
    that were scored, but for `standins` (a disabled judge's lexical stand-ins)."""
    present = {m for r in rows for m in r.metrics}
    if configured:
        absent = [m for m in configured if m not in present]
        if absent and not unjudged:
            raise InputError(
                f"ERROR: suite [scoring.weights]: {', '.join(absent)}: weighted metric(s) absent"
                " from every scored trial"
            )
        return dict(configured)
    if judged:
        return implied_weights([r.metrics for r in judged], "score rows")
    names = [m for s in scorers for m in primary_metrics(s) if m in present and m not in standins]
    return dict.fromkeys(names, 1.0) or dict(DEFAULT_WEIGHTS)


def unweighed_scorer_metrics(
    configured: Mapping[str, float] | None,
    judged: Sequence[ScoredTrial],
    scorers: Sequence[Scorer],
    rows: Sequence[ScoredTrial],
    rubric: Rubric,
    standins: Collection[str] = (),
) -> list[str]:
    """The deterministic scorers' primary metrics left out of the weighted score because the
    weights came from judge/human score rows (none configured), which a report says plainly."""
    if configured or not judged:
        return []
    present = {m for r in rows for m in r.metrics}
    return [
        m
        for s in scorers
        for m in primary_metrics(s)
        if m in present and m not in standins and m not in rubric.weights
    ]


def pick_candidate(configured: str, conditions: Sequence[str]) -> str:
    """The configured candidate when present; else the only non-baseline condition; else the
    single condition (gated on blockers and thresholds alone)."""
    if configured in conditions:
        return configured
    others = [c for c in conditions if c != BASELINE]
    if len(others) == 1:
        return others[0]
    if len(conditions) == 1:
        return conditions[0]
    raise InputError(
        f"ERROR: suite [gate]: candidate {configured!r} is not a condition"
        f" (conditions: {', '.join(conditions)})"
    )


class Document(BaseModel):
    """A knowledge-base entry citations may name."""

    id: str = Field(min_length=1)
    text: str = ""


def load_documents(path: Path) -> dict[str, str]:
    """The suite's knowledge base: document id -> text (file:line errors on bad input)."""
    return {doc.id: doc.text for _, doc in load_records(path, Document)}


def made_by_embedded_model(trial: Trial) -> bool:
    """Whether the embedded llama.cpp model wrote this answer (directly or inside an agent)."""
    inner = (trial.state.model_extra or {}).get("agent_model") if trial.state else None
    return trial.runner.startswith("llamacpp:") or str(inner or "").startswith("llamacpp:")


def evaluate(
    inputs: Inputs,
    config: EvalConfig,
    *,
    store: Path | None = None,
    caller: Caller | None = None,
) -> Evaluation:
    """Run the deterministic scorers, merge their rows with judge/human rows, compare each
    condition with baseline and gate the candidate.

    `store` is where judge calibrations are read when the gate has `require_calibrated_judge`;
    `caller` makes the model calls of scorers that call models (judge-backed grounding): the
    run's, so they are cached in its store and metered by its budget.
    """
    from assay.scorers.judge.config import suite_judge

    if inputs.sequential is not None:  # the look's level: every interval and bound at it
        gate_at = config.gate.model_copy(update={"level": inputs.sequential.level})
        config = dataclasses.replace(config, gate=gate_at)
    scorers = build_scorers(config.scorers, *suite_judge(config.suite))
    check_config_metrics(config, scorers, {m for row in inputs.scores for m in row.metrics})
    if scorers and inputs.trials and inputs.cases is None:
        raise InputError("ERROR: --cases: the deterministic scorers need the case catalogue")
    documents = load_documents(config.knowledge_base) if config.knowledge_base else None
    cases = dict(inputs.cases) if inputs.cases is not None else None
    results = _score(scorers, cases or {}, inputs.trials, documents, config, store, caller)
    deterministic = scored_trials(results, scorers, inputs.trials) if scorers else []
    judged = list(inputs.scores)
    rows = merge_rows(judged, deterministic)
    failed = [t for t in inputs.trials if t.error is not None]
    judge_only = inputs.judging is not None  # the judge scored nothing: it is blamed below
    if not rows and not failed and not judge_only and not unfinished_source(config.suite):
        raise InputError("ERROR: nothing to score: no score rows and no answered trials to check")
    unscored = (
        _nothing_scored(failed) if not rows and not judge_only else None
    )  # every report says so
    standins = config.judge.standins if config.judge is not None else ()
    rubric = Rubric.from_weights(
        choose_weights(
            config.weights, judged, scorers, rows, standins, unjudged=inputs.judging is not None
        ),
        config.scale,
        lower=lower_metrics(scorers),
    )
    notes = []
    unweighed = unweighed_scorer_metrics(config.weights, judged, scorers, rows, rubric, standins)
    if unweighed:
        notes.append(
            "the weighted score weighs the judge's or reviewers' score rows only"
            f" ({', '.join(rubric.weights)});"
            f" the deterministic scorers' {', '.join(unweighed)} are reported and gate through"
            " their thresholds but are not in it: name them in [scoring] weights (or --weights)"
            " to weigh them"
        )
    errored = sum(1 for t in inputs.trials if t.error is not None)
    if errored:
        notes.append(f"{errored} errored trial(s) were not scored")
    if any(made_by_embedded_model(t) for t in inputs.trials):
        notes.append(f"answers were {QUALITY_NOTE}")
    conditions = sorted({r.condition for r in rows} | {t.condition for t in inputs.trials})
    # no condition at all: an imported run that did not finish left nothing (INCOMPLETE)
    candidate = pick_candidate(config.candidate, conditions) if conditions else config.candidate
    coverage = measure_coverage(inputs, config, candidate, conditions, judged, rows)
    if coverage.plans is not None and len(set(coverage.plans.values())) > 1:
        low, high = min(coverage.plans.values()), max(coverage.plans.values())
        notes.append(
            f"trials per case vary ({low}-{high}) and no plan says how many were meant: each"
            " case is expected to have, under every gated condition, the trials it has under"
            " any (a trial one condition has and another lacks is missing); give the suite's"
            " `trials` to check a plan"
        )
    gap = coverage_check(coverage.coverage)
    calibrations = _calibration_store(config, store)
    try:
        calibration = calibration_checks(config.gate, judged, calibrations)
    finally:
        if calibrations is not None:
            calibrations.close()
    # A disabled judge's thresholds are its skipped checks, never checked on what stands in
    # for its figures (grounding's lexical check): whatever added them (a flag, a scorer's
    # `threshold` option).
    judge = config.judge if config.judge is not None and config.judge.disabled else None
    skipped = judge.skipped if judge is not None else []
    skipped_corpus = judge.skipped_corpus if judge is not None else []
    corpus = {**scorer_corpus(scorers), **config.corpus}
    # A sequential look that checked cases beyond those it looked at (the candidate's trials
    # for the per-case checks, `verdict.percase`): its comparison and corpus bounds rest on
    # the looked cases, its per-case checks on every case checked.
    stop = inputs.sequential
    looked = set(stop.case_ids) if stop is not None and stop.checked_ids else None
    compared = rows if looked is None else looked_rows(rows, looked)
    in_look = results if looked is None else [r for r in results if r.case_id in looked]
    analysis = analyse(
        compared,
        rubric,
        config.gate,
        candidate=candidate,
        cases=cases,
        failures=[
            *(
                [Check(name="judge", status="incomplete", reason=inputs.judging)]
                if inputs.judging is not None
                else []
            ),
            *([unscored] if unscored is not None else []),
            *([gap] if gap is not None else []),
            *error_checks(results, scorers),
            *threshold_checks(results, _checked(config.thresholds, skipped), candidate, rows),
            *corpus_checks(
                in_look,
                _checked(corpus, skipped_corpus),
                candidate,
                compared,
                decide=config.corpus_decide,
                level=config.gate.level,
                scale=config.scale,
                interim=inputs.sequential is not None
                and inputs.sequential.look < inputs.sequential.looks,
                clusters=cluster_map(cases.values()) if cases is not None else None,
            ),
            *calibration,
            *(config.judge.checks() if config.judge is not None else []),
        ],
    )
    if looked is not None:
        with_blockers(analysis.gate.checks, rows, candidate)
    analysis.gate.coverage = coverage.coverage
    gate = analysis.gate
    if inputs.judging is not None and not gate.compared and BASELINE in conditions:
        # a comparison whose judge scored nothing: not a single system gated on its own
        gate.compared = True
        gate.notes = [
            "no comparison with baseline could be made: the judge's scores are missing"
            if note == NO_BASELINE
            else note
            for note in gate.notes
        ]
    analysis.gate.sequential = inputs.sequential
    return Evaluation(
        analysis=analysis,
        results=results,
        scorers=scorers,
        inputs=inputs,
        config=config,
        notes=notes,
    )


@dataclass(slots=True)
class Measured:
    """The coverage, and without a plan the trials each case was expected to have."""

    coverage: Coverage
    plans: dict[str, int] | None


def _nothing_scored(failed: Sequence[Trial]) -> Check:
    """The check that makes a verdict with no score row at all INCOMPLETE: every trial
    errored, or an imported run that did not finish left none (its reasons follow in the
    coverage check), whatever `[gate] max_errored` tolerates (nothing was decided)."""
    if not failed:
        reason = "nothing to score: no score row (the imported run did not finish)"
    else:
        first = failed[0]
        reason = (
            f"nothing to score: all {len(failed)} trial(s) errored (first:"
            f" {first.case_id}#{first.trial} {first.condition}: {first.error})"
        )
    return Check(name="scored", status="incomplete", reason=reason)


def measure_coverage(
    inputs: Inputs,
    config: EvalConfig,
    candidate: str,
    conditions: Sequence[str],
    judged: Sequence[ScoredTrial],
    rows: Sequence[ScoredTrial],
) -> Measured:
    """The evidence the gate should have (every case × the candidate, and baseline when it is
    compared, × the planned trials) against what it has. Scored means a judge/human row when
    the judge scores (score rows given, or an enabled direct judge), else any gate row."""
    gated = (
        [BASELINE, candidate] if candidate != BASELINE and BASELINE in conditions else [candidate]
    )
    suite = config.suite
    judge_scores = (
        suite is not None
        and config.judge is not None
        and not config.judge.disabled
        and bool(suite.judge.judges)
        and suite.judge.mode == "direct"
    )
    by_judge = bool(judged) or judge_scores
    planned = inputs.planned_trials
    if planned is None and suite is not None and "trials" in suite.model_fields_set:
        planned = suite.trials
    evidence = coverage.Evidence(
        trials=inputs.trials,
        scored=coverage.keys(
            (r.case_id, r.trial, r.condition) for r in (judged if by_judge else rows)
        ),
        judged=by_judge,
    )
    found = coverage.measure(
        evidence,
        gated,
        cases=inputs.cases,
        trials=planned,
        looked=inputs.sequential.case_ids if inputs.sequential is not None else None,
        alone=inputs.sequential.checked_ids if inputs.sequential is not None else (),
        gate=config.gate,
        source=suite.source if suite is not None else None,
    )
    plans = coverage.case_plans(evidence, gated) if planned is None else None
    return Measured(found, plans)


def _checked(bounds: Mapping[str, Threshold], skipped: Sequence[str]) -> dict[str, Threshold]:
    """The bounds on metrics that are not skipped."""
    return {m: bound for m, bound in bounds.items() if m not in skipped}


def _calibration_store(config: EvalConfig, path: Path | None) -> Store | None:
    """The store to read judge calibrations from when the gate requires calibrated judges
    (None otherwise, or when there is no store: then no judge counts as calibrated)."""
    if not config.gate.require_calibrated_judge or path is None or not path.exists():
        return None
    return Store(path)


def _score(
    scorers: Sequence[Scorer],
    cases: Mapping[str, Case],
    trials: Sequence[Trial],
    documents: Mapping[str, str] | None,
    config: EvalConfig,
    store: Path | None,
    caller: Caller | None,
) -> list[Score]:
    """Run the scorers; those that call models get `caller`, or one over `store` capped by the
    suite's [run] budget when none is given (e.g. `assay report` with judge-backed grounding)."""
    if not scorers:
        return []
    if caller is not None or not any(s.models for s in scorers):
        return run_scorers(scorers, cases, trials, documents, caller=caller)
    settings = RunSettings()
    if config.suite is not None:
        section = config.suite.run
        settings = RunSettings(
            concurrency=section.concurrency, retries=section.retries, budget_usd=section.budget_usd
        )
    handle = Store(store or DEFAULT_STORE)
    try:
        return run_scorers(
            scorers,
            cases,
            trials,
            documents,
            caller=run_caller(handle, None, settings, role="scorers"),
        )
    finally:
        handle.close()
