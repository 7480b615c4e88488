"""The report's data model: every renderer (Markdown, JSON, JUnit, HTML) reads this.

`assay schema report` prints its JSON Schema; `report.json` is exactly `Report` dumped.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from assay.verdict.checks import (
    Check,
    Coverage,
    JudgeStatus,
    Sequential,
    SpendFigures,
    Verdict,
)

REPORT_VERSION = 1


class ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConditionRow(ReportModel):
    """One condition's means."""

    name: str
    rows: int
    means: dict[str, float | None]
    weighted_score: float | None
    blocking_findings: int


class MetricDelta(ReportModel):
    """A paired delta (condition − baseline) with its bootstrap interval."""

    metric: str
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    cases: int


class ConditionComparison(ReportModel):
    condition: str
    deltas: list[MetricDelta]


class Regression(ReportModel):
    """A case where the candidate's weighted score fell, with each metric's delta."""

    case_id: str
    category: str | None
    risk: str | None
    delta: float
    metrics: dict[str, float | None]
    steps: dict[str, list[str]] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="per condition, the steps of its first trial of the case that recorded"
        " a trajectory, one line each (core/trajectory_text.py)",
    )


class Blocker(ReportModel):
    case_id: str
    trial: int
    condition: str
    source: str | None
    notes: str | None
    findings: list[str] = Field(default_factory=list)


class GroupRow(ReportModel):
    """Weighted-score means of baseline and candidate over one risk tier or category."""

    group: str
    cases: int
    baseline: float | None
    candidate: float | None
    delta: float | None


class CaseCheck(ReportModel):
    """One case × check outcome (a JUnit testcase). `errored`: the case has no scored answer
    (errored, not run or not scored: the `coverage` check; a JUnit `<error>`)."""

    case_id: str
    check: str
    passed: bool
    message: str
    errored: bool = Field(default=False, exclude_if=lambda value: not value)


class ScorerSummary(ReportModel):
    """A scorer's corpus figures under one condition."""

    condition: str
    scorer: str
    metrics: dict[str, float]
    method: str | None = Field(
        default=None,
        description="how a grounding scorer's figures were made: `lexical` (word overlap) or"
        " `judge:<model>`; several `, `-joined; absent for the other scorers",
    )

    @model_serializer(mode="wrap")
    def _method_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("method") is None:
            data.pop("method", None)
        return data


class TrialCounts(ReportModel):
    condition: str
    trials: int
    errored: int


class PairwiseRow(ReportModel):
    """Pairwise verdicts between two conditions (from comparisons.jsonl)."""

    a: str
    b: str
    comparisons: int
    wins_a: int
    wins_b: int
    ties: int
    win_rate_b: float | None
    """b's share of the comparisons, each scored as `assay winrate` scores it: its
    `preference` (a panel's share of the votes) when it has one, else its verdict, ties half."""
    inconsistent: int


class JudgeProvenance(ReportModel):
    """Which judge configuration produced rows of the report: a change of judge model or
    prompt shows here as a new entry."""

    source: Literal["scores", "comparisons"]
    judge: str = Field(description="the judge model(s), `+`-joined for a panel")
    prompt_sha256: str | None = Field(description="SHA-256 of the judge prompt template")
    rows: int


class WinTieLoss(ReportModel):
    """Cases where a condition beat, tied or lost to baseline on one metric (case means)."""

    condition: str
    metric: str
    wins: int
    ties: int
    losses: int


class LengthSeries(ReportModel):
    """Response length (characters) against the trial's weighted score, for one condition.

    `points` are [length, score] pairs, at most a fixed number, evenly sampled when there
    are more; `rho` is Spearman's correlation over all `trials`."""

    condition: str
    trials: int
    rho: float | None
    points: list[tuple[int, float]]


class CalibrationMatrix(ReportModel):
    """One judge against the human reference on one labelled dimension (`assay calibrate`)."""

    dimension: str
    judge: str
    kind: str
    n: int
    kappa: float | None
    weighted_kappa: float | None
    verdict: str
    reasons: list[str]
    labels: list[str]
    matrix: list[list[int]] = Field(description="rows: human reference; columns: judge")


class TrialView(ReportModel):
    """One condition's answer to one trial of a case, for the drill-down."""

    condition: str
    response: str | None = Field(description="None when the trials were not given")
    length: int | None = Field(description="characters of the full response")
    truncated: bool = False
    error: str | None = None
    kind: str | None = None
    score: float | None = Field(default=None, description="the trial's weighted score")
    metrics: dict[str, float] = Field(default_factory=dict)
    blocker: bool = False
    steps: list[str] = Field(
        default_factory=list,
        exclude_if=lambda value: not value,
        description="the trial's trajectory, one line per step (absent: none recorded)",
    )


class Evidence(ReportModel):
    """What a judge, reviewer or check said about one trial."""

    condition: str
    trial: int
    source: str | None
    blocker: bool
    notes: str | None
    evidence: str | None
    findings: list[str] = Field(default_factory=list)


class PairVerdict(ReportModel):
    """A pairwise judge's verdict on one trial of a case."""

    trial: int
    a: str
    b: str
    judge: str | None
    verdict: str
    confidence: float | None
    consistent: bool | None


class TrialPair(ReportModel):
    trial: int
    baseline: TrialView | None
    candidate: TrialView | None


class CaseDetail(ReportModel):
    """A case in the drill-down: the two conditions' responses side by side, and evidence."""

    case_id: str
    category: str | None
    risk: str | None
    prompt: str | None
    criteria: list[str]
    delta: float | None = Field(description="candidate − baseline weighted score (case means)")
    blocker: bool
    trials: list[TrialPair]
    evidence: list[Evidence]
    verdicts: list[PairVerdict]


class Report(ReportModel):
    """Everything a report shows, verdict first."""

    version: int = REPORT_VERSION
    title: str
    baseline: str
    candidate: str
    baseline_compared: bool = Field(
        default=True,
        description="false when the candidate was gated on its own: no baseline comparison"
        " was made (a single condition); blockers and thresholds decide the verdict",
    )
    mode: str
    verdict: Verdict
    passed: bool
    reasons: list[str]
    cases_needed: int | None
    clusters: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the clusters the paired cases fall in, when the catalogue declares any:"
        " the independent units the verdict rests on (absent otherwise)",
    )
    paired_cases: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the cases those clusters hold (absent without clusters)",
    )
    coverage: Coverage | None = Field(
        default=None,
        description="the evidence expected (cases × gated conditions × trials) and found:"
        " answered, errored, missing, scored, and the gaps by case",
    )
    sequential: Sequential | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="a sequential run's stop (`[gate] sequential`): the cases and calls the"
        " verdict took, the method and its guarantee (absent for a run of every case)",
    )
    not_looked: list[str] = Field(
        default_factory=list,
        exclude_if=lambda value: not value,
        description="a sequential run stopped early: the cases it never ran (neither looked"
        " at nor checked: no call was made for them; JUnit skips each), in catalogue order"
        " (absent otherwise)",
    )
    judge: JudgeStatus | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="whether the suite's LLM judges ran (absent: no judge configured);"
        " a disabled judge is announced at the top of every report",
    )
    weights: dict[str, float]
    conditions: list[ConditionRow]
    comparisons: list[ConditionComparison]
    checks: list[Check]
    worst_regressions: list[Regression]
    blockers: list[Blocker]
    by_risk: list[GroupRow]
    by_category: list[GroupRow]
    case_checks: list[CaseCheck]
    scorers: list[ScorerSummary] = Field(default_factory=list)
    trials: list[TrialCounts] = Field(default_factory=list)
    pairwise: list[PairwiseRow] = Field(default_factory=list)
    judges: list[JudgeProvenance] = Field(
        default_factory=list,
        description="judge model and prompt hash of the judged score rows and comparisons",
    )
    win_tie_loss: list[WinTieLoss] = Field(default_factory=list)
    lengths: list[LengthSeries] = Field(default_factory=list)
    spend: SpendFigures | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="what the run has cost in all its invocations, by role (a suite run's"
        " report; absent otherwise)",
    )
    calibration: list[CalibrationMatrix] = Field(default_factory=list)
    view_url: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the run's page in `assay view` (`[report] view_url` or ASSAY_VIEW_URL);"
        " each case is at view_url/cases/CASE_ID (percent-encoded)",
    )
    drilldown: list[CaseDetail] = Field(default_factory=list)
    drilldown_of: int = Field(default=0, description="cases the drill-down was chosen from")
    notes: list[str] = Field(default_factory=list)

    def case_url(self, case_id: str) -> str | None:
        """The case's page in `assay view` (None: no `view_url`)."""
        if not self.view_url:
            return None
        return f"{self.view_url}/cases/{quote(case_id, safe='')}"
