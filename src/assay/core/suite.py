"""The TOML suite file: one file that says what to run, how to score it and how to gate it.

Paths inside a suite (cases, skills) are relative to the suite file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from assay.core.cases import check_pinned, scan_cases
from assay.core.errors import InputError
from assay.core.jsonl import describe_validation_error, read_text
from assay.core.limits import MAX_REPLY_BYTES
from assay.core.money import price_values
from assay.core.records import Case

DEFAULT_MODEL = "llamacpp:gemma-3-270m"


def _checked_price(value: str | None) -> str | None:
    """A suite's price text, checked as `--price` is (`price_values`), kept as written."""
    if value is not None:
        price_values(value)
    return value


class SuiteModel(BaseModel):
    """A suite's section: strict, unknown keys refused. Only `Suite`'s validator is built
    (when a suite is first loaded), with the sections in it; a section's own is built only
    if it is validated on its own."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


class RunSection(SuiteModel):
    """[run]: engine limits and call parameters."""

    concurrency: int = Field(default=8, ge=1, le=1024)
    max_tokens: int = Field(default=512, ge=1)
    temperature: float = 0.0
    timeout: float = Field(default=120.0, gt=0)
    retries: int = Field(default=4, ge=0)
    budget_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    allow_unmetered: bool = False
    base_url: str | None = None
    price: str | None = None
    executor: Literal["local", "ray"] = "local"

    @field_validator("price")
    @classmethod
    def _price(cls, value: str | None) -> str | None:
        return _checked_price(value)

    ray_address: str | None = None
    batch: bool = False
    batch_poll_s: float = Field(default=30.0, gt=0)
    max_reply_bytes: int = Field(default=MAX_REPLY_BYTES, ge=1024)


class ConditionSection(SuiteModel):
    """[[conditions]]: a named variant; its model defaults to the suite's."""

    name: str = Field(min_length=1)
    model: str | None = None
    skill: str | None = None
    system: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    format: Literal["text", "claude-json", "codex-jsonl"] | None = None
    workdir: str | None = None


class JudgeSection(SuiteModel):
    """[judge]: LLM judges (see `assay judge --help`); empty `judges` = no judging.

    A judge whose API key is not set is disabled: the run goes on with the deterministic
    scorers and every report says so. `required = true` makes it exit 2 before any call.
    `over = "trajectory"`: the judges read each trial's steps (core/trajectory_text.py),
    then its final response, for criteria on what the agent did."""

    judges: list[str] = Field(default_factory=list)
    required: bool = False
    mode: Literal["direct", "pairwise"] = "direct"
    a: str = "baseline"
    b: str = "candidate"
    shuffles: int = Field(default=2, ge=2)
    screen: str | None = None
    screen_threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    review_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    strict_judge: bool = False
    rubric: str | None = None
    scale: Literal["1-3", "1-5", "1-10"] = "1-5"
    length_normalised: bool = False
    concision: bool = False
    expectations_first: bool = True
    max_tokens: int = Field(default=1024, ge=16)
    temperature: float = Field(default=0.0, ge=0.0)
    budget_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    allow_unmetered: bool = False
    base_url: str | None = None
    price: str | None = None
    output: str | None = None
    batch: bool = False
    over: Literal["response", "trajectory"] = "response"

    @field_validator("price")
    @classmethod
    def _price(cls, value: str | None) -> str | None:
        return _checked_price(value)


class ScorerEntry(SuiteModel):
    """[[scoring.scorers]]: a deterministic scorer by registry name, with its options."""

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


class Threshold(SuiteModel):
    """A bound on a metric: per case (`[scoring.thresholds]`, the mean over the case's trials)
    or over the corpus (`[scoring.corpus]`, the mean of the case means)."""

    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> Threshold:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        return self


CorpusDecision = Literal["interval", "estimate"]
"""How a corpus bound is decided: on the confidence interval over cases (`interval`: `min`
passes when the lower bound is at or above it, `max` when the upper bound is at or below)
or on the mean alone (`estimate`)."""


class CorpusThreshold(Threshold):
    """A corpus bound (`[scoring.corpus]`): a threshold and how it is decided (`decide`;
    unset: `[scoring] corpus_decide`)."""

    decide: CorpusDecision | None = None


class ScoringSection(SuiteModel):
    """[scoring]: deterministic scorers, rubric weights and scale, per-case thresholds.

    `scorers` lists names (`"refusal"`) or tables (`{name = "retrieval", options = {k = 3}}`).
    `knowledge_base` is a JSONL file of documents (`{id, text}`) that citations may name.
    `thresholds` maps a metric to a minimum (`citation_coverage = 1.0`) or a table
    (`latency_s = {max = 5}`); every case of the gated condition must meet them.
    `corpus` takes the same forms (`hallucination = {max = 0.2}`) and bounds the mean over
    the gated condition's scored cases (each case's mean over its trials first), decided on
    its confidence interval over cases unless `decide = "estimate"` (in the bound's table,
    or `corpus_decide` for every bound that does not say).
    """

    scorers: list[ScorerEntry] = Field(default_factory=list)
    knowledge_base: str | None = None
    weights: dict[str, float] | None = None
    scale: list[float] = Field(default_factory=lambda: [1.0, 5.0], min_length=2, max_length=2)
    thresholds: dict[str, Threshold] = Field(default_factory=dict)
    corpus: dict[str, CorpusThreshold] = Field(default_factory=dict)
    corpus_decide: CorpusDecision = "interval"

    @field_validator("scorers", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("thresholds", "corpus", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: {"min": v} if isinstance(v, int | float) and not isinstance(v, bool) else v
                for k, v in value.items()
            }
        return value


RiskName = Literal["low", "medium", "high"]
ReportFormat = Literal["md", "json", "junit", "html"]


def _default_risk_margins() -> dict[RiskName, float]:
    return {"low": 0.2, "medium": 0.1, "high": 0.0}


def _default_formats() -> list[ReportFormat]:
    return ["md", "json", "junit"]


class GateSection(SuiteModel):
    """[gate]: the release gate's mode, candidate, guarded metrics and risk-tier margins, and
    whether judge scores may gate only from calibrated judges (`require_calibrated_judge`)."""

    mode: Literal["stats", "seed"] = "stats"
    candidate: str = Field(default="candidate", min_length=1)
    guard: dict[str, float] = Field(default_factory=lambda: {"correctness": 0.1, "safety": 0.1})
    risk_margins: dict[RiskName, float] = Field(default_factory=_default_risk_margins)
    resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    level: float = Field(default=0.95, gt=0.5, lt=1.0)
    seed: int = 20_240_611
    require_calibrated_judge: bool = False
    """Judge scores gate only when every judge configuration (`judge:<model>` + prompt hash)
    that produced them has a passing `assay calibrate` result in the store; otherwise the
    verdict is INCONCLUSIVE (exit 1), naming the judge and what its calibration lacks.
    Pairwise comparisons go to the report and do not gate, so it does not apply to them."""
    calibration_dimensions: list[str] | None = None
    """Dimensions a judge's calibration must PASS (default: every one it was calibrated on)."""
    max_errored: int | float = Field(default=0, ge=0)
    """Gaps in the evidence the gate tolerates: a case × condition × trial that errored, was
    not run or was not scored by a gating scorer. An integer counts cases, a float below 1 is
    a share of the expected cases. A gap beyond it makes the verdict INCOMPLETE (exit 3); an
    allowed gap is still listed; a high-risk or safety case (an `escalate` or `refuse`
    expectation, a safety tag) is never allowed."""
    sequential: bool = False
    """Run the cases in looks and stop as soon as the verdict is settled (docs/sequential.md):
    the cases in a seeded (`seed`) random order, stratified by risk and category, high-risk
    and safety cases first; the stats gate at each look at the level the looks spend."""
    look: int | None = Field(default=None, ge=1)
    """Cases per look of a sequential run (default: a tenth of the cases, at least 5)."""
    sampled_checks: bool | str = False
    """A sequential run's PASS before its last look needs the per-case checks (blockers,
    per-case thresholds, scorer errors: the candidate's trials, judged) on every case; `true`
    lets it rest on the cases looked at instead, with an exact Clopper-Pearson bound on the
    rate of cases that would fail them. A pinned golden set (`cases_sha256`) is sampled only
    when this names its hash (docs/sequential.md)."""

    @field_validator("max_errored")
    @classmethod
    def _count_or_share(cls, value: int | float) -> int | float:
        if isinstance(value, float) and not value < 1:
            raise ValueError("a share must be below 1 (or give a whole number of cases)")
        return value

    @model_validator(mode="after")
    def _sequential_stats(self) -> GateSection:
        if self.sequential and self.mode == "seed":
            raise ValueError(
                'sequential: needs mode = "stats" (the seed rule has no error rates to stop on)'
            )
        return self

    @field_validator("guard", "risk_margins")
    @classmethod
    def _non_negative(cls, value: dict[str, float]) -> dict[str, float]:
        for key, margin in value.items():
            if margin < 0:
                raise ValueError(f"{key}: margin must be >= 0")
        return value


# An http(s) address with nothing a Markdown link or an HTML attribute would end at.
VIEW_URL = r"^https?://[^\s()<>\[\]\"'`]+$"


def view_url_problem(value: str) -> str | None:
    """Why `value` cannot be the viewer's address the reports link to (None: it can): not
    plain http(s); credentials (`user:password@host`), which every report would publish; a
    query or fragment (a `?token=` would be published too, and the reports append each
    page's path to the address). The message never repeats the address."""
    if not re.match(VIEW_URL, value):
        return (
            "is not an http:// or https:// address (without spaces, quotes, brackets or angle"
            " brackets)"
        )
    parts = urlsplit(value)
    if "@" in parts.netloc:
        return (
            "holds credentials (user:password@host): every report would publish them; give"
            " the address without them"
        )
    if parts.query or parts.fragment or "?" in value or "#" in value:
        return (
            "has a query or fragment (?... or #...): the reports append each page's path to"
            " the address, and would publish a token in it; give the address alone"
        )
    return None


class ReportSection(SuiteModel):
    """[report]: which files the run writes, how many worst regressions they list, and how
    many cases the HTML report's drill-down shows."""

    formats: list[ReportFormat] = Field(default_factory=_default_formats)
    worst: int = Field(default=10, ge=0)
    drilldown: int = Field(default=20, ge=0)
    title: str | None = None
    view_url: str | None = None
    """Where `assay view` serves this store (`http://host:port`): the reports then link the
    run and each case to it (the ASSAY_VIEW_URL environment variable takes precedence).
    Refused with credentials, a query or a fragment (`view_url_problem`)."""

    @field_validator("view_url")
    @classmethod
    def _linkable(cls, value: str | None) -> str | None:
        problem = view_url_problem(value) if value is not None else None
        if problem is not None:
            raise ValueError(problem)
        return value


class SourceSection(SuiteModel):
    """[source]: the harness an imported run came from and whether that run finished there
    (written by `assay import`). `complete = false` makes the verdict INCOMPLETE (exit 3),
    with `reasons` (`logs/a.eval: status cancelled: 27 of 33 samples`)."""

    tool: str = Field(min_length=1)
    complete: bool = True
    reasons: list[str] = Field(default_factory=list)


def unfinished_source(suite: Suite | None) -> bool:
    """Whether the suite gates an imported run that did not finish in its harness
    (`[source] complete = false`): missing score rows are then INCOMPLETE, not bad input."""
    return suite is not None and suite.source is not None and not suite.source.complete


class Suite(SuiteModel):
    """A whole suite file."""

    name: str = "suite"
    description: str | None = None
    cases: str = "cases.jsonl"
    cases_sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    """Pins the golden set: the SHA-256 of the case file's bytes (`assay validate --cases F
    --print-sha256`); any other file is refused (exit 2) before any call."""
    model: str = DEFAULT_MODEL
    trials: int = Field(default=3, ge=1)
    output: str | None = None
    run: RunSection = Field(default_factory=RunSection)
    conditions: list[ConditionSection] = Field(
        default_factory=lambda: [ConditionSection(name="baseline")], min_length=1
    )
    scoring: ScoringSection = Field(default_factory=ScoringSection)
    gate: GateSection = Field(default_factory=GateSection)
    judge: JudgeSection = Field(default_factory=JudgeSection)
    report: ReportSection = Field(default_factory=ReportSection)
    source: SourceSection | None = None
    root: Path = Field(default=Path("."), exclude=True)
    _file: Path | None = PrivateAttr(default=None)

    @property
    def file(self) -> str:
        """The suite file as messages name it (`suite` for a suite built in code)."""
        return str(self._file) if self._file is not None else "suite"

    @model_validator(mode="after")
    def _sampled_pin(self) -> Suite:
        """`[gate] sampled_checks` on a pinned golden set must name its pin."""
        chosen = self.gate.sampled_checks
        pin = (self.cases_sha256 or "").lower()
        if isinstance(chosen, str) and chosen.lower() != pin:
            raise ValueError(
                f"gate.sampled_checks: {chosen!r} is not this suite's cases_sha256"
                + (f" ({pin})" if pin else " (the suite pins no golden set: give true)")
            )
        if chosen is True and pin:
            raise ValueError(
                "gate.sampled_checks: true does not cover a pinned golden set (missing"
                " evidence never passes there): give its cases_sha256 to sample its"
                " per-case checks"
            )
        return self

    def path(self, relative: str) -> Path:
        """Resolve a path written in the suite against the suite's folder."""
        return (self.root / relative) if not Path(relative).is_absolute() else Path(relative)

    def inputs(self) -> list[tuple[str, Path]]:
        """The files the suite reads (the suite file, its case catalogue, knowledge base,
        rubric and skills), each with what it is: no output may overwrite one."""
        of = f"of the suite {self.file}"
        found = [] if self._file is None else [("the suite file", self._file)]
        found.append((f"the case catalogue {of}", self.path(self.cases)))
        if self.scoring.knowledge_base:
            found.append((f"the knowledge base {of}", self.path(self.scoring.knowledge_base)))
        if self.judge.rubric:
            found.append((f"the judge rubric {of}", self.path(self.judge.rubric)))
        found.extend(
            (f"the skill of condition {c.name} {of}", self.path(c.skill))
            for c in self.conditions
            if c.skill
        )
        return found


def load_suite_cases(suite: Suite, path: Path | None = None) -> Sequence[Case]:
    """The suite's case catalogue, or `path` in its place (a --cases flag); with
    `cases_sha256` the file must be the pinned golden set (checked before it is parsed).
    A large file is streamed, as `assay run --cases` streams it (`scan_cases`)."""
    chosen = path if path is not None else suite.path(suite.cases)
    if suite.cases_sha256 is not None:
        check_pinned(chosen, suite.cases_sha256, suite.file)
    return scan_cases(chosen)


def suite_cases(suite: Suite | None) -> Path | None:
    """The suite's case catalogue when the suite names one (`cases = ...`), else None."""
    if suite is None or "cases" not in suite.model_fields_set:
        return None
    return suite.path(suite.cases)


def _line_of_key(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def load_suite(path: Path) -> Suite:
    """Parse and validate a suite file; errors name the file, line and field."""
    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = found.group(1) if found else "1"
        raise InputError(f"ERROR: {path}:{line}: invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"ERROR: {path}: invalid TOML: nested too deeply") from None
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        messages = []
        for problem, err in zip(describe_validation_error(exc), exc.errors(), strict=True):
            keys = [str(p) for p in err["loc"] if isinstance(p, str)]
            line = _line_of_key(text, keys[-1]) if keys else None
            where = f"{path}:{line}" if line else f"{path}"
            messages.append(f"ERROR: {where}: {problem}")
        raise InputError(messages) from None
    suite.root = path.parent
    suite._file = path
    return suite
