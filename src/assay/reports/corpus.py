"""The corpus thresholds as every report shows them (Markdown and HTML tables)."""

from __future__ import annotations

from collections.abc import Sequence

from assay.verdict.checks import Check, interval_text


def corpus_checks(checks: Sequence[Check]) -> list[Check]:
    """The gate's corpus-threshold checks (`corpus:METRIC:min|max`)."""
    return [c for c in checks if c.name.startswith("corpus:")]


def value_interval(check: Check) -> str:
    """A corpus check's interval over cases (`[3.636, 4.764]`, or in words when there is
    none); `–` for a check without a figure (a skipped bound)."""
    if check.value is None:
        return "–"
    return interval_text(check.ci_low, check.ci_high, check.cases or 0, signed=False)
