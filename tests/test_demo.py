"""`assay demo` runs the support-agent example end to end."""

from __future__ import annotations

import json
from pathlib import Path


def test_demo_on_the_mock_model(cli, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = cli("demo", "--model", "mock", "--out", out, "--store", tmp_path / "s.db")
    assert result.code == 0, result.stderr
    assert "release gate (stats, candidate candidate):" in result.stdout
    for name in (
        "trials.jsonl",
        "deterministic.jsonl",
        "summary.json",
        "report.md",
        "report.json",
        "report.junit.xml",
    ):
        assert (out / name).is_file(), name
    trials = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    assert len(trials) == 24 and {t["condition"] for t in trials} == {"baseline", "candidate"}
    summary = json.loads((out / "summary.json").read_text())
    assert "escalation_correct" in summary["comparisons"]["candidate"]
