"""The README's tour runs as written (offline, on mock models)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tour_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## A tour") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the tour has a bash block"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    commands = tour_commands()
    assert len(commands) >= 8
    env = {**os.environ, "NO_COLOR": "1"}
    for argv in commands:
        assert argv[0] == "assay", argv
        done = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        # 0 = done / gate passed, 1 = the gate's verdict; never a usage error or incomplete run.
        assert done.returncode in (0, 1), (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
    for made in (
        "trials.jsonl",
        "scores.jsonl",
        "comparisons.jsonl",
        "report/report.md",
        "support-report/report.json",
    ):
        assert (tmp_path / made).is_file(), made


def test_the_single_system_gate_runs_as_written(tmp_path: Path) -> None:
    """The "Gate a single system" commands give the exit codes their comments say."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Gate a single system") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the section has a bash block"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "NO_COLOR": "1"}
    lines = [x for x in block.group(1).replace("\\\n", " ").splitlines() if x.strip()]
    assert len(lines) == 3
    for line in lines:
        command, _, comment = line.partition("#")
        expected = int(comment.rsplit("exit", 1)[1])
        argv = shlex.split(command)
        done = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == expected, (argv, done.stdout, done.stderr)
        assert "no baseline comparison" in done.stdout, (argv, done.stdout)
    report = (tmp_path / "grounded-report" / "report.md").read_text(encoding="utf-8")
    assert "| corpus:hallucination:max | fail | 1.000 | 0.200 | 4 |" in report


def section_commands(heading: str) -> list[list[str]]:
    """The commands of the first bash block under a README heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(f"## {heading}\n") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, f"{heading}: no bash block"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def test_the_import_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    commands = section_commands("Gate results from promptfoo or Inspect AI")
    assert sum(argv[1] == "import" for argv in commands) == 2
    for argv in commands:
        assert argv[0] == "assay", argv
        done = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            cwd=tmp_path, env={**os.environ, "NO_COLOR": "1"}, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        # the imports succeed; score and report give the gate's verdict (the candidates are worse)
        expected = (0,) if argv[1] == "import" else (0, 1)
        assert done.returncode in expected, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
    for made in (
        "pf-import/suite.toml",
        "pf-import/report/report.md",
        "inspect-import/scores.jsonl",
    ):
        assert (tmp_path / made).is_file(), made
