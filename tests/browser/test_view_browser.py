"""The viewer in a real browser: Playwright driving Debian's Chromium over a store made here.

Open a run, filter it to the errored cases, open one, read its diff and the scorer's
evidence, walk the matrix with the keyboard, follow a deep link; a suite's history over
five runs. No script error and no request outside the app. Skipped when Chromium is absent.
Set ASSAY_SCREENSHOT_DIR (an absolute path: tests run in their tmp_path) to save
screenshots of the run, case and history pages there (docs/view-run.png, docs/view-case.png,
docs/view-history.png).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from chromium import launch, needs_chromium
from view_store import make_store

from assay.core.records import ScoreRow
from assay.store.history import save_score_rows
from assay.store.spend import queue_spend
from assay.store.views import ReadOnlyStore
from assay.view.app import ViewConfig, create_app
from assay.web.server import bind, make_server, url_of

pytestmark = needs_chromium
RUN = "run000000001"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "view.db"
    make_store(
        path, 60, response=lambda i, c: f"{c} says: <b>hold</b> reset on device {i}."
    ).close()
    with serve(path) as url:
        yield url


@contextmanager
def serve(path: Path) -> Iterator[str]:
    """The viewer of the store at `path` on a free loopback port, until the test ends."""
    sock = bind("127.0.0.1", 0)
    server = make_server(create_app(ViewConfig(store=ReadOnlyStore(path))))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the view server did not start"
        time.sleep(0.01)
    try:
        yield url_of(sock).rstrip("/")
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def test_open_a_run_filter_to_errored_cases_and_open_one(browser: Any, live: str) -> None:
    page = browser.new_page()
    errors: list[str] = []
    outside: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: None if r.url.startswith(live) else outside.append(r.url))
    page.goto(live + "/")
    page.click(f"text={RUN}")
    assert page.url == f"{live}/runs/{RUN}"
    assert "60 of 60 cases" in page.inner_text("p.count")
    page.select_option("select[name=outcome]", "errored")
    page.click("button:has-text('Apply')")
    assert "outcome=errored" in page.url  # the filter is in the address: a deep link
    assert "9 of 60 cases" in page.inner_text("p.count")
    shots = os.environ.get("ASSAY_SCREENSHOT_DIR")
    if shots:
        page.screenshot(path=str(Path(shots) / "view-run.png"), full_page=True)
    page.wait_for_load_state()  # view.js (deferred) listens for the keys from then on
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.inner_text("tr.cursor a.open") == "case-00010"
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live}/runs/{RUN}/cases/case-00010")
    assert "mock failure (injected)" in page.inner_text("section[data-condition=candidate]")
    page.goto(f"{live}/runs/{RUN}/cases/case-00004")  # a deep link to a case
    assert page.inner_text("section[data-condition=candidate] ins").startswith("candidate")
    assert page.inner_text("section[data-condition=candidate] del").startswith("baseline")
    assert page.locator("b", has_text="hold").count() == 0  # a response's markup is text
    assert "looked for 'reset' in case-00004" in page.inner_text("details.score >> nth=0")
    if shots:
        page.screenshot(path=str(Path(shots) / "view-case.png"), full_page=True)
    assert errors == [] and outside == []


def test_history_compare_and_a_static_export_opened_from_disk(browser: Any, tmp_path: Path) -> None:
    from assay.api.viewing import export_view

    path = tmp_path / "two.db"
    make_store(path, 30, run_id="run-a", verdict="PASS").close()
    make_store(path, 30, run_id="run-b", errored=lambda i: i % 5 == 0).close()
    sock = bind("127.0.0.1", 0)
    server = make_server(create_app(ViewConfig(store=ReadOnlyStore(path))))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    live = url_of(sock).rstrip("/")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(live + "/runs/run-b")
        page.click("text=history of demo")
        assert page.url == f"{live}/suites/demo/history"
        assert page.locator("figure.chart svg").count() >= 3  # drawn inline, under the CSP
        page.click("text=compare with the run before")
        assert "run-a" in page.inner_text("h1") and "run-b" in page.inner_text("h1")
        page.click("a.open >> nth=0")  # a changed case, in the later run
        assert "/runs/run-b/cases/" in page.url
        assert errors == []
    finally:
        page.close()  # before the server stops: a request still open then would log an error
        server.should_exit = True
        thread.join(10)
    site = tmp_path / "site"
    export_view(path, site)
    page = browser.new_page()
    errors.clear()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((site / "index.html").as_uri())
    page.click("text=run-b")
    assert page.url.endswith("/runs/run-b/index.html")
    page.wait_for_load_state()  # view.js (deferred) listens for the keys from then on
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # view.js runs from the export's own file
    page.wait_for_url("**/runs/run-b/cases/case-00000.html")
    assert "How do I reset device 0?" in page.inner_text("main")
    page.goto((site / "suites" / "demo.html").as_uri())
    assert page.locator("figure.chart svg").count() >= 3
    assert errors == []


def _judged(run_id: str, score: float) -> list[ScoreRow]:
    return [
        ScoreRow.model_validate(
            {
                "case_id": f"case-{i:05d}",
                "trial": 1,
                "condition": "candidate",
                "source": "judge:mock",
                "helpfulness": score + (i % 3) * 0.1,
            }
        )
        for i in range(40)
    ]


def test_a_suites_history_over_five_runs(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    verdicts = ("PASS", "PASS", "FAIL", "PASS", "FAIL")
    for n, verdict in enumerate(verdicts, 1):
        store = make_store(
            path,
            40,
            run_id=f"run-{n}",
            verdict=verdict,
            errored=lambda i, n=n: i % (9 - n) == 3,  # more errors in later runs
        )
        queue_spend(store, f"run-{n}", 0.12 + 0.03 * n)
        save_score_rows(store, f"run-{n}", _judged(f"run-{n}", 3.0 if n < 5 else 4.5), {})
        store.close()
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with serve(path) as live:
        page.goto(live + "/")
        page.click("a[href='/suites/demo/history'] >> nth=0")
        assert page.url == f"{live}/suites/demo/history"
        text = page.inner_text("main")
        assert "5 recorded runs" in text
        assert "score distribution drifted in run run-5 against run-4" in text
        assert page.locator("figure.chart svg").count() >= 4  # verdict, score, metric, spend
        shots = os.environ.get("ASSAY_SCREENSHOT_DIR")
        if shots:
            page.screenshot(path=str(Path(shots) / "view-history.png"), full_page=True)
    assert errors == []
