"""Score → gate → report, shared by `assay report` and the `assay run SUITE.toml` chain.

When the suite names judges (`[judge] judges = [...]`), `judge_trials` runs them over the
answered trials: direct Score rows join the deterministic results trial by trial (see
`scoring.deterministic` for how those feed the gate); pairwise Comparisons go to the report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from assay.core.errors import EXIT_GATE_FAILED, EXIT_OK, InputError
from assay.core.jsonl import atomic_writer, load_records, write_jsonl
from assay.core.records import Case, Comparison, ScoreRow, Trial
from assay.core.rubric import DEFAULT_WEIGHTS, Rubric
from assay.core.suite import GateSection, Suite, Threshold
from assay.evaluate.analysis import Analysis, analyse
from assay.evaluate.deterministic import merge_rows, scored_trials, threshold_checks
from assay.evaluate.gate import calibration_checks
from assay.evaluate.rows import BASELINE, ScoredTrial, evidence_text, metric_errors
from assay.models.llamacpp import QUALITY_NOTE
from assay.reports.build import DRILLDOWN, build_report
from assay.reports.model import Report
from assay.reports.render import write_reports
from assay.scorers import Score as TrialResult
from assay.scorers import Scorer
from assay.scorers.runner import build_scorers, primary_metrics, run_scorers
from assay.store import Store

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult


@dataclass(slots=True)
class Judged:
    """What the suite's [judge] section produced for the answered trials."""

    scores: list[ScoreRow] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    exit_code: int = EXIT_OK


def judge_trials(
    suite: Suite, cases: Sequence[Case], trials: Sequence[Trial], store: Store
) -> Judged:
    """Run the suite's judges (none configured: nothing) over the answered trials."""
    if not suite.judge.judges:
        return Judged()
    from assay.scorers.judge import config_from_suite, run_judging

    config = config_from_suite(suite)
    answered = [t for t in trials if t.error is None]
    result = run_judging(answered, cases, config, store)
    if config.mode == "pairwise":
        comparisons = [Comparison.model_validate(r) for r in result.rows]
        return Judged(comparisons=comparisons, exit_code=result.exit_code)
    scores = [ScoreRow.model_validate(r) for r in result.rows]
    return Judged(scores=scores, exit_code=result.exit_code)


def rows_from_scores(scores: Sequence[ScoreRow], rubric: Rubric | None = None) -> list[ScoredTrial]:
    """Score rows as gate rows; with a rubric, metrics off its scale are an input error."""
    if rubric is not None:
        problems = [
            f"ERROR: judge score {s.case_id}#{s.trial} {s.condition}: {problem}"
            for s in scores
            for problem in metric_errors(dict(s.model_extra or {}), rubric, require=False)[1]
        ]
        if problems:
            raise InputError(problems[:50])
    return [
        ScoredTrial(
            case_id=s.case_id,
            trial=s.trial,
            condition=s.condition,
            metrics={
                k: float(v)
                for k, v in (s.model_extra or {}).items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            },
            blocker=s.blocker,
            source=s.source,
            notes=s.notes,
            evidence=evidence_text(s),
            judge_prompt_sha256=s.judge_prompt_sha256,
            judge_model=s.judge_model,
        )
        for s in scores
    ]


def choose_weights(
    configured: Mapping[str, float] | None,
    judged: Sequence[ScoredTrial],
    scorers: Sequence[Scorer],
    rows: Sequence[ScoredTrial],
) -> dict[str, float]:
    """The suite's weights; else the rubric's when there are judge/human scores; else equal
    weights over the deterministic scorers' primary metrics that were scored."""
    if configured:
        present = {m for r in rows for m in r.metrics}
        absent = [m for m in configured if m not in present]
        if absent:
            raise InputError(
                f"ERROR: suite [scoring.weights]: {', '.join(absent)}: weighted metric(s) absent"
                " from every scored trial"
            )
        return dict(configured)
    if judged:
        return dict(DEFAULT_WEIGHTS)
    present = {m for r in rows for m in r.metrics}
    names = [m for s in scorers for m in primary_metrics(s) if m in present]
    return dict.fromkeys(names, 1.0) or dict(DEFAULT_WEIGHTS)


@dataclass(slots=True)
class Evaluation:
    analysis: Analysis
    results: list[TrialResult]
    report: Report
    notes: list[str] = field(default_factory=list)


def evaluate(
    *,
    cases: Mapping[str, Case] | None,
    trials: Sequence[Trial],
    judged: Sequence[ScoredTrial],
    scorers: Sequence[Scorer],
    thresholds: Mapping[str, Threshold],
    config: GateSection,
    candidate: str,
    weights: Mapping[str, float] | None = None,
    scale: tuple[float, float] = (1.0, 5.0),
    documents: Mapping[str, str] | None = None,
    comparisons: Sequence[Comparison] = (),
    title: str = "assay report",
    worst: int = 10,
    calibration: Mapping[str, DimensionResult] | None = None,
    cases_shown: int = DRILLDOWN,
    store: Store | None = None,
) -> Evaluation:
    """Run the deterministic scorers, merge with judged rows, gate, and build the report.

    `store` is where judge calibrations are read when the gate has `require_calibrated_judge`.
    """
    results = run_scorers(scorers, cases or {}, trials, documents) if scorers else []
    deterministic = scored_trials(results, scorers, trials) if scorers else []
    rows = merge_rows(judged, deterministic)
    if not rows:
        raise InputError("ERROR: nothing to score: no score rows and no answered trials to check")
    rubric = Rubric(weights=choose_weights(weights, judged, scorers, rows), scale=scale)
    notes = []
    errored = sum(1 for t in trials if t.error is not None)
    if errored:
        notes.append(f"{errored} errored trial(s) were not scored")
    if any(made_by_embedded_model(t) for t in trials):
        notes.append(f"answers were {QUALITY_NOTE}")
    analysis = analyse(
        rows,
        rubric,
        config,
        candidate=candidate,
        cases=dict(cases) if cases is not None else None,
        failures=[
            *threshold_checks(results, thresholds, candidate),
            *calibration_checks(config, judged, store),
        ],
    )
    report = build_report(
        analysis,
        title=title,
        trials=trials,
        results=results,
        scorers=scorers,
        thresholds=thresholds,
        comparisons=comparisons,
        worst=worst,
        notes=notes,
        calibration=calibration,
        cases_shown=cases_shown,
    )
    return Evaluation(analysis=analysis, results=results, report=report, notes=notes)


def made_by_embedded_model(trial: Trial) -> bool:
    """Whether the embedded llama.cpp model wrote this answer (directly or inside an agent)."""
    inner = (trial.state.model_extra or {}).get("agent_model") if trial.state else None
    return trial.runner.startswith("llamacpp:") or str(inner or "").startswith("llamacpp:")


def pick_candidate(configured: str, conditions: Sequence[str]) -> str:
    """The suite's candidate when present; else the only non-baseline condition; else the
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


def output_dir(suite: Suite) -> Path:
    """The suite's `output` (relative to the suite file), default assay-out/<suite name>."""
    return suite.path(suite.output) if suite.output else Path("assay-out") / suite.name


def run_chain(
    suite: Suite, cases: Sequence[Case], trials: Sequence[Trial], store: Store
) -> tuple[Evaluation, Path, int]:
    """After `assay run SUITE.toml`: scorers → judges → gate → reports into the output folder.

    Returns the evaluation, the folder and the judging exit code (3 when items failed)."""
    out = output_dir(suite)
    scorers = build_scorers(suite.scoring.scorers)
    judged = judge_trials(suite, cases, trials, store)
    judged_scores = judged.scores
    conditions = [c.name for c in suite.conditions]
    evaluation = evaluate(
        cases={c.id: c for c in cases},
        trials=trials,
        judged=rows_from_scores(
            judged_scores,
            Rubric(scale=(suite.scoring.scale[0], suite.scoring.scale[1]))
            if judged_scores
            else None,
        ),
        scorers=scorers,
        thresholds=suite.scoring.thresholds,
        config=suite.gate,
        candidate=pick_candidate(suite.gate.candidate, conditions),
        weights=suite.scoring.weights,
        scale=(suite.scoring.scale[0], suite.scoring.scale[1]),
        documents=load_documents(suite.path(kb)) if (kb := suite.scoring.knowledge_base) else None,
        comparisons=judged.comparisons,
        title=suite.report.title or suite.name,
        worst=suite.report.worst,
        cases_shown=suite.report.drilldown,
        store=store,
    )
    write_jsonl(out / "trials.jsonl", [t.model_dump(mode="json") for t in trials])
    write_jsonl(out / "deterministic.jsonl", [r.as_json() for r in evaluation.results])
    if judged_scores:
        write_jsonl(out / "scores.jsonl", judged_scores)
    if judged.comparisons:
        write_jsonl(out / "comparisons.jsonl", judged.comparisons)
    write_summary(out / "summary.json", evaluation.analysis.as_json())
    write_reports(evaluation.report, out, suite.report.formats)
    return evaluation, out, judged.exit_code


def calibration_store(config: GateSection, path: Path) -> Store | None:
    """The store to read judge calibrations from when the gate requires calibrated judges
    (None otherwise, or when there is no store: then no judge counts as calibrated)."""
    if not config.require_calibrated_judge or not path.exists():
        return None
    return Store(path)


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    with atomic_writer(path) as handle:
        handle.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def gate_exit_code(evaluation: Evaluation) -> int:
    return EXIT_OK if evaluation.analysis.gate.passed else EXIT_GATE_FAILED
