"""Fault injection: every trial ends recorded (or recorded as an error with its reason),
nothing is lost or duplicated, the budget holds, exit 3 while errors remain, and re-running
finishes the remainder. Faults come from the bench mock server at rates up to 30%."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import by_key, read_jsonl

from assay.core.records import Case, Trial
from assay.engine import Condition, RunRequest, RunSettings, execute
from assay.models import ModelOptions
from assay.models.pricing import Price
from assay.store import Store
from conftest import make_case, write_jsonl

# What each fault must be recorded as (the trial's `error`).
REASONS = {
    "429": r"^HTTP 429",
    "429-no-retry-after": r"^HTTP 429",
    "500": r"^HTTP 500",
    "timeout": r"timeout after",
    "reset": r"^connection error",
    "truncated": r"^malformed response body",
    "non-json": r"^malformed response body",
    "echo-auth": r"^HTTP 401",
}
ALL_FAULTS = {name: 0.3 / len(REASONS) for name in REASONS}
CASES = 24


def run_args(cases: Path, server: Any, out: Path, store: Path, *extra: Any) -> list[Any]:
    return [
        "run", "--cases", cases, "--model", "openai:gpt-4o-mini", "--base-url", server.url,
        "--trials", 2, "--concurrency", 8, "--timeout", "1.5",
        "--output", out, "--store", store, "--json", *extra,
    ]  # fmt: skip


def check_records(trials: list[dict[str, Any]], total: int) -> dict[Any, dict[str, Any]]:
    """Exactly `total` valid trials, each once; an errored one is empty and says why."""
    assert len(trials) == total
    keyed = by_key(trials)
    for trial in trials:
        Trial.model_validate(trial)
        if trial["error"]:
            assert trial["response"] == "" and trial["state"] is None
            assert any(re.search(p, trial["error"]) for p in REASONS.values()), trial["error"]
        else:
            assert trial["response"] and trial["cost_usd"] is not None
    return keyed


@pytest.mark.parametrize(
    "rates",
    [{name: 0.3} for name in REASONS] + [ALL_FAULTS],
    ids=[*REASONS, "all"],
)
def test_faults_end_recorded_and_reruns_finish(
    cli: Any, tmp_path: Path, mock_server: Any, rates: dict[str, float]
) -> None:
    server = mock_server(rates=rates, seed=11, retry_after=0.01, timeout_sleep=4.0)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    total = CASES * 2

    first = cli(*run_args(cases, server, out, store, "--retries", 0))
    summary = first.json()
    trials = read_jsonl(out)
    keyed = check_records(trials, total)
    errored = [t for t in trials if t["error"]]
    faults = sum(server.stats()["faults"].values())
    # Without retries every fault the server served is exactly one errored trial.
    assert faults > 0 and len(errored) == faults == summary["errored"]
    assert first.code == 3 and summary["answered"] == total - faults
    assert server.stats()["requests"] == summary["calls"] == total
    for trial in errored:
        fault = next(f for f in rates if re.search(REASONS[f], trial["error"]))
        assert fault in rates
    calls = summary["calls"]

    # Each rerun keeps what answered, retries only the rest, and converges to exit 0.
    for _ in range(10):
        again = cli(*run_args(cases, server, out, store, "--retries", 1))
        now = check_records(read_jsonl(out), total)
        for key, trial in keyed.items():
            if not trial["error"]:
                assert now[key] == trial
        calls += again.json()["calls"]
        assert server.stats()["requests"] == calls  # no hidden or lost requests
        keyed = now
        if again.code == 0:
            break
        assert again.code == 3
    assert again.code == 0
    assert all(not t["error"] for t in keyed.values())


def test_budget_holds_under_faults_and_across_reruns(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(rates=ALL_FAULTS, seed=5, retry_after=0.01, timeout_sleep=4.0)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(40)])
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    # Worst case per call ≈ (prompt bytes + 16) + 50 output tokens at $1000/M: about $0.08;
    # a call really costs about $0.014, so 80 trials need about $1.1.
    priced = ("--price", "1000,1000", "--max-tokens", 50, "--retries", 1)
    first = cli(*run_args(cases, server, out, store, *priced, "--budget-usd", "0.5"))
    summary = first.json()
    assert first.code == 3 and summary["stopped"] == "budget"
    # Reservations wait for calls in flight to settle: the run uses its budget, not 1/8 of it.
    assert 0.5 - 0.08 < summary["spent_usd"] <= 0.5
    trials = read_jsonl(out)
    assert sum(t["cost_usd"] for t in trials) == pytest.approx(summary["spent_usd"])
    # The same budget again: the run has spent it already, so it spends nothing more.
    same = cli(*run_args(cases, server, out, store, *priced, "--budget-usd", "0.5"))
    assert same.code == 3 and same.json()["spent_usd"] <= 0.5 - summary["spent_usd"] + 1e-9
    assert same.json()["run_spent_usd"] <= 0.5
    # Raising the budget finishes the remainder; the run in all stays within the cap. (The
    # timeouts and unreadable replies, which may have been billed, count at their worst case.)
    for _ in range(5):
        more = cli(*run_args(cases, server, out, store, *priced, "--budget-usd", "3"))
        assert more.json()["run_spent_usd"] <= 3
        if more.code == 0:
            break
    assert more.code == 0
    trials = read_jsonl(out)
    check_records(trials, 80)
    # Every answered call was paid once: the run's spend is the sum over its trials, and the
    # worst cases counted for the failed calls whose trials a rerun answered since.
    assert sum(t["cost_usd"] for t in trials) <= more.json()["run_spent_usd"] + 1e-9


def _retry_gaps(server: Any) -> list[tuple[str, float]]:
    """For each faulted request, the fault and the wait until the same body came back."""
    log = sorted(server.requests(), key=lambda r: r["arrived"])
    gaps = []
    for index, entry in enumerate(log):
        if entry["fault"] is None:
            continue
        later = [r for r in log[index + 1 :] if r["body"] == entry["body"]]
        if later:
            gaps.append((entry["fault"], later[0]["arrived"] - entry["replied"]))
    return gaps


def _run_engine(tmp_path: Path, server: Any, name: str, backoff_max_s: float = 1.0) -> int:
    cases = [Case.model_validate(make_case(f"{name}{i}")) for i in range(16)]
    request = RunRequest(
        cases=cases,
        conditions=[Condition("baseline", "openai:m")],
        trials=1,  # one request body per case, so a repeated body is a retry
        # Backoff alone first waits ~0.01-0.04 s; only Retry-After can make that longer.
        settings=RunSettings(
            retries=8, concurrency=8, backoff_initial_s=0.01, backoff_max_s=backoff_max_s
        ),
        options=ModelOptions(base_url=server.url, price=Price(1, 1)),
    )
    store = Store(tmp_path / f"{name}.db")
    try:
        return execute(request, store).exit_code
    finally:
        store.close()


def test_retries_never_come_sooner_than_retry_after(tmp_path: Path, mock_server: Any) -> None:
    wait = 0.25
    server = mock_server(rates={"429": 0.3}, seed=3, retry_after=wait, record=True)
    assert _run_engine(tmp_path, server, "ra") == 0
    gaps = _retry_gaps(server)
    assert len(gaps) >= 3
    assert all(gap >= wait for _, gap in gaps), gaps
    # The measurement can tell: without the header the engine's own short backoff shows.
    bare = mock_server(rates={"429-no-retry-after": 0.3}, seed=3, retry_after=wait, record=True)
    assert _run_engine(tmp_path, bare, "nra") == 0
    assert min(gap for _, gap in _retry_gaps(bare)) < wait


def test_retry_after_beyond_the_backoff_limit_is_an_error_not_a_stall(
    tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server(rates={"429": 0.3}, seed=3, retry_after=30, record=True)
    started = time.monotonic()
    assert _run_engine(tmp_path, server, "long", backoff_max_s=1.0) == 3
    assert time.monotonic() - started < 10
    # Each rate-limited call was tried once and never sooner than asked: not retried at all.
    assert _retry_gaps(server) == []
    assert server.stats()["faults"]["429"] > 0
