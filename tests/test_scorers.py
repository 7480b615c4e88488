"""The deterministic scorers on hand-made trials: every edge case, and the per-case gate."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from pydantic import ValidationError

from assay.core.errors import InputError
from assay.core.records import Case, Trial
from assay.core.suite import Threshold
from assay.scorers import SCORERS, Metrics, Score, ScoreContext, Scorer, create_scorer
from assay.scorers.runner import run_scorers
from assay.verdict.deterministic import error_checks, scored_trials
from assay.verdict.thresholds import threshold_checks
from conftest import make_case


def case(**expect: Any) -> Case:
    extra: dict[str, Any] = {"expect": expect} if expect else {}
    if "reference" in expect:
        extra = {"reference": expect.pop("reference"), **({"expect": expect} if expect else {})}
    return Case.model_validate(
        make_case("c1", context=[{"id": "ctx-1", "text": "context"}], **extra)
    )


def trial(response: str = "", state: dict[str, Any] | None = None, **extra: Any) -> Trial:
    data: dict[str, Any] = {
        "case_id": "c1",
        "trial": 1,
        "condition": "candidate",
        "runner": "mock",
        "response": response,
        "state": state,
    }
    data.update(extra)
    return Trial.model_validate(data)


def run(
    name: str, c: Case, t: Trial, documents: dict[str, str] | None = None, **options: Any
) -> Any:
    return metrics_of(create_scorer(name, **options), c, t, documents)


def metrics_of(
    scorer: Scorer, c: Case, t: Trial, documents: dict[str, str] | None = None
) -> Metrics | None:
    """The scorer's metrics on one trial through the async protocol (None: not scored)."""
    score = asyncio.run(scorer.score(ScoreContext.of(c, t, documents=documents)))
    if score is None:
        return None
    assert (score.case_id, score.trial, score.condition, score.scorer) == (
        t.case_id, t.trial, t.condition, scorer.name,
    )  # fmt: skip
    assert set(score.metrics) <= set(scorer.metrics)  # every metric declared up front
    return score.metrics


def test_every_family_is_registered() -> None:
    assert {
        "citation_coverage",
        "citation_correctness",
        "refusal",
        "escalation",
        "retrieval",
        "exact",
        "contains",
        "regex",
        "json_schema",
        "budget",
    } <= set(SCORERS)


def test_citation_coverage() -> None:
    c = case(cite_one_of=["kb-1", "kb-2"])
    assert run("citation_coverage", c, trial(state={"citations": ["kb-9", "kb-2"]})) == {
        "citation_coverage": 1.0
    }
    assert run("citation_coverage", c, trial(state={"citations": []})) == {"citation_coverage": 0.0}
    assert run("citation_coverage", case(), trial(state={"citations": ["kb-1"]})) is None
    assert run("citation_coverage", c, trial(state=None)) is None


def test_citation_correctness_uses_documents_and_case_context() -> None:
    docs = {"kb-1": "text"}
    ok = run("citation_correctness", case(), trial(state={"citations": ["kb-1", "ctx-1"]}), docs)
    assert ok == {"citation_correctness": 1.0, "invalid_citations": 0.0}
    bad = run("citation_correctness", case(), trial(state={"citations": ["kb-1", "made-up"]}), docs)
    assert bad == {"citation_correctness": 0.0, "invalid_citations": 1.0}
    assert run("citation_correctness", case(), trial(state={"citations": []}), docs) is None


def test_refusal_correct_and_over_refusal() -> None:
    should = case(refuse=True)
    should_not = case(refuse=False)
    assert run("refusal", should, trial(state={"kind": "refusal"})) == {
        "refusal_correct": 1.0,
        "correct_refusal": 1.0,
    }
    assert run("refusal", should, trial(state={"kind": "answer"})) == {
        "refusal_correct": 0.0,
        "correct_refusal": 0.0,
    }
    assert run("refusal", should_not, trial(state={"kind": "refusal"})) == {
        "refusal_correct": 0.0,
        "over_refusal": 1.0,
    }
    assert run("refusal", case(), trial(state={"kind": "refusal"})) is None


def test_escalation_missed_is_blocking_and_aggregate_has_precision_recall() -> None:
    scorer = create_scorer("escalation")
    expected, not_expected = case(escalate=True), case(escalate=False)
    missed = metrics_of(scorer, expected, trial(state={"kind": "answer"}))
    assert missed is not None and missed["blocker"] == 1.0
    hit = metrics_of(scorer, expected, trial(state={"kind": "escalation"}))
    false_alarm = metrics_of(scorer, not_expected, trial(state={"kind": "escalation"}))
    quiet = metrics_of(scorer, not_expected, trial(state={"kind": "answer"}))
    assert hit is not None and hit["blocker"] == 0.0
    rows = [m for m in (missed, hit, false_alarm, quiet) if m is not None]
    figures = scorer.aggregate(rows)
    assert figures["escalation_precision"] == 0.5
    assert figures["escalation_recall"] == 0.5
    assert figures["missed_escalations"] == 1.0
    assert metrics_of(scorer, case(), trial(state={"kind": "answer"})) is None


def test_retrieval_metrics_and_no_gold() -> None:
    c = case(retrieve=["d1", "d2"])
    perfect = run("retrieval", c, trial(state={"retrieved": ["d1", "d2", "x"]}), k=3)
    assert perfect == {"hit@3": 1.0, "recall@3": 1.0, "ndcg@3": pytest.approx(1.0)}
    late = run("retrieval", c, trial(state={"retrieved": ["x", "y", "d2"]}), k=3)
    assert late["hit@3"] == 1.0 and late["recall@3"] == 0.5
    assert late["ndcg@3"] == pytest.approx((1 / 2) / (1 + 1 / 1.5849625007211563))
    outside = run("retrieval", c, trial(state={"retrieved": ["x", "y", "z", "d1"]}), k=3)
    assert outside == {"hit@3": 0.0, "recall@3": 0.0, "ndcg@3": 0.0}
    assert run("retrieval", case(), trial(state={"retrieved": ["d1"]})) is None
    with pytest.raises(InputError):
        create_scorer("retrieval", k=0)


def test_exact_contains_regex() -> None:
    ref = case(reference="Paris")
    assert run("exact", ref, trial("  paris ")) == {"exact": 1.0}
    assert run("exact", ref, trial("paris"), case_sensitive=True) == {"exact": 0.0}
    assert run("exact", case(), trial("Paris")) is None
    c = case(contains=["alpha", "Beta"], not_contains=["secret"])
    assert run("contains", c, trial("ALPHA and gamma")) == {"contains": 0.5, "not_contains": 1.0}
    assert run("contains", c, trial("alpha beta SECRET")) == {"contains": 1.0, "not_contains": 0.0}
    assert run("contains", case(), trial("x")) is None
    r = case(regex=r"\bwc -l\b")
    assert run("regex", r, trial("use wc -l FILE")) == {"regex": 1.0}
    assert run("regex", r, trial("use cat")) == {"regex": 0.0}
    assert run("regex", case(), trial("x")) is None
    with pytest.raises(InputError, match="invalid regular expression"):
        create_scorer("regex", pattern="(")
    with pytest.raises(ValidationError, match=r"expect\.regex"):  # refused as the case is read
        case(regex="(")


def test_json_schema() -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    c = case(json_schema=schema)
    assert run("json_schema", c, trial('{"n": 3}')) == {"json_valid": 1.0, "json_schema": 1.0}
    assert run("json_schema", c, trial('```json\n{"n": 3}\n```')) == {
        "json_valid": 1.0,
        "json_schema": 1.0,
    }
    assert run("json_schema", c, trial('{"n": "3"}')) == {"json_valid": 1.0, "json_schema": 0.0}
    assert run("json_schema", c, trial("not json")) == {"json_valid": 0.0, "json_schema": 0.0}
    assert run("json_schema", case(), trial("{}")) is None
    with pytest.raises(InputError, match="invalid JSON Schema"):
        create_scorer("json_schema", schema={"type": 5})
    with pytest.raises(ValidationError, match=r"expect\.json_schema"):
        case(json_schema={"type": 5})


def score_of(name: str, c: Case, t: Trial, **options: Any) -> Score:
    score = asyncio.run(create_scorer(name, **options).score(ScoreContext.of(c, t)))
    assert score is not None
    return score


# The patterns of the report: exponential for a backtracking engine on these responses.
WORDS = r"^(\w+\s?)*$"
NESTED = r"^(a+)+$"


@pytest.mark.timeout(60)
def test_catastrophic_patterns_neither_hang_nor_pass() -> None:
    """`expect.regex` and a JSON Schema `pattern` that backtrack exponentially on the response
    end within their limits: a figure of 0 or an errored row, never a pass."""
    responses = {WORDS: "word " * 5000 + "w!", NESTED: "a" * 5000 + "!"}
    for pattern, response in responses.items():
        started = time.process_time()
        score = score_of("regex", case(regex=pattern), trial(response))
        assert score.metrics.get("regex", 0.0) == 0.0, pattern
        schema = {"type": "object", "properties": {"text": {"pattern": pattern}}}
        as_json = json.dumps({"text": response})
        score = score_of("json_schema", case(json_schema=schema), trial(as_json))
        assert score.metrics.get("json_schema", 0.0) == 0.0, pattern
        assert time.process_time() - started < 10  # CPU: 1 s a search, 2 s a validation at most


@pytest.mark.timeout(60)
def test_a_search_past_its_time_limit_is_an_errored_row_that_fails_the_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assay.core import bounded

    monkeypatch.setattr(bounded, "REGEX_TIMEOUT_S", 0.05)
    slow = r"^(a|aa)+$"  # exponential on the regex module too
    response = "a" * 5000 + "b"
    scorers = [create_scorer("regex"), create_scorer("json_schema")]
    schema = {"properties": {"text": {"pattern": slow}}}
    cases = {"c1": case(regex=slow, json_schema=schema)}
    trials = [trial(response), trial(json.dumps({"text": response}), trial=2)]
    results = run_scorers(scorers, cases, trials)
    errored = [r for r in results if r.fields.get("error")]
    assert {(r.scorer, r.trial) for r in errored} >= {("regex", 1), ("json_schema", 2)}
    for row in errored:
        assert row.metrics == {} and "limit" in row.fields["error"], row
    checks = error_checks(results, scorers)
    assert {c.name for c in checks} >= {"scorer:regex", "scorer:json_schema"}
    assert all(c.status == "fail" for c in checks)
    assert "ran over its 0.05 s limit" in checks[0].reason


def test_budget() -> None:
    t = trial("x", latency_s=2.0, usage={"input_tokens": 10, "output_tokens": 5}, cost_usd=0.01)
    figures = run("budget", case(), t, max_latency_s=1.0)
    assert figures["tokens"] == 15.0 and figures["within_budget"] == 0.0
    assert "within_budget" not in run("budget", case(), t)
    assert run("budget", case(), trial("x")) is None


def test_errored_trials_are_never_scored() -> None:
    c = case(contains=["x"])
    scorers = [create_scorer("contains")]
    errored = trial("", error="timeout")
    assert run_scorers(scorers, {"c1": c}, [errored]) == []
    assert scored_trials([], scorers, [errored]) == []


def test_per_case_thresholds_fail_the_gate() -> None:
    c = case(contains=["alpha", "beta"])
    scorers = [create_scorer("contains"), create_scorer("escalation")]
    trials = [trial("alpha", trial=1), trial("alpha beta", trial=2)]
    results = run_scorers(scorers, {"c1": c}, trials)
    [check] = threshold_checks(results, {"contains": Threshold(min=1.0)}, "candidate")
    assert check.status == "fail" and "c1: contains 0.75 < min 1" in check.reason
    [ok] = threshold_checks(results, {"contains": Threshold(min=0.7)}, "candidate")
    assert ok.status == "pass"
    rows = scored_trials(results, scorers, trials)
    assert [r.metrics for r in rows] == [{"contains": 0.5}, {"contains": 1.0}]


def test_missed_escalation_becomes_a_row_blocker() -> None:
    scorers = [create_scorer("escalation")]
    t = trial(state={"kind": "answer"})
    results = run_scorers(scorers, {"c1": case(escalate=True)}, [t])
    [row] = scored_trials(results, scorers, [t])
    assert row.blocker and row.metrics == {"escalation_correct": 0.0}


def test_scorers_run_from_code_with_an_event_loop_already_running() -> None:
    """Scoring was synchronous: a caller inside a running loop (a notebook) still works."""
    c = case(contains=["alpha"])
    scorers = [create_scorer("contains")]

    async def inside_a_loop() -> list[Any]:
        return run_scorers(scorers, {"c1": c}, [trial("alpha")])

    [score] = asyncio.run(inside_a_loop())
    assert score.metrics == {"contains": 1.0}


def test_text_is_normalised_as_whitespace_runs_collapsed() -> None:
    """`normalise_text` (contains, exact match) collapses every run of what `\\s` matches to
    one space and trims the ends, Unicode spaces included, as its former `re.sub` did."""
    import random
    import re
    import sys

    from assay.scorers.common import normalise_text

    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(r"\s", chr(c)))
    rng = random.Random(7)
    bits = [*spaces, "a", "B", "é", "ß", " x ", "\u200b"]  # U+200B is not a space
    for _ in range(5000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(0, 12)))
        collapsed = re.sub(r"\s+", " ", text).strip()
        assert normalise_text(text, True) == collapsed, repr(text)
        assert normalise_text(text, False) == collapsed.casefold(), repr(text)
