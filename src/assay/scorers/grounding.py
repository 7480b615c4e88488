"""Grounding scorers: is what a response claims backed by the documents it was given?

Sources are the case's `context` documents plus the documents the trial retrieved
(`state.retrieved`, looked up in the knowledge base). Each scorer works one of two ways, and
every Score says which (`method`), so a lexical figure is never taken for a judged one:

**Judged** (`method` = `judge:<model>`), when the scorer has a judge — its `judge` option,
else the suite's first `[judge]` judge (`build_scorers`); `judge = false` keeps it lexical.
The judge's calls go through the run's `Caller` (cache, budget, retries); see
`scorers/judge/claims.py` for the prompts. The definitions are those of RAGAS and DeepEval:

* `groundedness` (RAGAS faithfulness): the judge extracts the response's claims and gives
  each a verdict against the sources (supported, contradicted or unverifiable, quoting the
  passage that decides it); the share of claims *supported*.
* `faithfulness` (DeepEval FaithfulnessMetric): the same verdicts; the share of claims *not
  contradicted* (an unverifiable claim counts as faithful, as in DeepEval).
* `hallucination` (DeepEval HallucinationMetric): for each source document, does the response
  contradict it; the share of documents contradicted (lower is better). Leaving details out
  is not a contradiction.

The claim verdicts (or the per-document ones) are kept in the Score's `evidence`.

**Lexical** (`method` = `lexical`), without a judge. Claims are the sentences of the response
that carry content (three or more content words). A claim is *supported* when at least
`min_support` (default 0.6) of its content words occur in one source document and every
number it states occurs in the sources.

* `groundedness`  — share of claims supported.
* `faithfulness`  — share of claims that state no specific (number, proper name) absent
  from the sources: it tolerates paraphrase, not invention.
* `hallucination` — share of claims not supported (1 - groundedness); lower is better.

Each metric feeds the release gate like any other (compared with baseline, weightable;
hallucination, lower-is-better, weighs as 1 − value). `threshold` is a corpus threshold on
the scorer's metric, the same check as `[scoring.corpus]` (a minimum; for hallucination a
maximum); a `[scoring.corpus]` bound on the same metric wins.
A trial with no sources or no claims is not scored (None), never counted as grounded.
A response the judge cannot judge (no usable reply after one repair attempt, or a failed call)
stops the scoring as incomplete (exit 3): running again resumes from the call cache.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assay.core.errors import EXIT_INCOMPLETE, AssayError, Incomplete, InputError
from assay.core.suite import Threshold
from assay.models.registry import ModelOptions
from assay.scorers.base import (
    JudgeBacked,
    Metrics,
    Score,
    ScoreContext,
    mean_aggregate,
    register,
)

if TYPE_CHECKING:
    from assay.engine.calls import Caller
    from assay.models.base import Model
    from assay.scorers.judge.claims import ClaimVerdict, ContextVerdict

LEXICAL = "lexical"


TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.'-][A-Za-z0-9]+)*")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")
_STOP = """
    a an the and or but if then else of to in on at by for with from as is are was were be
    been being it its this that these those there here which who whom what when where why
    how not no yes can could should would will shall may might must do does did done have
    has had you your yours we our us they them their he she his her i me my mine so than
    too very also just only about into over under out up down more most less least all any
    each some such own same other both few many much one
"""
STOPWORDS = frozenset(_STOP.split())


def content_words(text: str) -> set[str]:
    """Lower-cased tokens that carry content (no stop words, no one-letter tokens)."""
    return {
        t.lower()
        for t in TOKEN.findall(text)
        if (len(t) > 2 or t.isdigit()) and t.lower() not in STOPWORDS
    }


def claims(response: str, min_words: int = 3) -> list[str]:
    """The sentences of a response that make a claim (enough content words)."""
    pieces = (LIST_MARK.sub("", p).strip() for p in SENTENCE_END.split(response))
    return [p for p in pieces if len(content_words(p)) >= min_words]


def numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER.findall(text)}


def specifics(claim: str) -> set[str]:
    """Numbers and proper names (capitalised words not starting the sentence)."""
    names = {m.group(0).lower() for m in PROPER.finditer(claim.strip())}
    return numbers(claim) | names


class Sources:
    """The documents claims are checked against, with their ids (context or knowledge base)."""

    def __init__(self, texts: list[str], ids: list[str] | None = None) -> None:
        self.texts = texts
        self.ids = ids if ids is not None else [str(i) for i in range(1, len(texts) + 1)]
        self._words = [content_words(t) for t in self.texts]
        self._numbers: set[str] = set().union(*(numbers(t) for t in texts))
        self._lower = " ".join(self.texts).lower()

    def coverage(self, claim: str) -> float:
        """The largest share of the claim's content words found in one document."""
        wanted = content_words(claim)
        if not wanted:
            return 0.0
        return max((len(wanted & doc) / len(wanted) for doc in self._words), default=0.0)

    def numbers_present(self, claim: str) -> bool:
        return numbers(claim) <= self._numbers

    def specifics_present(self, claim: str) -> bool:
        found = specifics(claim)
        return all((s in self._numbers) if s[:1].isdigit() else (s in self._lower) for s in found)


def sources_of(ctx: ScoreContext) -> Sources | None:
    """The case context plus the documents the trial retrieved; None when there are none."""
    docs = [(doc.id, doc.text) for doc in ctx.case.context or [] if doc.text.strip()]
    retrieved = ctx.trial.state.retrieved if ctx.trial.state is not None else []
    named = {name for name, _ in docs}  # a retrieved document the case also gives counts once
    docs += [
        (d, ctx.documents[d])
        for d in dict.fromkeys(retrieved)
        if d in ctx.documents and d not in named
    ]
    if not docs:
        return None
    return Sources([text for _, text in docs], [name for name, _ in docs])


class _Grounding(JudgeBacked):
    """Shared claim checking; subclasses pick the metric, the lexical test of a claim and the
    judged value."""

    name: ClassVar[str]
    higher_is_better: ClassVar[bool] = True

    def __init__(
        self,
        threshold: float | None = None,
        min_support: float = 0.6,
        judge: str | bool | None = None,
        store: str | None = None,
        budget_usd: float | None = None,
        judge_options: ModelOptions | None = None,
    ) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise TypeError("threshold must be between 0 and 1")
        if store is not None or budget_usd is not None:
            option = "store" if store is not None else "budget_usd"
            raise InputError(
                f"ERROR: scorer {self.name!r}: option {option} is no longer read: the"
                " judge-backed mode calls through the run's store and budget"
            )
        if not (judge is None or judge is False or (isinstance(judge, str) and judge.strip())):
            raise TypeError("judge must be a model spec, or false for the lexical check")
        if judge_options is not None and not isinstance(judge_options, ModelOptions):
            raise TypeError("judge_options is set from the suite's [judge] section only")
        self.threshold = threshold
        self.min_support = min_support
        self.judge: str | None = judge if isinstance(judge, str) else None
        self.judge_options = judge_options

    @property
    def metrics(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def primary(self) -> tuple[str, ...]:
        return (self.name,)

    @property
    def lower_is_better(self) -> tuple[str, ...]:
        return () if self.higher_is_better else (self.name,)

    @property
    def corpus(self) -> dict[str, Threshold]:
        """The `threshold` option as a corpus threshold on the scorer's metric."""
        if self.threshold is None:
            return {}
        side = "min" if self.higher_is_better else "max"
        return {self.name: Threshold.model_validate({side: float(self.threshold)})}

    @property
    def method(self) -> str:
        """How this scorer's figures are made: `judge:<model>` or `lexical`."""
        return f"judge:{self.judge}" if self.judge else LEXICAL

    def supported(self, claim: str, sources: Sources) -> bool:
        """The lexical check: enough content words in one source, every number present."""
        return sources.coverage(claim) >= self.min_support and sources.numbers_present(claim)

    def lexical(self, claim: str, sources: Sources) -> bool:
        """Whether the claim passes this scorer's lexical test (no model asked)."""
        return self.supported(claim, sources)

    def value(self, passed: int, total: int) -> float:
        """The lexical metric from the number of claims that passed."""
        return passed / total

    async def score(self, ctx: ScoreContext) -> Score | None:
        if self.judge is not None and ctx.caller is None:
            raise InputError(
                f"ERROR: scorer {self.name!r}: judge={self.judge!r} needs the run's call"
                " machinery (call cache, budget, retries); score it within a run or an"
                " evaluation that passes a caller"
            )
        if ctx.trial.error is not None:
            return None
        sources = sources_of(ctx)
        if sources is None:
            return None
        if self.judge is None:
            return self._lexical_score(ctx, sources)
        assert ctx.caller is not None
        return await self._judged_score(ctx, ctx.caller, sources)

    def _lexical_score(self, ctx: ScoreContext, sources: Sources) -> Score | None:
        found = claims(ctx.trial.response)
        if not found:
            return None
        passed = sum(1 for c in found if self.lexical(c, sources))
        return Score.of(
            ctx.trial, self.name, {self.name: self.value(passed, len(found))}, method=LEXICAL
        )

    async def _judged_score(
        self, ctx: ScoreContext, caller: Caller, sources: Sources
    ) -> Score | None:
        from assay.engine.calls import BudgetExhausted
        from assay.scorers.judge.ask import JudgeFailure
        from assay.scorers.judge.claims import PROMPT_SHA256

        if not ctx.trial.response.strip():
            return None
        try:
            judged = await self.judged(ctx, caller, self._judge_model(), sources)
        except BudgetExhausted:
            error = AssayError("ERROR: grounding judge: the budget cannot cover another call")
            error.exit_code = EXIT_INCOMPLETE
            raise error from None
        except JudgeFailure as exc:
            raise Incomplete(
                f"ERROR: scorer {self.name!r}: the judge could not judge case"
                f" {ctx.trial.case_id!r} trial {ctx.trial.trial} ({ctx.trial.condition}): {exc};"
                " run again to retry it"
            ) from None
        if judged is None:
            return None
        value, evidence = judged
        return Score.of(
            ctx.trial,
            self.name,
            {self.name: value},
            method=self.method,
            judge_prompt_sha256=PROMPT_SHA256,
            evidence=evidence,
        )

    async def judged(
        self, ctx: ScoreContext, caller: Caller, model: Model, sources: Sources
    ) -> tuple[float, dict[str, Any]] | None:
        """The judged metric and its evidence (claim verdicts); None: no claims to judge."""
        from assay.scorers.judge.claims import judge_claims

        verdicts = await judge_claims(
            caller, model, ctx.case.prompt, ctx.trial.response, sources.texts
        )
        if not verdicts:
            return None
        return self.claims_value(verdicts), {"claims": [v.as_json() for v in verdicts]}

    def claims_value(self, verdicts: Sequence[ClaimVerdict]) -> float:
        """The metric from the judge's claim verdicts."""
        raise NotImplementedError

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)


@register("groundedness")
class Groundedness(_Grounding):
    """Share of the response's claims supported by the sources."""

    name = "groundedness"

    def claims_value(self, verdicts: Sequence[ClaimVerdict]) -> float:
        return sum(v.verdict == "supported" for v in verdicts) / len(verdicts)


@register("faithfulness")
class Faithfulness(_Grounding):
    """Share of claims the sources do not contradict (lexically: stating no number or proper
    name that the sources lack)."""

    name = "faithfulness"

    def lexical(self, claim: str, sources: Sources) -> bool:
        return sources.specifics_present(claim)

    def claims_value(self, verdicts: Sequence[ClaimVerdict]) -> float:
        return sum(v.verdict != "contradicted" for v in verdicts) / len(verdicts)


@register("hallucination")
class Hallucination(_Grounding):
    """Share of source documents the response contradicts (lexically: of claims the sources
    do not support); lower is better."""

    name = "hallucination"
    higher_is_better = False

    def value(self, passed: int, total: int) -> float:
        return (total - passed) / total

    async def judged(
        self, ctx: ScoreContext, caller: Caller, model: Model, sources: Sources
    ) -> tuple[float, dict[str, Any]] | None:
        from assay.scorers.judge.claims import judge_contexts

        verdicts: list[ContextVerdict] = await judge_contexts(
            caller, model, ctx.trial.response, sources.texts, sources.ids
        )
        contradicted = sum(v.verdict == "contradicted" for v in verdicts)
        return contradicted / len(verdicts), {"contexts": [v.as_json() for v in verdicts]}
