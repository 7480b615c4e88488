"""One typed evaluation config, resolved once from a suite file and command-line overrides.

`assay score`, `assay report`, `assay run SUITE.toml` and the Python API (`assay.evaluate`)
all resolve their settings here, so they share one set of defaults. The loaded `Suite` is
never changed: overrides produce a new config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.core.errors import InputError
from assay.core.rubric import load_rubric, parse_weights
from assay.core.suite import (
    CorpusDecision,
    GateSection,
    ReportFormat,
    ScorerEntry,
    Suite,
    Threshold,
)
from assay.verdict.checks import JudgeStatus
from assay.verdict.rows import BASELINE
from assay.verdict.thresholds import parse_corpus

DRILLDOWN = 20
"""Cases in the HTML report's drill-down when neither the suite nor a flag says."""
WORST = 10
FORMATS: tuple[ReportFormat, ...] = ("md", "json", "junit", "html")
DEFAULT_FORMATS: tuple[ReportFormat, ...] = ("md", "json", "junit")


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """Everything that decides how trials and score rows become a verdict and a report."""

    gate: GateSection = field(default_factory=GateSection)
    weights: Mapping[str, float] | None = None
    """Explicit weights (a flag, the suite's [scoring] weights or its judges' rubric file);
    None: the weights the judge/human score rows imply (`rows.implied_weights`), else equal
    weights over the deterministic scorers' primary metrics."""
    scale: tuple[float, float] = (1.0, 5.0)
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    corpus: Mapping[str, Threshold] = field(default_factory=dict)
    """Corpus thresholds: the suite's [scoring.corpus], with --corpus bounds replacing the
    suite's for the metrics they name."""
    corpus_decide: CorpusDecision = "interval"
    """How a corpus bound that does not say is decided (`[scoring] corpus_decide`)."""
    scorers: tuple[ScorerEntry, ...] = ()
    knowledge_base: Path | None = None
    cases: Path | None = None
    title: str = "assay report"
    worst: int = WORST
    drilldown: int = DRILLDOWN
    formats: tuple[ReportFormat, ...] = DEFAULT_FORMATS
    output: Path | None = None
    suite: Suite | None = None
    """The suite the config came from (read-only), for the sections evaluation does not own
    (its conditions and judges)."""
    places: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Where the user named metrics (a suite key such as `suite.toml: [scoring.thresholds]`,
    or a flag such as `--weights`) → the names written there; `verdict.names` checks each is
    a metric something produces, before any call. Defaults are not user-written: absent."""
    judge: JudgeStatus | None = None
    """Whether the suite's judges ran (None: no judge configured, or not a suite run); a
    disabled judge's skipped thresholds are listed as skipped gate checks."""

    @property
    def candidate(self) -> str:
        return self.gate.candidate


def parse_formats(text: str) -> tuple[ReportFormat, ...]:
    """`md,json,html` → the report formats; unknown names are an input error."""
    names = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in names if f not in FORMATS]
    if unknown or not names:
        raise InputError(
            f"ERROR: --format: {', '.join(unknown) or text!r}: use md, json, junit, html"
        )
    return tuple(dict.fromkeys(f for f in FORMATS for n in names if f == n))


def resolve(
    suite: Suite | None = None,
    *,
    gate: str | None = None,
    candidate: str | None = None,
    weights: str | Mapping[str, float] | None = None,
    scorers: Sequence[str] | None = None,
    cases: Path | None = None,
    drilldown: int | None = None,
    formats: str | Sequence[ReportFormat] | None = None,
    output: Path | None = None,
    corpus: Sequence[str] | Mapping[str, Threshold] | None = None,
) -> EvalConfig:
    """The config a suite (or none) and the given overrides describe; overrides win.

    `corpus` is `--corpus` texts (`hallucination<=0.2`) or thresholds by metric; each metric
    it names replaces the suite's [scoring.corpus] bound for that metric."""
    section = suite.gate if suite is not None else GateSection()
    updates: dict[str, object] = {}
    if gate is not None:
        if gate not in ("stats", "seed"):
            raise InputError(f"ERROR: --gate: expected stats or seed, got {gate!r}")
        updates["mode"] = gate
    if candidate is not None:
        updates["candidate"] = candidate
    gate_section = section.model_copy(update=updates) if updates else section
    if gate_section.candidate == BASELINE:
        raise InputError(
            "ERROR: --candidate: the candidate must be another condition than baseline"
        )
    places = suite_places(suite) if suite is not None else {}
    if isinstance(weights, str):
        chosen: Mapping[str, float] | None = parse_weights(weights)
    elif weights is not None:
        chosen = dict(weights)
    else:
        chosen = suite_weights(suite) if suite is not None else None
    if weights is not None:
        places["--weights"] = tuple(chosen or ())
    if isinstance(formats, str):
        chosen_formats = parse_formats(formats)
    elif formats is not None:
        chosen_formats = tuple(formats)
    else:
        chosen_formats = tuple(suite.report.formats) if suite is not None else DEFAULT_FORMATS
    given = (
        dict(corpus)
        if isinstance(corpus, Mapping)
        else parse_corpus(corpus)
        if corpus is not None
        else {}
    )
    if given:
        places["--corpus"] = tuple(given)
    chosen_corpus = {**(suite.scoring.corpus if suite is not None else {}), **given}
    if suite is None:
        return EvalConfig(
            gate=gate_section,
            weights=chosen,
            corpus=chosen_corpus,
            scorers=tuple(ScorerEntry(name=n) for n in scorers or ()),
            cases=cases,
            drilldown=DRILLDOWN if drilldown is None else drilldown,
            formats=chosen_formats,
            output=output,
            places=places,
        )
    kb = suite.scoring.knowledge_base
    return EvalConfig(
        gate=gate_section,
        weights=chosen,
        scale=(suite.scoring.scale[0], suite.scoring.scale[1]),
        thresholds=dict(suite.scoring.thresholds),
        corpus=chosen_corpus,
        corpus_decide=suite.scoring.corpus_decide,
        scorers=tuple(ScorerEntry(name=n) for n in scorers)
        if scorers
        else tuple(suite.scoring.scorers),
        knowledge_base=suite.path(kb) if kb else None,
        cases=cases or suite_cases(suite),
        title=suite.report.title or suite.name,
        worst=suite.report.worst,
        drilldown=suite.report.drilldown if drilldown is None else drilldown,
        formats=chosen_formats,
        output=output or output_dir(suite),
        suite=suite,
        places=places,
    )


def suite_places(suite: Suite) -> dict[str, tuple[str, ...]]:
    """The metric names the suite's author wrote, by suite key: [scoring.weights],
    [scoring.thresholds], [scoring.corpus] and the gate's guards (only when written: the default guards,
    correctness and safety, are skipped with a note when nothing scores them). Each is
    checked even when a flag overrides it: a misspelled suite is wrong either way."""
    found = {
        "[scoring.weights]": tuple(suite.scoring.weights or ()),
        "[scoring.thresholds]": tuple(suite.scoring.thresholds),
        "[scoring.corpus]": tuple(suite.scoring.corpus),
        "[gate.guard]": tuple(suite.gate.guard) if "guard" in suite.gate.model_fields_set else (),
    }
    return {f"{suite.file}: {key}": names for key, names in found.items() if names}


def suite_weights(suite: Suite) -> Mapping[str, float] | None:
    """The suite's [scoring] weights; else the criteria weights of its judges' rubric file
    ([judge] rubric), which its judges' score rows carry; else None."""
    if suite.scoring.weights is not None:
        return suite.scoring.weights
    if suite.judge.rubric:
        return load_rubric(suite.path(suite.judge.rubric)).weights
    return None


def suite_cases(suite: Suite) -> Path | None:
    """The suite's case catalogue when the suite names one (`cases = ...`), else None."""
    if "cases" not in suite.model_fields_set:
        return None
    return suite.path(suite.cases)


def output_dir(suite: Suite) -> Path:
    """The suite's `output` (relative to the suite file), default assay-out/<suite name>."""
    return suite.path(suite.output) if suite.output else Path("assay-out") / suite.name
