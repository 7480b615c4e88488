"""No shell anywhere: assay never hands a command line to a shell (checked on the AST)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
