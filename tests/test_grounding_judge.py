"""Judge-backed grounding: RAGAS / DeepEval definitions with the scripted `mock:fair` judge.

`mock:fair` takes the response's sentences as its claims and checks each against the
document sentence sharing most of its words (same numbers and negation: supported; other
numbers: contradicted; too few shared words: unverifiable), so the figures are exact.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import AssayError
from assay.core.records import Case, ScoreRow, Trial
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.scorers import Score, ScoreContext, create_scorer
from assay.scorers.judge.claims import PROMPT_SHA256
from assay.scorers.runner import build_scorers, run_scorers
from assay.store import Store
from conftest import make_case, write_jsonl

TOWER = "The Eiffel Tower is 330 metres tall and stands in Paris. It opened to visitors in 1889."
LIFTS = "The lifts of the tower were built by Otis Elevators in 1889."
GROUNDED = "The Eiffel Tower stands in Paris and is 330 metres tall."
OPENED = "The tower opened to visitors in 1889."
WRONG = "The Eiffel Tower stands in Paris and is 450 metres tall."
INVENTED = "The tower was designed by Gustave Eiffel with 500 workers."


def case_with(*docs: str) -> Case:
    return Case(
        id="c", category="g", prompt="How tall is the Eiffel Tower?", risk="low", criteria=["x"],
        context=[{"id": f"d{i}", "text": d} for i, d in enumerate(docs, 1)],  # type: ignore[misc]
    )  # fmt: skip


def trial(response: str, number: int = 1) -> Trial:
    return Trial(case_id="c", trial=number, condition="b", runner="m", response=response)


class Harness:
    """A caller over a store in tmp_path, and scoring through it."""

    def __init__(self, path: Path, budget_usd: float | None = None) -> None:
        self.store = Store(path)
        self.caller = Caller(self.store, Budget(budget_usd), concurrency=4)

    def score(self, name: str, response: str, *docs: str, **options: Any) -> Score | None:
        scorer = create_scorer(name, judge=options.pop("judge", "mock:fair"), **options)
        ctx = ScoreContext.of(case_with(*(docs or (TOWER,))), trial(response), caller=self.caller)
        return asyncio.run(scorer.score(ctx))

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def judge(tmp_path: Path) -> Any:
    harness = Harness(tmp_path / "s.db")
    yield harness
    harness.close()


def test_a_faithful_response_scores_one_on_every_grounding_metric(judge: Harness) -> None:
    for name, perfect in (("groundedness", 1.0), ("faithfulness", 1.0), ("hallucination", 0.0)):
        score = judge.score(name, f"{GROUNDED} {OPENED}")
        assert score is not None and score.metrics == {name: perfect}
        assert score.fields["method"] == "judge:mock:fair"
        assert score.fields["judge_prompt_sha256"] == PROMPT_SHA256
    claims = judge.score("groundedness", f"{GROUNDED} {OPENED}")
    assert claims is not None
    assert [c["verdict"] for c in claims.fields["evidence"]["claims"]] == ["supported"] * 2
    assert all(c["quote_found"] for c in claims.fields["evidence"]["claims"])


def test_contradicted_and_unverifiable_claims_with_quoted_evidence(judge: Harness) -> None:
    """RAGAS faithfulness (our groundedness) counts supported claims; DeepEval's
    faithfulness counts the claims not contradicted (an unverifiable one passes)."""
    response = f"{GROUNDED} {WRONG} {INVENTED}"
    grounded = judge.score("groundedness", response)
    faithful = judge.score("faithfulness", response)
    assert grounded is not None and grounded.metrics == {"groundedness": pytest.approx(1 / 3)}
    assert faithful is not None and faithful.metrics == {"faithfulness": pytest.approx(2 / 3)}
    verdicts = grounded.fields["evidence"]["claims"]
    assert [(v["claim"], v["verdict"]) for v in verdicts] == [
        (GROUNDED, "supported"),
        (WRONG, "contradicted"),
        (INVENTED, "unverifiable"),
    ]
    wrong = verdicts[1]
    assert wrong["quote"] == "The Eiffel Tower is 330 metres tall and stands in Paris."
    assert wrong["quote_found"] is True and wrong["reason"]
    assert verdicts[2]["quote"] == "" and verdicts[2]["quote_found"] is False
    # The row as written (deterministic.jsonl) and as a validated Score row says it all.
    line = json.loads(json.dumps(grounded.as_json()))
    assert line["method"] == "judge:mock:fair" and line["evidence"]["claims"][1] == wrong
    assert grounded.to_row().method == "judge:mock:fair"


def test_hallucination_is_the_share_of_context_documents_contradicted(judge: Harness) -> None:
    """DeepEval's HallucinationMetric: one verdict per context document; leaving a document's
    details out is no contradiction."""
    contradicts_one = judge.score("hallucination", f"{WRONG} {OPENED}", TOWER, LIFTS)
    assert contradicts_one is not None and contradicts_one.metrics == {"hallucination": 0.5}
    contexts = contradicts_one.fields["evidence"]["contexts"]
    assert [(c["context"], c["verdict"], c["quote"]) for c in contexts] == [
        ("d1", "contradicted", WRONG),
        ("d2", "consistent", ""),
    ]
    silent = judge.score("hallucination", GROUNDED, TOWER, LIFTS)  # says nothing of the lifts
    assert silent is not None and silent.metrics == {"hallucination": 0.0}
    both = judge.score(
        "hallucination", f"{WRONG} The lifts were built by Otis Elevators in 1920.", TOWER, LIFTS
    )
    assert both is not None and both.metrics == {"hallucination": 1.0}


def test_claims_are_judged_once_for_both_claim_metrics_and_cached_for_a_rerun(
    tmp_path: Path,
) -> None:
    case = case_with(TOWER)
    trials = [trial(f"{GROUNDED} {WRONG}", 1), trial(f"{OPENED} {INVENTED}", 2)]
    entries = [
        {"name": "groundedness", "options": {"judge": "mock:fair"}},
        {"name": "faithfulness", "options": {"judge": "mock:fair"}},
        {"name": "hallucination", "options": {"judge": "mock:fair"}},
    ]
    from assay.core.suite import ScorerEntry

    def run() -> tuple[list[Score], int]:
        store = Store(tmp_path / "s.db")
        caller = Caller(store, Budget(None), concurrency=4)
        scorers = build_scorers([ScorerEntry(**e) for e in entries])  # type: ignore[arg-type]
        try:
            return run_scorers(scorers, {"c": case}, trials, caller=caller), caller.calls
        finally:
            store.flush()
            store.close()

    first, calls = run()
    # Per trial: claims + verdicts (shared by groundedness and faithfulness) + contexts.
    assert calls == 3 * len(trials)
    assert [(s.trial, s.scorer, s.metrics[s.scorer]) for s in first] == [
        (1, "groundedness", 0.5), (1, "faithfulness", 0.5), (1, "hallucination", 1.0),
        (2, "groundedness", 0.5), (2, "faithfulness", 1.0), (2, "hallucination", 0.0),
    ]  # fmt: skip
    again, calls = run()
    assert calls == 0 and again == first


def test_a_repairable_reply_is_repaired_and_a_broken_judge_is_incomplete(
    judge: Harness,
) -> None:
    repaired = judge.score("groundedness", f"{GROUNDED} {WRONG}", judge="mock:repairable")
    assert repaired is not None and repaired.metrics == {"groundedness": 0.5}
    with pytest.raises(AssayError, match="could not judge") as raised:
        judge.score("faithfulness", GROUNDED, judge="mock:malformed")
    assert raised.value.exit_code == 3


def test_without_a_judge_the_lexical_check_stays_and_says_so() -> None:
    scorer = create_scorer("groundedness")
    ctx = ScoreContext.of(case_with(TOWER), trial(f"{GROUNDED} {INVENTED}"))
    score = asyncio.run(scorer.score(ctx))
    assert score is not None and score.metrics == {"groundedness": 0.5}
    assert score.fields == {"method": "lexical"} and score.as_json()["method"] == "lexical"
    assert scorer.models == ()


def test_bad_judge_options_are_input_errors() -> None:
    for bad in ({"judge": True}, {"judge": ""}, {"judge": 3}, {"judge_options": {"x": 1}}):
        with pytest.raises(AssayError, match="bad options"):
            create_scorer("groundedness", **bad)


def test_a_suite_judge_backs_the_grounding_scorers_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a [judge] section, grounding scorers use its first judge; `judge = false` keeps
    one lexical; the report names each scorer's method."""
    cases = write_jsonl(
        tmp_path / "cases.jsonl", [make_case("g1", context=[{"id": "d1", "text": TOWER}])]
    )
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [
            {"case_id": "g1", "trial": 1, "condition": "baseline", "runner": "m",
             "response": f"{GROUNDED} {OPENED}"},
            {"case_id": "g1", "trial": 1, "condition": "candidate", "runner": "m",
             "response": f"{GROUNDED} {WRONG}"},
        ],
    )  # fmt: skip
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[judge]\njudges = ["mock:fair"]\n\n[scoring]\nscorers = [\n'
        '  { name = "groundedness" },\n'
        '  { name = "faithfulness", options = { judge = false } },\n]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = assay.evaluate(suite, trials=trials, cases=cases, store=tmp_path / "s.db")
    methods = {(r.condition, r.scorer): r.fields["method"] for r in result.evaluation.results}
    assert methods == {
        ("baseline", "groundedness"): "judge:mock:fair",
        ("baseline", "faithfulness"): "lexical",
        ("candidate", "groundedness"): "judge:mock:fair",
        ("candidate", "faithfulness"): "lexical",
    }
    judged = {
        r.condition: r.metrics["groundedness"]
        for r in result.evaluation.results
        if r.scorer == "groundedness"
    }
    assert judged == {"baseline": 1.0, "candidate": 0.5}
    report = result.report
    summaries = {(s.condition, s.scorer): s.method for s in report.scorers}
    assert summaries[("candidate", "groundedness")] == "judge:mock:fair"
    assert summaries[("candidate", "faithfulness")] == "lexical"
    checks = {(c.case_id, c.check): c.message for c in report.case_checks}  # JUnit testcases
    assert checks[("g1", "groundedness")] == "groundedness=0.5 (judge:mock:fair)"
    assert checks[("g1", "faithfulness")] == "faithfulness=0.5 (lexical)"
    from assay.reports.render import render_html, render_markdown

    assert "| candidate | groundedness (judge:mock:fair) |" in render_markdown(report)
    assert "| candidate | faithfulness (lexical) |" in render_markdown(report)
    assert "groundedness (judge:mock:fair)" in render_html(report)


def test_the_score_row_schema_declares_the_method() -> None:
    from assay.api.schemas import schema_of

    assert "method" in schema_of("score")["properties"]
    row = ScoreRow.model_validate(
        {"case_id": "c", "trial": 1, "condition": "b", "groundedness": 1, "method": "lexical"}
    )
    assert row.method == "lexical" and row.model_extra == {"groundedness": 1}


def test_a_suite_run_writes_the_method_and_a_rerun_makes_no_call(cli: Any, tmp_path: Path) -> None:
    """`assay run SUITE`: the grounding judge's calls go through the run's caller, so the
    rows and the report name the judge, and running again is answered from the cache."""
    claim = f"{GROUNDED} {WRONG}"  # mock:echo repeats its prompt: the context and these two
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("g1", prompt=claim, context=[{"id": "d1", "text": TOWER}])],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        '[judge]\njudges = ["mock:fair"]\n'
        '[scoring]\nscorers = [{ name = "groundedness" }, { name = "hallucination" }]\n',
        encoding="utf-8",
    )
    first = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert first.code in (0, 1), first.stderr
    lines = (tmp_path / "out" / "deterministic.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert {(r["scorer"], r["method"]) for r in rows} == {
        ("groundedness", "judge:mock:fair"),
        ("hallucination", "judge:mock:fair"),
    }
    figures = {(r["condition"], r["scorer"]): r["metrics"] for r in rows}
    assert figures[("candidate", "groundedness")] == {"groundedness": 0.75}  # 3 of 4 claims
    assert figures[("candidate", "hallucination")] == {"hallucination": 1.0}
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| candidate | groundedness (judge:mock:fair) | groundedness 0.75 |" in report
    again = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert again.code == first.code and again.json()["calls"] == 0


def test_the_judge_budget_of_a_suite_caps_the_grounding_judge_too(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[judge] budget_usd caps the judges' calls, the grounding judge's included: the scorers
    are given the judges' capped caller, not the run's uncapped one."""
    from assay.api import suites

    seen: list[float | None] = []
    evaluate = suites.evaluate_inputs

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["caller"].budget.limit)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(suites, "evaluate_inputs", spy)
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("g1", prompt=GROUNDED, context=[{"id": "d1", "text": TOWER}])],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        '[judge]\njudges = ["mock:fair"]\nprice = "1,1"\nbudget_usd = 5\n'
        '[scoring]\nscorers = [{ name = "groundedness" }]\n',
        encoding="utf-8",
    )
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code in (0, 1), done.stderr
    assert seen == [5.0]  # the run has no budget of its own; the judges' cap applies
