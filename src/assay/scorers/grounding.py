"""Grounding scorers: is what a response claims backed by the documents it was given?

Claims are the sentences of the response that carry content (three or more content words).
Sources are the case's `context` documents plus the documents the trial retrieved
(`state.retrieved`, looked up in the knowledge base). A claim is *supported* when at least
`min_support` (default 0.6) of its content words occur in one source document and every
number it states occurs in the sources. With `judge="SPEC"`, claims the lexical check cannot
support are put to that model through the run's call machinery (`ctx.caller`: its call cache,
budget, retries and concurrency); a claim the model gives no usable verdict on stays
unsupported. Each Score says which method produced it: `method` is `judge` when a claim was
put to the model, else `lexical`.

* `groundedness`  — share of claims supported.
* `faithfulness`  — share of claims that state no specific (number, proper name) absent
  from the sources: it tolerates paraphrase, not invention.
* `hallucination` — share of claims not supported (1 - groundedness); lower is better.

Each metric feeds the release gate like any other (compared with baseline, weightable;
hallucination, lower-is-better, weighs as 1 − value). `threshold` is a corpus threshold on
the scorer's metric, the same check as `[scoring.corpus]` (a minimum; for hallucination a
maximum); a `[scoring.corpus]` bound on the same metric wins.
A trial with no sources or no claims is not scored (None), never counted as grounded.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from assay.core.errors import EXIT_INCOMPLETE, AssayError, InputError
from assay.core.suite import Threshold
from assay.scorers.base import Metrics, Score, ScoreContext, mean_aggregate, register

if TYPE_CHECKING:
    from assay.engine.calls import Caller
    from assay.models.base import Model

TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.'-][A-Za-z0-9]+)*")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "why",
        "how",
        "not",
        "no",
        "yes",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "us",
        "they",
        "them",
        "their",
        "he",
        "she",
        "his",
        "her",
        "i",
        "me",
        "my",
        "mine",
        "so",
        "than",
        "too",
        "very",
        "also",
        "just",
        "only",
        "about",
        "into",
        "over",
        "under",
        "out",
        "up",
        "down",
        "more",
        "most",
        "less",
        "least",
        "all",
        "any",
        "each",
        "some",
        "such",
        "own",
        "same",
        "other",
        "both",
        "few",
        "many",
        "much",
        "one",
    ]
)


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
    """The documents claims are checked against."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
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
    texts = [doc.text for doc in ctx.case.context or [] if doc.text.strip()]
    retrieved = ctx.trial.state.retrieved if ctx.trial.state is not None else []
    texts += [ctx.documents[d] for d in retrieved if d in ctx.documents]
    return Sources(texts) if texts else None


class _Grounding:
    """Shared claim checking; subclasses pick the metric and the lexical test of a claim."""

    name: ClassVar[str]
    higher_is_better: ClassVar[bool] = True

    def __init__(
        self,
        threshold: float | None = None,
        min_support: float = 0.6,
        judge: str | None = None,
        store: str | None = None,
        budget_usd: float | None = None,
    ) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise TypeError("threshold must be between 0 and 1")
        if store is not None or budget_usd is not None:
            option = "store" if store is not None else "budget_usd"
            raise InputError(
                f"ERROR: scorer {self.name!r}: option {option} is no longer read: the"
                " judge-backed mode calls through the run's store and budget"
            )
        self.threshold = threshold
        self.min_support = min_support
        self.judge = judge
        self._model: Model | None = None

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
    def models(self) -> tuple[str, ...]:
        return (self.judge,) if self.judge else ()

    def supported(self, claim: str, sources: Sources) -> bool:
        """The lexical check: enough content words in one source, every number present."""
        return sources.coverage(claim) >= self.min_support and sources.numbers_present(claim)

    def lexical(self, claim: str, sources: Sources) -> bool:
        """Whether the claim passes this scorer's lexical test (no model asked)."""
        return self.supported(claim, sources)

    def value(self, passed: int, total: int) -> float:
        """The metric from the number of claims that passed (lexically or by the judge)."""
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
        found = claims(ctx.trial.response)
        if sources is None or not found:
            return None
        doubtful = [c for c in found if not self.lexical(c, sources)]
        passed = len(found) - len(doubtful)
        method = "lexical"
        if doubtful and self.judge is not None:
            method = "judge"
            assert ctx.caller is not None
            verdicts = await self._ask(ctx.caller, doubtful, sources)
            passed += sum(verdicts)
        return Score.of(
            ctx.trial, self.name, {self.name: self.value(passed, len(found))}, method=method
        )

    async def _ask(self, caller: Caller, items: Sequence[str], sources: Sources) -> list[bool]:
        """The judge's verdicts on claims the lexical test did not pass, through the caller."""
        from assay.engine.calls import BudgetExhausted
        from assay.models.registry import create_model
        from assay.scorers.judge.claims import ask_supported

        if self._model is None:
            assert self.judge is not None
            self._model = create_model(self.judge)
        model = self._model
        try:
            return list(
                await asyncio.gather(
                    *(ask_supported(caller, model, c, sources.texts) for c in items)
                )
            )
        except BudgetExhausted:
            error = AssayError("ERROR: grounding judge: the budget cannot cover another call")
            error.exit_code = EXIT_INCOMPLETE
            raise error from None

    async def aclose(self) -> None:
        """Release the judge model's connections (the runner calls this when done)."""
        if self._model is not None:
            model, self._model = self._model, None
            await model.aclose()

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)


@register("groundedness")
class Groundedness(_Grounding):
    """Share of the response's claims supported by the sources."""

    name = "groundedness"


@register("faithfulness")
class Faithfulness(_Grounding):
    """Share of claims stating no number or proper name that the sources lack."""

    name = "faithfulness"

    def lexical(self, claim: str, sources: Sources) -> bool:
        return sources.specifics_present(claim)


@register("hallucination")
class Hallucination(_Grounding):
    """Share of claims the sources do not support (lower is better)."""

    name = "hallucination"
    higher_is_better = False

    def value(self, passed: int, total: int) -> float:
        return (total - passed) / total
