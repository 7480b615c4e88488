"""Budget: latency, tokens and cost per trial, and whether they stay within set limits."""

from __future__ import annotations

from collections.abc import Sequence

from assay.core.errors import InputError
from assay.scorers.base import CheckScorer, Metrics, ScoreContext, mean_aggregate, register
from assay.scorers.common import flag


@register("budget")
class Budget(CheckScorer):
    """`latency_s`, `input_tokens`, `output_tokens`, `tokens`, `cost_usd` per trial (those
    known), and `within_budget` when a limit is set (`max_latency_s`, `max_tokens`,
    `max_cost_usd`). Skipped when the trial reports none of them."""

    name = "budget"
    metrics = ("latency_s", "input_tokens", "output_tokens", "tokens", "cost_usd", "within_budget")

    def __init__(
        self,
        max_latency_s: float | None = None,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
    ) -> None:
        for key, value in (
            ("max_latency_s", max_latency_s),
            ("max_tokens", max_tokens),
            ("max_cost_usd", max_cost_usd),
        ):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise InputError(f"ERROR: scorer 'budget': {key} must be a number >= 0")
        self.limits = {"latency_s": max_latency_s, "tokens": max_tokens, "cost_usd": max_cost_usd}

    @property
    def primary(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("within_budget",) if any(v is not None for v in self.limits.values()) else ()

    def check(self, ctx: ScoreContext) -> Metrics | None:
        trial = ctx.trial
        metrics: Metrics = {}
        if trial.latency_s is not None:
            metrics["latency_s"] = trial.latency_s
        if trial.usage is not None:
            metrics["input_tokens"] = float(trial.usage.input_tokens)
            metrics["output_tokens"] = float(trial.usage.output_tokens)
            metrics["tokens"] = float(trial.usage.input_tokens + trial.usage.output_tokens)
        if trial.cost_usd is not None:
            metrics["cost_usd"] = trial.cost_usd
        if not metrics:
            return None
        checked = [
            metrics[key] <= limit
            for key, limit in self.limits.items()
            if limit is not None and key in metrics
        ]
        if checked:
            metrics["within_budget"] = flag(all(checked))
        return metrics

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        result = mean_aggregate(rows)
        latencies = [r["latency_s"] for r in rows if "latency_s" in r]
        if latencies:
            import numpy as np  # here, not at the top: `assay run` starts without numpy

            result["latency_p95_s"] = float(np.percentile(latencies, 95))
        costs = [r["cost_usd"] for r in rows if "cost_usd" in r]
        if costs:
            result["cost_usd_total"] = float(sum(costs))
        return result
