"""An agent's steps where people look: the reports (worst regressions and drill-down), the
review app and `assay view`'s case page — escaped, since tool arguments and results are
whatever the tools and the agent made of untrusted input."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from view_store import make_store

from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set
from assay.store.views import ReadOnlyStore
from assay.view.app import ViewConfig, case_url
from assay.view.app import create_app as create_view
from conftest import make_case, write_jsonl

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = '<img src=x onerror="window.__pwned = 2">'
METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def steps(case: int, condition: str) -> list[dict[str, Any]]:
    """The baseline searches the knowledge base; the candidate of case 1 guesses, and its
    tool's arguments and result carry markup."""
    if condition == "candidate" and case == 1:
        return [
            {"type": "tool", "name": "lookup", "arguments": {"q": SCRIPT}, "result": IMAGE},
            {"type": "model", "text": "A guess."},
        ]
    return [
        {"type": "tool", "name": "search_kb", "arguments": {"query": f"q{case}"}, "result": "2 hits"},
        {"type": "model", "text": "From the knowledge base."},
    ]  # fmt: skip


def run_files(tmp_path: Path) -> dict[str, Path]:
    cases, trials, scores = [], [], []
    for i in range(3):
        cases.append(make_case(f"case-{i}"))
        for condition in ("baseline", "candidate"):
            worse = condition == "candidate" and i == 1
            trials.append(
                {
                    "case_id": f"case-{i}",
                    "trial": 1,
                    "condition": condition,
                    "runner": "test",
                    "response": f"{condition} answer {i}",
                    "trajectory": steps(i, condition),
                }
            )
            scores.append(
                {
                    "case_id": f"case-{i}",
                    "trial": 1,
                    "condition": condition,
                    **{m: 2.0 if worse else 4.0 for m in METRICS},
                    "source": "judge:test",
                }
            )
    return {
        "cases": write_jsonl(tmp_path / "cases.jsonl", cases),
        "trials": write_jsonl(tmp_path / "trials.jsonl", trials),
        "scores": write_jsonl(tmp_path / "scores.jsonl", scores),
    }


class Tags(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def assert_inert(html: str) -> None:
    assert SCRIPT not in html and IMAGE not in html and "<img" not in html
    tags = Tags(html).tags
    assert "img" not in tags
    assert "&lt;img src=x onerror=" in html


def report(cli: Any, tmp_path: Path, formats: str) -> Path:
    files = run_files(tmp_path)
    out = tmp_path / "out"
    result = cli(
        "report",
        "--scores", files["scores"],
        "--trials", files["trials"],
        "--cases", files["cases"],
        "--format", formats,
        "--out", out,
    )  # fmt: skip
    assert result.code in (0, 1), result.stderr
    return out


def test_the_reports_show_the_worst_regressions_steps_escaped(cli: Any, tmp_path: Path) -> None:
    out = report(cli, tmp_path, "md,html,json")
    data = json.loads((out / "report.json").read_text())
    (regression,) = data["worst_regressions"]
    assert regression["case_id"] == "case-1"
    assert regression["steps"] == {
        "baseline": [
            '#1 tool search_kb(query="q1") → "2 hits"',
            '#2 model "From the knowledge base."',
        ],
        "candidate": [
            f"#1 tool lookup(q={json.dumps(SCRIPT)}) → {json.dumps(IMAGE)}",
            '#2 model "A guess."',
        ],
    }
    md = (out / "report.md").read_text()
    assert "<details><summary>Their agents' steps" in md
    assert '    - #1 tool search_kb(query="q1") → "2 hits"' in md
    assert SCRIPT not in md and "<img" not in md and "&lt;script&gt;" in md
    html = (out / "report.html").read_text()
    assert_inert(html)
    assert html.count('<details class="steps">') == 1 + 6  # the regression, each trial
    assert "#1 tool search_kb(query=&#34;q1&#34;) → &#34;2 hits&#34;" in html


def test_a_report_without_trajectories_says_nothing_of_steps(cli: Any, tmp_path: Path) -> None:
    files = run_files(tmp_path)
    rows = [json.loads(line) for line in files["trials"].read_text().splitlines()]
    write_jsonl(files["trials"], [{**r, "trajectory": None} for r in rows])
    out = tmp_path / "out"
    cli("report", "--scores", files["scores"], "--trials", files["trials"], "--cases",
        files["cases"], "--format", "md,html,json", "--out", out)  # fmt: skip
    assert "steps" not in json.loads((out / "report.json").read_text())["worst_regressions"][0]
    assert "steps" not in (out / "report.md").read_text()
    assert 'class="steps"' not in (out / "report.html").read_text()


def review_client(tmp_path: Path) -> TestClient:
    files = run_files(tmp_path)
    review = open_review_set(
        trials_path=files["trials"],
        cases_path=files["cases"],
        run_id=None,
        store_path=tmp_path / "review.db",
        a="baseline",
        b="candidate",
        mode="scores",
    )
    config = ReviewConfig(review=review, store=ReviewStore(tmp_path / "review.db"), mode="scores")
    return TestClient(create_app(config), base_url="http://127.0.0.1:8765")


def test_reviewers_see_each_responses_steps_collapsed_and_escaped(tmp_path: Path) -> None:
    client = review_client(tmp_path)
    client.get("/?reviewer=ann")
    html = client.get("/item/1").text  # case-1: the candidate's tool call carries markup
    assert html.count('<details class="steps"><summary>The agent\'s steps (2)</summary>') == 2
    assert "#1 tool search_kb(query=&#34;q1&#34;) → &#34;2 hits&#34;" in html
    assert_inert(html)


def test_the_viewers_case_page_has_a_steps_panel_escaped(tmp_path: Path) -> None:
    path = tmp_path / "view.db"
    make_store(path, 3, trajectory=lambda i, c: steps(i, c) if i else None).close()
    viewer = TestClient(create_view(ViewConfig(store=ReadOnlyStore(path))), "http://127.0.0.1")
    page = viewer.get(case_url("run000000001", "case-00001")).text
    assert page.count('<details class="steps"><summary>steps (2)</summary>') == 2
    assert "#2 model &#34;A guess.&#34;" in page
    assert_inert(page)
    without = viewer.get(case_url("run000000001", "case-00000")).text
    assert 'class="steps"' not in without
