"""Grounding scorers: claims checked against the case context and retrieved documents."""

from __future__ import annotations

from typing import Any

import pytest

from assay.core.records import Case, Trial
from assay.scorers import ScoreInput, create_scorer
from assay.scorers.grounding import claims

DOC = "The Eiffel Tower is 330 metres tall and stands in Paris. It opened to visitors in 1889."


def item(response: str, context: str | None = DOC, **trial: Any) -> ScoreInput:
    case = Case(
        id="c", category="g", prompt="p", risk="low", criteria=["x"],
        context=[{"id": "d1", "text": context}] if context else None,  # type: ignore[list-item]
    )  # fmt: skip
    return ScoreInput(
        case, Trial(case_id="c", trial=1, condition="b", runner="m", response=response, **trial)
    )


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
    assert scorer.score(item(f"{GROUNDED} {INVENTED}")) == {name: expected}


def test_a_wrong_number_is_not_supported() -> None:
    wrong = "The Eiffel Tower stands in Paris and is 450 metres tall."
    assert create_scorer("groundedness").score(item(wrong)) == {"groundedness": 0.0}
    assert create_scorer("faithfulness").score(item(wrong)) == {"faithfulness": 0.0}


def test_retrieved_documents_count_as_sources() -> None:
    scorer = create_scorer("groundedness")
    bare = item(GROUNDED, context=None, state={"retrieved": ["kb1"]})
    assert scorer.score(bare) is None  # nothing to check against: not scored, never 1.0
    bare.documents = {"kb1": DOC}
    assert scorer.score(bare) == {"groundedness": 1.0}


def test_errored_or_empty_trials_are_not_scored() -> None:
    scorer = create_scorer("hallucination")
    assert scorer.score(item("", error="boom")) is None
    assert scorer.score(item("Ok.")) is None


def test_corpus_threshold_for_the_gate() -> None:
    grounded = create_scorer("groundedness", threshold=0.8)
    assert grounded.aggregate([{"groundedness": 1.0}, {"groundedness": 0.5}]) == {
        "groundedness": 0.75, "groundedness_threshold": 0.8, "groundedness_ok": 0.0,
    }  # fmt: skip
    hallucination = create_scorer("hallucination", threshold=0.3)
    assert hallucination.aggregate([{"hallucination": 0.25}])["hallucination_ok"] == 1.0


def test_judge_backed_checking_asks_only_about_unsupported_claims(tmp_path: Any) -> None:
    lexical = create_scorer("groundedness")
    backed = create_scorer("groundedness", judge="mock:first", store=str(tmp_path / "s.db"))
    response = f"{GROUNDED} {INVENTED}"
    assert lexical.score(item(response)) == {"groundedness": 0.5}
    assert backed.score(item(response)) == {"groundedness": 1.0}
    strict = create_scorer("hallucination", judge="mock:malformed", store=str(tmp_path / "s.db"))
    assert strict.score(item(response)) == {"hallucination": 0.5}  # no verdict: unsupported
