"""DeepEval metrics as scorers: `deepeval:<MetricClass>`, e.g. `deepeval:HallucinationMetric`.

The scorer's metric is `deepeval:<snake name>` (`deepeval:hallucination`): DeepEval's own
score, prefixed so it never collides with assay's `hallucination`. Every DeepEval 4 metric
passes at or above its threshold, so higher is better (DeepEval's HallucinationMetric is the
share of contexts the output agrees with — the opposite of assay's `hallucination`). The metric runs with
`a_measure` on the run's event loop, its LLM being `AssayLLM`, DeepEval's custom-model class
around a `JudgeBridge` (the run's caller and judge model). The test case holds the case's
prompt (`input`), the trial's response (`actual_output`), the case's reference
(`expected_output`) and the grounding sources (`context` and `retrieval_context`: the case's
context documents plus those the trial retrieved); a trial lacking what the metric requires
is not scored. Options other than `judge` go to the metric's constructor (`threshold`,
`include_reason`, ...). Telemetry, update checks and `.env` loading are switched off before
DeepEval is imported.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from importlib import import_module
from typing import Any

from assay.scorers.base import ScoreContext
from assay.scorers.external.bridge import (
    JudgeBridge,
    LibraryScorer,
    MetricFactory,
    missing,
    snake,
    unknown,
)
from assay.scorers.grounding import sources_of

QUIET = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_GRPC_LOGGING": "0",
}
"""Set before DeepEval is imported: no telemetry, no update check, no `.env` read."""
SCORE_DIRECTION = ".*now scores in the same direction as every other deepeval metric"


def _library() -> Any:
    os.environ.update(QUIET)
    return import_module("deepeval.metrics")


def available(metrics: Any) -> list[str]:
    """DeepEval's single-turn metric classes (what `deepeval:<name>` can name)."""
    base = metrics.BaseMetric
    return sorted(
        name
        for name in getattr(metrics, "__all__", dir(metrics))
        if name.endswith("Metric")
        and isinstance(getattr(metrics, name, None), type)
        and issubclass(getattr(metrics, name), base)
        and getattr(metrics, name) is not base
    )


def resolve(name: str) -> Callable[..., Any]:
    """The factory of `deepeval:<MetricClass>` (exit 2 when DeepEval or the metric is missing)."""
    try:
        metrics = _library()
    except ImportError as exc:
        raise missing("DeepEval", name, exc) from None
    metric = name.partition(":")[2]
    names = available(metrics)
    if metric not in names:
        raise unknown(name, [f"deepeval:{n}" for n in names])
    short = metric.removesuffix("Metric") or metric
    return MetricFactory(DeepEvalScorer, metric, f"deepeval:{snake(short)}")


def _llm_class() -> type:
    """`AssayLLM`: DeepEval's custom model around a `JudgeBridge`."""
    from deepeval.models import DeepEvalBaseLLM

    class AssayLLM(DeepEvalBaseLLM):  # type: ignore[misc]
        def __init__(self, bridge: JudgeBridge | None, spec: str) -> None:
            self.bridge = bridge
            self.spec = spec
            super().__init__(spec)

        def load_model(self, *args: Any, **kwargs: Any) -> Any:
            return self

        def get_model_name(self, *args: Any, **kwargs: Any) -> str:
            return self.spec

        def generate(self, prompt: str, schema: Any = None, **kwargs: Any) -> Any:
            raise RuntimeError("assay runs DeepEval metrics asynchronously (a_measure)")

        async def a_generate(self, prompt: str, schema: Any = None, **kwargs: Any) -> Any:
            if self.bridge is None:
                raise RuntimeError("this metric was built to check its options only")
            return await self.bridge.ask(str(prompt), schema)

    return AssayLLM


class DeepEvalScorer(LibraryScorer):
    """One DeepEval metric, measured per trial with `a_measure`."""

    library = "deepeval"

    def llm_class(self) -> Any:
        return _llm_class()

    def metric_object(self, bridge: JudgeBridge | None) -> Any:
        cls = getattr(_library(), self.metric)
        llm = self._llm(bridge, self.judge or "unset")
        with warnings.catch_warnings():  # 4.x's notice that HallucinationMetric flipped
            warnings.filterwarnings("ignore", SCORE_DIRECTION, DeprecationWarning)
            return cls(model=llm, async_mode=True, **self.options)

    async def measure(
        self, ctx: ScoreContext, bridge: JudgeBridge
    ) -> tuple[float, dict[str, Any]] | None:
        from deepeval.test_case import LLMTestCase

        sources = sources_of(ctx)
        texts = sources.texts if sources is not None else None
        case = LLMTestCase(
            input=ctx.case.prompt,
            actual_output=ctx.trial.response,
            expected_output=ctx.case.reference,
            context=texts,
            retrieval_context=texts,
        )
        metric = self._build(bridge)
        for param in getattr(metric, "_required_params", []):
            if getattr(case, getattr(param, "value", str(param)), None) in (None, "", []):
                return None
        await metric.a_measure(case, _show_indicator=False)
        evidence: dict[str, Any] = {}
        if getattr(metric, "reason", None):
            evidence["reason"] = str(metric.reason)
        verdicts = getattr(metric, "verdicts", None)
        if verdicts:
            evidence["verdicts"] = [
                v.model_dump(mode="json") if hasattr(v, "model_dump") else str(v) for v in verdicts
            ]
        return float(metric.score), evidence
