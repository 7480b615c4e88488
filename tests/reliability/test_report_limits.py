"""The HTML report stays small whatever the data: a multi-megabyte case prompt is cut in
the drill-down (with a note of its length), as responses already were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.reports.detail import MAX_PROMPT
from conftest import make_case, write_jsonl

METRICS = ["correctness", "autonomy", "actionability", "safety", "concision"]
HUGE = 5 * 1024 * 1024


def test_html_report_cuts_huge_prompts(tmp_path: Path, cli: Any) -> None:
    cases = [make_case(f"c{i}", prompt=f"Question {i}? " + "p" * HUGE) for i in range(3)]
    scores = [
        {"case_id": f"c{i}", "trial": 1, "condition": cond, **{m: 3.0 + s for m in METRICS},
         "source": "human:ana"}
        for i in range(3) for cond, s in (("baseline", 0.0), ("candidate", (-1.0, 1.0, 0.5)[i]))
    ]  # fmt: skip
    write_jsonl(tmp_path / "cases.jsonl", cases)
    write_jsonl(tmp_path / "scores.jsonl", scores)
    done = cli("report", "--scores", tmp_path / "scores.jsonl", "--cases",
               tmp_path / "cases.jsonl", "--out", tmp_path / "out",
               "--format", "html,json")  # fmt: skip
    assert done.code in (0, 1), done.stderr
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Question 0?" in page  # the drill-down shows the prompt...
    assert f"cut at {MAX_PROMPT} of {len(cases[0]['prompt'])} characters" in page  # ...cut
    for name in ("report.html", "report.json"):
        assert (tmp_path / "out" / name).stat().st_size < 2 * 1024 * 1024, name
