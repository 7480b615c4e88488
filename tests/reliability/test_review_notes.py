"""Export keeps what the reviewer wrote: notes with leading or trailing spaces, blank lines
and indented text come out exactly as typed (browsers send line breaks as CRLF; they are
stored as LF), in score rows and comparisons, and survive being edited again in the app."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set
from conftest import make_case, write_jsonl

METRICS = ["correctness", "autonomy", "actionability", "safety", "concision"]
NOTES = [
    "  indented:\n    code()\n",
    "\nstarts with a blank line",
    "ends with spaces   ",
    "two paragraphs\n\n\nwith blank lines between\n\n",
]


def client(tmp_path: Path, mode: str) -> TestClient:
    review = open_review_set(
        trials_path=tmp_path / "trials.jsonl", cases_path=tmp_path / "cases.jsonl", run_id=None,
        store_path=tmp_path / "store.db", a="baseline", b="candidate", mode=mode,
    )  # fmt: skip
    config = ReviewConfig(review=review, store=ReviewStore(tmp_path / "store.db"), mode=mode)
    app = TestClient(create_app(config), base_url="http://127.0.0.1:8765", follow_redirects=False)
    app.get("/?reviewer=ann")
    return app


def answer(app: TestClient, index: int, form: dict[str, str]) -> str:
    """Post the form as a browser would (line breaks as CRLF); return the page shown after."""
    page = app.get(f"/item/{index}")
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert csrf, page.text[:300]
    crlf = {k: v.replace("\n", "\r\n") for k, v in form.items()}
    posted = app.post(f"/item/{index}", data={"csrf": csrf.group(1), **crlf})
    assert posted.status_code == 303, posted.text[:500]
    return app.get(f"/item/{index}").text


def textareas(page: str) -> list[str]:
    """What a browser puts in each textarea: the HTML parser drops one leading newline."""
    import html

    values = re.findall(r"<textarea[^>]*>(.*?)</textarea>", page, flags=re.S)
    return [html.unescape(v.removeprefix("\n")) for v in values]


def test_export_keeps_reviewer_notes_verbatim(tmp_path: Path, cli: Any) -> None:
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(4)])
    write_jsonl(
        tmp_path / "trials.jsonl",
        [{"case_id": f"c{i}", "trial": 1, "condition": cond, "runner": "mock",
          "response": f"{cond} answer {i}"}
         for i in range(4) for cond in ("baseline", "candidate")],
    )  # fmt: skip
    scores = client(tmp_path, "scores")
    for index in (0, 1):
        form = {f"r{slot}_{m}": "3" for slot in (1, 2) for m in METRICS}
        form |= {"r1_notes": NOTES[2 * index], "r2_notes": NOTES[2 * index + 1]}
        shown = answer(scores, index, form)
        assert textareas(shown) == [NOTES[2 * index], NOTES[2 * index + 1]]  # edited again
    pairs = client(tmp_path, "pairwise")
    for index, note in enumerate(NOTES):
        assert textareas(answer(pairs, index, {"winner": "1", "notes": note})) == [note]
    done = cli("review", "export", "--store", tmp_path / "store.db", "--output",
               tmp_path / "human.jsonl", "--comparisons", tmp_path / "cmp.jsonl")  # fmt: skip
    assert done.code == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "human.jsonl").read_text().splitlines()]
    assert sorted(r["notes"] for r in rows) == sorted(NOTES)
    compared = [json.loads(line) for line in (tmp_path / "cmp.jsonl").read_text().splitlines()]
    assert sorted(c["notes"] for c in compared) == sorted(NOTES)
