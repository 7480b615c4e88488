"""The claude-code example: Claude Code (a stand-in on PATH streaming stream-json tool-use
events as the real CLI does) with a skill, gated on the tool calls it makes; and the
trajectory judge over its steps in a suite run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "claude-code"


@pytest.fixture(autouse=True)
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`claude` on PATH: the example's stand-in, run by this interpreter."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "claude"
    program.write_text(
        f"#!{sys.executable}\nimport runpy, sys\n"
        f"sys.argv[0] = {str(EXAMPLE / 'fake_claude.py')!r}\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def suite_copy(tmp_path: Path, *, skill: bool = True, extra: str = "") -> Path:
    """The example's suite with absolute paths (so it runs from tmp), with or without its
    skill, and `extra` appended."""
    text = (EXAMPLE / "suite.toml").read_text()
    for name in ("cases.jsonl", "skill.md", "project"):
        text = text.replace(f'"{name}"', f'"{(EXAMPLE / name).as_posix()}"')
    if not skill:
        text = text.replace(f'skill = "{(EXAMPLE / "skill.md").as_posix()}"\n', "")
    path = tmp_path / "suite.toml"
    path.write_text(text + extra)
    return path


def run(cli: Any, tmp_path: Path, suite: Path) -> tuple[Any, list[dict[str, Any]], Path]:
    out = tmp_path / "out"
    result = cli("run", suite, "--output", tmp_path / "t.jsonl", "--store", tmp_path / "s.db",
                 "--out", out)  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    return result, rows, out


def tool_checks(out: Path) -> dict[str, bool]:
    report = json.loads((out / "report.json").read_text())
    return {c["case_id"]: c["passed"] for c in report["case_checks"] if c["check"] == "tools"}


def test_with_its_skill_claude_runs_the_tests_and_the_gate_passes(cli: Any, tmp_path: Path) -> None:
    result, rows, out = run(cli, tmp_path, EXAMPLE / "suite.toml")
    assert result.code == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout
    for row in rows:
        tools = [s for s in row["trajectory"] if s["type"] == "tool"]
        assert [t["name"] for t in tools] == ["Bash"], row["case_id"]
        assert "pytest" in tools[0]["arguments"]["command"]
        assert tools[0]["result"].endswith("2 passed in 0.01s")
        assert row["cost_usd"] == 0.0042  # total_cost_usd
    assert tool_checks(out) == {"cc-001": True, "cc-002": True, "cc-003": True}


def test_without_the_skill_it_reads_the_code_instead_and_the_gate_fails(
    cli: Any, tmp_path: Path
) -> None:
    result, rows, out = run(cli, tmp_path, suite_copy(tmp_path, skill=False))
    assert result.code == 1 and "FAIL" in result.stdout, result.stdout + result.stderr
    calls = {r["case_id"]: [s.get("name") for s in r["trajectory"] if s["type"] == "tool"]
             for r in rows}  # fmt: skip
    assert calls == {"cc-001": ["Read"], "cc-002": ["Read"], "cc-003": ["Bash"]}
    assert tool_checks(out) == {"cc-001": False, "cc-002": False, "cc-003": True}


def test_a_suite_judge_over_the_trajectory_reads_claudes_steps(cli: Any, tmp_path: Path) -> None:
    judge = '\n[judge]\njudges = ["mock:fair"]\nover = "trajectory"\n'
    result, _, out = run(cli, tmp_path, suite_copy(tmp_path, extra=judge))
    assert result.code == 0, result.stdout + result.stderr
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == 3
    for row in scores:
        assert row["source"] == "judge:mock:fair"
        assert row["evidence"]["correctness"] == ['Steps: #1 model "I\'ll run the tests first."']
