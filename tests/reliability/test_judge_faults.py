"""Judges under faults: `assay judge` with the openai provider against the bench mock server
(faults up to 30%, a judge that breaks its JSON), and `mock:malformed`.

Every judgment ends recorded, or recorded in the store as an error with its reason and raw
output; nothing is lost or duplicated; errored trials are never judged and failed judgments
give no row; the budget is never exceeded; exit 3 while errors remain; reruns finish.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from reliability_support import by_key, read_jsonl

from assay.core.records import ScoreRow
from conftest import make_case, write_jsonl

CASES = 16
# What a failed judgment's error says, per fault (the judge's spec comes first).
REASONS = {
    "429": r"HTTP 429",
    "500": r"HTTP 500",
    "timeout": r"timeout after",
    "reset": r"connection error",
    "truncated": r"malformed response body",
    "non-json": r"malformed response body",
    "malformed-json": r"reply still unusable after one repair attempt",
}
ALL_FAULTS = {name: 0.3 / len(REASONS) for name in REASONS}
JUDGE = "openai:judge-model"


@pytest.fixture
def trials(cli: Any, tmp_path: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """Cases and trials, some of them errored (the injected mock failures, not retried)."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    out = tmp_path / "trials.jsonl"
    made = cli("run", "--cases", cases, "--model", "mock:answer,fail=0.2,seed=4", "--trials", 2,
               "--retries", 0, "--output", out, "--store", tmp_path / "run.db")  # fmt: skip
    assert made.code == 3, made.stderr
    rows = read_jsonl(out)
    assert any(t["error"] for t in rows) and any(not t["error"] for t in rows)
    return cases, out, rows


def judge_args(cases: Path, trials: Path, tmp_path: Path, *extra: Any) -> list[Any]:
    return [
        "judge", "--trials", trials, "--cases", cases, "--output", tmp_path / "scores.jsonl",
        "--store", tmp_path / "judge.db", "--concurrency", 4, "--json", *extra,
    ]  # fmt: skip


def judgments(store: Path) -> list[dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(store)) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM judgments")]


def check(
    tmp_path: Path, answered: dict[Any, dict[str, Any]], summary: dict[str, Any]
) -> dict[Any, dict[str, Any]]:
    """One row per judged answered trial; one store judgment per answered trial, ok or error."""
    rows = read_jsonl(tmp_path / "scores.jsonl")
    keyed = by_key(rows)  # fails on a duplicate
    assert set(keyed) <= set(answered)  # nothing errored is scored
    for row in rows:
        ScoreRow.model_validate({k: v for k, v in row.items() if k in ScoreRow.model_fields})
    stored = judgments(tmp_path / "judge.db")
    stored_keys = [(j["case_id"], j["a"], j["trial"]) for j in stored]
    assert len(stored_keys) == len(set(stored_keys))  # each item once, whatever its history
    assert set(stored_keys) <= set(answered)  # errored trials were never judged
    ok = {k for k, j in zip(stored_keys, stored, strict=True) if j["status"] == "ok"}
    assert ok == set(keyed)  # a failed judgment gives no row, a judged one always does
    for j in stored:
        if j["status"] == "error":
            assert j["error"] and j["record"] is None
            assert isinstance(json.loads(j["raw"]), list)
    assert summary["items"] == len(answered)
    assert summary["judged"] == len(rows)
    return keyed


def errors(tmp_path: Path) -> list[dict[str, Any]]:
    return [j for j in judgments(tmp_path / "judge.db") if j["status"] == "error"]


@pytest.mark.parametrize(
    "rates", [{name: 0.3} for name in REASONS] + [ALL_FAULTS], ids=[*REASONS, "all"]
)
def test_judging_under_faults_records_everything_and_reruns_finish(
    cli: Any, tmp_path: Path, mock_server: Any, trials: Any, rates: dict[str, float]
) -> None:
    cases, trials_file, rows = trials
    answered = by_key([t for t in rows if not t["error"]])
    server = mock_server(rates=rates, seed=7, judge_reply="schema", timeout_sleep=1.0)
    args = judge_args(cases, trials_file, tmp_path, "--judge", JUDGE, "--base-url", server.url,
                      "--allow-unmetered", "--timeout", 0.6)  # fmt: skip

    first = cli(*args, "--retries", 0)
    summary = first.json()
    keyed = check(tmp_path, answered, summary)
    assert summary["skipped_errored_trials"] == len(rows) - len(answered)
    failed = errors(tmp_path)
    assert first.code == 3 and failed and summary["failed"] == len(failed)
    assert summary["judged"] + summary["failed"] == summary["items"]  # none lost
    assert server.stats()["requests"] == summary["calls"]  # no hidden or lost calls
    for j in failed:
        assert any(re.search(REASONS[f], j["error"]) for f in rates), j["error"]
        if "repair attempt" in j["error"]:  # both unusable replies are kept, as received
            assert json.loads(j["raw"]) == [server_malformed()] * 2

    calls = summary["calls"]
    for _ in range(10):
        again = cli(*args, "--retries", 1)
        now = check(tmp_path, answered, again.json())
        for key, row in keyed.items():  # what was judged stays as it was
            assert now[key] == row
        calls += again.json()["calls"]
        assert server.stats()["requests"] == calls
        keyed = now
        if again.code == 0:
            break
        assert again.code == 3
    assert again.code == 0 and set(keyed) == set(answered) and errors(tmp_path) == []


def server_malformed() -> str:
    import mock_server

    server = mock_server.MockServer(mock_server.ServerConfig())
    return server._text(None, "", None, "malformed-json")  # type: ignore[arg-type]


def test_a_judge_that_never_gives_json_fails_every_item_with_its_raw_replies(
    cli: Any, tmp_path: Path, trials: Any
) -> None:
    cases, trials_file, rows = trials
    answered = by_key([t for t in rows if not t["error"]])
    args = judge_args(cases, trials_file, tmp_path, "--judge", "mock:malformed",
                      "--allow-unmetered")  # fmt: skip
    for _ in range(2):  # a rerun asks again (unusable replies are not cached) and fails alike
        result = cli(*args)
        summary = result.json()
        assert result.code == 3
        assert check(tmp_path, answered, summary) == {}
        assert summary["failed"] == len(answered)
        failed = errors(tmp_path)
        assert len(failed) == len(answered)
        for j in failed:
            assert "reply still unusable after one repair attempt" in j["error"]
            raw = json.loads(j["raw"])
            assert len(raw) == 2 and all(raw)  # the first reply and the repaired one
    assert "ERROR: judging failed" in cli(*[a for a in args if a != "--json"]).stderr


def test_judge_budget_holds_under_faults(
    cli: Any, tmp_path: Path, mock_server: Any, trials: Any
) -> None:
    cases, trials_file, rows = trials
    answered = by_key([t for t in rows if not t["error"]])
    server = mock_server(rates=ALL_FAULTS, seed=3, judge_reply="schema", timeout_sleep=1.0)
    priced = ["--judge", JUDGE, "--base-url", server.url, "--price", "100,100",
              "--max-tokens", 200, "--timeout", 0.6, "--retries", 1]  # fmt: skip
    budget = 1.0  # a few calls: the worst case of one judge call here is about $0.27
    first = cli(*judge_args(cases, trials_file, tmp_path, *priced, "--budget-usd", budget))
    summary = first.json()
    assert first.code == 3 and summary["stopped"] == "budget"
    assert 0 < summary["spent_usd"] <= budget
    check(tmp_path, answered, summary)
    assert summary["not_run"] > 0  # the budget, not the faults, ended the run
    # The cap holds across reruns of the judging (its spend is kept in the store): the same
    # cap makes no more call, a larger one finishes the remainder within it.
    again = cli(*judge_args(cases, trials_file, tmp_path, *priced, "--budget-usd", budget))
    assert again.code == 3 and again.json()["calls"] == 0 and again.json()["spent_usd"] == 0
    spent = summary["spent_usd"]
    budget = 6.0
    for _ in range(6):
        more = cli(*judge_args(cases, trials_file, tmp_path, *priced, "--budget-usd", budget))
        spent += more.json()["spent_usd"]
        assert spent <= budget + 1e-9
        check(tmp_path, answered, more.json())
        if more.code == 0:
            break
        assert more.code == 3
    assert more.code == 0
