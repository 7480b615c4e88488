"""Deep links into `assay view`: `assay run SUITE --view` serves the run's page when the run
ends; `[report] view_url` (or ASSAY_VIEW_URL) makes the reports link the run and its cases."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, contains_case, contains_suite, invoke, make_case, write_jsonl

VIEWED = """
[report]
formats = ["md", "html", "json"]
view_url = "http://127.0.0.1:8766/"
"""


def _suite(folder: Path, extra: str = "") -> Path:
    suite = folder / "suite.toml"
    suite.write_text(contains_suite("linked") + extra, encoding="utf-8")
    # c/1 <x> regresses: mock:echo repeats the 13th word, mock:answer quotes the first 12
    cases = [
        make_case("c/1 <x>", prompt="a b c d e f g h i j k l zzz", expect={"contains": ["zzz"]}),
        contains_case("c2", "actionable"),
    ]
    write_jsonl(folder / "cases.jsonl", cases)
    return suite


def test_reports_link_the_run_and_each_case_to_the_viewer(tmp_path: Path) -> None:
    suite = _suite(tmp_path, VIEWED)
    out = tmp_path / "out"
    done = invoke("run", suite, "--store", tmp_path / "s.db", "--out", out, "--json")
    assert done.code == 1, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    page = f"http://127.0.0.1:8766/runs/{run_id}"
    markdown = (out / "report.md").read_text()
    assert f"[Explore]({page}) this run" in markdown
    assert f"]({page}/cases/c%2F1%20%3Cx%3E)" in markdown  # the failing case, linked
    assert "[c/1 &lt;x&gt;](" in markdown  # its id still inert text
    html = (out / "report.html").read_text()
    assert f'href="{page}/cases/c%2F1%20%3Cx%3E"' in html and f'href="{page}"' in html
    assert json.loads((out / "report.json").read_text())["view_url"] == page


def test_the_environment_overrides_the_suite_and_a_bad_address_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path, VIEWED)
    monkeypatch.setenv("ASSAY_VIEW_URL", "https://ci.example/view")
    done = invoke("run", suite, "--store", tmp_path / "s.db", "--out", tmp_path / "o", "--json")
    assert "](https://ci.example/view/runs/" in (tmp_path / "o" / "report.md").read_text()
    monkeypatch.delenv("ASSAY_VIEW_URL")
    bad = _suite(tmp_path, VIEWED.replace("http://127.0.0.1:8766/", "javascript:alert(1)"))
    refused = invoke("run", bad, "--store", tmp_path / "s.db", "--json")
    assert refused.code == 2 and "view_url" in refused.stderr and done.code == 1


def test_run_with_view_serves_the_run_page_when_the_run_ends(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "BROWSER": "true"}
    command = [sys.executable, "-m", "assay", "run", str(suite), "--store", str(tmp_path / "s.db")]
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "out"), "--view"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            found = re.match(r"view: (http://127\.0\.0\.1:\d+/runs/\S+) ", line)
            url = found.group(1) if found else None
        assert url is not None
        with urllib.request.urlopen(url, timeout=30) as response:
            page = response.read().decode()
        assert "Release gate:" in page and "c2" in page
    finally:
        proc.terminate()
        proc.wait(30)
    assert proc.returncode == 1  # the run's exit code after the viewer stops


@pytest.mark.parametrize(
    "address",
    [
        "http://ci-user:s3cret-pw@viewer.example/",
        "https://s3cret-pw@viewer.example:8443/view",
        "http://127.0.0.1:8766/?token=s3cret-pw",
        "http://127.0.0.1:8766/#s3cret-pw",
    ],
)
def test_credentials_in_the_viewer_address_are_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    """A password (or a token) in the address would be published in every report: refused
    before the run's first call, the variable or field named, the secret never printed."""
    store, out = tmp_path / "s.db", tmp_path / "out"
    monkeypatch.setenv("ASSAY_VIEW_URL", address)
    refused = invoke("run", _suite(tmp_path), "--store", store, "--out", out)
    assert refused.code == 2, refused.stdout + refused.stderr
    assert "ERROR: ASSAY_VIEW_URL: the address" in refused.stderr
    assert "s3cret-pw" not in refused.stdout + refused.stderr
    assert _trials(store) == 0 and not out.exists()  # no call made, no report written
    monkeypatch.delenv("ASSAY_VIEW_URL")
    in_suite = _suite(tmp_path, VIEWED.replace("http://127.0.0.1:8766/", address))
    done = invoke("run", in_suite, "--store", store, "--out", out)
    assert done.code == 2, done.stdout + done.stderr
    assert "[report]" in done.stderr or "report.view_url" in done.stderr
    assert "view_url" in done.stderr and "s3cret-pw" not in done.stdout + done.stderr
    assert not out.exists()
    assert _trials(store) == 0


def _trials(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        return (
            int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
            if "trials" in tables
            else 0
        )
