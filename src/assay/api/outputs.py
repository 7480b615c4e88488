"""The JSON that assay's commands print or write as summaries, as pydantic models.

Every `--json` output is built from (or validated through) these models before it is
printed, so `assay schema NAME` describes exactly what is printed. Unknown keys are
forbidden wherever the shape is fixed; maps keyed by user names (conditions, judges,
dimensions, metrics) are open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.api.schemas import OUTPUT_MODELS, LazyModels
from assay.core.records import Output
from assay.importers.common import Tool
from assay.verdict.checks import JudgeStatus, ReleaseGate, SpendFigures

Number = float | None


# -- assay run --json -----------------------------------------------------------------------


class RunSummary(Output):
    """`assay run --json`: what the run did; with a suite, also the verdict and its checks
    (`release_gate`), the folder of the reports and whether its LLM judges ran (`judge`:
    null when it configures none). `exit_code` is the command's. `spent_usd` (= `spend.total`)
    is what this invocation's calls cost, judges' and scorers' included; `run_spent_usd` (=
    `run_spend.total`) what the run has cost in all its invocations (what `--budget-usd`
    caps)."""

    run_id: str
    total: int
    answered: int
    errored: int
    not_run: int
    calls: int
    cache_hits: int
    spent_usd: float
    run_spent_usd: float
    spend: SpendFigures
    run_spend: SpendFigures
    stopped: str | None
    output: str | None
    store: str
    exit_code: int
    release_gate: ReleaseGate | None = None
    reports: str | None = None
    notes: list[str] = Field(default_factory=list)
    judge: JudgeStatus | None = None


# -- assay judge --json ---------------------------------------------------------------------


class Cascade(Output):
    screen: str
    threshold: float
    full_judge_calls_avoided: int
    screen_calls: int
    calls_saved: int


class JudgeSummary(Output):
    """`assay judge --json`: items judged, per tier, and the cascade's savings."""

    mode: Literal["direct", "pairwise"]
    judges: list[str]
    items: int
    judged: int
    resumed: int
    by_expectations: int = Field(
        description="pairs decided by the case's expectations, without a judge call"
    )
    failed: int
    not_run: int
    skipped_errored_trials: int
    unpaired_trials: int
    calls: int
    cache_hits: int
    spent_usd: float
    stopped: str | None
    tiers: dict[str, int]
    output: str
    store: str
    exit_code: int
    cascade: Cascade | None = None
    krippendorff_alpha: dict[str, Number] | None = None


# -- assay score (summary.json) ---------------------------------------------------------------


# -- assay calibrate --json -----------------------------------------------------------------


class ClassRates(Output):
    """Precision, recall and F1 of one class (the human reference is the truth)."""

    precision: float
    recall: float
    f1: float
    support: int  # items of the class in the human reference


class AverageRates(Output):
    precision: float
    recall: float
    f1: float


class ClassReport(Output):
    """Per class, and averaged: `macro` the mean over classes, `micro` pooled over items."""

    per_class: dict[str, ClassRates]
    macro: AverageRates
    micro: AverageRates


class CalibratedJudge(Output):
    rater: str
    prompt_sha256: str | None
    n: int
    agreement: Number
    kappa: Number
    weighted_kappa: Number
    lin_ccc: Number
    pearson: dict[str, Number] | None
    spearman: dict[str, Number] | None
    kendall: dict[str, Number] | None
    confusion_matrix: dict[str, Any] | None
    classes: ClassReport | None
    tpr: Number
    tpr_ci: list[float] | None
    tnr: Number
    tnr_ci: list[float] | None
    verdict: Literal["PASS", "FAIL", "INSUFFICIENT"]
    reasons: list[str]


class CalibratedDimension(Output):
    """`statistic` names the judges' field their verdicts rest on: `kappa` (categories),
    `weighted_kappa` (quadratic, numbers on the integer `scale` [low, high]) or `lin_ccc`
    (Lin's concordance correlation, continuous numbers; `scale` null)."""

    kind: Literal["binary", "categorical", "numeric"]
    statistic: Literal["kappa", "weighted_kappa", "lin_ccc"]
    scale: list[float] | None
    scale_source: Literal["declared", "observed"] | None = Field(
        default=None,
        description="`declared`: the labels' `scale` (LOW-HIGH); `observed`: the lowest to"
        " highest value seen, when no label declares one",
    )
    safety: bool
    items: int
    items_without_majority: int
    human_alpha: Number
    human_items_with_several_raters: int
    judges: dict[str, CalibratedJudge]


class Calibration(Output):
    """`assay calibrate --json`: per dimension, each judge rater against the humans."""

    passed: bool
    enforced: bool
    gate_failed: bool
    positive: str
    kappa_threshold: float
    safety: dict[str, str]
    dimensions: dict[str, CalibratedDimension]


# -- assay bias --json ----------------------------------------------------------------------


class JudgeBias(Output):
    comparisons: int
    two_order_comparisons: int
    position_consistency: Number
    first_position_wins: int
    second_position_wins: int
    first_position_share: Number
    z: Number
    p: Number
    flagged: bool
    p_prefer_longer: Number
    length_decided_comparisons: int | None = None
    length_preference_z: Number = None
    length_preference_p: Number = None
    length_preference_flagged: bool = False
    scored_trials: int | None = None
    length_score_rho: Number
    length_score_p: Number
    length_flagged: bool


class BiasReport(Output):
    """`assay bias --json`: position and length bias per judge (a panel: each judge and the
    panel pooled). `flagged`: a first- or second-position preference beyond chance (exact
    binomial `p` < 0.05); `length_preference_flagged`: the longer (or shorter) response wins
    decided unequal-length comparisons beyond chance (`length_preference_p` < 0.05);
    `length_flagged`: score rises with length (Spearman ρ > 0.3, p < 0.05)."""

    judges: dict[str, JudgeBias]


# -- assay winrate --json -------------------------------------------------------------------


class ModelWinRate(Output):
    win_rate: Number
    standard_error: Number
    n: int
    n_wins: int
    n_losses: int
    n_draws: int
    avg_length: int | None
    length_controlled_win_rate: Number
    lc_standard_error: Number
    undefined: dict[str, str] = Field(
        default_factory=dict,
        description="why a figure is null: field name → reason (`all 30 comparisons won`)",
    )


class WinRates(Output):
    """`assay winrate --json`: every model against the baseline (percent)."""

    baseline: str
    skipped: int
    models: dict[str, ModelWinRate]


# -- assay rank --json ----------------------------------------------------------------------


class Rating(Output):
    name: str
    strength: float
    ci_low: Number
    ci_high: Number
    games: int
    wins: float
    undefined: dict[str, str] = Field(
        default_factory=dict, description="why a figure is null: field name → reason"
    )


class Ranking(Output):
    """`assay rank --json`: Bradley–Terry strengths, strongest first."""

    games: int
    bootstrap: int
    ratings: list[Rating]


# -- assay history --json -------------------------------------------------------------------


class Drift(Output):
    against: str | None
    ks: float
    p: float


class HistoryRun(Output):
    run_id: str
    rows: int
    mean_score: Number
    checks: int
    rolling_agreement: Number
    drift: Drift | None
    length_score_rho: Number
    length_score_p: Number


class HistoryCalibration(Output):
    dimension: str
    verdict: str
    n: int
    kappa: Number
    created_at: str


class JudgeHistory(Output):
    judge: str
    prompt_sha256: str | None
    runs: list[HistoryRun]
    checks: int
    rolling_agreement: Number
    calibration: list[HistoryCalibration]
    alerts: list[str]


class HistorySettings(Output):
    window: int
    min_checks: int
    tolerance: float
    min_agreement: float
    drift_p: float
    min_drift_rows: int


class History(Output):
    """`assay history --json`: per judge configuration (`source@prompt-hash`)."""

    judges: dict[str, JudgeHistory]
    settings: HistorySettings


# -- assay import --json --------------------------------------------------------------------


class ImportSummary(Output):
    """`assay import --json`: what was read and written. `baseline` is set when a condition
    is named baseline (the gate compares the others with it); `candidate` is the condition
    the written suite's gate decides for; `scale` is the metrics' range the suite declares;
    `complete` is false when the run did not finish in the source tool (`reasons` say why:
    the suite's `[source]`); `source_gate` is the metric carrying the source's own verdict of
    each test that every case must meet (promptfoo's `pass`; null without one or with
    `--no-source-gate`)."""

    tool: Tool
    sources: list[str]
    output: str
    files: list[str]
    cases: int
    trials: int
    errored: int
    scores: int
    conditions: list[str]
    metrics: list[str]
    scale: list[float]
    baseline: str | None
    candidate: str | None
    complete: bool = True
    reasons: list[str] = Field(default_factory=list)
    source_gate: str | None = None
    run_id: str | None = Field(
        default=None, description="the run recorded in the store (None: not recorded)"
    )
    notes: list[str] = Field(default_factory=list)


# -- assay judge-bench --json ---------------------------------------------------------------

Interval = list[float] | None


class SubsetFigures(Output):
    """A judge's accuracy and position consistency on one subset of a set (or all its items)."""

    items: int
    accuracy: Number
    position_consistency: Number


class SubsetMean(Output):
    """The unweighted mean over a set's subsets, as the LLMBar paper reports its judges."""

    accuracy: Number
    position_consistency: Number


class ReferenceJudge(Output):
    """A published judge's figures, from the verdicts its authors released, and the model
    they ran. On a set of subsets (llmbar-adversarial) accuracy and position consistency are
    the subsets' unweighted mean, as published; `subsets` each one's, `pooled` all items'."""

    set: str
    judge: str
    model: str
    items: int
    accuracy: float
    position_consistency: float
    subsets: dict[str, SubsetFigures] | None
    pooled: SubsetFigures | None
    source: str


class BenchSet(Output):
    """One set: accuracy (mean over both orders) and Cohen's κ against the gold labels,
    position and length figures with their tests, 95% intervals, and the references; on a
    set of subsets (llmbar-adversarial) also each subset's figures and their mean."""

    items: int
    decided_by_rule: int
    accuracy: Number
    accuracy_ci: Interval
    verdict_accuracy: Number
    verdict_accuracy_ci: Interval
    kappa: Number
    kappa_ci: Interval
    two_order_comparisons: int
    position_consistency: Number
    position_consistency_ci: Interval
    first_position_wins: int
    second_position_wins: int
    first_position_share: Number
    first_position_share_ci: Interval
    z: Number
    p: Number
    flagged: bool
    position_bias: Number
    p_prefer_longer: Number
    p_prefer_longer_ci: Interval
    length_decided_comparisons: int
    length_preference_z: Number
    length_preference_p: Number
    length_preference_flagged: bool
    subsets: dict[str, SubsetFigures] | None
    subset_mean: SubsetMean | None
    references: list[ReferenceJudge]


class JudgeBench(Output):
    """`assay judge-bench --json`: the judge's figures per set; `gate_failures` lists the
    sets below --min-accuracy or above --max-position-bias (exit 1)."""

    judge: str
    prompt_sha256: str
    sets: dict[str, BenchSet]
    calls: int
    cache_hits: int
    resumed: int
    failed: int
    not_run: int
    spent_usd: float
    stopped: str | None
    gate_failures: list[str]
    output: str | None
    report: str | None
    store: str
    exit_code: int


# Every `--json` output by its `assay schema` name (the table lives in assay.api.schemas, which
# names the models without importing them).
OUTPUTS: Mapping[str, type[BaseModel]] = LazyModels(OUTPUT_MODELS)
