"""What the viewer says about a run: a single system gated on its own is not "against
baseline" and its one condition is not "(baseline)"; a sequential run that stopped early says
after how many cases and looks, and the cases it never looked at are shown as not run, never
as passing (not even when an earlier run left trials for them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mock_server import _reply_text
from starlette.testclient import TestClient
from view_store import make_store

from assay.store.views import ReadOnlyStore
from assay.view.app import ViewConfig, case_url, create_app
from conftest import invoke, make_case, write_jsonl

SINGLE = """\
name = "solo"
cases = "cases.jsonl"
trials = 1

[[conditions]]
name = "prod"
model = "mock:answer"

[scoring]
scorers = ["contains"]

[scoring.thresholds]
contains = { min = 1 }

[gate]
mode = "seed"
candidate = "prod"
"""


def client(path: Path) -> TestClient:
    return TestClient(create_app(ViewConfig(store=ReadOnlyStore(path))), "http://127.0.0.1")


def badges(html: str) -> dict[str, str]:
    """Each matrix row's case id and its outcome badge (pass, fail, not run or none)."""
    found = re.findall(
        r'<a class="open" href="[^"]+">([^<]+)</a>\s*(?:<span class="badge (\w+)"[^>]*>)?', html
    )
    return {case: badge for case, badge in found}


def test_a_single_system_run_is_not_labelled_against_a_baseline(tmp_path: Path) -> None:
    (tmp_path / "suite.toml").write_text(SINGLE, encoding="utf-8")
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"c{i}", expect={"contains": ["actionable"]}) for i in range(3)],
    )
    store = tmp_path / "s.db"
    done = invoke("run", tmp_path / "suite.toml", "--store", store, "--json")
    assert done.code in (0, 1), done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    c = client(store)
    page = c.get(f"/runs/{run_id}").text
    assert "Release gate:" in page
    assert "against baseline" not in page and "(baseline)" not in page
    assert "prod gated on its own, no baseline comparison" in page
    assert "<th>prod</th></tr></thead>" in page  # the matrix: no delta column
    case = c.get(case_url(run_id, "c0")).text
    assert "(baseline)" not in case and "word diff against" not in case
    assert "actionable" in case
    again = invoke("run", tmp_path / "suite.toml", "--store", store, "--json")
    second = json.loads(again.stdout)["run_id"]
    compared = c.get(f"/compare?a={run_id}&b={second}").text
    assert "Neither run compared its candidate with a baseline" in compared
    assert "Neither run has a recorded evaluation" not in compared


def _sequential(path: Path, *, leftovers: bool) -> None:
    """A sequential run of 60 cases whose verdict came after the first 20 (look 1 of 3):
    trials for those 20 only, or (`leftovers`) for all 60, the rest left by an earlier run
    of every case that the sequential rerun resumed."""
    make_store(
        path,
        60,
        ran=lambda i: leftovers or i < 20,
        errored=lambda i: False,
        verdict="PASS",
        report_extra={
            "mode": "stats",
            "case_checks": [
                {"case_id": f"case-{i:05d}", "check": "contains", "passed": True, "message": "ok"}
                for i in range(60 if leftovers else 20)
            ],
            "sequential": {
                "method": "group-sequential",
                "guarantee": "error rates held across looks",
                "look": 1,
                "looks": 3,
                "cases": 20,
                "total_cases": 60,
                "level": 0.99,
                "stopped_early": True,
                "calls_made": 40,
                "calls_not_made": 80,
            },
            "not_looked": [f"case-{i:05d}" for i in range(20, 60)],
        },
    ).close()


def test_a_sequential_stop_is_shown_and_unlooked_cases_are_not_run(tmp_path: Path) -> None:
    for leftovers in (False, True):
        path = tmp_path / f"seq-{leftovers}.db"
        _sequential(path, leftovers=leftovers)
        c = client(path)
        listing = c.get("/").text
        assert "after 20 of 60 cases" in listing
        page = c.get("/runs/run000000001").text
        assert "verdict after 20 of 60 cases, look 1 of 3; 40 cases not run" in page
        assert "60 of 60 cases (40 not run)" in page
        shown = badges(page)
        assert len(shown) == 50  # the first page
        assert all(shown[f"case-{i:05d}"] == "ok" for i in range(20))  # looked at: passed
        assert all(shown[f"case-{i:05d}"] == "unrun" for i in range(20, 50)), shown
        rest = badges(c.get("/runs/run000000001?page=2").text)
        assert set(rest.values()) == {"unrun"} and len(rest) == 10
        assert len(badges(c.get("/runs/run000000001?outcome=not-run").text)) == 40
        case = c.get(case_url("run000000001", "case-00033")).text
        assert "not run</span> Sequential run: verdict after 20 of 60 cases" in case
        assert ("were not part of the verdict" in case) == leftovers
        assert "badge ok" not in case
        history = c.get("/suites/demo/history").text
        assert "after 20 of 60 cases" in history


def test_a_real_sequential_single_system_run_is_shown_as_it_stopped(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One condition on 100 cases, sampled per-case checks: the verdict at look 1 of 4 (25
    cases); the viewer reads the recorded stop and its `not_looked` cases."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server()
    cases = [
        make_case(
            f"c{i}", prompt=f"Question {i}?", expect={"contains": [_reply_text(f"Question {i}?")]}
        )
        for i in range(100)
    ]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "seq"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        f'output = "out"\n[run]\nbase_url = "{server.url}"\nprice = "1,1"\nconcurrency = 4\n'
        '[[conditions]]\nname = "prod"\n[scoring]\nscorers = ["contains"]\n'
        "[scoring.corpus]\ncontains = { min = 0.5 }\n"
        "[gate]\nsequential = true\nlook = 25\nsampled_checks = true\n",
        encoding="utf-8",
    )
    store = tmp_path / "s.db"
    done = invoke("run", suite, "--store", store, "--json")
    assert done.code == 0, done.stdout + done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    c = client(store)
    page = c.get(f"/runs/{run_id}").text
    assert "Sequential run: verdict after 25 of 100 cases, look 1 of 4; 75 cases not run" in page
    assert "prod gated on its own" in page and "(baseline)" not in page
    assert "100 of 100 cases (75 not run)" in page
    unrun = badges(c.get(f"/runs/{run_id}?outcome=not-run").text)
    assert len(unrun) == 50 and set(unrun.values()) == {"unrun"}  # the first page of 75
    assert "after 25 of 100 cases" in c.get("/").text
