"""RAGAS metrics as scorers: `ragas:<metric>`, e.g. `ragas:faithfulness`.

The names are RAGAS's collection metrics (`ragas.metrics.collections`) in snake case
(`Faithfulness` → `faithfulness`, `ContextRecall` → `context_recall`); those that need
embeddings or settings beyond the LLM are left out. The scorer's metric is `ragas:<name>`,
prefixed so it never collides with assay's `faithfulness`. The metric's `ascore` runs on the
run's event loop with `AssayRagasLLM` as its LLM — RAGAS's `InstructorBaseRagasLLM` around a
`JudgeBridge` (the run's caller and judge model). `ascore` gets the case's prompt
(`user_input`), the trial's response (`response`), the grounding sources
(`retrieved_contexts`, `reference_contexts`: the case's context documents plus those the
trial retrieved) and the case's reference (`reference`); a trial lacking one the metric
requires is not scored. Options other than `judge` go to the metric's constructor. RAGAS's
usage tracking is switched off before it is imported.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from importlib import import_module
from typing import Any, Optional

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

QUIET = {"RAGAS_DO_NOT_TRACK": "true"}
"""Set before RAGAS is imported: no usage tracking."""
INPUTS = frozenset(
    {"user_input", "response", "retrieved_contexts", "reference_contexts", "reference"}
)
"""The `ascore` parameters a trial can fill."""
TEXT = (str, Optional[str], "str", "Optional[str]", "str | None")  # noqa: UP045


def _library() -> Any:
    os.environ.update(QUIET)
    return import_module("ragas.metrics.collections")


def _usable(cls: Any) -> bool:
    """A collection metric whose only required setting is the LLM and whose inputs a trial
    can give."""
    if not isinstance(cls, type):
        return False
    settings = inspect.signature(cls).parameters
    if "llm" not in settings:
        return False
    for param in settings.values():
        required = param.default is param.empty and param.kind is param.POSITIONAL_OR_KEYWORD
        if required and param.name not in ("self", "llm"):
            return False
    asked = inspect.signature(getattr(cls, "ascore")).parameters  # noqa: B009
    if "user_input" in asked and asked["user_input"].annotation not in TEXT:
        return False  # a conversation (the agent metrics), not a prompt
    return all(name in INPUTS for name in asked if name != "self")


def available(metrics: Any) -> dict[str, str]:
    """`snake name → class name` of the usable collection metrics."""
    names = [n for n in getattr(metrics, "__all__", ()) if n != "BaseMetric"]
    return {snake(n): n for n in sorted(names) if _usable(getattr(metrics, n, None))}


def resolve(name: str) -> Callable[..., Any]:
    """The factory of `ragas:<metric>` (exit 2 when RAGAS or the metric is missing)."""
    try:
        metrics = _library()
    except ImportError as exc:
        raise missing("RAGAS", name, exc) from None
    metric = name.partition(":")[2]
    names = available(metrics)
    if metric not in names:
        raise unknown(name, [f"ragas:{n}" for n in sorted(names)])
    return MetricFactory(RagasScorer, names[metric], f"ragas:{metric}")


def _llm_class() -> type:
    """`AssayRagasLLM`: RAGAS's structured-output LLM around a `JudgeBridge`."""
    from ragas.llms.base import InstructorBaseRagasLLM

    class AssayRagasLLM(InstructorBaseRagasLLM):  # type: ignore[misc]
        def __init__(self, bridge: JudgeBridge | None) -> None:
            self.bridge = bridge

        def generate(self, prompt: str, response_model: Any) -> Any:
            raise RuntimeError("assay runs RAGAS metrics asynchronously (ascore)")

        async def agenerate(self, prompt: str, response_model: Any) -> Any:
            if self.bridge is None:
                raise RuntimeError("this metric was built to check its options only")
            return await self.bridge.ask(prompt, response_model)

    return AssayRagasLLM


class RagasScorer(LibraryScorer):
    """One RAGAS collection metric, scored per trial with `ascore`."""

    library = "ragas"

    def llm_class(self) -> Any:
        return _llm_class()

    def metric_object(self, bridge: JudgeBridge | None) -> Any:
        return getattr(_library(), self.metric)(llm=self._llm(bridge), **self.options)

    async def measure(
        self, ctx: ScoreContext, bridge: JudgeBridge
    ) -> tuple[float, dict[str, Any]] | None:
        metric = self._build(bridge)
        sources = sources_of(ctx)
        texts = sources.texts if sources is not None else None
        given: dict[str, Any] = {
            "user_input": ctx.case.prompt,
            "response": ctx.trial.response,
            "retrieved_contexts": texts,
            "reference_contexts": texts,
            "reference": ctx.case.reference,
        }
        kwargs: dict[str, Any] = {}
        for param in inspect.signature(metric.ascore).parameters.values():
            value = given.get(param.name)
            if value in (None, "", []):
                if param.default is param.empty:
                    return None
                continue
            kwargs[param.name] = value
        result = await metric.ascore(**kwargs)
        value = getattr(result, "value", result)
        if value is None:
            return None
        reason = getattr(result, "reason", None)
        return float(value), ({"reason": str(reason)} if reason else {})
