"""Agent trajectories: the record, and its capture from claude, codex and python: agents."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assay.core.records import Trial
from assay.core.redact import scrub_record
from assay.core.trajectory import RESULT_LIMIT, ToolCall
from assay.models import Message, ModelError, Request, create_model
from assay.models.cli_formats import parse_claude_json, parse_codex_jsonl
from assay.models.python import to_response
from conftest import make_case, write_jsonl

FIXTURES = Path(__file__).parent / "fixtures" / "trajectories"
CLAUDE_STREAM = (FIXTURES / "claude-stream.jsonl").read_text()
CODEX_EXEC = (FIXTURES / "codex-exec.jsonl").read_text()


def test_claude_stream_json_tool_calls_and_turns() -> None:
    reply = parse_claude_json(CLAUDE_STREAM)
    assert reply.text == "The tests pass." and reply.cost_usd == 0.0123
    assert reply.trajectory == [
        # the two events of message msg_01 (its text, then its tool_use) are one turn
        {"type": "model", "text": "I'll run the tests first.", "input_tokens": 10,
         "output_tokens": 42},
        {"type": "tool", "name": "Bash", "id": "toolu_01",
         "arguments": {"command": "pytest -q", "description": "Run the tests"},
         "result": "3 passed in 0.02s"},
        {"type": "model", "text": "", "input_tokens": 60, "output_tokens": 20},
        {"type": "tool", "name": "Read", "id": "toolu_02",
         "arguments": {"file_path": "/tmp/x/missing.txt"},
         "error": "<tool_use_error>File does not exist.</tool_use_error>"},
        {"type": "model", "text": "The tests pass.", "input_tokens": 90, "output_tokens": 6},
    ]  # fmt: skip


def test_claude_json_without_verbose_has_no_trajectory() -> None:
    result = CLAUDE_STREAM.strip().splitlines()[-1]
    assert parse_claude_json(result).trajectory is None


def test_claude_long_tool_result_is_cut_with_its_size_kept() -> None:
    long = "x" * (RESULT_LIMIT + 500)
    stream = CLAUDE_STREAM.replace("3 passed in 0.02s", long)
    tool = parse_claude_json(stream).trajectory[1]  # type: ignore[index]
    assert tool["result"] == "x" * RESULT_LIMIT and tool["result_chars"] == RESULT_LIMIT + 500


def test_codex_exec_json_items_as_steps() -> None:
    reply = parse_codex_jsonl(CODEX_EXEC)
    assert reply.text == "The tests pass."
    assert reply.trajectory == [
        {"type": "tool", "name": "shell", "id": "item_1",
         "arguments": {"command": "bash -lc 'pytest -q'"}, "result": "3 passed in 0.02s\n"},
        {"type": "tool", "name": "shell", "id": "item_2",
         "arguments": {"command": "bash -lc 'cat missing.txt'"},
         "result": "cat: missing.txt: No such file or directory\n", "error": "exit code 1"},
        {"type": "tool", "name": "search_kb", "id": "item_3",
         "arguments": {"query": "refund policy"},
         "result": '{"content": [{"type": "text", "text": "kb-7: refunds within 30 days"}],'
                   ' "structured_content": null}'},
        {"type": "model", "text": "The tests pass."},
    ]  # fmt: skip


def write_program(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    path.chmod(0o755)


def ask(spec: str) -> Any:
    model = create_model(spec)
    request = Request(messages=[Message("user", "run the tests")], max_tokens=64, timeout_s=20)

    async def go() -> Any:
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_claude_cli_streams_its_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake `claude` on PATH that prints recorded stream-json only when asked for it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (tmp_path / "stream.jsonl").write_text(CLAUDE_STREAM)
    write_program(
        folder,
        "claude",
        "args = sys.argv[1:]\n"
        "fmt = args[args.index('--output-format') + 1]\n"
        "if fmt != 'stream-json' or '--verbose' not in args:\n"
        "    sys.exit('stream-json needs --verbose')\n"
        f"print(open({str(tmp_path / 'stream.jsonl')!r}).read())",
    )
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    reply = ask("claude:sonnet")
    assert [s.get("name") for s in reply.trajectory] == [None, "Bash", None, "Read", None]


AGENT_STEPS = [
    {"type": "model", "text": "looking it up", "input_tokens": 5, "output_tokens": 2},
    {"type": "tool", "name": "search_kb", "arguments": {"q": "refund"}, "result": "kb-7",
     "duration_s": 0.01},
]  # fmt: skip


def test_python_agent_reports_its_trajectory() -> None:
    reply = to_response({"response": "ok", "trajectory": AGENT_STEPS, "kind": "answer"}, None)
    assert reply.trajectory == AGENT_STEPS
    assert reply.state == {"kind": "answer"}  # the steps are not kept twice


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("search_kb", "must be a list"),
        ([{"type": "tool", "arguments": {}}], "step 0.tool.name"),
        ([{"type": "tool", "name": "x", "arguments": "q=1"}], "arguments"),
        ([{"type": "thought", "text": "hm"}], "step 0"),
    ],
)
def test_python_agent_bad_trajectory_is_an_error(steps: Any, message: str) -> None:
    with pytest.raises(ModelError, match="the agent's trajectory") as caught:
        to_response({"response": "ok", "trajectory": steps}, None)
    assert message in str(caught.value)


OPENAI_MESSAGES = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "Refund?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "search_kb", "arguments": '{"q": "refund"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "kb-7: 30 days"},
    {"role": "assistant", "content": "Within 30 days."},
]  # fmt: skip
ANTHROPIC_MESSAGES = [
    {"role": "user", "content": "Refund?"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "search_kb", "input": {"q": "refund"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "kb-7: 30 days"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Within 30 days."}]},
]  # fmt: skip
# LangGraph's final state holds LangChain message objects: attributes, not keys.
LANGGRAPH_MESSAGES = [
    SimpleNamespace(type="human", content="Refund?"),
    SimpleNamespace(
        type="ai", content="", usage_metadata={"input_tokens": 7, "output_tokens": 3},
        tool_calls=[{"name": "search_kb", "args": {"q": "refund"}, "id": "call_1"}],
    ),
    SimpleNamespace(type="tool", content="kb-7: 30 days", tool_call_id="call_1",
                    status="success"),
    SimpleNamespace(type="ai", content="Within 30 days.", tool_calls=[]),
]  # fmt: skip


@pytest.mark.parametrize("messages", [OPENAI_MESSAGES, ANTHROPIC_MESSAGES, LANGGRAPH_MESSAGES])
def test_python_agent_messages_become_steps(messages: list[Any]) -> None:
    reply = to_response({"response": "Within 30 days.", "messages": messages}, None)
    assert reply.trajectory is not None
    calls = [s for s in reply.trajectory if s["type"] == "tool"]
    assert len(calls) == 1
    assert calls[0]["name"] == "search_kb" and calls[0]["arguments"] == {"q": "refund"}
    assert calls[0]["result"] == "kb-7: 30 days"
    assert [s["type"] for s in reply.trajectory] == ["model", "tool", "model"]
    assert reply.trajectory[-1]["text"] == "Within 30 days."
    assert reply.state == {}  # the messages are not kept in the state


def test_trial_record_holds_the_trajectory_and_its_schema_shows_it(cli: Any) -> None:
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "base", "runner": "r", "response": "ok",
         "trajectory": AGENT_STEPS}
    )  # fmt: skip
    assert isinstance(trial.trajectory[1], ToolCall)  # type: ignore[index]
    assert trial.trajectory[1].result == "kb-7"  # type: ignore[index, union-attr]
    result = cli("schema", "trial")
    assert result.code == 0
    schema = json.loads(result.stdout)
    assert "trajectory" in schema["properties"]
    assert "result_chars" in json.dumps(schema)


def test_secrets_in_tool_steps_are_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_API_KEY", "hunter2-very-secret")
    record = {"trajectory": [
        {"type": "tool", "name": "shell", "arguments": {"command": "env"},
         "result": "SHOP_API_KEY=hunter2-very-secret\nOTHER=sk-abcdefghijklmnop"}]}  # fmt: skip
    scrubbed = scrub_record(record)
    text = json.dumps(scrubbed)
    assert "hunter2" not in text and "sk-abcdefghijklmnop" not in text


RUN_AGENT = """
def agent(case, settings):
    return {"response": "done", "trajectory": [
        {"type": "tool", "name": "search_kb", "arguments": {"q": case.prompt},
         "result": "y" * 10000},
        {"type": "model", "text": "done"},
    ]}
"""


def test_run_keeps_the_trajectory_in_trials_and_the_store(cli: Any, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(RUN_AGENT)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c1")])
    out = tmp_path / "trials.jsonl"
    store = tmp_path / "s.db"
    result = cli(
        "run", "--cases", cases, "--model", f"python:{agent}:agent", "--trials", 1,
        "--output", out, "--store", store, "--allow-unmetered",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (row,) = map(json.loads, out.read_text().splitlines())
    tool = row["trajectory"][0]
    assert tool["name"] == "search_kb" and tool["arguments"] == {"q": "Question c1?"}
    assert len(tool["result"]) == RESULT_LIMIT and tool["result_chars"] == 10000
    from assay.store import Store

    handle = Store(store)
    try:
        (stored,) = handle.trial_records(row["run_id"])
    finally:
        handle.close()
    assert stored["trajectory"] == row["trajectory"]


TURNS_AGENT = """
def agent(case, settings):
    return {"response": "ok", "trajectory": [
        {"type": "tool", "name": "lookup", "arguments": {"n": len(case.prompt)}}]}
"""


def test_a_multi_turn_trial_keeps_every_turns_steps(cli: Any, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(TURNS_AGENT)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c1", turns=["and then?"])])
    out = tmp_path / "trials.jsonl"
    result = cli(
        "run", "--cases", cases, "--model", f"python:{agent}:agent", "--trials", 1,
        "--output", out, "--store", tmp_path / "s.db", "--allow-unmetered",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    (row,) = map(json.loads, out.read_text().splitlines())
    assert [s["name"] for s in row["trajectory"]] == ["lookup", "lookup"]  # one per turn
