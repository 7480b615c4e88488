"""RAGAS metrics as scorers: `ragas:<metric>`, e.g. `ragas:faithfulness`.

The names are RAGAS's collection metrics (`ragas.metrics.collections`) in snake case
(`Faithfulness` → `faithfulness`, `ContextRecall` → `context_recall`); those that need
settings beyond the LLM and embeddings are left out. A metric that takes embeddings
(`answer_relevancy`) gets `AssayEmbeddings`: the scorer's `embeddings` option (default
`openai:text-embedding-3-small`), an OpenAI-compatible `/embeddings` endpoint at the judge's
base URL (`models/embeddings.py`), called through the run's caller like the judge. The scorer's metric is `ragas:<name>`,
prefixed so it never collides with assay's `faithfulness`. The metric's `ascore` runs on the
run's event loop with `AssayRagasLLM` as its LLM — RAGAS's `InstructorBaseRagasLLM` around a
`JudgeBridge` (the run's caller and judge model). `ascore` gets the case's prompt
(`user_input`), the trial's response (`response`), the grounding sources
(`retrieved_contexts`, `reference_contexts`: the case's context documents plus those the
trial retrieved) and the case's reference (`reference`); the cases must give those the
metric requires (`case_fields`, checked before any call). Options other than `judge` go to the metric's constructor. RAGAS's
usage tracking is switched off before it is imported.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from importlib import import_module
from typing import Any, Optional

from assay.models.base import Model
from assay.scorers.base import ScoreContext, model_options
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

QUIET = {"RAGAS_DO_NOT_TRACK": "true"}
"""Set before RAGAS is imported: no usage tracking."""
INPUTS = {
    "user_input": "prompt",
    "response": "",
    "retrieved_contexts": "context",
    "reference_contexts": "context",
    "reference": "reference",
}
"""The `ascore` parameters a trial can fill → the case field each comes from ("": the
trial's response)."""
SETTINGS = ("self", "llm", "embeddings")
"""The constructor settings assay gives a metric."""
EMBEDDINGS = "openai:text-embedding-3-small"
"""The embeddings model of a metric that takes one, unless the `embeddings` option names
another."""
TEXT = (str, Optional[str], "str", "Optional[str]", "str | None")  # noqa: UP045


def _library() -> Any:
    os.environ.update(QUIET)
    return import_module("ragas.metrics.collections")


def _usable(cls: Any) -> bool:
    """A collection metric whose only required settings are the LLM (and embeddings) and
    whose inputs a trial can give."""
    if not isinstance(cls, type):
        return False
    settings = inspect.signature(cls).parameters
    if "llm" not in settings:
        return False
    for param in settings.values():
        required = param.default is param.empty and param.kind is param.POSITIONAL_OR_KEYWORD
        if required and param.name not in SETTINGS:
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


def _takes_embeddings(cls: Any) -> bool:
    return "embeddings" in inspect.signature(cls).parameters


def _embeddings_class() -> type:
    """`AssayEmbeddings`: RAGAS's embeddings interface around a `JudgeBridge`."""
    from ragas.embeddings.base import BaseRagasEmbedding

    class AssayEmbeddings(BaseRagasEmbedding):  # type: ignore[misc]
        def __init__(self, bridge: JudgeBridge | None) -> None:
            super().__init__()
            self.bridge = bridge

        def embed_text(self, text: str, **kwargs: Any) -> list[float]:
            raise RuntimeError("assay runs RAGAS metrics asynchronously (ascore)")

        async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
            return (await self.aembed_texts([text]))[0]

        async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            if self.bridge is None:
                raise RuntimeError("this metric was built to check its options only")
            return await self.bridge.embed(texts)

    return AssayEmbeddings


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
    _embedder: Model | None = None

    def llm_class(self) -> Any:
        return _llm_class()

    @property
    def embeddings(self) -> str | None:
        """The embeddings model's spec when the metric takes one."""
        if not _takes_embeddings(getattr(_library(), self.metric)):
            return None
        spec = self.options.get("embeddings", EMBEDDINGS)
        if not isinstance(spec, str) or not spec.startswith("openai:") or spec == "openai:":
            raise TypeError("embeddings must be an openai:<model> spec")
        return spec

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(m for m in (self.judge, self.embeddings) if m)

    def metric_object(self, bridge: JudgeBridge | None) -> Any:
        options = {k: v for k, v in self.options.items() if k != "embeddings"}
        if self.embeddings is not None:
            options["embeddings"] = _embeddings_class()(bridge)
        return getattr(_library(), self.metric)(llm=self._llm(bridge), **options)

    def inputs(self, metric: Any) -> dict[str, str]:
        asked = inspect.signature(metric.ascore).parameters.values()
        return {p.name: INPUTS[p.name] for p in asked if p.default is p.empty}

    def _bridge(self, ctx: ScoreContext) -> JudgeBridge:
        bridge = super()._bridge(ctx)
        spec = self.embeddings
        if spec is not None:
            if self._embedder is None:
                from assay.models.embeddings import create_embeddings

                self._embedder = create_embeddings(spec, model_options(self))
            bridge.embedder = self._embedder
        return bridge

    async def aclose(self) -> None:
        await super().aclose()
        if self._embedder is not None:
            embedder, self._embedder = self._embedder, None
            await embedder.aclose()

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
                    raise Unmeasurable(param.name, INPUTS[param.name])
                continue
            kwargs[param.name] = value
        result = await metric.ascore(**kwargs)
        value = getattr(result, "value", result)
        if value is None:
            return None
        reason = getattr(result, "reason", None)
        return float(value), ({"reason": str(reason)} if reason else {})
