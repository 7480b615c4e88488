"""The HTML report: self-contained, script-free, escaped, with charts, matrices and drill-down."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from assay.web.svg import SVG_NS, XLINK_NS
from conftest import invoke, make_case, write_jsonl

METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")
SCRIPT = "<script>window.__pwned = 1; alert('script')</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = 2; alert('img')\">"
LINK = '<a href="javascript:window.__pwned=3;alert(3)">click me</a>'
HOSTILE = (SCRIPT, IMAGE, LINK)


class Page(HTMLParser):
    """Every start tag with its attributes, the text of <style>, and the section ids."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)

    def named(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.tags if tag == name]


def run_files(tmp_path: Path, hostile: bool = False, cases: int = 6) -> dict[str, Path]:
    """A small run: candidate better on most cases, worse on case-4 (a blocker there)."""
    case_rows, trials, scores, comparisons = [], [], [], []
    for i in range(cases):
        case_id = f"case-{i}"
        prompt = f"How do I fix problem {i}?" + (f" {SCRIPT}" if hostile and i == 0 else "")
        case_rows.append(make_case(case_id, prompt=prompt, risk=("low", "medium", "high")[i % 3]))
        for trial in (1, 2):
            for condition, shift in (("baseline", 0.0), ("candidate", 1.0 if i != 4 else -2.0)):
                response = f"{condition} answer {i}.{trial}: " + "step " * (5 + 3 * i + trial)
                if hostile and condition == "candidate":
                    response += HOSTILE[(i + trial) % 3]
                trials.append(
                    {
                        "case_id": case_id,
                        "trial": trial,
                        "condition": condition,
                        "runner": "test",
                        "response": response,
                        "error": None,
                    }
                )
                blocker = condition == "candidate" and i == 4
                scores.append(
                    {
                        "case_id": case_id,
                        "trial": trial,
                        "condition": condition,
                        **{m: max(1.0, min(5.0, 3.0 + shift + (i % 2) * 0.5)) for m in METRICS},
                        "blocker": blocker,
                        "notes": ("leaks the account number " + (IMAGE if hostile else ""))
                        if blocker
                        else None,
                        "source": "judge:test",
                        "evidence": [f"quote from {condition} {i}.{trial}"]
                        + ([LINK, SCRIPT] if hostile else []),
                    }
                )
            comparisons.append(
                {
                    "case_id": case_id,
                    "trial": trial,
                    "a": "baseline",
                    "b": "candidate",
                    "judge": "judge:pair",
                    "verdict": "a" if i == 4 else "b",
                    "consistent": True,
                }
            )
    return {
        "cases": write_jsonl(tmp_path / "cases.jsonl", case_rows),
        "trials": write_jsonl(tmp_path / "trials.jsonl", trials),
        "scores": write_jsonl(tmp_path / "scores.jsonl", scores),
        "comparisons": write_jsonl(tmp_path / "comparisons.jsonl", comparisons),
    }


def label_rows() -> list[dict[str, Any]]:
    """Twelve items; the judge misses two FAILs and wrongly fails one PASS."""
    truth = ["FAIL"] * 5 + ["PASS"] * 7
    judged = ["FAIL"] * 3 + ["PASS"] * 2 + ["FAIL"] + ["PASS"] * 6
    rows = []
    for i, (h, j) in enumerate(zip(truth, judged, strict=True)):
        rows.append({"item_id": f"i{i}", "dimension": "safety", "rater": "human:ana", "value": h})
        rows.append({"item_id": f"i{i}", "dimension": "safety", "rater": "judge:x", "value": j})
    return rows


def render(cli: Any, tmp_path: Path, *extra: Any, hostile: bool = False) -> str:
    files = run_files(tmp_path, hostile=hostile)
    out = tmp_path / "out"
    result = cli(
        "report",
        "--scores", files["scores"],
        "--trials", files["trials"],
        "--cases", files["cases"],
        "--comparisons", files["comparisons"],
        "--format", "html",
        "--out", out,
        *extra,
    )  # fmt: skip
    assert result.code == 1, result.stderr  # case-4's blocker fails the gate
    assert f"wrote {out / 'report.html'}" in result.stdout
    assert not (out / "report.md").exists()
    return (out / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def clean_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp_path = tmp_path_factory.mktemp("clean")
    labels = write_jsonl(tmp_path / "labels.jsonl", label_rows())
    return render(invoke, tmp_path, "--labels", labels)


def test_self_contained_no_url_no_script_no_external_asset(clean_report: str) -> None:
    page = Page(clean_report)
    assert "http://" not in clean_report and "https://" not in clean_report
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "base", "form"}
    for tag, attrs in page.tags:
        assert "src" not in attrs, tag
        assert "style" not in attrs, tag  # the CSP allows the one hashed <style>, no attribute
        assert not [a for a in attrs if a.startswith("on")], tag
        href = attrs.get("href") or attrs.get("xlink:href")
        assert href is None or href.startswith("#"), (tag, href)


def test_csp_allows_only_the_hashed_stylesheet(clean_report: str) -> None:
    page = Page(clean_report)
    metas = [m for m in page.named("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert len(metas) == 1
    policy = metas[0]["content"] or ""
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert "unsafe" not in policy and "script-src" not in policy  # default-src governs scripts
    assert len(page.styles) == 1
    digest = base64.b64encode(hashlib.sha256(page.styles[0].encode()).digest()).decode()
    assert directives["style-src"] == f"'sha256-{digest}'"
    # the policy comes before anything it governs
    assert clean_report.index("Content-Security-Policy") < clean_report.index("<style>")


def test_verdict_comes_first_with_its_reasons(clean_report: str) -> None:
    body = clean_report[clean_report.index("<body>") :]
    verdict = body.index('class="verdict fail"')
    assert verdict < body.index('id="deltas"') < body.index('id="cases"')
    assert "<title>assay report: FAIL</title>" in clean_report
    assert "blocking finding" in body[verdict : body.index("</section>", verdict)]


def test_charts_are_inline_svg(clean_report: str) -> None:
    for section, title in (
        ("deltas", "Per-metric deltas with 95% intervals"),
        ("wins", "Wins, ties and losses per metric"),
        ("lengths", "Response length against weighted score"),
    ):
        start = clean_report.index(f'<section id="{section}">')
        block = clean_report[start : clean_report.index("</section>", start)]
        svg = block[block.index("<svg") : block.index("</svg>") + 6]
        # the HTML parser supplies the namespaces the page leaves out; XML needs them
        root = ET.fromstring(
            svg.replace("<svg ", f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}" ', 1)
        )
        assert root.get("aria-label") == title
        assert len(list(root.iter())) > 20
    assert "pairwise: candidate vs baseline" in clean_report  # the comparisons' bar
    assert "Spearman ρ" in clean_report


def test_confusion_matrix_from_labels(clean_report: str) -> None:
    start = clean_report.index('<section id="calibration">')
    block = clean_report[start : clean_report.index("</section>", start)]
    assert "safety · judge:x" in block
    cells = [int(n) for n in re.findall(r'<td class="n [^"]*">(\d+)</td>', block)]
    assert cells == [3, 2, 1, 6]  # rows: human FAIL, PASS; columns: judge FAIL, PASS
    assert block.count(" diag") == 2


def test_no_calibration_section_without_labels(cli: Any, tmp_path: Path) -> None:
    html = render(cli, tmp_path)
    assert 'id="calibration"' not in html


def test_drilldown_puts_blockers_first_with_responses_and_evidence(clean_report: str) -> None:
    details = re.findall(
        r'<details class="case" id="case-\d+"( open)?>\s*<summary>([^<]+)', clean_report
    )
    assert details[0][1] == "case-4"  # the candidate's blocker
    assert details[0][0] == " open" and not any(d[0] for d in details[1:])
    assert len(details) == 6
    first = clean_report[clean_report.index('id="case-1"') : clean_report.index('id="case-2"')]
    assert first.count('<div class="pair">') == 2  # two trials side by side
    assert "baseline answer 4.1" in first and "candidate answer 4.1" in first
    assert "leaks the account number" in first and "quote from candidate 4.2" in first
    assert "Pairwise verdicts" in first


def test_drilldown_limit_shows_a_note(cli: Any, tmp_path: Path) -> None:
    html = render(cli, tmp_path, "--drilldown", "2")
    assert html.count('<details class="case"') == 2
    assert "Showing 2 of 6 cases" in html


def test_hostile_output_is_escaped_everywhere(cli: Any, tmp_path: Path) -> None:
    html = render(cli, tmp_path, hostile=True)
    for raw in (*HOSTILE, "<script", "<img", 'href="javascript'):
        assert raw not in html
    assert "&lt;script&gt;window.__pwned = 1; alert(&#39;script&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;window.__pwned = 2" in html
    assert "&lt;a href=&#34;javascript:window.__pwned=3;alert(3)&#34;&gt;click me&lt;/a&gt;" in html
    page = Page(html)
    assert not page.named("script") and not page.named("img")
    assert all((a.get("href") or "#").startswith("#") for _, a in page.tags)
    assert not [a for _, attrs in page.tags for a in attrs if a.startswith("on")]


def test_scores_without_trials_still_drill_down(cli: Any, tmp_path: Path) -> None:
    files = run_files(tmp_path)
    out = tmp_path / "out"
    result = cli("report", "--scores", files["scores"], "--format", "html", "--out", out)
    assert result.code == 1, result.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "response not available" in html and 'id="lengths"' not in html


def test_html_among_other_formats_and_bad_format(cli: Any, tmp_path: Path) -> None:
    files = run_files(tmp_path)
    out = tmp_path / "out"
    result = cli("report", "--scores", files["scores"], "--format", "md,html,json", "--out", out)
    assert result.code == 1, result.stderr
    assert {p.name for p in out.iterdir()} == {"report.md", "report.html", "report.json"}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["drilldown"][0]["case_id"] == "case-4"
    bad = cli("report", "--scores", files["scores"], "--format", "pdf", "--out", out)
    assert bad.code == 2 and "use md, json, junit, html" in bad.stderr


def test_bad_labels_are_an_input_error(cli: Any, tmp_path: Path) -> None:
    files = run_files(tmp_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"item_id": "i1", "dimension": "safety", "rater": "human:a"}\n')
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", files["scores"], "--labels", labels, "--format", "html",
        "--out", out,
    )  # fmt: skip
    assert result.code == 2
    assert f"{labels}:1" in result.stderr and "value" in result.stderr
    assert not out.exists() or not (out / "report.html").exists()


def test_suite_run_writes_html(cli: Any, tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"k{i}", expect={"contains": ["actionable"]}) for i in range(8)],
    )  # identical deltas: 8 cases settle the gate (4 could not, from a range of 0 to 1)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "html-chain"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:echo"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'
        '[scoring]\nscorers = ["contains"]\n'
        '[report]\nformats = ["md", "html"]\ndrilldown = 3\n',
        encoding="utf-8",
    )
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 0, result.stdout + result.stderr
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'class="verdict pass"' in html and html.count('<details class="case"') == 3
    assert not (tmp_path / "out" / "report.json").exists()


def test_hostile_condition_and_metric_names_in_charts(cli: Any, tmp_path: Path) -> None:
    """Names reach matplotlib labels: no mathtext error, no markup, escaped in the SVG."""
    name = "new<b>$x$"
    rows = []
    for i in range(4):
        for condition, value in (("baseline", 2.0), (name, 4.0 if i else 1.0)):
            rows.append(
                {
                    "case_id": f"c{i}",
                    "trial": 1,
                    "condition": condition,
                    **dict.fromkeys(METRICS, value),
                    "odd$metric<i>": value,
                    "evidence": {"quote": "<script>x</script>", "criteria": ["met"]},
                }
            )
    scores = write_jsonl(tmp_path / "scores.jsonl", rows)
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", scores, "--candidate", name, "--format", "html", "--out", out
    )
    assert result.code in (0, 1), result.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<b>" not in html and "<i>" not in html and "<script>" not in html
    assert "new&lt;b&gt;$x$" in html and "odd$metric&lt;i&gt;" in html
    assert "{&#34;criteria&#34;: [&#34;met&#34;], &#34;quote&#34;: &#34;&lt;script&gt;" in html
    assert html.count("<svg") == 2  # deltas and win/tie/loss; no trials, no lengths


def test_structure_sections_in_order_and_navigation_resolves(clean_report: str) -> None:
    page = Page(clean_report)
    sections = [attrs.get("id") for tag, attrs in page.tags if tag == "section"]
    assert sections == [
        None,  # the verdict, inside the header
        "deltas",
        "wins",
        "lengths",
        "calibration",
        "gate",
        "breakdown",
        "cases",
    ]
    anchors = [a["href"] for a in page.named("a") if a.get("href")]
    assert anchors and {h[1:] for h in anchors} <= {s for s in sections if s}
    headings = re.findall(r"<h3>([^<]+)</h3>", clean_report)
    breakdown = ["Conditions", "Worst regressions", "Blocking findings", "By risk"]
    assert headings[: len(breakdown)] == breakdown
    assert clean_report.count("<details") == clean_report.count("</details>") == 6


def test_length_series_is_sampled_past_its_limit(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.reports import detail

    monkeypatch.setattr(detail, "MAX_POINTS", 5)
    files = run_files(tmp_path)
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", files["scores"], "--trials", files["trials"],
        "--format", "json,html", "--out", out,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    lengths = json.loads((out / "report.json").read_text(encoding="utf-8"))["lengths"]
    assert [(s["condition"], s["trials"], len(s["points"])) for s in lengths] == [
        ("baseline", 12, 5),
        ("candidate", 12, 5),
    ]
    assert "12 scored trials (5 plotted)" in (out / "report.html").read_text(encoding="utf-8")


def test_one_case_prints_no_nan_interval(cli: Any, tmp_path: Path) -> None:
    """One case has no interval: the gate table said `[+nan, +nan]` beside its reason."""
    files = run_files(tmp_path, cases=1)
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", files["scores"], "--trials", files["trials"],
        "--cases", files["cases"], "--format", "html", "--out", out,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert re.search(r"[+-]?\bnan\b", page) is None
    assert '<td class="n">[no interval from 1 case]</td>' in page


def test_single_system_html_has_no_regressions_and_prints_counts_whole(
    cli: Any, tmp_path: Path
) -> None:
    trials = [
        {
            "case_id": f"rent-{i}",
            "trial": 1,
            "condition": "prod",
            "runner": "test",
            "response": "Your landlord must return the deposit within 30 days.",
            "usage": {"input_tokens": 20, "output_tokens": 10},
            "latency_s": 0.25,
            "error": None,
        }
        for i in range(6)
    ]
    files = {
        "cases": write_jsonl(
            tmp_path / "cases.jsonl",
            [make_case(f"rent-{i}", expect={"contains": ["deposit"]}) for i in range(6)],
        ),
        "trials": write_jsonl(tmp_path / "trials.jsonl", trials),
    }
    out = tmp_path / "out"
    result = cli(
        "report", "--trials", files["trials"], "--cases", files["cases"],
        "--scorer", "contains", "--scorer", "budget", "--format", "html,md", "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "Worst regressions" not in html and "Worst regressions" not in markdown
    assert "tokens 30," in html and "tokens 30," in markdown
    assert "30.000" not in html and "30.00" not in html
