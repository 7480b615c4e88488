"""The case's deterministic expectations as one pass/fail reading of a response.

A case's `expect` states what any acceptable response must do: be JSON valid against
`json_schema`, contain the `contains` strings and none of `not_contains`, match `regex`,
refuse (or answer) as `refuse` says, escalate as `escalate` says. The registered checks
(`json_schema`, `contains`, `regex`, `refusal`, `escalation`) already score exactly that;
`Expectations` runs them with their default options and names each primary metric a
response misses. The pairwise judge reads it before asking a judge: a response that fails
the case's expectations loses to one that meets them, without a judge call
(`scorers/judge/pairwise.py`).
"""

from __future__ import annotations

from assay.core.records import Case, Trial
from assay.scorers.base import CheckScorer, ScoreContext
from assay.scorers.behaviour import Escalation, Refusal
from assay.scorers.structured import JsonSchema
from assay.scorers.text import Contains, Regex


class Expectations:
    """The expectation checks, run on one response at a time."""

    def __init__(self) -> None:
        self.checks: tuple[CheckScorer, ...] = (
            JsonSchema(),
            Contains(),
            Regex(),
            Refusal(),
            Escalation(),
        )

    def failed(self, case: Case, trial: Trial) -> list[str]:
        """The primary metrics of the case's expectations the response misses (below 1),
        e.g. `["json_schema"]`; empty when it meets them all or the case states none that
        apply (a refusal check needs the trial's agent state).

        Raises InputError for an expectation that cannot be checked (an invalid JSON
        Schema or regular expression), naming the case, and LimitExceeded for one that ran
        past its limit (core/bounded.py): then the expectations decide nothing."""
        if case.expect is None:
            return []
        ctx = ScoreContext(case, (trial,))
        missed: list[str] = []
        for check in self.checks:
            metrics = check.check(ctx) or {}
            missed.extend(m for m in check.primary if m in metrics and metrics[m] < 1.0)
        return missed
