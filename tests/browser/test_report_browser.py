"""The HTML report in a real browser: Playwright driving Debian's Chromium.

Skipped when Chromium is absent (`.ci/run` installs it). Set ASSAY_SCREENSHOT_DIR to also
save a screenshot of a realistic report there (docs/report.png comes from this).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from chromium import launch, needs_chromium
from test_review_browser import Watch, save_screenshot

from conftest import write_jsonl
from test_report_html import label_rows, run_files

pytestmark = needs_chromium

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def open_report(browser: Any, path: Path, **options: Any) -> tuple[Any, Any, Watch, list[str]]:
    """The report in a fresh context, recording every request the page makes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    page = context.new_page()
    watch = Watch(page)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    return context, page, watch, requests


def test_hostile_report_executes_nothing_and_renders_cleanly(
    browser: Any, cli: Any, tmp_path: Path
) -> None:
    files = run_files(tmp_path, hostile=True)
    labels = write_jsonl(tmp_path / "labels.jsonl", label_rows())
    out = tmp_path / "out"
    result = cli(
        "report",
        "--scores", files["scores"],
        "--trials", files["trials"],
        "--cases", files["cases"],
        "--comparisons", files["comparisons"],
        "--labels", labels,
        "--format", "html",
        "--out", out,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    report = out / "report.html"
    context, page, watch, requests = open_report(browser, report)

    assert page.evaluate("window.__pwned") is None
    for details in page.locator("details.case").all():
        if details.get_attribute("open") is None:
            details.locator(":scope > summary").click()  # open every case: the hostile answers show
    assert page.evaluate("window.__pwned") is None
    responses = page.locator(".response").all_inner_texts()
    assert any("<script>window.__pwned = 1" in text for text in responses)
    assert any("<img src=x onerror=" in text for text in responses)
    assert any('<a href="javascript:window.__pwned=3' in text for text in responses)
    assert page.locator("main script, main img, main a[href^='javascript']").count() == 0
    page.get_by_text("click me").first.click()  # text, not a link: nothing happens
    assert page.evaluate("window.__pwned") is None

    # the hashed stylesheet applies (a CSP refusal would also be a console error)
    border = page.locator("section.verdict").evaluate("e => getComputedStyle(e).borderLeftWidth")
    assert border == "10px"
    charts = page.locator("figure.chart svg")
    assert charts.count() == 3
    for index in range(3):
        box = charts.nth(index).bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 100
    marker = page.locator("#lengths svg use").first.bounding_box()  # xlink:href resolves
    assert marker is not None and marker["width"] > 0
    assert page.locator("table.confusion").count() == 1

    assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
    assert requests == [report.as_uri()]  # nothing fetched beyond the file itself
    context.close()


def test_realistic_report_reads_without_javascript(
    browser: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The support-agent example on the mock model, with the calibration example's labels."""
    monkeypatch.chdir(tmp_path)
    suite = EXAMPLES / "support-agent" / "suite.toml"
    store = tmp_path / "assay.db"
    with ThreadPoolExecutor(1) as pool:  # away from the Playwright thread's event loop
        run = pool.submit(cli, "run", suite, "--param", "agent_model=mock", "--store", store)
        run = run.result()
    assert run.code == 0, run.stdout + run.stderr
    trials = tmp_path / "assay-out" / "support-agent" / "trials.jsonl"
    out = tmp_path / "report"
    result = cli(
        "report",
        "--trials", trials,
        "--suite", suite,
        "--labels", EXAMPLES / "stats" / "labels.jsonl",
        "--format", "html",
        "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    report = out / "report.html"
    context, page, watch, requests = open_report(browser, report, java_script_enabled=False)

    assert page.locator("section.verdict .word").inner_text() == "PASS"
    if os.environ.get("ASSAY_SCREENSHOT_DIR"):
        page.set_viewport_size({"width": 1280, "height": 1150})
        save_screenshot(page, Path(os.environ["ASSAY_SCREENSHOT_DIR"]) / "report.png")
    second = page.locator("details.case").nth(1)
    assert not second.locator(".pair").first.is_visible()
    second.locator(":scope > summary").click()  # <details> opens without script
    assert second.locator(".pair").first.is_visible()
    sides = second.locator(".side h4").all_inner_texts()[:2]
    assert sides[0].startswith("baseline") and sides[1].startswith("candidate")

    assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
    assert requests == [report.as_uri()]
    context.close()
