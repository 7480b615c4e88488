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
must give what the metric requires (`case_fields`: checked on the cases before any call).
Options other than `judge` go to the metric's constructor (`threshold`, `include_reason`,
...). `deepeval:GEval` takes `criteria` or `evaluation_steps`, `evaluation_params` (the test
case fields the judge sees, default input and actual_output) and `name` (the metric is then
`deepeval:g_eval:<name>`, so a suite can have several). Telemetry, update checks and `.env`
loading are switched off before DeepEval is imported.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from importlib import import_module
from typing import Any

from assay.core.errors import InputError
from assay.models.registry import ModelOptions
from assay.scorers.base import ScoreContext
from assay.scorers.external.bridge import (
    JudgeBridge,
    LibraryScorer,
    MetricFactory,
    Unmeasurable,
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
FIELDS = {
    "input": "prompt",
    "actual_output": "",
    "expected_output": "reference",
    "context": "context",
    "retrieval_context": "context",
}
"""DeepEval's test case fields a trial fills → the case field each comes from ("": the
trial's response)."""
GEVAL = "GEval"
GEVAL_DEFAULT_PARAMS = ("input", "actual_output")


def _library() -> Any:
    os.environ.update(QUIET)
    return import_module("deepeval.metrics")


def available(metrics: Any) -> list[str]:
    """DeepEval's single-turn metric classes (what `deepeval:<name>` can name)."""
    base = metrics.BaseMetric
    found = sorted(
        name
        for name in getattr(metrics, "__all__", dir(metrics))
        if name.endswith("Metric")
        and isinstance(getattr(metrics, name, None), type)
        and issubclass(getattr(metrics, name), base)
        and getattr(metrics, name) is not base
    )
    return [*found, GEVAL]


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

    def __init__(
        self,
        metric: str,
        name: str,
        judge: str | None = None,
        judge_options: ModelOptions | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        label = (options or {}).get("name") if metric == GEVAL else None
        if label is not None:
            if not isinstance(label, str) or not label.strip():
                raise TypeError("name must be a non-empty string")
            name = f"{name}:{label}"
        super().__init__(metric, name, judge, judge_options, options)

    def llm_class(self) -> Any:
        return _llm_class()

    def _params(self, metric: Any) -> list[str]:
        """The test case fields the metric requires (their DeepEval names)."""
        required = metric.evaluation_params if self.metric == GEVAL else metric._required_params
        return [getattr(p, "value", str(p)) for p in required or []]

    def _geval_options(self) -> dict[str, Any]:
        """GEval's constructor options from the scorer's (InputError naming the suite field)."""
        where = f"ERROR: [scoring] scorers: deepeval:{GEVAL} ({self.name})"
        options = dict(self.options)
        if options.get("criteria") is None and options.get("evaluation_steps") is None:
            raise InputError(
                f"{where}: give options.criteria or options.evaluation_steps (what the judge"
                " checks: a criterion in words, or the steps it follows)"
            )
        from deepeval.test_case import SingleTurnParams

        params = options.get("evaluation_params", list(GEVAL_DEFAULT_PARAMS))
        if not isinstance(params, list) or not params:
            raise InputError(f"{where}: options.evaluation_params must be a non-empty list")
        unknown_params = [p for p in params if p not in FIELDS]
        if unknown_params:
            raise InputError(
                f"{where}: options.evaluation_params: {unknown_params[0]!r} is not one of"
                f" {', '.join(FIELDS)}"
            )
        options["evaluation_params"] = [SingleTurnParams(p) for p in params]
        options.setdefault("name", GEVAL)
        return options

    def metric_object(self, bridge: JudgeBridge | None) -> Any:
        cls = getattr(_library(), self.metric)
        llm = self._llm(bridge, self.judge or "unset")
        options = self._geval_options() if self.metric == GEVAL else self.options
        with warnings.catch_warnings():  # 4.x's notice that HallucinationMetric flipped
            warnings.filterwarnings("ignore", SCORE_DIRECTION, DeprecationWarning)
            metric = cls(model=llm, async_mode=True, **options)
        unfilled = [p for p in self._params(metric) if p not in FIELDS]
        if unfilled:
            raise InputError(
                f"ERROR: scorer {self.name!r}: DeepEval's {self.metric} needs"
                f" {', '.join(unfilled)}, which assay's cases and trials do not give"
            )
        return metric

    def inputs(self, metric: Any) -> dict[str, str]:
        return {p: FIELDS[p] for p in self._params(metric)}

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
        for param in self._params(metric):
            if getattr(case, param, None) in (None, "", []):
                raise Unmeasurable(param, FIELDS[param])
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
