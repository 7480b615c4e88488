"""The worked examples of the docs run as written (offline, on mock models), with closer checks
than tests/test_docs_examples.py makes of every block: the tour of getting-started.md, the
gates of single-system.md, importing.md's imports, pytest.md, ci.md's annotations and
judge-bench.md's first command."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def page_section(page: str, heading: str) -> str:
    """The text of docs/PAGE under a heading (`# pytest`, `## A tour`), up to the next heading
    of its level or above (outside code blocks)."""
    lines = (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index(f"{heading}\n")
    level = len(heading.split(" ", 1)[0])
    fenced = False
    for end in range(start + 1, len(lines)):
        fenced ^= lines[end].lstrip().startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", lines[end]):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def section_commands(page: str, heading: str) -> list[list[str]]:
    """The commands of the first bash block under a heading of docs/PAGE."""
    block = re.search(r"```bash\n(.*?)```", page_section(page, heading), re.S)
    assert block, f"{heading}: no bash block"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    commands = section_commands("getting-started.md", "## A tour")
    assert len(commands) >= 8
    # The clinic example's judge is disabled without its key: never a call off this machine.
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
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
    """single-system.md's commands give the exit codes their comments say."""
    section = page_section("single-system.md", "# Gate a single system")
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
    row = "| corpus:hallucination:max | lexical | interval | fail | 1.000 | [0.832, 1.000] | 0.200 | 20 |"
    assert row in report


def test_the_import_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    commands = section_commands("importing.md", "# Gate results from promptfoo or Inspect AI")
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


def test_the_pytest_section_runs_as_written(tmp_path: Path) -> None:
    """`pytest --assay-suite` gives the outcome its comment says; the fixture example passes."""
    from conftest import plugin_args

    section = page_section("pytest.md", "# pytest")
    bash = re.search(r"```bash\n(.*?)```", section, re.S)
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert bash and code, "the section has a bash and a python block"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "test_release.py").write_text(code.group(1), encoding="utf-8")
    command, _, comment = bash.group(1).strip().partition("#")
    argv = shlex.split(command)
    assert argv[0] == "pytest"
    plugin = [*plugin_args(), "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *argv[1:], *plugin, "--ignore=test_release.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    expected = comment.split(":")[0].strip()  # "145 passed"
    assert expected in done.stdout, done.stdout
    assert "PASSED examples/gate/suite.toml::gate-001[candidate]" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "test_release.py", *plugin],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)


def test_the_ci_section_runs_as_written(tmp_path: Path) -> None:
    """The GitHub Actions example prints the annotations the section shows, and appends the
    report to the summary file."""
    section = page_section("ci.md", "## Try it on the example")
    bash = re.search(r"```bash\n(.*?)```", section, re.S)
    shown = re.search(r"```text\n(.*?)```", section, re.S)
    assert bash and shown
    command, _, comment = bash.group(1).strip().partition("#")
    words = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    while "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    assert words[0] == "assay"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    done = subprocess.run(
        [sys.executable, "-m", "assay", *words[1:]],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == int(comment.rsplit("exit", 1)[1]), (done.stdout, done.stderr)
    printed = done.stdout.splitlines()
    for line in shown.group(1).splitlines():
        if line != "...":
            prefix = line.split("...")[0]
            assert any(p.startswith(prefix) for p in printed), (line, printed)
    assert "## ❌ grounded: FAIL" in (tmp_path / "summary.md").read_text(encoding="utf-8")


EXTERNAL_DATA = ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")


@pytest.mark.skipif(not EXTERNAL_DATA.is_dir(), reason="external data not available")
def test_the_judge_bench_example_runs_as_written(tmp_path: Path, serve_folder: Any) -> None:
    """The first `judge-bench` command, as written (no --data: the pinned files are fetched,
    here from a mirror on 127.0.0.1 serving the third-party data folder, into the test's
    ASSAY_CACHE), gives the exit and the figures its comment says."""
    block = re.search(
        r"```bash\n(.*?)```",
        page_section("judge-bench.md", "# Benchmarking a judge on public labelled data"),
        re.S,
    )
    assert block, "the section has a bash block"
    line = block.group(1).replace("\\\n", " ").splitlines()[0]
    command, _, comment = line.partition("#")
    argv = shlex.split(command)
    assert argv[:2] == ["assay", "judge-bench"] and "--data" not in argv
    mirror = serve_folder(EXTERNAL_DATA)
    env = {**os.environ, "NO_COLOR": "1", "ASSAY_JUDGE_BENCH_MIRROR": mirror.url}
    done = subprocess.run(
        [sys.executable, "-m", "assay", *argv[1:]],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == int(comment.split("exit", 1)[1].split(":")[0]), done.stderr
    assert "accuracy 0.500" in done.stdout and "position bias 1.000" in done.stdout
    assert mirror.requests, "the sets' files were fetched from the mirror"
