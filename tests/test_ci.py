"""CI output: the GitHub job summary, workflow annotations at the failing cases' lines, and
the workflows of docs/ci.md (parsed, and their `assay` commands run on the example)."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.api.ci import command
from conftest import contains_case, contains_suite

ROOT = Path(__file__).resolve().parents[1]

SUITE = contains_suite("ci-suite")


def case(case_id: str, word: str) -> str:
    return json.dumps(contains_case(case_id, word))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Three passing cases and `zebra` on line 5 (after a blank line), which fails."""
    lines = [case("ok-1", "actionable"), "", case("ok-2", "actionable"), case("ok-3", "actionable")]
    lines.append(case("zebra", "giraffe"))
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "suite.toml"
    path.write_text(SUITE, encoding="utf-8")
    return path


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A GitHub Actions step: its summary file already holds an earlier step's text."""
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    return summary


ZEBRA = (
    "::error title=assay%3A case zebra failed (candidate),file=cases.jsonl,line=5"
    "::contains: contains 0 < min 1"
)


def test_run_appends_the_summary_and_annotates_the_failing_case_at_its_line(
    cli: Any, suite: Path, github: Path, tmp_path: Path
) -> None:
    done = cli("run", suite, "--store", tmp_path / "s.db", "--out", tmp_path / "out")
    assert done.code == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert annotations[0] == ZEBRA
    assert annotations[1].startswith("::error title=assay release gate%3A FAIL::")
    assert "1 per-case threshold miss(es) in candidate" in annotations[1]
    assert len(annotations) == 2
    summary = github.read_text(encoding="utf-8")
    assert summary.startswith("earlier step\n")  # appended, never replaced
    assert "## ❌ ci-suite: FAIL" in summary


def test_report_appends_the_summary_and_annotates_too(
    cli: Any, suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = cli("run", suite, "--store", tmp_path / "s.db", "--out", tmp_path / "out")
    assert done.code == 1
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    trials = tmp_path / "out" / "trials.jsonl"
    done = cli("report", "--trials", trials, "--suite", suite, "--out", tmp_path / "rep")
    assert done.code == 1, done.stderr
    assert ZEBRA in done.stdout.splitlines()
    assert "## ❌ ci-suite: FAIL" in summary.read_text(encoding="utf-8")


def test_outside_github_actions_nothing_is_printed_or_written(
    cli: Any, suite: Path, tmp_path: Path
) -> None:
    done = cli("run", suite, "--store", tmp_path / "s.db", "--out", tmp_path / "out")
    assert done.code == 1
    assert "::error" not in done.stdout + done.stderr


def test_a_summary_that_cannot_be_written_is_a_warning_and_the_verdict_stands(
    cli: Any, suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder
    done = cli("run", suite, "--store", tmp_path / "s.db", "--out", tmp_path / "out")
    assert done.code == 1
    assert "WARNING: $GITHUB_STEP_SUMMARY: cannot append the report to" in done.stderr
    assert "Traceback" not in done.stderr


def test_annotation_messages_and_properties_are_escaped() -> None:
    line = command("error", "50% of\r\ncases", title="a: b, c", file="x.jsonl", line="3")
    assert line == "::error title=a%3A b%2C c,file=x.jsonl,line=3::50%25 of%0D%0Acases"


def yaml_blocks() -> list[Any]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def assay_commands(lines: list[str]) -> list[list[str]]:
    return [shlex.split(x)[1:] for x in lines if x.strip().startswith("assay ")]


def test_the_ci_docs_workflows_parse_and_their_commands_gate_the_example(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github, gitlab, *_ = yaml_blocks()  # then the sketch of two lanes
    steps = github["jobs"]["gate"]["steps"]
    assert any(s.get("uses", "").startswith("actions/checkout@") for s in steps)
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in steps)
    github_commands = assay_commands([s["run"] for s in steps if "run" in s])
    job = gitlab["assay"]
    gitlab_commands = assay_commands(job["script"])
    junit = job["artifacts"]["reports"]["junit"]
    assert github_commands and gitlab_commands

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    for argv in github_commands:
        done = cli(*argv)
        assert done.code == 0, (argv, done.stdout, done.stderr)
    assert "## ✅ gate-example: PASS" in summary.read_text(encoding="utf-8")

    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name)
    for argv in gitlab_commands:
        done = cli(*argv)
        assert done.code == 0, (argv, done.stdout, done.stderr)
    report = ET.parse(tmp_path / junit).getroot()
    assert report.tag == "testsuites" and int(report.get("tests", "0")) > 1


# -- text assay did not write cannot command the runner ------------------------------------

INJECTED = (
    "x\n::add-mask::secret\r::stop-commands::tok\n  ::set-output name=a::b\nsee ##[add-mask]z"
)


RUNNER_COMMANDS = {
    "add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
    "notice", "remove-matcher", "save-state", "set-env", "set-output", "stop-commands", "warning",
}  # fmt: skip


def obeyed(text: str) -> list[str]:
    """The workflow commands GitHub's runner would obey in a step's output, as it parses
    them: each line (split at CR, LF, CRLF) whose text after blanks is `::NAME ...::` with a
    command's name; failing that, one holding the legacy `##[NAME ...]` anywhere."""
    found = []
    for line in re.split(r"\r\n|\r|\n", text):
        command = line.lstrip()
        if command.startswith("::") and "::" in command[2:]:
            name = re.split(r"[ :]", command[2:], maxsplit=1)[0]
            if name in RUNNER_COMMANDS:
                found.append(name)
                continue
        legacy = re.search(r"##\[([^\] ]*)[^\]]*\]", line)
        if legacy and legacy.group(1) in RUNNER_COMMANDS:
            found.append(legacy.group(1))
    return found


def test_obeyed_finds_every_command_of_the_injected_text() -> None:
    assert obeyed(INJECTED) == ["add-mask", "stop-commands", "set-output", "add-mask"]


def promptfoo_labelled(tmp_path: Path, label: str) -> Path:
    """The promptfoo fixture with its candidate provider relabelled."""
    source = ROOT / "tests" / "fixtures" / "imports" / "promptfoo" / "results.json"
    text = source.read_text(encoding="utf-8").replace('"candidate"', json.dumps(label))
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_condition_label_cannot_issue_workflow_commands(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = promptfoo_labelled(tmp_path, f"candidate {INJECTED}")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    out = tmp_path / "imp"
    done = cli("import", "promptfoo", results, "--output", out)
    assert done.code == 0, done.stderr
    assert obeyed(done.stdout + done.stderr) == []
    assert "\\::add-mask::secret" in done.stdout  # shown, made inert
    candidate = f"candidate {INJECTED}"
    done = cli("score", out / "scores.jsonl", "--suite", out / "suite.toml")
    assert done.code == 1, done.stderr
    assert candidate.split("\n")[0] in done.stdout and obeyed(done.stdout + done.stderr) == []
    done = cli("report", "--suite", out / "suite.toml", "--scores", out / "scores.jsonl",
               "--trials", out / "trials.jsonl", "--out", tmp_path / "rep")  # fmt: skip
    assert done.code == 1, done.stderr
    assert set(obeyed(done.stdout + done.stderr)) == {"error"}  # assay's own annotations
    json_out = cli("import", "promptfoo", results, "--output", tmp_path / "j", "--json")
    assert obeyed(json_out.stdout) == []
    assert candidate in json_out.json()["conditions"]  # the same JSON value


MENTIONS = "cc @octocat, @acme/security-team and ops+alerts@example.com"


def uncoded(markdown: str) -> str:
    """The text of the HTML a CommonMark renderer (GFM tables on) makes, outside code spans:
    what GitHub would scan for @mentions and e-mail addresses."""
    from markdown_it import MarkdownIt

    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return re.sub(r"<code>.*?</code>", "", page, flags=re.S)


def test_mentions_and_addresses_in_report_md_and_the_summary_notify_nobody(
    cli: Any, github: Path, tmp_path: Path
) -> None:
    results = promptfoo_labelled(tmp_path, f"candidate {MENTIONS}")
    out = tmp_path / "imp"
    assert cli("import", "promptfoo", results, "--output", out).code == 0
    done = cli("report", "--suite", out / "suite.toml", "--scores", out / "scores.jsonl",
               "--trials", out / "trials.jsonl", "--out", tmp_path / "rep")  # fmt: skip
    assert done.code == 1, done.stderr
    for markdown in (github.read_text("utf-8"), (tmp_path / "rep" / "report.md").read_text()):
        assert "`@octocat`" in markdown and "`ops+alerts@example.com`" in markdown  # shown
        assert "@" not in uncoded(markdown)  # as code only


AGENT = """
def agent(case, settings):
    raise RuntimeError("server said: {text}")
"""


def test_an_error_text_cannot_issue_workflow_commands(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(text=INJECTED.encode("unicode_escape").decode()), "utf-8")
    (tmp_path / "cases.jsonl").write_text(case("c1", "yes") + "\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    done = cli("run", "--cases", tmp_path / "cases.jsonl", "--model", f"python:{agent}:agent",
               "--allow-unmetered", "--store", tmp_path / "s.db")  # fmt: skip
    assert done.code == 3, done.stderr
    assert "server said: x" in done.stderr and "\\::add-mask::secret" in done.stderr
    assert obeyed(done.stdout + done.stderr) == []
