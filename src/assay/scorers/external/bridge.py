"""What the DeepEval and RAGAS adapters share: asking the judge through the run's `Caller`,
and the scorer around a library metric.

A library metric asks its LLM for JSON of a pydantic schema. `JudgeBridge.ask` sends that
prompt as one user message to the judge model through `ctx.caller` — the run's call cache,
budget, retries and concurrency — with the schema's JSON Schema for structured output, and
gets one repair attempt (`ask_json`); `JudgeBridge.embed` asks an embeddings model the same
way (`models/embeddings.py`). The libraries never open a connection of their own.

What a library gives is checked, never passed through: each metric declares the case fields
its inputs come from (`case_fields`, checked on the whole catalogue before any call:
`scorers/inputs.py`), a trial that still lacks one (no context given or retrieved) is an
error row, and so is a value outside the metric's range (`RANGE`, 0–1 for both libraries)
or not a number — the row names the metric and the value, and the gate fails on it
(`verdict/deterministic.error_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from assay.core.errors import EXIT_INCOMPLETE, AssayError, Incomplete, InputError
from assay.models.base import Message, Request
from assay.models.registry import ModelOptions
from assay.scorers.base import JudgeBacked, Metrics, Score, ScoreContext, mean_aggregate

if TYPE_CHECKING:
    from assay.core.records import Case
    from assay.engine.calls import Caller
    from assay.models.base import Model

M = TypeVar("M", bound=BaseModel)
FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)
MAX_TOKENS = 2048
RANGE = (0.0, 1.0)
"""What every DeepEval and RAGAS metric scores in."""
ROUNDING = 1e-9
"""How far past a bound a value may be and still be that bound (a cosine of 1.0000000000000002)."""


class Unmeasurable(Exception):
    """A trial lacks an input the metric requires (its library name, and the case field it
    comes from; "" for the trial's response)."""

    def __init__(self, name: str, field: str) -> None:
        super().__init__(name, field)
        self.name = name
        self.field = field


def snake(name: str) -> str:
    """`HallucinationMetric` → `hallucination_metric`, `SQLSemanticEquivalence` →
    `sql_semantic_equivalence`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@dataclass(slots=True)
class JudgeBridge:
    """A library metric's LLM: one judge model, called through the run's caller."""

    caller: Caller
    model: Model
    case: Case | None = None
    embedder: Model | None = None

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The embedding vectors of `texts`, one call (cached, budgeted) per text."""
        from assay.models.embeddings import vectors

        if self.embedder is None:
            raise RuntimeError("this metric was built without an embeddings model")
        found = []
        for text in texts:
            request = Request(messages=[Message("user", text)], max_tokens=1, case=self.case)
            found.extend(vectors(await self.caller.call(self.embedder, request)))
        return found

    async def text(self, prompt: str) -> str:
        """A plain-text answer to the prompt."""
        return str(await self.ask(prompt, None))

    async def ask(self, prompt: str, schema: type[M] | None) -> Any:
        """The judge's answer as an instance of `schema` (text when None)."""
        from assay.scorers.judge.ask import ask_json
        from assay.scorers.judge.verdicts import ReplyError

        def parse(reply: str) -> Any:
            if schema is None:
                return reply
            fenced = FENCE.match(reply)
            try:
                return schema.model_validate_json(fenced.group(1) if fenced else reply)
            except ValidationError as exc:
                raise ReplyError(f"not the JSON asked for: {exc}") from None

        request = Request(
            messages=[Message("user", prompt)],
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            json_schema=schema.model_json_schema() if schema is not None else None,
            case=self.case,
        )
        value, _ = await ask_json(self.caller, self.model, request, parse)
        return value


class LibraryScorer(JudgeBacked):
    """A metric of an LLM evaluation library as an assay scorer (see the package docstring).

    Subclasses set `library` and implement `measure`; `metric` is the library's name of the
    metric, `name` the scorer's and its one metric's name (`library:snake_name`).
    """

    library: ClassVar[str]
    needs_judge: ClassVar[bool] = True

    def __init__(
        self,
        metric: str,
        name: str,
        judge: str | None = None,
        judge_options: ModelOptions | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        if not (judge is None or (isinstance(judge, str) and judge.strip())):
            raise TypeError("judge must be a model spec")
        if judge_options is not None and not isinstance(judge_options, ModelOptions):
            raise TypeError("judge_options is set from the suite's [judge] section only")
        self.metric = metric
        self.name = name
        self.judge = judge
        self.judge_options = judge_options
        self.options = dict(options or {})
        self._llm = self.llm_class()
        # bad options fail now (exit 2), before any call; the inputs it takes are known then
        self.case_fields = self._case_fields(self.inputs(self._build(None)))

    def inputs(self, metric: Any) -> dict[str, str]:
        """The metric's required inputs: its library's name → the case field each comes from
        ("" for the trial's response)."""
        raise NotImplementedError

    def _case_fields(self, inputs: dict[str, str]) -> dict[str, str]:
        """Case field → the library inputs it fills (what `scorers/inputs.py` checks)."""
        fields: dict[str, list[str]] = {}
        for name, field in inputs.items():
            if field:
                fields.setdefault(field, []).append(name)
        return {field: ", ".join(names) for field, names in fields.items()}

    def llm_class(self) -> Any:
        """The library's LLM class that asks through a `JudgeBridge` (built on first use)."""
        raise NotImplementedError

    def metric_object(self, bridge: JudgeBridge | None) -> Any:
        """The library's metric object, its LLM asking through `bridge`."""
        raise NotImplementedError

    def _build(self, bridge: JudgeBridge | None) -> Any:
        try:
            return self.metric_object(bridge)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.metric}: {exc}") from None

    @property
    def metrics(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def primary(self) -> tuple[str, ...]:
        return (self.name,)

    async def measure(
        self, ctx: ScoreContext, bridge: JudgeBridge
    ) -> tuple[float, dict[str, Any]] | None:
        """The metric's value on the trial and its evidence; None: nothing to measure."""
        raise NotImplementedError

    async def score(self, ctx: ScoreContext) -> Score | None:
        if self.judge is None:
            raise InputError(
                f"ERROR: scorer {self.name!r}: needs a judge model: set [judge] judges in the"
                " suite or the scorer's judge option"
            )
        if ctx.caller is None:
            raise InputError(
                f"ERROR: scorer {self.name!r}: needs the run's call machinery (call cache,"
                " budget, retries); score it within a run or an evaluation that passes a caller"
            )
        if ctx.trial.error is not None or not ctx.trial.response.strip():
            return None
        from assay.engine.calls import BudgetExhausted
        from assay.scorers.judge.ask import JudgeFailure

        bridge = self._bridge(ctx)
        try:
            measured = await self.measure(ctx, bridge)
        except Unmeasurable as exc:
            source = f"the case's {exc.field}" if exc.field else "the response"
            if exc.field == "context":
                source = "context (the case gives none and the trial retrieved none)"
            return self._error(ctx, f"{self.name}: no {source} for {self.library}'s {exc.name}")
        except BudgetExhausted:
            error = AssayError(f"ERROR: scorer {self.name!r}: the budget cannot cover another call")
            error.exit_code = EXIT_INCOMPLETE
            raise error from None
        except JudgeFailure as exc:
            raise Incomplete(
                f"ERROR: scorer {self.name!r}: the judge could not answer for case"
                f" {ctx.trial.case_id!r} trial {ctx.trial.trial} ({ctx.trial.condition}): {exc};"
                " run again to retry it"
            ) from None
        if measured is None:
            return None
        value, evidence = measured
        low, high = RANGE
        if not (isinstance(value, int | float) and low - ROUNDING <= value <= high + ROUNDING):
            # NaN fails too
            return self._error(
                ctx,
                f"{self.name} = {value!r} is outside its range {low:g}–{high:g}: not used",
                evidence,
            )
        fields: dict[str, Any] = {"method": f"judge:{self.judge}"}
        if evidence:
            fields["evidence"] = evidence
        value = min(max(float(value), low), high)
        return Score.of(ctx.trial, self.name, {self.name: value}, **fields)

    def _bridge(self, ctx: ScoreContext) -> JudgeBridge:
        assert ctx.caller is not None
        return JudgeBridge(ctx.caller, self._judge_model(), ctx.case)

    def _error(
        self, ctx: ScoreContext, error: str, evidence: dict[str, Any] | None = None
    ) -> Score:
        """An error row: no figure, what went wrong (and the library's evidence)."""
        fields: dict[str, Any] = {"method": f"judge:{self.judge}", "error": error}
        if evidence:
            fields["evidence"] = evidence
        return Score.of(ctx.trial, self.name, {}, **fields)

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)


@dataclass(frozen=True, slots=True)
class MetricFactory:
    """What a `library:metric` name resolves to: builds the scorer from the suite's options."""

    scorer: type[LibraryScorer]
    metric: str
    name: str
    suite_judge: ClassVar[bool] = True

    def __call__(
        self,
        judge: str | None = None,
        judge_options: ModelOptions | None = None,
        **options: Any,
    ) -> LibraryScorer:
        return self.scorer(self.metric, self.name, judge, judge_options, options)


def missing(library: str, name: str, exc: ImportError) -> InputError:
    """The exit-2 error for a library that is not installed (or does not import)."""
    if exc.name is not None and exc.name.partition(".")[0] == library.lower():
        problem = "is not installed"
    else:
        problem = f"cannot be imported ({exc})"
    return InputError(
        f"ERROR: scorer {name!r}: {library} {problem}: install assay[metrics]"
        " (pip install 'assay[metrics]')"
    )


def unknown(name: str, available: Sequence[str]) -> InputError:
    """The exit-2 error for a metric the library lacks, listing those it has."""
    return InputError(f"ERROR: scorer {name!r}: unknown metric (available: {', '.join(available)})")
