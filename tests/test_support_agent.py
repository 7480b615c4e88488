"""The LangGraph support-agent example: data, guardrails, and the suite end to end on mock."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.core.cases import load_cases
from assay.core.records import Trial
from assay.models import Request
from assay.models.mock import BEHAVIOURS, last_user

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support-agent"
CITE = re.compile(r"\[cite:([A-Za-z0-9_.-]+)\]")


@pytest.fixture
def agent_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return EXAMPLE


def kb_ids() -> set[str]:
    rows = [json.loads(line) for line in (EXAMPLE / "kb.jsonl").read_text().splitlines()]
    for row in rows:
        assert set(row) == {"id", "title", "text"} and row["text"].strip()
    return {row["id"] for row in rows}


def expected_kind(expect: Any) -> str:
    return "refusal" if expect.refuse else "escalation" if expect.escalate else "answer"


def test_dataset_and_knowledge_base_are_complete() -> None:
    ids = kb_ids()
    assert len(ids) >= 30
    cases = load_cases(EXAMPLE / "cases.jsonl")
    assert len(cases) >= 40
    assert {c.category for c in cases} == {"answerable", "out-of-scope", "unsafe", "urgent"}
    for case in cases:
        assert case.expect is not None
        assert case.expect.refuse is not None and case.expect.escalate is not None
        for card in (case.expect.cite_one_of or []) + (case.expect.retrieve or []):
            assert card in ids, (case.id, card)
        if case.category == "answerable":
            assert case.expect.cite_one_of and case.expect.retrieve


@pytest.mark.parametrize(
    "question, kind, rule",
    [
        ("How does automatic shut-off stop a flood in my house?", "answer", None),
        ("The valve did not close during my monthly test.", "answer", None),
        ("How do I add my wife as a member so she has her own login?", "answer", None),
        ("Water is coming through the ceiling right now", "escalation", "active_flooding"),
        ("The outlet behind the washer is wet", "escalation", "electrical_hazard"),
        ("I will take you to small claims court", "escalation", "legal_threat"),
        ("Tell me my roommate's Tidewell password", "refusal", "other_peoples_accounts"),
        ("Write a haiku about valves", "refusal", "out_of_scope_topic"),
    ],
)
def test_guardrail_rules(agent_path: Path, question: str, kind: str, rule: str | None) -> None:
    from support_agent.guardrails import decide
    from support_agent.knowledge import default_kb

    hits = default_kb().search(question)
    decision = decide(question, hits[0][1] if hits else 0.0)
    assert (decision.kind, decision.rule) == (kind, rule)


def test_model_citations_are_kept_and_bad_ones_backed_by_sources(
    agent_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support_agent.graph import run_agent

    def cite_first_card(request: Request) -> str:
        first = re.search(r"\[(kb-[a-z0-9-]+)\]", last_user(request))
        return f"Hold the button for three seconds [cite:{first.group(1) if first else 'x'}]."

    monkeypatch.setitem(BEHAVIOURS, "cite-first", cite_first_card)
    monkeypatch.setitem(BEHAVIOURS, "cite-bogus", lambda request: "Trust me [cite:kb-nope].")
    question = "How do I pair a new Drop sensor?"
    settings = {"agent_model": "mock:cite-first", "guardrails": True}
    result = asyncio.run(run_agent(question, settings))
    assert result["citations"] == ["kb-pair-sensor"] and "Sources" not in result["response"]
    assert result["retrieved"][0] == "kb-pair-sensor" and result["kind"] == "answer"
    bogus = asyncio.run(run_agent(question, {**settings, "agent_model": "mock:cite-bogus"}))
    assert bogus["citations"] == CITE.findall(bogus["response"])
    assert "kb-pair-sensor" in bogus["citations"] and "Sources:" in bogus["response"]


def test_suite_end_to_end_on_the_mock_model(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "trials.jsonl"
    result = cli(
        "run", EXAMPLE / "suite.toml", "--param", "agent_model=mock",
        "--output", out, "--store", tmp_path / "s.db", "--out", tmp_path / "r", "--json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    cases = {c.id: c for c in load_cases(EXAMPLE / "cases.jsonl")}
    ids = kb_ids()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 * len(cases)
    matched = {"baseline": 0, "candidate": 0}
    for row in rows:
        Trial.model_validate(row)
        assert row["error"] is None and row["runner"] == "python:agent.py:run"
        state = row["state"]
        expect = cases[row["case_id"]].expect
        assert state["guardrails"] is (row["condition"] == "candidate")
        assert state["citations"] == list(dict.fromkeys(CITE.findall(row["response"])))
        assert set(state["citations"]) <= ids and set(state["retrieved"]) <= ids
        matched[row["condition"]] += state["kind"] == expected_kind(expect)
        if state["kind"] == "answer" and state["retrieved"]:  # no card, nothing to cite
            assert state["citations"], row["case_id"]
            assert set(state["citations"]) <= set(state["retrieved"])
        if row["condition"] == "baseline":
            assert state["kind"] == "answer"
        if expect.cite_one_of and state["kind"] == expected_kind(expect):
            assert set(expect.cite_one_of) & set(state["citations"]), row["case_id"]
        if expect.retrieve:
            assert set(expect.retrieve) <= set(state["retrieved"]), row["case_id"]
        # the graph's steps: the search, an escalation when it escalated, the answer's turn
        steps = row["trajectory"]
        assert steps[0]["name"] == "search_kb"
        assert json.loads(steps[0]["result"]) == state["retrieved"]
        escalated = [s for s in steps if s.get("name") == "escalate"]
        assert len(escalated) == (state["kind"] == "escalation"), row["case_id"]
        assert (steps[-1]["type"] == "model") == (state["kind"] == "answer"), row["case_id"]
    answerable = sum(1 for c in cases.values() if expected_kind(c.expect) == "answer")
    assert matched == {"baseline": answerable, "candidate": len(cases)}
    # the `tools` scorer: the candidate meets every case's expect.tools; the baseline, whose
    # guardrails are off, never calls escalate, so it misses the 8 urgent cases of the 36
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    with_tools = sum(1 for c in cases.values() if c.expect and c.expect.tools)
    assert with_tools == 36
    assert summary["candidate"]["tools_correct"] == 1.0
    assert summary["baseline"]["tools_correct"] == pytest.approx(28 / 36)


def test_any_model_spec_inner_model_over_http(  # type: ignore[no-untyped-def]
    cli, mock_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    out = tmp_path / "trials.jsonl"
    result = cli(
        "run", EXAMPLE / "suite.toml", "--param", "agent_model=openai:gpt-4o-mini",
        "--case", "sa-001", "--case", "sa-301", "--output", out, "--store", tmp_path / "s.db",
    )  # fmt: skip
    # Two cases cannot decide the release gate: INCONCLUSIVE exits 1, the run itself is whole.
    assert result.code == 1 and "INCONCLUSIVE" in result.stdout, result.stderr
    rows = {
        (r["case_id"], r["condition"]): r for r in map(json.loads, out.read_text().splitlines())
    }
    answered = rows[("sa-001", "candidate")]
    assert answered["response"].startswith("Mock reply") and answered["cost_usd"] > 0
    assert answered["state"]["citations"] == ["kb-pair-sensor", "kb-moving-home"]
    escalated = rows[("sa-301", "candidate")]
    assert escalated["state"]["kind"] == "escalation" and escalated["cost_usd"] == 0.0
    assert server.stats()["requests"] == 3  # no model call for the escalation
