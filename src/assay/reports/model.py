"""The report's data model: every renderer (Markdown, JSON, JUnit, later HTML) reads this.

`assay schema report` prints its JSON Schema; `report.json` is exactly `Report` dumped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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


class GateCheck(ReportModel):
    """One rule of the release gate and its outcome."""

    name: str
    scope: str
    metric: str | None
    status: Literal["pass", "fail", "inconclusive", "skipped"]
    reason: str
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    bound: float | None = None
    cases: int | None = None
    cases_needed: int | None = None


class Regression(ReportModel):
    """A case where the candidate's weighted score fell, with each metric's delta."""

    case_id: str
    category: str | None
    risk: str | None
    delta: float
    metrics: dict[str, float | None]


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
    """One case × check outcome (a JUnit testcase)."""

    case_id: str
    check: str
    passed: bool
    message: str


class ScorerSummary(ReportModel):
    """A deterministic scorer's corpus figures under one condition."""

    condition: str
    scorer: str
    metrics: dict[str, float]


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
    inconsistent: int


class Report(ReportModel):
    """Everything a report shows, verdict first."""

    version: int = REPORT_VERSION
    title: str
    baseline: str
    candidate: str
    mode: str
    verdict: Literal["PASS", "FAIL", "INCONCLUSIVE"]
    passed: bool
    reasons: list[str]
    cases_needed: int | None
    weights: dict[str, float]
    conditions: list[ConditionRow]
    comparisons: list[ConditionComparison]
    checks: list[GateCheck]
    worst_regressions: list[Regression]
    blockers: list[Blocker]
    by_risk: list[GroupRow]
    by_category: list[GroupRow]
    case_checks: list[CaseCheck]
    scorers: list[ScorerSummary] = Field(default_factory=list)
    trials: list[TrialCounts] = Field(default_factory=list)
    pairwise: list[PairwiseRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
