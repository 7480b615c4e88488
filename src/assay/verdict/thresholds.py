"""Absolute thresholds on the gated condition: per case and over the corpus.

`[scoring.thresholds]` bounds each case's figure (a case that misses one FAILs the per-case
gate); `[scoring.corpus]` (or `--corpus hallucination<=0.2`) bounds the corpus figure, the
mean over the gated condition's scored cases. A case's figure is the mean of a metric over
its trials, so every case weighs the same in a corpus figure whatever its trial count.

The figures come from every metric the gated condition's trials carry: each deterministic
scorer's results (all of its metrics, primary or not: `hallucination`, `latency_s`,
`recall@5`) and the judge/human score rows (`correctness`, a rubric's criteria). The corpus
checks, decided on an interval over the case means, are `verdict.corpus`'s; the `method`
that made a figure (`lexical`, `judge:<model>`, `scorer:NAME`) is named here, so a lexical
figure is never read as a judged one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from assay.core.errors import InputError
from assay.core.suite import Threshold
from assay.scorers.base import Score, Scorer
from assay.verdict.checks import Check
from assay.verdict.rows import ScoredTrial

TOLERANCE = 1e-9
LIST_LIMIT = 10
CORPUS_FLAG = re.compile(r"^\s*([^<>=\s]+)\s*(<=|>=)\s*(\S+)\s*$")

CaseMeans = dict[str, dict[str, tuple[str, float]]]
"""case → metric → (what produced it: a scorer or a score row's source, mean over trials)."""


def case_metric_means(
    results: Sequence[Score], condition: str, rows: Iterable[ScoredTrial] = ()
) -> CaseMeans:
    """Each case's mean over its trials of every metric `condition` carries: the scorers'
    results first (named by scorer), then the metrics of its score rows a scorer did not
    produce (named by the row's source, `scores` when it has none)."""
    values: dict[tuple[str, int, str], tuple[str, float]] = {}
    for result in results:
        if result.condition == condition:
            for metric, value in result.metrics.items():
                values.setdefault((result.case_id, result.trial, metric), (result.scorer, value))
    for row in rows:
        if row.condition == condition:
            for metric, value in row.metrics.items():
                values.setdefault((row.case_id, row.trial, metric), (row.source or "scores", value))
    grouped: dict[tuple[str, str], tuple[str, list[float]]] = {}
    for (case, _trial, metric), (source, value) in values.items():
        grouped.setdefault((case, metric), (source, []))[1].append(value)
    out: CaseMeans = {}
    for (case, metric), (source, found) in grouped.items():
        out.setdefault(case, {})[metric] = (source, math.fsum(found) / len(found))
    return out


def scorer_methods(results: Sequence[Score]) -> dict[tuple[str, str], str]:
    """(condition, scorer) → the methods its Scores name (`lexical`, `judge:<model>`),
    `, `-joined, for the scorers that say (the grounding scorers, the library metrics)."""
    found: dict[tuple[str, str], dict[str, None]] = {}
    for result in results:
        method = result.fields.get("method")
        if isinstance(method, str):
            found.setdefault((result.condition, result.scorer), {})[method] = None
    return {key: ", ".join(sorted(names)) for key, names in found.items()}


def figure_method(
    source: str, condition: str, methods: Mapping[tuple[str, str], str], scorers: Collection[str]
) -> str:
    """What made a figure whose source (`case_metric_means`) is `source`: the method its
    scorer names (`lexical`, `judge:<model>`), `scorer:NAME` for a scorer that names none (a
    deterministic check), else the score rows' source (`judge:<model>`, a reviewer)."""
    if (condition, source) in methods:
        return methods[(condition, source)]
    return f"scorer:{source}" if source in scorers else source


@dataclass(frozen=True, slots=True)
class Bounded:
    """A case's figure of a metric with a per-case threshold, and what it missed (`missed`:
    e.g. `contains 0 < min 1`; empty when it meets the threshold)."""

    case_id: str
    source: str
    metric: str
    value: float
    bound: Threshold
    missed: tuple[str, ...]


def bounded_figures(
    results: Sequence[Score],
    thresholds: Mapping[str, Threshold],
    condition: str,
    rows: Iterable[ScoredTrial] = (),
    means: CaseMeans | None = None,
) -> list[Bounded]:
    """Every case's figure that has a per-case threshold, checked against it (cases sorted;
    `means`: `case_metric_means` of the condition when made already)."""
    if not thresholds:
        return []  # nothing to check: skip the per-case means (a report asks for them too)
    if means is None:
        means = case_metric_means(results, condition, rows)
    found = []
    why: dict[tuple[str, str], str] | None = None
    for case, metrics in sorted(means.items()):
        for metric, bound in thresholds.items():
            if metric not in metrics:
                continue
            source, value = metrics[metric]
            missed = []
            if bound.min is not None and value < bound.min - TOLERANCE:
                missed.append(f"{metric} {value:.3g} < min {bound.min:g}")
            if bound.max is not None and value > bound.max + TOLERANCE:
                missed.append(f"{metric} {value:.3g} > max {bound.max:g}")
            if missed:
                why = _score_notes(results, condition) if why is None else why
                if (case, source) in why:
                    missed = [f"{text} ({why[case, source]})" for text in missed]
            found.append(Bounded(case, source, metric, value, bound, tuple(missed)))
    return found


def _score_notes(results: Sequence[Score], condition: str) -> dict[tuple[str, str], str]:
    """(case, scorer) → what the scorer's notes say of the condition's trials (the `tools`
    scorer's misses: `trial 2: called forbidden tool delete_account (step 3)`)."""
    found: dict[tuple[str, str], list[str]] = {}
    for result in results:
        notes = result.fields.get("notes")
        if result.condition == condition and isinstance(notes, str) and notes:
            found.setdefault((result.case_id, result.scorer), []).append(
                f"trial {result.trial}: {notes}"
            )
    return {key: "; ".join(texts) for key, texts in found.items()}


def threshold_misses(
    results: Sequence[Score],
    thresholds: Mapping[str, Threshold],
    condition: str,
    rows: Iterable[ScoredTrial] = (),
) -> list[tuple[str, str, str, str]]:
    """(case, source, metric, message) for every case whose mean misses a threshold."""
    return [
        (b.case_id, b.source, b.metric, message)
        for b in bounded_figures(results, thresholds, condition, rows)
        for message in b.missed
    ]


def threshold_checks(
    results: Sequence[Score],
    thresholds: Mapping[str, Threshold],
    condition: str,
    rows: Iterable[ScoredTrial] = (),
) -> list[Check]:
    """The per-case gate: one check, FAIL naming the cases that miss."""
    if not thresholds:
        return []
    misses = threshold_misses(results, thresholds, condition, rows)
    if not misses:
        return [
            Check(
                name="thresholds",
                status="pass",
                reason="every scored case meets the per-case thresholds",
            )
        ]
    shown = "; ".join(f"{case}: {msg}" for case, _, _, msg in misses[:LIST_LIMIT])
    more = f" ... and {len(misses) - LIST_LIMIT} more" if len(misses) > LIST_LIMIT else ""
    return [
        Check(
            name="thresholds",
            status="fail",
            reason=f"{len(misses)} per-case threshold miss(es) in {condition}: {shown}{more}",
        )
    ]


def parse_corpus(texts: Sequence[str], flag: str = "--corpus") -> dict[str, Threshold]:
    """`hallucination<=0.2`, `groundedness>=0.8` (one bound each; a metric may take both)
    → corpus thresholds; bad syntax is an input error naming the flag."""
    bounds: dict[str, dict[str, float]] = {}
    for text in texts:
        match = CORPUS_FLAG.match(text)
        number = _number(match.group(3)) if match else None
        if match is None or number is None:
            raise InputError(
                f"ERROR: {flag}: {text!r}: expected METRIC<=NUMBER or METRIC>=NUMBER"
                " (e.g. hallucination<=0.2)"
            )
        metric, side = match.group(1), "max" if match.group(2) == "<=" else "min"
        if side in bounds.setdefault(metric, {}):
            raise InputError(f"ERROR: {flag}: {text!r}: {metric} has a {side} bound already")
        bounds[metric][side] = number
    return {m: Threshold(min=b.get("min"), max=b.get("max")) for m, b in bounds.items()}


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def scorer_corpus(scorers: Sequence[Scorer]) -> dict[str, Threshold]:
    """The corpus thresholds scorers carry as options (a grounding scorer's `threshold`)."""
    found: dict[str, Threshold] = {}
    for scorer in scorers:
        found.update(getattr(scorer, "corpus", None) or {})
    return found
