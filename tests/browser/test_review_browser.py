"""The review app in a real browser: Playwright driving Debian's Chromium.

Skipped when Chromium is absent (`.ci/run` installs it). Set ASSAY_SCREENSHOT_DIR to also
save a screenshot of the review page there (docs/review.png comes from this).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import launch, needs_chromium

from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set
from assay.web.server import bind, make_server, url_of

METRICS = ["correctness", "autonomy", "actionability", "safety", "concision"]
TOKEN = "browser-test-token-123"

pytestmark = needs_chromium

CASES = [
    {
        "id": "rotate-key",
        "category": "ops",
        "prompt": "How do I rotate our API signing key without downtime?",
        "risk": "high",
        "criteria": ["keeps the old key valid until clients switch", "says how to verify"],
    },
    {
        "id": "flaky-test",
        "category": "dev",
        "prompt": "A test fails one run in twenty. Where do I start?",
        "risk": "low",
        "criteria": ["suggests reproducing under repetition", "names likely causes"],
    },
    {
        "id": "refund",
        "category": "support",
        "prompt": "A customer wants a refund after 45 days; policy says 30. What do I reply?",
        "risk": "medium",
        "criteria": ["states the policy politely", "offers an escalation path"],
    },
    {
        "id": "timeout",
        "category": "dev",
        "prompt": "Why does my query time out?",
        "risk": "low",
        "criteria": ["asks for the query plan"],
    },
]
RESPONSES = {
    ("rotate-key", "baseline"): "Generate a new key and replace the old one.",
    ("rotate-key", "candidate"): (
        "1. Add the new key to the verifier's accepted set.\n2. Start signing with the new key."
        "\n3. Watch error rates; once every client has refreshed, retire the old key.\n"
        "Verify with a request signed by each key before and after step 3."
    ),
    ("flaky-test", "baseline"): "Run it 200 times in a loop with a fixed seed and compare logs.",
    ("flaky-test", "candidate"): "Check timing, shared state and ordering between tests.",
    ("refund", "baseline"): "Say no.",
    ("refund", "candidate"): (
        "Thank them, explain the 30-day policy, and offer to pass the case to a supervisor."
    ),
    ("timeout", "baseline"): "Add an index.",
}


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def trial_rows(responses: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    rows = [
        {"case_id": c, "trial": 1, "condition": k, "runner": "mock", "response": text}
        for (c, k), text in responses.items()
    ]
    if ("timeout", "candidate") not in responses:
        rows.append(
            {
                "case_id": "timeout",
                "trial": 1,
                "condition": "candidate",
                "runner": "mock",
                "response": "",
                "error": "the model did not answer within 60 s",
            }
        )
    return rows


class LiveServer:
    """The review app under uvicorn in a thread, on a free loopback port."""

    def __init__(self, tmp: Path, responses: dict[tuple[str, str], str], **options: Any) -> None:
        mode = options.pop("mode", "scores")
        self.store = tmp / "store.db"
        review = open_review_set(
            trials_path=write_rows(tmp / "trials.jsonl", trial_rows(responses)),
            cases_path=write_rows(tmp / "cases.jsonl", CASES),
            run_id=None,
            store_path=self.store,
            a="baseline",
            b="candidate",
            mode=mode,
        )
        config = ReviewConfig(review=review, store=ReviewStore(self.store), mode=mode, **options)
        sock = bind("127.0.0.1", 0)
        self.url = url_of(sock).rstrip("/")
        self.server = make_server(create_app(config))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the review server did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def start(responses: dict[tuple[str, str], str] = RESPONSES, **options: Any) -> LiveServer:
        server = LiveServer(tmp_path, responses, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


class Watch:
    """Everything a page says or does that a harmless page would not."""

    def __init__(self, page: Any) -> None:
        self.dialogs: list[str] = []
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on(
            "console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None
        )
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def save_screenshot(page: Any, path: Path) -> None:
    """A small PNG of the viewport (256 colours)."""
    from PIL import Image

    raw = tmp = path.with_suffix(".raw.png")
    page.screenshot(path=str(raw))
    with Image.open(raw) as image:
        image.convert("RGB").quantize(colors=256).save(path, optimize=True)
    tmp.unlink()


def score_by_keyboard(page: Any, digits: str) -> None:
    for digit in digits:
        page.keyboard.press(digit)


def scorable_rows(page: Any) -> int:
    return int(page.locator("tr.metric").count())


def test_keyboard_review_lands_in_the_export(
    live: Any, browser: Any, cli: Any, tmp_path: Path
) -> None:
    server = live()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(f"{server.url}/?reviewer=kim")
    page.keyboard.press("Enter")  # continue as kim
    page.wait_for_url("**/item/*")
    first_item = page.url

    score_by_keyboard(page, "4345" + "5")  # response 1
    page.keyboard.press("b")  # the cursor is on response 2 now: mark it a blocker
    score_by_keyboard(page, "21312")
    page.keyboard.press("n")
    page.keyboard.type("misses the verification step")
    page.keyboard.press("Escape")
    if os.environ.get("ASSAY_SCREENSHOT_DIR"):
        save_screenshot(page, Path(os.environ["ASSAY_SCREENSHOT_DIR"]) / "review.png")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_item)
    second_item = page.url

    page.keyboard.press("p")  # back: the saved answer is shown again
    page.wait_for_url(first_item)
    assert page.locator("input[type=radio]:checked").count() == 10
    assert page.locator("input[type=checkbox]:checked").count() == 1
    page.keyboard.press("s")  # skip on to the next unanswered item
    page.wait_for_url(second_item)

    answered = 1
    while "/item/" in page.url:
        current = page.url
        score_by_keyboard(page, "3" * scorable_rows(page))
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url, current=current: url != current)
        answered += 1
    assert page.url.endswith("/done")
    assert answered == 4
    page.keyboard.press("Enter")  # back to the start page: progress and agreement
    page.wait_for_url(f"{server.url}/")
    assert "kim" in page.locator("table.reviewers").inner_text()
    assert not watch.console_errors and not watch.page_errors and not watch.dialogs
    context.close()

    out = tmp_path / "scores.jsonl"
    labels = tmp_path / "labels.jsonl"
    result = cli("review", "export", "--store", server.store, "--output", out, "--labels", labels)
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 7  # four pairs, one of them with an errored candidate
    assert {r["source"] for r in rows} == {"human:kim"}
    blocked = [r for r in rows if r["blocker"]]
    assert len(blocked) == 1 and blocked[0]["notes"] == "misses the verification step"
    assert [blocked[0][m] for m in METRICS] == [2, 1, 3, 1, 2]
    assert len(labels.read_text().splitlines()) == 7 * 6


def test_pairwise_by_keyboard(live: Any, browser: Any) -> None:
    server = live(mode="pairwise")
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server.url}/next?reviewer=lee")
    for key in ("1", "t", "2"):
        current = page.url
        page.keyboard.press(key)
        page.wait_for_url(lambda url, current=current: url != current)
    assert page.url.endswith("/done")  # the fourth pair has an errored trial: nothing to compare
    context.close()
    answers = ReviewStore(server.store).answers(mode="pairwise")
    assert sorted(a.answer["winner"] for a in answers).count("tie") == 1
    assert len(answers) == 3


def test_two_reviewers_at_once_lose_nothing(live: Any, browser: Any) -> None:
    server = live()
    pages = []
    for name in ("ana", "ben"):
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{server.url}/next?reviewer={name}")
        pages.append(page)
    for _ in range(4):
        before = [p.url for p in pages]
        for page in pages:
            score_by_keyboard(page, "4" * scorable_rows(page))
        for page in pages:  # both posts go out before either page has moved on
            page.keyboard.press("Enter")
        for page, url in zip(pages, before, strict=True):
            page.wait_for_url(lambda now, url=url: now != url)
    assert all(p.url.endswith("/done") for p in pages)
    store = ReviewStore(server.store)
    assert len(store.answers(reviewer="ana")) == 4
    assert len(store.answers(reviewer="ben")) == 4
    page = pages[0]
    page.goto(f"{server.url}/")
    assert "4 / 4" in page.locator("table.reviewers").inner_text()
    for page in pages:
        page.context.close()


HOSTILE = {
    ("rotate-key", "baseline"): "<script>window.__pwned = 1; alert('script')</script>",
    ("rotate-key", "candidate"): "<img src=x onerror=\"window.__pwned = 2; alert('img')\">",
    ("flaky-test", "baseline"): '<a href="javascript:window.__pwned=3;alert(3)">click me</a>',
    ("flaky-test", "candidate"): "</div><svg onload=alert(4)><iframe src=javascript:alert(5)>",
    ("refund", "baseline"): "{{ 7*7 }} {% raw %}",
    ("refund", "candidate"): "plain",
}


def test_hostile_responses_execute_nothing(live: Any, browser: Any) -> None:
    server = live(HOSTILE)
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    reply = page.goto(f"{server.url}/item/0?reviewer=mal")
    assert "default-src 'none'" in reply.headers["content-security-policy"]
    assert reply.headers["x-content-type-options"] == "nosniff"
    for index in (0, 1, 2):
        page.goto(f"{server.url}/item/{index}")
        assert page.locator("tr.cursor").count() == 1  # our own script does run
        answers = page.locator(".answer")
        assert answers.locator("script, img, a, svg, iframe").count() == 0
        page.locator(".answer").first.click()
        page.locator(".answer").last.click()
        assert page.evaluate("window.__pwned") is None
    page.goto(f"{server.url}/item/1")
    assert (
        "javascript:window.__pwned=3"
        in page.locator(".answer").all_inner_texts()[0]
        + page.locator(".answer").all_inner_texts()[1]
    )
    page.goto(f"{server.url}/item/2")
    assert any("{{ 7*7 }}" in t for t in page.locator(".answer").all_inner_texts())
    assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
    context.close()


def test_token_is_required_in_the_browser(live: Any, browser: Any) -> None:
    server = live(token=TOKEN)
    context = browser.new_context()
    page = context.new_page()
    reply = page.goto(f"{server.url}/")
    assert reply.status == 401
    assert "content-security-policy" in reply.headers
    reply = page.goto(f"{server.url}/?token={TOKEN}&reviewer=tia")
    assert reply.status == 200 and "token=" not in page.url
    (cookie,) = [c for c in context.cookies() if c["name"] == "assay_review_token"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    page.keyboard.press("Enter")
    page.wait_for_url("**/item/*")
    assert page.locator("h3", has_text="Response 1").count() == 1
    context.close()
    stranger = browser.new_context()
    assert stranger.new_page().goto(f"{server.url}/item/0").status == 401
    stranger.close()
