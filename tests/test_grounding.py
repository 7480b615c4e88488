"""Grounding scorers: claims checked against the case context and retrieved documents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import AssayError, InputError
from assay.core.records import Case, Trial
from assay.core.suite import Threshold
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.models import mock, registry
from assay.models.base import Model
from assay.models.pricing import Price
from assay.scorers import Metrics, Score, ScoreContext, Scorer, create_scorer
from assay.scorers.grounding import claims
from assay.scorers.runner import run_scorers
from assay.store import Store
from assay.verdict.corpus import corpus_checks
from assay.verdict.thresholds import scorer_corpus

DOC = "The Eiffel Tower is 330 metres tall and stands in Paris. It opened to visitors in 1889."


def item(response: str, context: str | None = DOC, **trial: Any) -> ScoreContext:
    case = Case(
        id="c", category="g", prompt="p", risk="low", criteria=["x"],
        context=[{"id": "d1", "text": context}] if context else None,  # type: ignore[list-item]
    )  # fmt: skip
    return ScoreContext.of(
        case, Trial(case_id="c", trial=1, condition="b", runner="m", response=response, **trial)
    )


def scored(scorer: Scorer, ctx: ScoreContext) -> Score | None:
    return asyncio.run(scorer.score(ctx))


def metrics(scorer: Scorer, ctx: ScoreContext) -> Metrics | None:
    """The scorer's metrics through the async protocol (None: not scored)."""
    score = scored(scorer, ctx)
    return None if score is None else score.metrics


GROUNDED = "The Eiffel Tower stands in Paris and is 330 metres tall."
INVENTED = "The tower was designed by Gustave Eiffel with 500 workers."


def test_claims_are_sentences_with_content() -> None:
    assert claims(f"Sure! {GROUNDED} {INVENTED}") == [GROUNDED, INVENTED]


@pytest.mark.parametrize(
    ("name", "expected"),
    [("groundedness", 0.5), ("faithfulness", 0.5), ("hallucination", 0.5)],
)
def test_half_supported_response(name: str, expected: float) -> None:
    scorer = create_scorer(name)
    assert metrics(scorer, item(f"{GROUNDED} {INVENTED}")) == {name: expected}


def test_a_wrong_number_is_not_supported() -> None:
    wrong = "The Eiffel Tower stands in Paris and is 450 metres tall."
    assert metrics(create_scorer("groundedness"), item(wrong)) == {"groundedness": 0.0}
    assert metrics(create_scorer("faithfulness"), item(wrong)) == {"faithfulness": 0.0}


def test_retrieved_documents_count_as_sources() -> None:
    scorer = create_scorer("groundedness")
    bare = item(GROUNDED, context=None, state={"retrieved": ["kb1"]})
    assert metrics(scorer, bare) is None  # nothing to check against: not scored, never 1.0
    bare.documents = {"kb1": DOC}
    assert metrics(scorer, bare) == {"groundedness": 1.0}


def test_errored_or_empty_trials_are_not_scored() -> None:
    scorer = create_scorer("hallucination")
    assert metrics(scorer, item("", error="boom")) is None
    assert metrics(scorer, item("Ok.")) is None


def test_corpus_threshold_for_the_gate() -> None:
    """The `threshold` option is a corpus threshold, gated as [scoring.corpus] is: a minimum
    for groundedness, a maximum for hallucination (lower is better)."""
    grounded = create_scorer("groundedness", threshold=0.8)
    assert grounded.aggregate([{"groundedness": 1.0}, {"groundedness": 0.5}]) == {
        "groundedness": 0.75
    }
    results = [
        Score("c1", 1, "b", "groundedness", {"groundedness": 1.0}),
        Score("c2", 1, "b", "groundedness", {"groundedness": 0.5}),
        Score("c1", 1, "b", "hallucination", {"hallucination": 0.25}),
    ]
    hallucination = create_scorer("hallucination", threshold=0.3)
    corpus = scorer_corpus([grounded, hallucination])
    assert corpus == {"groundedness": Threshold(min=0.8), "hallucination": Threshold(max=0.3)}
    below, within = corpus_checks(results, corpus, "b", decide="estimate")
    assert (below.name, below.status, below.value, below.bound, below.cases) == (
        "corpus:groundedness:min", "fail", 0.75, 0.8, 2,
    )  # fmt: skip
    assert (within.name, within.status, within.value) == ("corpus:hallucination:max", "pass", 0.25)
    # decided on the interval (the default), 2 cases and 1 case settle neither
    assert {c.status for c in corpus_checks(results, corpus, "b")} == {"inconclusive"}
    assert hallucination.lower_is_better == ("hallucination",) and not grounded.lower_is_better
    assert grounded.primary == ("groundedness",)  # compared with baseline, weightable


def caller_over(path: Path, budget_usd: float | None = None) -> tuple[Caller, Store]:
    store = Store(path)
    return Caller(store, Budget(budget_usd), concurrency=4), store


def test_judge_backed_checking_asks_the_judge_about_every_claim(tmp_path: Path) -> None:
    """With a judge, the judge extracts and verifies the claims (two calls), whatever the
    lexical check would say; a judge that never gives usable JSON leaves the scoring
    incomplete (exit 3) rather than counting its claims one way or the other."""
    lexical = create_scorer("groundedness")
    backed = create_scorer("groundedness", judge="mock:first")
    response = f"{GROUNDED} {INVENTED}"
    caller, store = caller_over(tmp_path / "s.db")
    with_caller = item(response)
    with_caller.caller = caller
    assert metrics(lexical, item(response)) == {"groundedness": 0.5}
    assert metrics(backed, with_caller) == {"groundedness": 1.0}  # mock:first supports all
    assert caller.calls == 2  # the claims, then one verdict call for all of them
    strict = create_scorer("hallucination", judge="mock:malformed")
    with pytest.raises(AssayError, match="could not judge case 'c' trial 1") as raised:
        metrics(strict, with_caller)
    assert raised.value.exit_code == 3
    store.close()


def test_each_grounding_score_names_its_method(tmp_path: Path) -> None:
    caller, store = caller_over(tmp_path / "s.db")
    backed = create_scorer("faithfulness", judge="mock:first")
    assert backed.models == ("mock:first",) and backed.metrics == ("faithfulness",)
    ctx = item(GROUNDED)
    ctx.caller = caller
    plain = scored(create_scorer("faithfulness"), item(f"{GROUNDED} {INVENTED}"))
    assert plain is not None and plain.fields == {"method": "lexical"}
    judged = scored(backed, ctx)  # every claim would pass lexically: the judge is asked still
    assert judged is not None and judged.fields["method"] == "judge:mock:first"
    ctx.trials = item(f"{GROUNDED} {INVENTED}").trials
    asked = scored(backed, ctx)
    assert asked is not None and asked.fields["method"] == "judge:mock:first"
    assert asked.metrics == {"faithfulness": 1.0}
    off = create_scorer("faithfulness", judge=False)
    assert off.models == () and scored(off, ctx) == plain
    store.close()


def test_judge_backed_mode_without_a_caller_is_an_input_error() -> None:
    scorer = create_scorer("hallucination", judge="mock:first")
    with pytest.raises(InputError, match="needs the run's call machinery"):
        scored(scorer, item(f"{GROUNDED} {INVENTED}"))
    with pytest.raises(InputError, match="run's store and budget"):
        create_scorer("groundedness", judge="mock:first", store="elsewhere.db")


def priced(rest: str, options: registry.ModelOptions) -> Model:
    """A mock judge that charges (1 USD per million tokens each way), for budget tests."""
    return mock.create(rest, registry.ModelOptions(price=Price(1.0, 1.0)))


def test_grounding_judge_stops_at_the_run_budget_and_leaves_no_store_in_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setitem(registry.REGISTRY, "priced", f"{__name__}:priced")
    scorer = create_scorer("groundedness", judge="priced:first")
    case = item("x").case
    trials = [
        Trial(case_id="c", trial=i, condition="b", runner="m", response=f"{GROUNDED} {INVENTED}")
        for i in range(1, 40)
    ]
    caller, store = caller_over(tmp_path / "run.db", budget_usd=0.002)
    with pytest.raises(AssayError, match="budget cannot cover another call") as raised:
        run_scorers([scorer], {"c": case}, trials, caller=caller)
    assert raised.value.exit_code == 3
    assert 0 < caller.calls < len(trials)  # some claims were asked, then the budget stopped it
    assert caller.budget.spent <= 0.002
    assert caller.budget.exhausted
    assert list(work.iterdir()) == []  # no .assay folder: the run's store holds the cache
    store.close()


def test_the_runner_keeps_trial_then_scorer_order_with_model_calling_scorers(
    tmp_path: Path,
) -> None:
    case = item("x").case
    responses = [f"{GROUNDED} {INVENTED}", GROUNDED, INVENTED]
    trials = [
        Trial(case_id="c", trial=i, condition="b", runner="m", response=text)
        for i, text in enumerate(responses, start=1)
    ]
    scorers = [
        create_scorer("hallucination"),
        create_scorer("groundedness", judge="mock:first"),
        create_scorer("faithfulness"),
    ]
    caller, store = caller_over(tmp_path / "s.db")
    scores = run_scorers(scorers, {"c": case}, trials, caller=caller)
    assert [(s.trial, s.scorer) for s in scores] == [
        (t, name) for t in (1, 2, 3) for name in ("hallucination", "groundedness", "faithfulness")
    ]
    assert [s.metrics["groundedness"] for s in scores if s.scorer == "groundedness"] == [1.0] * 3
    store.close()
