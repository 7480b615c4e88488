"""The metrics bridge made complete (issue 30, item 4): DeepEval's GEval and RAGAS's
answer_relevancy work, a metric's missing inputs are exit 2 before any call, and every value
a library gives is range-checked.

The judge is `openai:judge` on the bench mock server (127.0.0.1), which answers each library
prompt by its schema's title (`schema_replies`) and `/v1/embeddings` with bag-of-words
vectors; every other judge request gets a schema-shaped reply.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mock_server import embedding

from conftest import make_case, write_jsonl
from test_external_metrics import loopback_only, needs_libraries

__all__ = ["loopback_only"]  # the autouse fixture: no connection but to 127.0.0.1

TOWER = "The Eiffel Tower is 330 metres tall and stands in Paris."
QUESTION = "How tall is the Eiffel Tower?"


def _suite(tmp_path: Path, url: str, scorers: str, cases: list[dict[str, Any]]) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\n'
        f'[judge]\njudges = ["openai:judge"]\nbase_url = "{url}"\nprice = "1,1"\n'
        f"[scoring]\nscorers = [\n{scorers}\n]\n",
        encoding="utf-8",
    )
    return suite


def _rows(tmp_path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    lines = (tmp_path / "out" / "deterministic.jsonl").read_text(encoding="utf-8").splitlines()
    return {(r["case_id"], r["scorer"]): r for r in map(json.loads, lines)}


def _server(mock_server: Any, **replies: Any) -> Any:
    return mock_server(
        judge_reply="schema", schema_replies={k: json.dumps(v) for k, v in replies.items()}
    )


@needs_libraries
def test_geval_takes_criteria_or_evaluation_steps_from_its_options(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """`deepeval:GEval` with `criteria` (DeepEval writes the steps) or `evaluation_steps`:
    the judge's 0–10 score is DeepEval's 0–1 figure, its reason the evidence."""
    server = _server(
        mock_server,
        Steps={"steps": ["Compare the height given with 330 metres."]},
        ReasonScore={"reason": "the height is right", "score": 8},
    )
    suite = _suite(
        tmp_path,
        server.url,
        '{ name = "deepeval:GEval", options = { criteria = "Is the height right?" } },\n'
        '{ name = "deepeval:GEval", options = { name = "steps", evaluation_steps = ['
        '"Compare the height given with 330 metres."], evaluation_params = ["input",'
        ' "actual_output", "expected_output"] } },',
        [make_case("c1", prompt=QUESTION, reference="330 metres")],
    )
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code == 0, done.stderr
    rows = _rows(tmp_path)
    assert rows[("c1", "deepeval:g_eval")]["metrics"] == {"deepeval:g_eval": 0.8}
    assert rows[("c1", "deepeval:g_eval")]["evidence"]["reason"] == "the height is right"
    assert rows[("c1", "deepeval:g_eval:steps")]["metrics"] == {"deepeval:g_eval:steps": 0.8}


@needs_libraries
def test_geval_without_criteria_or_steps_is_exit_2_naming_the_suite_field(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    server = _server(mock_server)
    for options in ("{}", '{ evaluation_params = ["input", "tools"], criteria = "x" }'):
        suite = _suite(
            tmp_path,
            server.url,
            f'{{ name = "deepeval:GEval", options = {options} }},',
            [make_case("c1", prompt=QUESTION)],
        )
        done = cli("run", suite, "--store", tmp_path / "s.db")
        assert done.code == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "[scoring] scorers" in done.stderr and "deepeval:GEval" in done.stderr
    assert "options.criteria or options.evaluation_steps" in cli(
        "run", _suite(tmp_path, server.url, '{ name = "deepeval:GEval" },', [make_case("c")]),
        "--store", tmp_path / "s.db",
    ).stderr  # fmt: skip
    assert server.stats()["requests"] == 0
    assert not (tmp_path / "s.db").exists()


@needs_libraries
def test_ragas_answer_relevancy_embeds_through_the_judges_endpoint(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """`ragas:answer_relevancy`: the judge writes the question the answer answers, and the
    judge's OpenAI-compatible endpoint embeds both questions (`/v1/embeddings`); the figure
    is their cosine similarity. The embeddings go through the run's call cache: a rerun
    makes no call at all."""
    server = _server(mock_server, AnswerRelevanceOutput={"question": QUESTION, "noncommittal": 0})
    other = "Where does the Eiffel Tower stand?"
    suite = _suite(
        tmp_path,
        server.url,
        '{ name = "ragas:answer_relevancy", options = { strictness = 1 } },',
        [make_case("same", prompt=QUESTION), make_case("other", prompt=other)],
    )
    done = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert done.code == 0, done.stderr
    rows = _rows(tmp_path)
    assert rows[("same", "ragas:answer_relevancy")]["metrics"] == {"ragas:answer_relevancy": 1.0}
    a, b = embedding(QUESTION), embedding(other)
    cosine = sum(x * y for x, y in zip(a, b, strict=True)) / math.hypot(*a) / math.hypot(*b)
    assert 0 < cosine < 1
    value = rows[("other", "ragas:answer_relevancy")]["metrics"]["ragas:answer_relevancy"]
    assert math.isclose(value, cosine, rel_tol=1e-6)
    embedded = server.stats()["embeddings"]
    assert embedded >= 2
    again = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert again.code == 0 and again.json()["calls"] == 0
    assert server.stats()["embeddings"] == embedded


@needs_libraries
def test_missing_required_inputs_are_exit_2_before_any_call_naming_file_line_and_field(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """FaithfulnessMetric needs the case's context, context_recall its reference too: a
    case without them is an input error naming the case file, line and field — not a
    metric that writes no row and a gate that passes."""
    server = _server(mock_server)
    suite = _suite(
        tmp_path,
        server.url,
        '{ name = "deepeval:FaithfulnessMetric" },\n{ name = "ragas:context_recall" },',
        [
            make_case("grounded", reference="330 metres", context=[{"id": "d", "text": TOWER}]),
            make_case("bare"),
        ],
    )
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "cases.jsonl:2: context:" in done.stderr and "deepeval:faithfulness" in done.stderr
    assert "cases.jsonl:2: reference:" in done.stderr and "ragas:context_recall" in done.stderr
    assert "cases.jsonl:1" not in done.stderr
    assert server.stats()["requests"] == 0
    assert not (tmp_path / "s.db").exists()


@needs_libraries
def test_a_value_outside_the_metrics_range_is_an_error_row_never_a_figure(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """RAGAS's context_recall counts the judge's `attributed` as given (5 → 5.0) and GEval
    divides the judge's score by 10 (15 → 1.5): each such value is an error row naming the
    metric and the value, and the gate fails on it rather than averaging it in."""
    server = _server(
        mock_server,
        ContextRecallOutput={
            "classifications": [{"statement": "330 metres", "reason": "r", "attributed": 5}]
        },
        Steps={"steps": ["Judge it."]},
        ReasonScore={"reason": "off the scale", "score": 15},
    )
    suite = _suite(
        tmp_path,
        server.url,
        '{ name = "ragas:context_recall" },\n'
        '{ name = "deepeval:GEval", options = { criteria = "Is it right?" } },',
        [make_case("c1", prompt=QUESTION, reference="330 m", context=[{"id": "d", "text": TOWER}])],
    )
    done = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert done.code == 1, done.stderr
    rows = _rows(tmp_path)
    recall = rows[("c1", "ragas:context_recall")]
    assert recall["metrics"] == {}
    assert "ragas:context_recall" in recall["error"] and "5" in recall["error"]
    geval = rows[("c1", "deepeval:g_eval")]
    assert geval["metrics"] == {} and "1.5" in geval["error"]
    failed = [c for c in done.json()["release_gate"]["checks"] if c["status"] == "fail"]
    assert {c["metric"] for c in failed} == {"ragas:context_recall", "deepeval:g_eval"}


@needs_libraries
def test_context_from_a_knowledge_base_is_checked_per_trial(tmp_path: Path) -> None:
    """With a knowledge base the system may retrieve the context, so a case without any
    passes the check before the run; a trial that then retrieved nothing is an error row."""
    import asyncio

    from assay.core.records import Case, Trial
    from assay.engine.budget import Budget
    from assay.engine.calls import Caller
    from assay.scorers import ScoreContext, create_scorer
    from assay.scorers.inputs import missing_inputs
    from assay.store import Store

    scorer = create_scorer("deepeval:FaithfulnessMetric", judge="mock:fair")
    case = Case.model_validate(make_case("bare", prompt=QUESTION))
    assert [field for _, field, _ in missing_inputs([scorer], [case])] == ["context"]
    assert missing_inputs([scorer], [case], retrievable=True) == []
    store = Store(tmp_path / "s.db")
    try:
        trial = Trial(case_id="bare", trial=1, condition="b", runner="m", response="330 m.")
        ctx = ScoreContext.of(case, trial, caller=Caller(store, Budget(None), concurrency=1))
        score = asyncio.run(scorer.score(ctx))
    finally:
        store.close()
    assert score is not None and score.metrics == {}
    assert "no context" in score.fields["error"] and "retrieval_context" in score.fields["error"]
