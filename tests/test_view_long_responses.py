"""A long response is cut on the viewer's pages (PAGE_TEXT characters), its whole text a click
away: the server's `/runs/RUN/response?...` route (text/plain, sent a chunk at a time), or in
an export a file of its own beside the case page. The store's reader cuts it in SQLite, so
the page's own queries never bring the whole response into Python."""

from __future__ import annotations

import html
import re
from pathlib import Path

from starlette.testclient import TestClient
from view_store import make_store

from assay.store.views import ReadOnlyStore
from assay.view.app import ViewConfig, case_url, create_app
from assay.view.matrix import PAGE_TEXT
from conftest import invoke

RUN = "run000000001"
LONG = 3_000_000


def long_text(i: int, condition: str) -> str:
    if i == 1 and condition == "candidate":
        body = "".join(f"line {n} of a very long answer\n" for n in range(LONG // 20))
        return ("candidate: the start.\n" + body)[: LONG - 9] + "THE END.\n"
    return f"{condition} says: press the reset button on device {i}."


def test_a_long_response_is_cut_on_its_page_and_served_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    make_store(path, 3, response=long_text, errored=lambda i: False).close()
    c = TestClient(create_app(ViewConfig(store=ReadOnlyStore(path))), "http://127.0.0.1")
    page = c.get(case_url(RUN, "case-00001"))
    assert page.status_code == 200
    assert len(page.content) < 4 * PAGE_TEXT  # not the 3 MB response (and its diff)
    assert f"Cut: the first {PAGE_TEXT:,} of {LONG:,} characters" in page.text
    assert "THE END." not in page.text
    links = re.findall(r'href="(/runs/[^"]+/response\?[^"]+)"', page.text)
    assert len(links) == 1 and "condition=candidate" in links[0]
    whole = c.get(html.unescape(links[0]))
    assert whole.status_code == 200 and whole.headers["content-type"].startswith("text/plain")
    assert whole.text == long_text(1, "candidate")
    assert "nosniff" in whole.headers.get("x-content-type-options", "")
    missing = c.get(f"/runs/{RUN}/response?case=case-00001&condition=candidate&trial=9")
    assert missing.status_code == 404
    # a short response is not cut and has no link
    short = c.get(case_url(RUN, "case-00002")).text
    assert "Cut:" not in short and "/response?" not in short
    # the matrix shows its first line; the search looks in what the page shows
    matrix = c.get(f"/runs/{RUN}").text
    assert "candidate: the start." in matrix
    assert "case-00001" in c.get(f"/runs/{RUN}?q=line+12+of+a").text
    assert "case-00001" not in c.get(f"/runs/{RUN}?q=THE+END").text


def test_an_export_writes_the_whole_response_beside_its_cut_page(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    make_store(path, 3, response=long_text, errored=lambda i: False).close()
    site = tmp_path / "site"
    done = invoke("view", "--store", path, "--export", site)
    assert done.code == 0, done.stderr
    cases = site / "runs" / RUN / "cases"
    page = (cases / "case-00001.html").read_text(encoding="utf-8")
    assert len(page) < 4 * PAGE_TEXT and "THE END." not in page
    (link,) = re.findall(r'href="([^"]+\.txt)"', page)
    text = (cases / link).resolve()
    assert text == (cases / "case-00001" / "candidate-1.txt").resolve()
    assert text.read_text(encoding="utf-8") == long_text(1, "candidate")
    assert [p.relative_to(cases).as_posix() for p in cases.rglob("*.txt")] == [
        "case-00001/candidate-1.txt"
    ]
