"""A suite whose judge cannot be read still writes every report: INCOMPLETE, exit 3, the
judge named with how many items it failed (not an error about the weights it would have
fed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl

SUITE = """\
name = "tenancy"
cases = "cases.jsonl"
trials = 1
output = "out"

[[conditions]]
name = "baseline"
model = "mock:echo"

[[conditions]]
name = "candidate"
model = "mock:answer"

[scoring]
{scorers}
weights = {{ correctness = 0.7, safety = 0.3 }}

[judge]
judges = ["mock:malformed"]
"""


@pytest.mark.parametrize("scorers", ['scorers = ["contains"]', ""])
def test_unreadable_judge_writes_every_report_incomplete_blaming_the_judge(
    cli: Any, tmp_path: Path, scorers: str
) -> None:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"lease-{i}", expect={"contains": ["deposit"]}) for i in range(3)],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(scorers=scorers), encoding="utf-8")

    result = cli("run", suite, "--store", tmp_path / "s.db")

    assert result.code == 3, result.stderr
    out = tmp_path / "out"
    for name in ("report.md", "report.json", "report.junit.xml", "summary.json"):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "INCOMPLETE"
    assert report["baseline_compared"] is True  # a comparison still, not a single system
    first = report["reasons"][0]
    assert "judge mock:malformed could not judge 6 of 6 item(s)" in first
    assert "unusable" in first  # why: its replies could not be read
    assert not any("weight" in reason for reason in report["reasons"])
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["release_gate"]["verdict"] == "INCOMPLETE"
    assert "INCOMPLETE" in (out / "report.junit.xml").read_text(encoding="utf-8")
    assert "judge mock:malformed could not judge" in (out / "report.md").read_text("utf-8")
    assert "weighted metric" not in result.stderr + result.stdout


def test_a_judge_beside_scorers_says_the_weighted_score_leaves_them_out(
    cli: Any, tmp_path: Path
) -> None:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"lease-{i}", expect={"contains": ["actionable"]}) for i in range(5)],
    )
    suite = tmp_path / "suite.toml"
    text = SUITE.format(scorers='scorers = ["contains"]').replace(
        "weights = { correctness = 0.7, safety = 0.3 }\n", ""
    )
    suite.write_text(text.replace("mock:malformed", "mock:fair"), encoding="utf-8")
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code in (0, 1), result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert any(
        "weighs the judge's or reviewers' score rows only" in note and "contains" in note
        for note in report["notes"]
    ), report["notes"]
    assert "weighs the judge's or reviewers' score rows only" in (
        tmp_path / "out" / "report.md"
    ).read_text(encoding="utf-8")
