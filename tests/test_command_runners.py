"""CLI runners: claude, codex and command:ARGV with their parsers, process handling and CLI."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from assay.core.errors import InputError
from assay.models import Message, ModelError, ModelOptions, Request, create_model, model_price
from assay.models.cli_formats import parse_claude_json, parse_codex_jsonl, parse_text
from assay.models.pricing import Price
from conftest import make_case, write_jsonl

CLAUDE_OK = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 2310,
    "num_turns": 1,
    "result": "Use `git reset --soft HEAD~1`.",
    "session_id": "7f1c",
    "total_cost_usd": 0.0123,
    "usage": {
        "input_tokens": 4,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 20,
    },
    "modelUsage": {"claude-sonnet-4-5-20250929": {"inputTokens": 4}},
}


def codex_events(*texts: str, usage: dict | None = None) -> str:
    events: list[dict] = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
    events.append(
        {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "x"}}
    )
    for index, text in enumerate(texts, 1):
        item = {"id": f"i{index}", "type": "agent_message", "text": text}
        events.append({"type": "item.completed", "item": item})
    events.append(
        {
            "type": "turn.completed",
            "usage": usage or {"input_tokens": 50, "cached_input_tokens": 10, "output_tokens": 7},
        }
    )
    return "".join(json.dumps(e) + "\n" for e in events)


# -- parsers on recorded-shape output -------------------------------------------------------


def test_claude_json_success_with_trailing_garbage() -> None:
    out = json.dumps(CLAUDE_OK) + "\nWarning: something minor\n\x1b[33mnot json\x1b[0m\n"
    parsed = parse_claude_json(out)
    assert parsed.text == CLAUDE_OK["result"]
    assert parsed.input_tokens == 1104 and parsed.output_tokens == 20
    assert parsed.cost_usd == 0.0123
    assert parsed.model == "claude-sonnet-4-5-20250929"


def test_claude_json_pretty_printed_and_verbose_list() -> None:
    assert parse_claude_json("note\n" + json.dumps(CLAUDE_OK, indent=2)).text == CLAUDE_OK["result"]
    listing = json.dumps([{"type": "system", "subtype": "init"}, CLAUDE_OK])
    assert parse_claude_json(listing).cost_usd == 0.0123


@pytest.mark.parametrize(
    "change, message",
    [
        ({"is_error": True, "result": "Credit balance is too low"}, "Credit balance is too low"),
        ({"subtype": "error_max_turns", "result": None}, "error_max_turns"),
        ({"subtype": "error_during_execution"}, "error_during_execution"),
        ({"result": 42}, "no `result` text"),
    ],
)
def test_claude_json_errors(change: dict, message: str) -> None:
    with pytest.raises(ModelError, match=message) as caught:
        parse_claude_json(json.dumps({**CLAUDE_OK, **change}))
    assert not caught.value.retryable


def test_claude_json_overload_is_retryable() -> None:
    bad = {**CLAUDE_OK, "is_error": True, "result": "API Error: 529 Overloaded"}
    with pytest.raises(ModelError) as caught:
        parse_claude_json(json.dumps(bad))
    assert caught.value.retryable and caught.value.overload


@pytest.mark.parametrize("out", ["", "\n\n", "plain words\n", '{"type": "system"}\n', "{broken"])
def test_claude_json_without_a_result(out: str) -> None:
    with pytest.raises(ModelError, match="claude-json"):
        parse_claude_json(out)


def test_codex_jsonl_last_agent_message_and_usage() -> None:
    out = "WARN starting\n" + codex_events("first", "final answer") + "trailing garbage\n"
    parsed = parse_codex_jsonl(out)
    assert parsed.text == "final answer"
    assert parsed.state is not None and parsed.state["agent_messages"] == ["first", "final answer"]
    assert (parsed.input_tokens, parsed.output_tokens) == (50, 7)
    assert parsed.cost_usd is None


@pytest.mark.parametrize(
    "out, message",
    [
        ("", "printed nothing"),
        (
            '{"type": "thread.started"}\n{"type": "turn.completed", "usage": {}}\n',
            "no agent_message",
        ),
        (
            '{"type": "turn.started"}\n{"type": "turn.failed", "error": {"message": "quota hit"}}\n',
            "quota hit",
        ),
        ('{"type": "error", "message": "stream disconnected"}\n', "stream disconnected"),
    ],
)
def test_codex_jsonl_errors(out: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        parse_codex_jsonl(out)


def test_text_format() -> None:
    assert parse_text("hello\n  world  \n\n").text == "hello\n  world"
    with pytest.raises(ModelError, match="printed nothing"):
        parse_text(" \n")


# -- fake executables -------------------------------------------------------------------------


def write_program(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys, time\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


def ask(model, text: str = "hello", **kwargs) -> object:  # type: ignore[no-untyped-def]
    request = Request(messages=[Message("user", text)], max_tokens=64, timeout_s=20, **kwargs)

    async def go():  # type: ignore[no-untyped-def]
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


RECORD_ARGS = """
log = os.environ.get("FAKE_LOG")
if log:
    with open(log, "w") as f:
        json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(),
                   "stdin": sys.stdin.read() if not sys.stdin.isatty() else None}, f)
"""


def test_claude_argv_result_usage_and_fresh_workdir(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "claude", RECORD_ARGS + f"print(json.dumps({CLAUDE_OK!r}))")
    model = create_model("claude:claude-sonnet-4-5")
    reply = ask(model, "-rf; $(whoami) 'quoted' \"dq\"\nsecond line")
    seen = json.loads(log.read_text())
    assert seen["argv"] == [
        "--disable-slash-commands",
        "--print",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--model",
        "claude-sonnet-4-5",
        "--tools",
        "",
        "--",
        "-rf; $(whoami) 'quoted' \"dq\"\nsecond line",
    ]
    assert seen["stdin"] == ""  # stdin is closed (/dev/null)
    assert Path(seen["cwd"]).resolve() != Path.cwd().resolve()
    assert not Path(seen["cwd"]).exists()  # the temporary folder is gone after the call
    assert reply.text == CLAUDE_OK["result"] and reply.cost_usd == 0.0123
    assert reply.input_tokens == 1104 and reply.output_tokens == 20
    assert model_price(model) == Price(3.0, 15.0)


def test_claude_budget_flag_only_with_a_budget(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "claude", RECORD_ARGS + f"print(json.dumps({CLAUDE_OK!r}))")
    ask(create_model("claude"), "q")
    argv = json.loads(log.read_text())["argv"]
    assert "--max-budget-usd" not in argv and "--model" not in argv
    ask(create_model("claude", ModelOptions(price=Price(0, 0))), "q", budget_usd=0.5)
    argv = json.loads(log.read_text())["argv"]
    assert argv[argv.index("--max-budget-usd") + 1] == "0.500000"
    assert argv[-2:] == ["--", "q"]


@pytest.mark.parametrize(
    "spec, price",
    [
        ("claude:sonnet", Price(3.0, 15.0)),
        ("claude:opus", Price(15.0, 75.0)),
        ("claude:haiku", Price(1.0, 5.0)),
        ("claude", Price(15.0, 75.0)),  # whatever model it defaults to: the dearest Claude
        ("claude:default", Price(15.0, 75.0)),
    ],
)
def test_claude_aliases_have_a_price(bin_dir: Path, spec: str, price: Price) -> None:
    write_program(bin_dir, "claude", f"print(json.dumps({CLAUDE_OK!r}))")
    assert model_price(create_model(spec)) == price
    assert model_price(create_model(spec, ModelOptions(price=Price(1, 2)))) == Price(1, 2)


def test_claude_alias_runs_under_a_budget(cli, bin_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_program(bin_dir, "claude", f"print(json.dumps({CLAUDE_OK!r}))")
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    for spec in ("claude:sonnet", "claude"):
        result = cli(
            "run", "--cases", cases, "--model", spec, "--trials", 1, "--budget-usd", 1,
            "--store", tmp_path / "s.db",
        )  # fmt: skip
        assert result.code == 0, result.stderr


def test_claude_error_result_with_nonzero_exit(bin_dir: Path) -> None:
    bad = {**CLAUDE_OK, "is_error": True, "subtype": "success", "result": "Invalid API key"}
    write_program(bin_dir, "claude", f"print(json.dumps({bad!r}))\nsys.exit(1)")
    with pytest.raises(ModelError, match=r"claude exited with status 1: .*Invalid API key"):
        ask(create_model("claude"))


def test_codex_argv_answer_and_price(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "codex", RECORD_ARGS + f"sys.stdout.write({codex_events('a', 'b')!r})")
    model = create_model("codex", ModelOptions(price=Price(1, 1)))
    reply = ask(model, "--help")
    assert json.loads(log.read_text())["argv"] == [
        "exec",
        "--ephemeral",
        "--ignore-user-config",
        "--sandbox",
        "read-only",
        "--skip-git-repo-check",
        "--json",
        "--",
        "--help",
    ]
    # codex reports tokens, no cost: a price meters them (without one it is unmetered)
    assert reply.text == "b" and model_price(model) == Price(1, 1)
    assert reply.cost_usd == pytest.approx((50 + 7) / 1e6)
    assert model_price(create_model("codex")) is None
    assert reply.state == {
        "agent_messages": ["a", "b"],
        "usage": {"input_tokens": 50, "cached_input_tokens": 10, "output_tokens": 7},
    }


def test_command_placeholder_is_one_literal_argument(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "tool", RECORD_ARGS + "print('answer:', sys.argv[-1])")
    prompt = "--version; rm -rf / && echo `id` | cat > x * ? ~ $HOME \\ 'a' \"b\"\nnext"
    reply = ask(create_model("command:tool --mode 'two words' --ask={prompt}"), prompt)
    seen = json.loads(log.read_text())
    assert seen["argv"] == ["--mode", "two words", f"--ask={prompt}"]
    assert seen["stdin"] == ""
    assert reply.text == f"answer: --ask={prompt}"
    assert reply.cost_usd is None and reply.state is None


def test_command_without_placeholder_uses_stdin(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "tool", RECORD_ARGS + "print('ok')")
    messages = [Message("system", "Be brief."), Message("user", "-n 'x' $y")]
    model = create_model("command:tool")
    asyncio.run(model.generate(Request(messages=messages, max_tokens=5, timeout_s=20)))
    seen = json.loads(log.read_text())
    assert seen["argv"] == [] and seen["stdin"] == "Be brief.\n\n-n 'x' $y"


def test_command_formats_and_configured_workdir(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.json"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "agent", RECORD_ARGS + f"sys.stdout.write({codex_events('x')!r})")
    options = ModelOptions(response_format="codex-jsonl", price=Price(1e6, 0), workdir=tmp_path)
    reply = ask(create_model("command:agent {prompt}", options))
    assert reply.text == "x" and reply.cost_usd == 50.0  # priced from the reported usage
    assert Path(json.loads(log.read_text())["cwd"]) == tmp_path


def test_nonzero_exit_is_an_error_with_stderr_detail(bin_dir: Path) -> None:
    write_program(
        bin_dir, "tool", "print('partial')\nprint('boom: bad flag', file=sys.stderr)\nsys.exit(3)"
    )
    with pytest.raises(ModelError, match="tool exited with status 3: boom: bad flag") as caught:
        ask(create_model("command:tool {prompt}"))
    assert "partial" in (caught.value.detail or "") and not caught.value.retryable


def test_empty_output_is_an_error(bin_dir: Path) -> None:
    write_program(bin_dir, "tool", "pass")
    with pytest.raises(ModelError, match="printed nothing"):
        ask(create_model("command:tool"))


def test_huge_output_parses_and_oversized_output_is_refused(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_program(bin_dir, "tool", "sys.stdout.write('y' * 8_000_000)")
    assert len(ask(create_model("command:tool")).text) == 8_000_000
    monkeypatch.setattr("assay.models.command.MAX_OUTPUT_BYTES", 1_000_000)
    with pytest.raises(ModelError, match="more than 1000000 bytes"):
        ask(create_model("command:tool"))


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def test_timeout_kills_the_whole_process_tree(bin_dir: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write_program(
        bin_dir,
        "slow",
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(60)",
    )
    model = create_model("command:slow")
    request = Request(messages=[Message("user", "hi")], max_tokens=5, timeout_s=1.5)
    started = time.monotonic()
    with pytest.raises(ModelError, match="timeout") as caught:
        asyncio.run(model.generate(request))
    assert caught.value.retryable and time.monotonic() - started < 10
    parent, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while not (_gone(parent) and _gone(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(parent) and _gone(child)


def test_cancellation_kills_the_process_group(bin_dir: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write_program(
        bin_dir, "slow", f"open({str(pids)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)"
    )
    model = create_model("command:slow")
    request = Request(messages=[Message("user", "hi")], max_tokens=5, timeout_s=None)

    async def go() -> None:
        task = asyncio.create_task(model.generate(request))
        while not pids.exists() or not pids.read_text():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    pid = int(pids.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


@pytest.mark.parametrize(
    "spec, options, message",
    [
        ("command:", ModelOptions(), "give the command"),
        ("command:tool 'unclosed", ModelOptions(), "No closing quotation"),
        ("command:no-such-program-xyz", ModelOptions(), "not on PATH"),
        ("command:tool", ModelOptions(response_format="yaml"), "unknown response format"),
    ],
)
def test_bad_command_specs(bin_dir: Path, spec: str, options: ModelOptions, message: str) -> None:
    write_program(bin_dir, "tool", "print('x')")
    with pytest.raises(InputError, match=message):
        create_model(spec, options)


def test_claude_missing_is_an_input_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InputError, match="'claude' is not on PATH"):
        create_model("claude")


# -- through `assay run` ------------------------------------------------------------------


def test_run_with_format_flag_and_errors(cli, bin_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_program(
        bin_dir,
        "agent",
        "prompt = sys.argv[-1]\n"
        "if 'c2' in prompt:\n"
        "    print(json.dumps({'type': 'result', 'subtype': 'error_max_turns', 'is_error': True}))\n"
        "    sys.exit(1)\n"
        "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,"
        " 'result': 'done ' + prompt, 'total_cost_usd': 0.001,"
        " 'usage': {'input_tokens': 3, 'output_tokens': 2}}))\n"
        "print('warning: trailing line')",
    )
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])
    out = tmp_path / "trials.jsonl"
    result = cli(
        "run",
        "--cases",
        cases,
        "--model",
        "command:agent --prompt {prompt}",
        "--format",
        "claude-json",
        "--trials",
        1,
        "--allow-unmetered",
        "--output",
        out,
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 3, result.stderr
    rows = {r["case_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["c0"]["response"] == "done Question c0?" and rows["c0"]["cost_usd"] == 0.001
    assert rows["c0"]["usage"] == {"input_tokens": 3, "output_tokens": 2}
    assert rows["c2"]["response"] == "" and "error_max_turns" in rows["c2"]["error"]
    assert "ERROR: trial c2" in result.stderr


# A claude that keeps --max-budget-usd as Claude Code does: it runs model turns of $0.01 (three
# for an answer) and, once what it spent reaches the cap, stops with error_max_budget_usd.
BUDGETED_CLAUDE = """
args = sys.argv[1:]
cap = float(args[args.index("--max-budget-usd") + 1]) if "--max-budget-usd" in args else None
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(f"{cap}\\n")
cents = 0
for turn in range(3):
    time.sleep(0.02)
    cents += 1
    if turn < 2 and cap is not None and cents / 100 >= cap:
        print(json.dumps({"type": "result", "subtype": "error_max_budget_usd", "is_error": True,
                          "total_cost_usd": cents / 100}))
        sys.exit(1)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "ok",
                  "total_cost_usd": cents / 100, "usage": {"input_tokens": 9, "output_tokens": 3}}))
"""


def test_claude_budget_cap_holds_at_any_concurrency(  # type: ignore[no-untyped-def]
    cli, bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each claude call is told its own reservation as --max-budget-usd, never what is left
    of the whole budget, so calls in flight together cannot spend it several times over."""
    log = tmp_path / "caps.txt"
    monkeypatch.setenv("FAKE_LOG", str(log))
    write_program(bin_dir, "claude", BUDGETED_CLAUDE)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(10)])
    result = cli(
        "run", "--cases", cases, "--model", "claude:sonnet", "--budget-usd", 0.1,
        "--concurrency", 8, "--json", "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert result.code == 3, result.stderr
    summary = json.loads(result.stdout)
    assert summary["run_spent_usd"] <= 0.1 + 1e-9
    assert summary["stopped"] == "budget" and summary["answered"] == 3
    caps = [float(line) for line in log.read_text().split()]
    assert caps[0] == pytest.approx(0.1)  # the first call, whose cost nothing predicts, runs alone
    assert all(cap <= 0.07 + 1e-9 for cap in caps[1:])
    assert sum(caps[1:]) <= 0.07 + 1e-6  # reservations in flight never exceed what is left


def test_command_agent_is_stopped_by_a_call_above_its_reservation(  # type: ignore[no-untyped-def]
    cli, bin_dir: Path, tmp_path: Path
) -> None:
    """command: cannot be told a limit: the first call that reports more than it reserved
    stops every new call at once, and the run says so."""
    counter = tmp_path / "n"
    write_program(
        bin_dir,
        "agent",
        f"path = {str(counter)!r}\n"
        "n = int(open(path).read()) + 1 if os.path.exists(path) else 1\n"
        "open(path, 'w').write(str(n))\n"
        "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,"
        " 'result': 'ok', 'total_cost_usd': 0.01 if n == 1 else 6.0}))",
    )
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(5)])
    args = ["run", "--cases", cases, "--model", "command:agent {prompt}", "--format",
            "claude-json", "--price", "3,15", "--budget-usd", 5, "--concurrency", 1,
            "--store", tmp_path / "s.db"]  # fmt: skip
    result = cli(*args, "--json")
    assert result.code == 3
    summary = json.loads(result.stdout)
    # $0.01 alone, then $6 where the $4.99 left was reserved: no new call after that one
    assert summary["calls"] == 2 and summary["stopped"] == "budget"
    assert summary["run_spent_usd"] == pytest.approx(6.01)
    note = "command:agent {prompt}: a call cost $6.0000, more than the $4.9900 reserved for it"
    assert any(note in line for line in summary["notes"])
    assert note in result.stderr


def test_command_agent_cap_holds_when_costs_repeat(cli, bin_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The issue's case: $0.03 a call, a $0.05 cap, one call at a time: it spent $0.06."""
    write_program(
        bin_dir,
        "agent",
        "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,"
        " 'result': 'ok', 'total_cost_usd': 0.03}))",
    )
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(5)])
    result = cli(
        "run", "--cases", cases, "--model", "command:agent {prompt}", "--format", "claude-json",
        "--price", "3,15", "--budget-usd", 0.05, "--concurrency", 1, "--json",
        "--store", tmp_path / "s.db",
    )  # fmt: skip
    summary = json.loads(result.stdout)
    assert result.code == 3 and summary["run_spent_usd"] <= 0.05 and summary["answered"] == 1


def test_claude_error_result_still_costs() -> None:
    out = {**CLAUDE_OK, "subtype": "error_max_budget_usd", "is_error": True, "result": None}
    with pytest.raises(ModelError, match="error_max_budget_usd") as caught:
        parse_claude_json(json.dumps(out))
    assert caught.value.cost_usd == 0.0123 and not caught.value.retryable


def test_run_rejects_an_unknown_format(cli, cases_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "run",
        "--cases",
        cases_file,
        "--model",
        "mock",
        "--format",
        "yaml",
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 2 and "unknown response format 'yaml'" in result.stderr


def test_suite_conditions_choose_their_format(cli, bin_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reply = {"type": "result", "subtype": "success", "is_error": False, "result": "parsed"}
    write_program(bin_dir, "agent", f"print(json.dumps({reply!r}))")
    write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\nmodel = "command:agent {prompt}"\ntrials = 1\n'
        "[run]\nallow_unmetered = true\n"
        '[[conditions]]\nname = "raw"\n'
        '[[conditions]]\nname = "json"\nformat = "claude-json"\n'
    )
    out = tmp_path / "trials.jsonl"
    result = cli("run", suite, "--output", out, "--store", tmp_path / "s.db")
    assert result.code == 0, result.stderr
    rows = {r["condition"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["json"]["response"] == "parsed"
    assert json.loads(rows["raw"]["response"]) == reply
    suite.write_text(suite.read_text().replace('"claude-json"', '"xml"'))
    bad = cli("run", suite, "--store", tmp_path / "s.db")
    assert bad.code == 2 and "format" in bad.stderr and "suite.toml" in bad.stderr
