"""No shell anywhere: assay never hands a command line to a shell (checked on the AST), and
case text reaches CLI runners as one literal argument through a real `assay run`."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import invoke, make_case, write_jsonl

SRC = Path(__file__).resolve().parents[2] / "src"

# Calls that run their argument through a shell, by dotted name.
SHELL_CALLS = {
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
}


def dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def shell_uses(source: str, filename: str = "<src>") -> list[str]:
    """`file:line: what` for every call that may run a shell."""
    tree = ast.parse(source, filename)
    aliases: dict[str, str] = {}  # from os import system as run -> run: os.system
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        head, _, rest = name.partition(".")
        resolved = ".".join(p for p in (aliases.get(head, head), rest) if p)
        if resolved in SHELL_CALLS:
            found.append(f"{filename}:{node.lineno}: {resolved}()")
        for keyword in node.keywords:
            is_false = isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            if keyword.arg == "shell" and not is_false:
                found.append(f"{filename}:{node.lineno}: {resolved or 'call'}(shell=...)")
    return found


def test_no_shell_in_the_source() -> None:
    files = sorted(SRC.rglob("*.py"))
    assert files
    problems = [p for f in files for p in shell_uses(f.read_text(encoding="utf-8"), str(f))]
    assert problems == []


@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run('ls', shell=True)",
        "import subprocess as sp\nsp.Popen(cmd, shell=flag)",
        "from subprocess import check_output\ncheck_output(c, shell=1)",
        "import os\nos.system('ls')",
        "from os import popen\npopen('ls')",
        "from os import system as run\nrun('ls')",
        "import subprocess\nsubprocess.getoutput('ls')",
        "import asyncio\nasyncio.create_subprocess_shell('ls')",
    ],
)
def test_the_check_catches_each_shell_form(code: str) -> None:
    assert shell_uses(code)


def test_the_check_allows_argument_lists() -> None:
    code = "import subprocess\nsubprocess.run(['ls', '-l'], shell=False)\nsubprocess.run(['ls'])"
    assert shell_uses(code) == []


# -- hostile case text reaches CLI runners as one literal argument, through `assay run` ------
# tests/test_command_runners.py checks each runner's argv on a direct generate() call; here
# the text comes from a case catalogue and goes through the whole `assay run` path.

HOSTILE = [
    "--help",
    "-rf / ; rm -rf ~ && echo `id` $(whoami) | cat > /tmp/x",
    "it's \"quoted\" 'twice' \\ back\\slash",
    "line one\nline two\n\n  -x indented dash line",
    "$HOME ${PATH} * ? [a-z] ~ > < & ! # {prompt} %s {0}",
]

# Each fake CLI appends its argv (after the program name) to $FAKE_LOG and answers in its format.
FAKES = {
    "tool": "print('ok')",
    "claude": "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,"
    " 'result': 'ok', 'total_cost_usd': 0.0, 'usage': {'input_tokens': 1, 'output_tokens': 1}}))",
    "codex": "print(json.dumps({'type': 'item.completed', 'item': {'id': 'i1',"
    " 'type': 'agent_message', 'text': 'ok'}}))\n"
    "print(json.dumps({'type': 'turn.completed', 'usage': {'input_tokens': 1,"
    " 'output_tokens': 1}}))",
}


@pytest.mark.parametrize(
    ("spec", "program"),
    [("command:tool --ask {prompt}", "tool"), ("claude", "claude"), ("codex", "codex")],
)
def test_case_text_reaches_cli_runners_as_one_literal_argument(
    spec: str, program: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / program
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "with open(os.environ['FAKE_LOG'], 'a') as log:\n"
        "    log.write(json.dumps(sys.argv[1:]) + '\\n')\n" + FAKES[program] + "\n"
    )
    fake.chmod(0o755)
    log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    cases = write_jsonl(
        tmp_path / "cases.jsonl", [make_case(f"h{i}", prompt=p) for i, p in enumerate(HOSTILE)]
    )
    out = tmp_path / "trials.jsonl"
    result = invoke("run", "--cases", cases, "--model", spec, "--trials", 1, "--concurrency", 2,
                    "--allow-unmetered", "--output", out, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 0, result.stderr
    trials = [json.loads(line) for line in out.read_text().splitlines()]
    assert [t["response"] for t in trials] == ["ok"] * len(HOSTILE)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # Each prompt arrived whole, unexpanded, as the last argument, after `--` for the agents.
    assert sorted(argv[-1] for argv in calls) == sorted(HOSTILE)
    for argv in calls:
        if program == "tool":
            assert argv[:-1] == ["--ask"]
        else:
            assert argv[-2] == "--"
    assert not (tmp_path / "x").exists()
