"""`assay view`: every route on a store made here, escaping, filters and deep links, a suite
run recorded and compared, and a viewer that never writes to its store."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from view_store import make_store

from assay.core.records import ScoreRow
from assay.store import schema
from assay.store.history import save_score_rows
from assay.store.views import ReadOnlyStore
from assay.view.app import ViewConfig, case_url, create_app, history_url
from assay.web.security import CONTENT_SECURITY_POLICY
from conftest import contains_case, contains_suite, invoke, write_jsonl

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def client(path: Path, token: str | None = None) -> TestClient:
    app = create_app(ViewConfig(store=ReadOnlyStore(path), token=token))
    return TestClient(app, base_url="http://127.0.0.1")


def rows(html: str) -> list[str]:
    """The case ids of a matrix page, in order."""
    return re.findall(r'<a class="open" href="/runs/[^/"]+/cases/[^"]+">([^<]+)</a>', html)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "view.db"
    make_store(path, 120).close()
    return path


def test_runs_list_shows_suite_verdict_trials_and_errors(store: Path) -> None:
    page = client(store).get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    text = page.text
    assert "run000000001" in text and ">demo</a>" in text and "v-fail" in text
    assert "baseline, candidate" in text and "120 × 1" in text
    assert '<span class="badge err">17</span>' in text  # i % 7 == 3 for i < 120
    assert "run000000001" not in client(store).get("/?suite=other").text


def test_matrix_filters_search_sort_and_pages_are_deep_links(store: Path) -> None:
    c = client(store)
    first = c.get("/runs/run000000001")
    assert "120 of 120 cases · page 1 of 3" in first.text
    assert rows(first.text)[:2] == ["case-00000", "case-00001"]
    assert 'href="/runs/run000000001?page=2"' in first.text
    errored = c.get("/runs/run000000001?outcome=errored")
    assert "17 of 120 cases" in errored.text
    assert rows(errored.text)[:3] == ["case-00003", "case-00010", "case-00017"]
    both = c.get("/runs/run000000001?outcome=errored&category=billing&risk=low")
    assert rows(both.text) == [f"case-{i:05d}" for i in range(120) if i % 7 == 3 and i % 3 == 0]
    found = c.get("/runs/run000000001?q=DEVICE+77%3F")  # prompt text, case-insensitive
    assert rows(found.text) == ["case-00077"]
    said = c.get("/runs/run000000001?q=candidate+says")  # response text
    assert len(rows(said.text)) == 50 and "103 of 120 cases" in said.text
    worst = c.get("/runs/run000000001?sort=delta")
    assert rows(worst.text)[0] == "case-00000"  # delta −1 first (i % 4 == 0, not errored)
    last = c.get("/runs/run000000001?page=99&outcome=errored")  # past the end: last page
    assert "17 of 120 cases" in last.text and len(rows(last.text)) == 17
    tagged = c.get("/runs/run000000001?tag=smoke&outcome=blocking")
    blocked = [f"case-{i:05d}" for i in range(120) if i % 18 == 5 and i % 7 != 3]
    assert rows(tagged.text) == blocked
    odd = c.get("/runs/run000000001?outcome=nonsense&page=-1&sort=x")
    assert odd.status_code == 200 and "120 of 120 cases" in odd.text


def test_case_page_shows_prompt_diff_scores_and_error_detail(store: Path) -> None:
    c = client(store)
    page = c.get(case_url("run000000001", "case-00001")).text
    assert "How do I reset device 1?" in page
    assert "<del>baseline</del><ins>candidate</ins>" in page  # word diff against baseline
    assert "looked for &#39;reset&#39; in case-00001" in page  # the scorer's evidence
    assert 'rel="prev" href="/runs/run000000001/cases/case-00000"' in page
    errored = c.get(case_url("run000000001", "case-00003")).text
    assert "mock failure (injected)" in errored and "detail" in errored
    missing = c.get(case_url("run000000001", "nope"))
    assert missing.status_code == 404 and "has no case nope" in missing.text
    assert c.get("/runs/unknown").status_code == 404


def test_every_field_is_escaped_and_no_script_is_injected(tmp_path: Path) -> None:
    path = tmp_path / "xss.db"
    make_store(
        path,
        3,
        run_id="run<b x=1>",
        suite=f"suite{XSS}",
        conditions=(f"base{XSS}", f"cand{XSS}"),
        case_id=lambda i: f"id{i}{XSS}/../x",
        prompt=lambda i: f"prompt{XSS}",
        response=lambda i, c: f"reply {XSS} {c}",
    ).close()
    c = client(path)
    run = "run<b x=1>"
    pages = [
        c.get("/"),
        c.get(f"/?suite=suite{XSS}"),
        c.get("/runs/" + run.replace("<", "%3C").replace(">", "%3E")),
        c.get(case_url(run, f"id1{XSS}/../x")),
        c.get("/compare", params={"a": run, "b": run}),
        c.get("/compare", params={"a": XSS, "b": run}),
        c.get("/runs/" + XSS.replace("/", "%2F")),
        c.get(history_url(f"suite{XSS}")),
    ]
    assert [p.status_code for p in pages] == [200, 200, 200, 200, 200, 404, 404, 200]
    for page in pages:
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert "<b x=1>" not in page.text
        assert set(re.findall(r"<script[^>]*>", page.text)) <= {
            '<script src="/static/view.js" defer>'
        }
    case_page = pages[3].text
    assert "prompt&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in case_page
    assert "cand&lt;script&gt;" in case_page and "reply" in case_page
    assert f"id1{XSS}/../x".replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;") in (
        case_page
    )


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_the_viewer_never_writes_to_the_store(store: Path) -> None:
    """The store's file keeps its bytes and mtime; a reader of a WAL file makes SQLite's
    shared-memory index beside it (as any reader does), and its WAL stays empty."""
    before = fingerprint(store)
    c = client(store)
    urls = [
        "/",
        "/runs/run000000001?outcome=errored&q=reset",
        case_url("run000000001", "case-00003"),
        "/compare?a=run000000001&b=run000000001",
        "/compare",
    ]
    for url in urls:
        assert c.get(url).status_code == 200
        assert c.post(url).status_code == 405  # nothing to post to
    assert fingerprint(store) == before
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ReadOnlyStore(store).db.execute("DELETE FROM runs")
    wal = store.with_name(store.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_access_beyond_loopback_needs_the_token(store: Path) -> None:
    open_app = client(store)
    assert open_app.get("/", headers={"host": "evil.example"}).status_code == 403
    token = "Zq8-vT3nW0pLr7Yk"
    guarded = client(store, token=token)
    assert guarded.get("/").status_code == 401
    assert guarded.get("/", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_cli_refuses_a_missing_store_an_open_host_and_a_newer_store(tmp_path: Path) -> None:
    missing = invoke("view", "--store", tmp_path / "none.db")
    assert missing.code == 2 and "none.db: no store here" in missing.stderr
    store = tmp_path / "s.db"
    make_store(store, 2).close()
    wide = invoke("view", "--store", store, "--host", "0.0.0.0")
    assert wide.code == 2 and "without --token" in wide.stderr
    weak = invoke("view", "--store", store, "--token", "aaaaaaaaaaaa")
    assert weak.code == 2 and "--token" in weak.stderr
    db = sqlite3.connect(store)
    db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    db.close()
    newer = invoke("view", "--store", store)
    assert newer.code == 2 and "newer than the version" in newer.stderr


def _run_suite(folder: Path, store: Path, cases: list[dict[str, Any]]) -> str:
    write_jsonl(folder / "cases.jsonl", cases)
    result = invoke("run", folder / "suite.toml", "--store", store, "--json")
    assert result.code in (0, 1), result.stderr
    return str(json.loads(result.stdout)["run_id"])


def test_a_suite_run_is_recorded_and_two_runs_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    (tmp_path / "suite.toml").write_text(contains_suite("viewed"), encoding="utf-8")
    store = tmp_path / "s.db"
    cases = [contains_case(f"c{i}", "actionable") for i in range(4)]
    first = _run_suite(tmp_path, store, cases)
    cases[2] = contains_case("c2", "zzz")  # the candidate now fails c2
    second = _run_suite(tmp_path, store, cases)
    assert first != second
    c = client(store)
    listing = c.get("/?suite=viewed").text
    assert first in listing and second in listing and listing.index(second) < listing.index(first)
    assert "v-pass" in listing and "v-fail" in listing
    # each run's git commit and wall time, recorded after the run
    assert (
        listing.count('<code title="0123456789abcdef0123456789abcdef01234567">0123456789</code>')
        == 2
    )
    assert re.search(r"<td>\d+\.\d s</td>", listing)
    matrix = c.get(f"/runs/{second}?outcome=failing").text
    assert rows(matrix) == ["c2"]
    assert "Release gate:" in matrix
    case = c.get(case_url(second, "c2")).text
    assert f'href="/runs/{first}/cases/c2"' in case  # the same case in the previous run
    assert "&#34;zzz&#34;" in case  # the expectation
    compared = c.get(f"/compare?a={first}&b={second}").text
    assert "pass → fail" in compared and 'href="/runs/' + second + '/cases/c2"' in compared


def _judge_rows(run_id: str, score: float, n: int = 12) -> list[ScoreRow]:
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
        for i in range(n)
    ]


def test_history_page_charts_metrics_verdicts_spend_and_judge_drift(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    make_store(path, 12, run_id="run-a", verdict="PASS").close()
    later = make_store(path, 12, run_id="run-b", errored=lambda i: i % 2 == 0)
    save_score_rows(later, "run-a", _judge_rows("run-a", 1.0), {})
    save_score_rows(later, "run-b", _judge_rows("run-b", 4.0), {})
    later.close()
    make_store(path, 3, run_id="other-1", suite="other").close()
    c = client(path)
    page = c.get(history_url("demo"))
    assert page.status_code == 200
    text = page.text
    assert "History of demo" in text and "2 recorded runs" in text
    assert text.count("<svg") >= 4  # verdict, weighted score, contains, spend
    assert 'aria-label="weighted_score across runs"' in text
    assert "<script" not in text.replace('<script src="/static/view.js" defer>', "")
    assert "score distribution drifted in run run-b against run-a" in text  # assay history's
    assert text.index("run-b") < text.index("run-a") and "other-1" not in text
    assert 'href="/compare?a=run-a&amp;b=run-b"' in text
    assert c.get("/").text.count(f'href="{history_url("demo")}"') == 1
    assert f'href="{history_url("demo")}"' in c.get("/runs/run-b").text
    missing = c.get(history_url("nope"))
    assert missing.status_code == 404 and "No recorded run of suite nope" in missing.text


def _two_runs(path: Path) -> None:
    make_store(path, 60, run_id="run-a", verdict="PASS").close()
    make_store(path, 60, run_id="run-b", case_id=lambda i: f"case/{i:05d} <x>").close()


def test_export_writes_the_explorer_as_static_files_with_relative_links(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    _two_runs(store)
    before = fingerprint(store)
    target = tmp_path / "site"
    done = invoke("view", "--store", store, "--export", target)
    assert done.code == 0, done.stderr
    assert "pages of 2 runs" in done.stdout
    assert fingerprint(store) == before  # read-only
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no work left
    pages = {p.relative_to(target).as_posix(): p.read_text() for p in target.rglob("*.html")}
    assert {
        "index.html",
        "suites/demo.html",
        "runs/run-a/index.html",
        "runs/run-b/page-2.html",
    } < set(pages)
    assert "compare/run-a--run-b.html" in pages
    odd = [p for p in pages if p.startswith("runs/run-b/cases/case_00001_x-")]
    assert len(odd) == 1 and len([p for p in pages if "/cases/" in p]) == 120
    for name, html in pages.items():
        # every link relative, every one leads to a file of the export
        for link in re.findall(r'(?:href|src)="([^"#][^"]*)"', html):
            assert not link.startswith(("/", "http:", "https:")), (name, link)
            resolved = (target / name).parent / link.replace("&amp;", "&")
            assert resolved.resolve().is_file(), (name, link)
        assert "Content-Security-Policy" in html and 'action="' not in html
    index = pages["index.html"]
    assert 'href="runs/run-b/index.html"' in index and 'href="suites/demo.html"' in index
    run_b = pages["runs/run-b/index.html"]
    assert 'href="../../compare/run-a--run-b.html"' in run_b and 'rel="next"' in run_b
    assert "case/00001 &lt;x&gt;" in pages[odd[0]]  # the id shown as it is
    matrix = json.loads((target / "runs/run-b/matrix.json").read_text())
    assert len(matrix["rows"]) == 60 and matrix["rows"][1]["page"] == odd[0].split("/", 2)[2]
    assert {r["run_id"] for r in json.loads((target / "runs.json").read_text())} == {
        "run-a",
        "run-b",
    }


def test_export_refuses_a_taken_or_unwritable_folder_before_any_work(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    make_store(store, 3).close()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    refused = invoke("view", "--store", store, "--export", taken)
    assert refused.code == 2 and "not empty and is not an earlier export" in refused.stderr
    assert [p.name for p in taken.iterdir()] == ["keep.txt"]
    forced = invoke("view", "--store", store, "--export", taken, "--force")
    assert forced.code == 2 and "even with --force" in forced.stderr  # not the export's
    assert [p.name for p in taken.iterdir()] == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    unwritable = invoke("view", "--store", tmp_path / "none.db", "--export", blocker / "site")
    assert unwritable.code == 2 and "a-file: is a file" in unwritable.stderr  # before the store
    assert invoke("view", "--store", store, "--export", blocker).code == 2  # a file, not a folder


def test_an_imported_run_is_recorded_and_viewed(tmp_path: Path) -> None:
    fixture = Path(__file__).parent / "fixtures" / "imports" / "promptfoo" / "results.json"
    store = tmp_path / "s.db"
    done = invoke("import", "promptfoo", fixture, "--output", tmp_path / "i", "--store", store)
    assert done.code == 0, done.stderr
    run_id = re.search(r"recorded as run (\S+) in", done.stdout)
    assert run_id is not None
    c = client(store)
    listing = c.get("/").text
    assert run_id.group(1) in listing and ">promptfoo import</a>" in listing
    page = c.get(f"/runs/{run_id.group(1)}").text
    assert "Release gate:" in page and "3 of 3 cases" in page
    again = invoke("import", "promptfoo", fixture, "--output", tmp_path / "j", "--store", store)
    assert run_id.group(1) in again.stdout  # the same import: the same run, replaced
    assert len(ReadOnlyStore(store).runs()) == 1


def test_two_suites_gating_the_same_run_keep_both_verdicts(tmp_path: Path) -> None:
    # two suites over the same cases, conditions and trials: the same run id, trials resumed
    cases = [contains_case(f"c{i}", "actionable") for i in range(3)]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    (tmp_path / "lenient.toml").write_text(contains_suite("lenient"), encoding="utf-8")
    strict = contains_suite("strict").replace('mode = "seed"', 'mode = "stats"')  # 3 cases
    (tmp_path / "strict.toml").write_text(strict, encoding="utf-8")
    store = tmp_path / "s.db"
    ran = {}
    for name in ("lenient", "strict", "lenient"):  # lenient gates again after strict
        result = invoke("run", tmp_path / f"{name}.toml", "--store", store, "--json")
        assert result.code in (0, 1, 3), result.stderr
        ran[name] = (json.loads(result.stdout)["run_id"], result.code)
    (run_id, lenient_code), (other, strict_code) = ran["lenient"], ran["strict"]
    assert run_id == other and lenient_code == 0 and strict_code != 0
    viewed = ReadOnlyStore(store)
    (summary,) = viewed.runs()
    assert [(g.suite, g.verdict) for g in summary.results] == [
        ("strict", {1: "INCONCLUSIVE", 3: "INCOMPLETE"}.get(strict_code, "FAIL")),
        ("lenient", "PASS"),
    ]
    assert [r.run_id for r in viewed.runs("strict")] == [run_id]  # it was lost to the last
    assert viewed.suites() == ["lenient", "strict"]
    c = client(store)
    for suite, verdict in [(g.suite, g.verdict) for g in summary.results]:
        history = c.get(history_url(suite)).text
        assert "1 recorded run" in history and run_id in history
        assert f'v-{verdict.lower()}">{verdict}<' in history
    listing = c.get("/").text
    assert ">strict</a>" in listing and ">lenient</a>" in listing
    assert "v-pass" in listing and f"v-{summary.results[0].verdict.lower()}" in listing
    assert run_id in c.get("/?suite=strict").text
    page = c.get(f"/runs/{run_id}").text
    assert "gated by 2 suites" in page
