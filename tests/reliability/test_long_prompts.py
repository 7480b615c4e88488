"""A prompt over 128 KiB cannot be one argument (`Argument list too long`): claude and codex
get it on stdin, and a `command:` that takes it as `{prompt}` is refused before the run,
naming the case; short prompts still go as one literal argument."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl

FAKE = """#!{python}
import json, sys
args = sys.argv[1:]
if "--" in args:
    prompt, how = args[args.index("--") + 1], "argument"
elif args and args[-1] == "-" or "{name}" == "claude":
    prompt, how = sys.stdin.read(), "stdin"
else:
    prompt, how = "", "nothing"
text = f"{{len(prompt)}} characters by {{how}}"
if "{name}" == "claude":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
        "result": text, "total_cost_usd": 0.001,
        "usage": {{"input_tokens": 3, "output_tokens": 1}}}}))
else:
    print(json.dumps({{"type": "item.completed",
        "item": {{"id": "i1", "type": "agent_message", "text": text}}}}))
    print(json.dumps({{"type": "turn.completed",
        "usage": {{"input_tokens": 3, "output_tokens": 1}}}}))
"""
LONG = 200_000


@pytest.fixture
def cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        program = bin_dir / name
        program.write_text(FAKE.format(python=sys.executable, name=name))
        program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("long", prompt="x" * LONG), make_case("short", prompt="hi")],
    )


@pytest.mark.parametrize("model", ["claude", "codex"])
def test_long_prompts_go_on_stdin(tmp_path: Path, cli: Any, cases: Path, model: str) -> None:
    done = cli("run", "--cases", cases, "--model", model, "--allow-unmetered", "--retries",
               "0", "--store", tmp_path / "s.db", "--output", tmp_path / "t.jsonl")  # fmt: skip
    assert done.code == 0, done.stderr
    trials = {t["case_id"]: t for t in map(json.loads, (tmp_path / "t.jsonl").open())}
    assert trials["long"]["response"] == f"{LONG} characters by stdin"
    assert trials["short"]["response"] == "2 characters by argument"


def test_a_prompt_too_long_for_an_argument_is_refused_before_the_run(
    tmp_path: Path, cli: Any, cases: Path
) -> None:
    done = cli("run", "--cases", cases, "--model", "command:codex exec {prompt}",
               "--allow-unmetered", "--store", tmp_path / "s.db",
               "--output", tmp_path / "t.jsonl")  # fmt: skip
    assert done.code == 2, done.stderr
    assert "ERROR: case long [baseline]: command:codex exec {prompt}: the prompt is" in done.stderr
    assert "drop {prompt} from the command so the prompt goes on stdin" in done.stderr
    assert "case short" not in done.stderr and not (tmp_path / "t.jsonl").exists()
