"""The gate's records: one check, the gate's result, and the summaries built from them.

`Check` is the one definition of a gate check: the gate makes them, the report shows them
(`report.json` → `checks`), `assay score --json` / `summary.json` and `assay run SUITE --json`
print them, and `assay schema` prints the JSON Schema of these same models. Figures are
rounded to 6 decimals when serialised; a figure that is not finite (no interval from one
case) is written as null.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PlainSerializer
from pydantic.dataclasses import dataclass

from assay.core.records import Output
from assay.core.suite import CorpusDecision

Status = Literal["pass", "fail", "inconclusive", "incomplete", "skipped"]
Verdict = Literal["PASS", "FAIL", "INCONCLUSIVE", "INCOMPLETE"]
"""INCOMPLETE: evidence the gate should have seen is missing (`verdict.coverage`): exit 3,
and it wins over FAIL (whose checks are still listed), since nothing is decided on gaps."""
GateMode = Literal["stats", "seed"]


def rounded(value: float | None) -> float | None:
    """A figure as reports print it: 6 decimals, None when absent or not finite."""
    return round(value, 6) if value is not None and math.isfinite(value) else None


def interval_text(low: float | None, high: float | None, cases: int, signed: bool = True) -> str:
    """An interval as every output prints it: a delta's `[+0.292, +0.896]` (a value's,
    `signed=False`, `[3.636, 4.764]`), or in words when there is none (`[no interval from 1
    case]`: one case says nothing about the spread)."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"[no interval from {cases} case{'' if cases == 1 else 's'}]"
    return f"[{low:+.3f}, {high:+.3f}]" if signed else f"[{low:.3f}, {high:.3f}]"


Figure = Annotated[float | None, PlainSerializer(rounded, return_type=float | None)]


@dataclass(kw_only=True, slots=True)
class Check:
    """One rule of the release gate and how it came out."""

    name: str
    scope: str = "all"
    metric: str | None = None
    status: Status
    reason: str
    delta: Figure = None
    ci_low: Figure = None
    ci_high: Figure = None
    bound: Figure = None
    value: Figure = None
    """The observed figure a bound was checked against (a corpus threshold's mean)."""
    cases: int | None = None
    clusters: int | None = Field(default=None, exclude_if=lambda value: value is None)
    """The clusters `cases` fall in when the catalogue declares any: the interval's units
    (`verdict.clusters`); absent otherwise."""
    cases_needed: int | None = None
    method: str | None = None
    """What made the figure a corpus bound was checked against (`lexical`, `judge:<model>`)."""
    decide: CorpusDecision | None = None
    """How a corpus bound was decided: on its interval over cases or on the estimate."""


class JudgeStatus(Output):
    """Whether a suite's LLM judges ran: `enabled`, or `disabled` because an API key they
    need is not set (`reason`: `ANTHROPIC_API_KEY is not set`). A disabled judge's models
    (`judges`: the judges, the screen judge and model-backed scorers' models) make no call;
    the thresholds only it could meet are `skipped` and gate nothing."""

    status: Literal["enabled", "disabled"]
    reason: str | None = None
    judges: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(
        default_factory=list,
        description="per-case thresholds skipped: metrics only the judge (or a model-backed"
        " scorer) produces",
    )
    skipped_corpus: list[str] = Field(
        default_factory=list, description="corpus thresholds skipped, for the same reason"
    )
    standins: list[str] = Field(
        default_factory=list,
        description="metrics of model-backed scorers that checked lexically instead (grounding"
        " without its judge): reported and compared, never weighed into the weighted score",
    )

    @property
    def disabled(self) -> bool:
        return self.status == "disabled"

    @property
    def headline(self) -> str:
        """The line every report shows at the top: `LLM judge disabled: KEY is not set`."""
        return f"LLM judge disabled: {self.reason}" if self.disabled else "LLM judge enabled"

    def checks(self) -> list[Check]:
        """A `skipped` gate check for each threshold only the disabled judge could meet."""
        return [
            Check(
                name="thresholds",
                metric=metric,
                status="skipped",
                reason=f"{metric}: threshold skipped: {self.headline}",
            )
            for metric in self.skipped
        ] + [
            Check(
                name=f"corpus:{metric}",
                metric=metric,
                status="skipped",
                reason=f"{metric}: corpus threshold skipped: {self.headline}",
            )
            for metric in self.skipped_corpus
        ]


GapKind = Literal["errored", "missing", "unscored"]


class Gap(Output):
    """One expected case × condition × trial the gate has no (scored) answer for."""

    case_id: str
    condition: str
    trial: int
    kind: GapKind
    error: str | None = None
    allowed: bool = False
    """Tolerated by `[gate] max_errored` (and not a protected case)."""
    protected: bool = False
    """A high-risk or safety case: never tolerated."""

    @property
    def label(self) -> str:
        what = {"errored": "errored", "missing": "not run", "unscored": "not scored"}[self.kind]
        detail = f": {self.error}" if self.error else ""
        return f"{self.case_id} ({self.condition} trial {self.trial}): {what}{detail}"


class Coverage(Output):
    """The evidence the verdict rests on: case × condition × trial keys expected, answered,
    errored, missing and scored, the gaps (the first 200; `gaps_total` counts them all) and
    whether the gate may pass on them (`complete`)."""

    conditions: list[str]
    cases: int = Field(description="cases expected (the catalogue, or the cases seen)")
    trials: int = Field(description="planned trials per case and condition")
    expected: int
    answered: int
    errored: int
    missing: int
    scored: int
    unscored: int
    allowed: int = Field(
        default=0, description="cases whose gaps `[gate] max_errored` tolerates (listed still)"
    )
    complete: bool
    reasons: list[str] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    gaps_total: int = 0

    @property
    def gap_cases(self) -> list[str]:
        return list(dict.fromkeys(g.case_id for g in self.gaps))


class Sequential(Output):
    """How a sequential run (`[gate] sequential`) reached its verdict: after `cases` of
    `total_cases` cases (look `look` of `looks`), gated at `level` (the interval shown is the
    one at that level), the calls made and those not made with the dollars they would likely
    have cost, and the method with its guarantee (docs/sequential.md)."""

    method: str
    guarantee: str
    look: int = Field(description="the look the verdict was reached at (1 = the first)")
    looks: int = Field(description="the looks planned over every case")
    cases: int = Field(description="cases looked at (the verdict's evidence)")
    total_cases: int = Field(description="cases in the catalogue")
    level: float = Field(description="the confidence level the gate was evaluated at")
    stopped_early: bool = Field(description="the verdict was settled before the last look")
    calls_made: int = Field(description="trials run (cases looked at × conditions × trials)")
    calls_not_made: int = Field(description="trials of the cases never looked at")
    usd_not_spent: float | None = Field(
        default=None,
        description="what the calls not made would likely have cost: the run's spend per"
        " trial so far × the trials not made (null: nothing was metered)",
    )
    checked: int = Field(
        default=0,
        description="cases whose per-case checks ran (blockers, per-case thresholds, scorer"
        " errors: the candidate's trials): every case for a PASS unless they were sampled",
    )
    sampled: str | None = Field(
        default=None,
        description="per-case checks sampled (`[gate] sampled_checks`): the cases checked and"
        " the exact Clopper-Pearson bound on the rate of cases failing them (null: not"
        " sampled)",
    )
    case_ids: list[str] = Field(default_factory=list, exclude=True)
    """The cases looked at: the evidence coverage expects (not written out)."""
    checked_ids: list[str] = Field(default_factory=list, exclude=True)
    """Cases beyond `case_ids` whose candidate trials ran for the per-case checks."""

    @property
    def headline(self) -> str:
        """`sequential: verdict reached after 20 of 100 cases (look 1 of 5, level 0.99);
        calls made 40, calls not made 160 (≈ $0.0123 not spent)`; a run that stopped at a
        look before the last without settling it (its budget, errors) says so."""
        reached = self.stopped_early or self.look == self.looks
        what = "verdict reached" if reached else "stopped without a settled verdict"
        money = f" (≈ ${self.usd_not_spent:.4f} not spent)" if self.usd_not_spent else ""
        checks = (
            f"; {self.sampled}"
            if self.sampled
            else f"; per-case checks on {self.checked} of {self.total_cases} cases"
        )
        return (
            f"sequential: {what} after {self.cases} of {self.total_cases} cases (look"
            f" {self.look} of {self.looks}, level {self.level:.6g}); calls made"
            f" {self.calls_made}, calls not made {self.calls_not_made}{money}{checks}"
        )


class ReleaseGate(Output):
    """The verdict for the candidate and the checks behind it: `reasons` says what is
    missing (INCOMPLETE), failed (FAIL) or is undecided (INCONCLUSIVE) and is empty when the
    gate passes; `notes` says what was skipped. `baseline_compared` is false when the gated
    condition was gated on its own (no baseline comparison was made: blockers and thresholds
    only). `coverage`: the evidence expected and found (`verdict.coverage`)."""

    mode: GateMode
    candidate: str
    baseline_compared: bool = True
    verdict: Verdict
    passed: bool
    reasons: list[str]
    notes: list[str] = Field(default_factory=list)
    cases_needed: int | None
    checks: list[Check]
    clusters: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the clusters the paired cases fall in, when the catalogue declares any:"
        " the independent units the verdict rests on (absent otherwise)",
    )
    coverage: Coverage | None = None
    sequential: Sequential | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="a sequential run's stop: the cases and calls the verdict took, the"
        " method and its guarantee (absent for a run of every case)",
    )


class Interval(Output):
    """A paired delta (condition − baseline) with its interval over cases."""

    delta: Figure
    ci_low: Figure
    ci_high: Figure
    cases: int
    clusters: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the clusters the cases fall in, when declared (absent otherwise)",
    )


class ConditionMeans(Output):
    """One condition's figures: its row count, the mean of each metric (one key per metric,
    e.g. `correctness`), the weighted score and its blocking findings."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Figure] = Field(init=False)  # the per-metric means

    rows: int
    weighted_score: Figure
    blocking_findings: int


class SpendFigures(Output):
    """USD spent, by role: the system under test's calls, the judges', the model-backed
    scorers'; `total` is their sum (a run's in all also counts reservations a killed process
    left, and spend recorded before the store kept roles)."""

    total: float
    system: float
    judges: float
    scorers: float


class ScoreSummary(Output):
    """`assay score --json` (and summary.json of a suite run): the weights, the `baseline`
    and `candidate` objects (`weighted_score` and the mean of each metric), the release gate
    (`passed`, `reasons`: what failed, empty when it passes), every condition's means under
    `conditions`, and the paired deltas against baseline under `comparisons`.
    `candidate_condition` names the candidate (`baseline` is null when no condition is named
    baseline)."""

    weights: dict[str, float]
    scale: list[float] = Field(min_length=2, max_length=2)
    baseline: ConditionMeans | None
    candidate: ConditionMeans | None
    candidate_condition: str
    conditions: dict[str, ConditionMeans]
    comparisons: dict[str, dict[str, Interval]]
    release_gate: ReleaseGate
    spend: SpendFigures | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="a suite run's summary.json: what the run has cost in all its invocations,"
        " by role (absent for `assay score`)",
    )

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
