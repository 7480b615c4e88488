"""report.md is pasted into pull-request comments: HTML, links and images in judge notes and
case fields (a tracking pixel, a phishing link) are shown as text, never rendered."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from assay.reports.render import markdown_text
from conftest import make_case, write_jsonl

METRICS = ["correctness", "autonomy", "actionability", "safety", "concision"]
HOSTILE = (
    '<img src="http://evil.example/p.png"> ![x](http://evil.example/i.png) '
    "[click](http://evil.example/) <http://evil.example/a> www.evil.example/w "
    "\\](http://evil.example/b) `code http://evil.example/c` [ref]: http://evil.example/r "
    "<script>alert(1)</script> a | b\nsecond line"
)


def rendered(markdown: str) -> str:
    """HTML as a CommonMark renderer with GFM tables and raw HTML on makes of it."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_hostile_notes_and_case_fields_are_inert_in_report_md(tmp_path: Path, cli: Any) -> None:
    cases = [
        make_case(f"c{i}", category=f"billing {HOSTILE}" if i == 0 else "billing") for i in range(4)
    ]
    scores = [
        {
            "case_id": f"c{i}", "trial": 1, "condition": cond,
            **{m: 3.0 + shift for m in METRICS},
            "blocker": cond == "candidate" and i == 1,
            "notes": HOSTILE if cond == "candidate" and i == 1 else None,
            "source": "human:ana",
        }
        for i in range(4)
        for cond, shift in (("baseline", 0.0), ("candidate", 1.0))
    ]  # fmt: skip
    write_jsonl(tmp_path / "cases.jsonl", cases)
    write_jsonl(tmp_path / "scores.jsonl", scores)
    done = cli("report", "--scores", tmp_path / "scores.jsonl", "--cases",
               tmp_path / "cases.jsonl", "--out", tmp_path / "out", "--format", "md")  # fmt: skip
    assert done.code == 1, done.stderr  # the blocker fails the gate
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert markdown.count("evil.example") == 2 * HOSTILE.count("evil.example")  # shown...
    page = rendered(markdown)
    assert "<img" not in page and "<script" not in page and "<a " not in page  # ...inert
    # every address is code, so no autolinking renderer (GitHub's) makes it a link
    for text in re.findall(r"<td>(.*?)</td>", page):
        assert not re.search(r"(?<!<code>)(?:http://|www\.)", text), text
    # the data's line break and `|` stay inside one table cell: the tables keep their shape
    for table in re.findall(r"<table>.*?</table>", page, flags=re.S):
        widths = {row.count("<td>") for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)}
        assert len(widths - {0}) == 1, table


def test_markdown_text_leaves_plain_report_values_as_they_are() -> None:
    for plain in ["case-2", "judge:mock:fair", "[+0.292, +0.896]", "correctness -0.50", "–"]:
        assert markdown_text(plain) == plain
    assert markdown_text(None) == ""
    assert json.dumps(markdown_text("a\\b")) == json.dumps("a\\\\b")
