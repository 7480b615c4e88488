"""Text scorers on the response: exact match, required/forbidden substrings, a regex."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.bounded import compile_regex, regex_search
from assay.core.errors import InputError
from assay.scorers.base import CheckScorer, Metrics, ScoreContext, register
from assay.scorers.common import flag, normalise_text

if TYPE_CHECKING:
    import regex


@register("exact")
class Exact(CheckScorer):
    """1 when the response equals the case's `reference` (whitespace collapsed; case-folded
    unless `case_sensitive`). Skipped when the case has no reference."""

    name = "exact"
    metrics = ("exact",)
    primary = ("exact",)

    def __init__(self, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def check(self, ctx: ScoreContext) -> Metrics | None:
        if ctx.case.reference is None:
            return None
        response = normalise_text(ctx.trial.response, self.case_sensitive)
        reference = normalise_text(ctx.case.reference, self.case_sensitive)
        return {"exact": flag(response == reference)}


@register("contains")
class Contains(CheckScorer):
    """`contains`: share of `expect.contains` found in the response; `not_contains`: 1 when
    none of `expect.not_contains` appears. Skipped when the case lists neither."""

    name = "contains"
    metrics = ("contains", "not_contains")
    primary = ("contains", "not_contains")

    def __init__(self, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def check(self, ctx: ScoreContext) -> Metrics | None:
        expect = ctx.case.expect
        if expect is None or not (expect.contains or expect.not_contains):
            return None
        text = normalise_text(ctx.trial.response, self.case_sensitive)

        def has(needle: str) -> bool:
            return normalise_text(needle, self.case_sensitive) in text

        metrics: Metrics = {}
        if expect.contains:
            metrics["contains"] = sum(map(has, expect.contains)) / len(expect.contains)
        if expect.not_contains:
            metrics["not_contains"] = flag(not any(map(has, expect.not_contains)))
        return metrics


@register("regex")
class Regex(CheckScorer):
    """1 when the response matches the case's `expect.regex` (or the `pattern` option).

    Python `re` syntax, searched with a time limit (core/bounded.py, `REGEX_TIMEOUT_S`): a
    search past it is an errored score row, never a pass."""

    name = "regex"
    metrics = ("regex",)
    primary = ("regex",)

    def __init__(self, pattern: str | None = None, ignore_case: bool = False) -> None:
        self.ignore_case = ignore_case
        self.pattern = self._compile(pattern, "option pattern") if pattern else None

    def _compile(self, pattern: str, where: str) -> regex.Pattern[str]:
        try:
            return compile_regex(pattern, self.ignore_case)
        except ValueError as exc:
            raise InputError(f"ERROR: scorer 'regex': {where}: {exc}") from None

    def check(self, ctx: ScoreContext) -> Metrics | None:
        pattern = self.pattern
        expect = ctx.case.expect
        if pattern is None and expect is not None and expect.regex is not None:
            pattern = self._compile(expect.regex, f"case {ctx.case.id}: expect.regex")
        if pattern is None:
            return None
        return {"regex": flag(regex_search(pattern, ctx.trial.response))}
