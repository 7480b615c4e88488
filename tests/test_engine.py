"""The run engine: outputs, exit codes, budget, cache, resume, the OpenAI provider."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay.core.records import Trial
from assay.engine.budget import Budget
from assay.engine.calls import cache_key
from assay.engine.limiter import AdaptiveLimiter
from assay.models import Message, Request
from conftest import make_case, write_jsonl


def read_trials(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def key_of(t: dict) -> tuple:
    return (t["case_id"], t["condition"], t["trial"])


def test_run_writes_every_trial_with_every_field(cli, cases_file: Path, tmp_path: Path) -> None:
    skill = tmp_path / "skill.md"
    skill.write_text("Answer in one sentence.")
    out = tmp_path / "trials.jsonl"
    store = tmp_path / "s.db"
    result = cli(
        "run",
        "--cases",
        cases_file,
        "--model",
        "mock",
        "--condition-skill",
        skill,
        "--trials",
        2,
        "--output",
        out,
        "--store",
        store,
    )
    assert result.code == 0, result.stderr
    trials = read_trials(out)
    assert len(trials) == 5 * 2 * 2
    assert len({key_of(t) for t in trials}) == len(trials)
    for t in trials:
        Trial.model_validate(t)
        assert set(t) == set(Trial.model_fields)
        assert t["error"] is None and t["response"]
    base = [t for t in trials if t["condition"] == "baseline"]
    cand = [t for t in trials if t["condition"] == "candidate"]
    assert all(t["skill_sha256"] is None for t in base)
    assert all(t["skill_sha256"] for t in cand)
    assert base[0]["prompt_sha256"] != cand[0]["prompt_sha256"]


def test_rerun_makes_no_calls_and_no_duplicates(cli, cases_file: Path, tmp_path: Path) -> None:
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    args = (
        "run",
        "--cases",
        cases_file,
        "--model",
        "mock",
        "--trials",
        2,
        "--output",
        out,
        "--store",
        store,
        "--json",
    )
    first = cli(*args).json()
    assert first["calls"] == 10
    again = cli(*args).json()
    assert again["calls"] == 0 and again["answered"] == 10
    assert len(read_trials(out)) == 10
    # A new run id over the same calls (one more case) is served from the call cache.
    cases = [json.loads(x) for x in cases_file.read_text().splitlines()] + [make_case("new")]
    write_jsonl(cases_file, cases)
    third = cli(*args).json()
    assert third["calls"] == 2 and third["cache_hits"] == 10 and third["answered"] == 12


def test_edited_skill_makes_new_trials(cli, cases_file: Path, tmp_path: Path) -> None:
    skill, store = tmp_path / "skill.md", tmp_path / "s.db"
    skill.write_text("Version one.")
    args = (
        "run",
        "--cases",
        cases_file,
        "--model",
        "mock",
        "--condition-skill",
        skill,
        "--condition",
        "candidate",
        "--trials",
        1,
        "--store",
        store,
        "--json",
    )
    assert cli(*args).json()["calls"] == 5
    skill.write_text("Version two.")
    assert cli(*args).json()["calls"] == 5


def test_unmetered_model_refused_before_any_call(
    cli, cases_file: Path, tmp_path: Path, mock_server
) -> None:
    server = mock_server()
    result = cli(
        "run",
        "--cases",
        cases_file,
        "--model",
        "openai:local-llm",
        "--base-url",
        server.url,
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 2 and "--allow-unmetered" in result.stderr
    assert server.stats()["requests"] == 0
    ok = cli(
        "run",
        "--cases",
        cases_file,
        "--model",
        "openai:local-llm",
        "--base-url",
        server.url,
        "--store",
        tmp_path / "s.db",
        "--allow-unmetered",
        "--trials",
        1,
    )
    assert ok.code == 0, ok.stderr
    assert server.stats()["requests"] == 5


def test_budget_is_never_exceeded_at_high_concurrency(cli, tmp_path: Path, mock_server) -> None:
    server = mock_server(latency=0.02)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(200)])
    out = tmp_path / "t.jsonl"
    # Worst case per call: (prompt bytes + 16) input tokens + 100 output tokens at $1/M each.
    result = cli(
        "run",
        "--cases",
        cases,
        "--model",
        "openai:m",
        "--base-url",
        server.url,
        "--price",
        "1000,1000",
        "--max-tokens",
        100,
        "--budget-usd",
        "1",
        "--concurrency",
        64,
        "--trials",
        1,
        "--output",
        out,
        "--store",
        tmp_path / "s.db",
        "--json",
    )
    assert result.code == 3
    summary = result.json()
    assert summary["stopped"] == "budget"
    trials = read_trials(out)
    spent = sum(t["cost_usd"] for t in trials)
    # Waiting reservations let the run use its budget: within one worst case (~$0.13) of it.
    assert 1.0 - 0.13 < spent <= 1.0
    assert summary["spent_usd"] == pytest.approx(spent)
    assert server.stats()["requests"] == len(trials) < 200


def test_python_agent_is_reserved_as_an_agent(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A python: agent runs many model turns a call: with --price, its calls reserve a share
    of what is left, not one turn's worst case, so an ordinary call is not an overrun."""
    agent = tmp_path / "agent.py"
    agent.write_text("def run(case, settings):\n    return {'response': 'ok', 'cost_usd': 0.05}\n")
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(5)])
    result = cli(
        "run", "--cases", cases, "--model", f"python:{agent}:run", "--price", "1,1",
        "--budget-usd", 1, "--trials", 1, "--concurrency", 2, "--json",
        "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["answered"] == 5 and summary["run_spent_usd"] == pytest.approx(0.25)
    assert summary["notes"] == []


def test_budget_reservation_unit() -> None:
    budget = Budget(1.0)
    assert budget.reserve(0.6)
    assert not budget.reserve(0.5) and budget.exhausted
    budget.settle(0.6, 0.1)
    assert budget.remaining() == pytest.approx(0.9)
    assert budget.reserve(0.9)
    assert Budget(None).reserve(1e9)


def test_budget_agent_shares_and_overrun_unit() -> None:
    """An agent call whose cost nothing predicts runs alone with all that is left; later ones
    hold a share (at least the priciest call so far); a call above its reservation stops
    every new reservation at once."""

    async def go() -> None:
        budget = Budget(1.0)
        known: list[float] = []

        def least() -> float | None:
            return max(known) if known else None

        first = await budget.reserve_share(least, 4)
        assert first == pytest.approx(1.0)
        waiting = asyncio.create_task(budget.reserve_share(least, 4))
        await asyncio.sleep(0)
        assert not waiting.done()  # nothing is free while the first call runs
        known.append(0.2)
        budget.settle(first, 0.2)
        assert await waiting == pytest.approx(0.2)  # max(0.2, 0.6 / 4): asked again on waking
        assert await budget.reserve_share(least, 4) == pytest.approx(0.2)
        budget.overran("agent", 0.2, 0.35)
        assert budget.overrun is not None and "$0.3500, more than the $0.2000" in budget.overrun
        assert await budget.reserve_share(least, 4) is None and budget.exhausted
        assert not budget.reserve(0.0)
        assert await Budget(None).reserve_share(least, 4) == 0.0
        unlimited = Budget(None)
        unlimited.overran("agent", 0.0, 5.0)  # no cap, nothing to stop
        assert unlimited.overrun is None and unlimited.reserve(1.0)

    asyncio.run(go())


def test_cache_key_covers_every_input() -> None:
    base = Request(messages=[Message("user", "hi")], max_tokens=10, trial=1)
    ident = {"spec": "openai:m", "base_url": "http://a"}
    key = cache_key(ident, base)
    variants = [
        cache_key({"spec": "openai:m", "base_url": "http://b"}, base),
        cache_key({"spec": "openai:n", "base_url": "http://a"}, base),
        cache_key(ident, Request(messages=[Message("user", "hi!")], max_tokens=10, trial=1)),
        cache_key(ident, Request(messages=[Message("user", "hi")], max_tokens=11, trial=1)),
        cache_key(ident, Request(messages=[Message("user", "hi")], max_tokens=10, trial=2)),
        cache_key(ident, Request(messages=[Message("user", "hi")], max_tokens=10, temperature=0.5)),
    ]
    assert key == cache_key(ident, Request(messages=[Message("user", "hi")], max_tokens=10))
    assert len({key, *variants}) == 7


def _cache_key_before(identity: dict[str, Any], request: Request) -> str:
    """The cache key as assay always computed it (one canonical JSON text of every part)."""
    text = json.dumps(
        [
            identity,
            [[m.role, m.content] for m in request.messages],
            request.max_tokens,
            request.temperature,
            request.trial,
            request.json_schema,
            request.settings,
        ],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def test_cache_key_bytes_never_change() -> None:
    """Existing caches and resume keys stay valid: the key is the same SHA-256 of the same
    canonical JSON as before, with or without a schema, whether or not a schema object was
    seen before (its encoding is remembered) and for any text."""
    from assay.scorers.judge.verdicts import direct_schema, pairwise_schema

    schema = direct_schema(["accuracy", "clarité"], 1, 5)
    messages = [Message("system", "Be fair. ünïcödé ✓"), Message("user", 'say "hi"\n\t{}')]
    requests = [
        Request(messages=[Message("user", "hi")], max_tokens=10),
        Request(messages=messages, max_tokens=300, temperature=0.7, trial=3),
        Request(messages=messages, max_tokens=300, json_schema=schema, trial=2),
        Request(messages=messages, max_tokens=300, json_schema=schema, trial=2),
        Request(messages=messages, max_tokens=9, json_schema=direct_schema(["accuracy"], 1, 5)),
        Request(messages=messages, max_tokens=9, json_schema=pairwise_schema(["a", "b"])),
        Request(messages=messages, max_tokens=9, json_schema={"type": "object", "b": 1, "a": []}),
        Request(
            messages=messages,
            max_tokens=9,
            settings={"top_p": 0.9, "stop": ["\n"], "dir": Path("/tmp/x"), "z": None},
        ),
    ]
    identities = [
        {"spec": "openai:m", "base_url": "http://a"},
        {"spec": "command:claude", "args": ["--x", 1], "env": {"B": "2", "A": "é"}},
        {},
    ]
    for identity in identities:
        for request in requests:
            assert cache_key(identity, request) == _cache_key_before(identity, request)
    # a pinned key: the bytes hashed did not change
    assert cache_key(identities[0], requests[0]) == (
        "b880d50e5a5688c5dd052c12eee4c93e18f1caa3afcb1b96bbdd6f729bacbbed"
    )


def test_limiter_halves_and_creeps_back() -> None:
    async def go() -> None:
        limiter = AdaptiveLimiter(8, cooldown_s=0.0)
        limiter.on_overload()
        assert limiter.limit == 4
        limiter.on_overload()
        assert limiter.limit == 2
        for _ in range(2):
            limiter.on_success()
        assert limiter.limit == 3
        for _ in range(3):
            await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        assert not waiter.done()
        limiter.release()
        await asyncio.wait_for(waiter, 1)

    asyncio.run(go())


def test_a_freed_slot_goes_to_the_first_waiter_not_to_a_later_caller() -> None:
    """FIFO handoff: a task that releases and at once asks again queues behind the waiters
    (with barging, a run's workers kept every slot and its pipelined judges waited until the
    run's last call); a waiter cancelled after it was handed a slot passes the slot on."""

    async def go() -> None:
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        order: list[str] = []

        async def take(name: str) -> None:
            await limiter.acquire()
            order.append(name)

        judge = asyncio.create_task(take("judge"))
        await asyncio.sleep(0)
        limiter.release()
        worker = asyncio.create_task(take("worker"))  # comes later, finds the slot handed on
        await asyncio.sleep(0)
        assert order == ["judge"] and judge.done() and not worker.done()
        limiter.release()
        await asyncio.wait_for(worker, 1)
        assert order == ["judge", "worker"]

        cancelled = asyncio.create_task(take("cancelled"))
        last = asyncio.create_task(take("last"))
        await asyncio.sleep(0)
        limiter.release()  # handed to `cancelled`, which is cancelled before it runs
        cancelled.cancel()
        await asyncio.wait_for(last, 1)
        assert order == ["judge", "worker", "last"] and limiter.active == 1

    asyncio.run(go())


def test_openai_faults_end_recorded_and_rerun_finishes(cli, tmp_path: Path, mock_server) -> None:
    rates = {
        "429": 0.05,
        "429-no-retry-after": 0.03,
        "500": 0.05,
        "reset": 0.03,
        "truncated": 0.02,
        "non-json": 0.02,
    }
    server = mock_server(rates=rates, seed=7, retry_after=0.01)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(60)])
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    args = (
        "run",
        "--cases",
        cases,
        "--model",
        "openai:gpt-4o-mini",
        "--base-url",
        server.url,
        "--trials",
        2,
        "--retries",
        0,
        "--concurrency",
        16,
        "--output",
        out,
        "--store",
        store,
        "--json",
    )
    first = cli(*args)
    summary = first.json()
    trials = read_trials(out)
    assert len(trials) == 120 and len({key_of(t) for t in trials}) == 120
    errored = [t for t in trials if t["error"]]
    assert errored and first.code == 3 and summary["errored"] == len(errored)
    assert all(t["response"] == "" and t["state"] is None for t in errored)
    assert all(t["cost_usd"] is not None for t in trials if not t["error"])
    # Retrying with retries on finishes the rest and keeps every answered trial as it was.
    answered = {key_of(t): t for t in trials if not t["error"]}
    second = cli(*args[:-1], "--retries", 8, "--json")
    assert second.code == 0, second.stdout
    final = read_trials(out)
    assert len(final) == 120 and all(not t["error"] for t in final)
    assert all(answered[key_of(t)] == t for t in final if key_of(t) in answered)


def test_timeout_is_an_error_not_a_hang(cli, tmp_path: Path, mock_server) -> None:
    server = mock_server(rates={"timeout": 1.0}, timeout_sleep=5)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("slow")])
    out = tmp_path / "t.jsonl"
    started = time.monotonic()
    result = cli(
        "run",
        "--cases",
        cases,
        "--model",
        "openai:gpt-4o-mini",
        "--base-url",
        server.url,
        "--trials",
        1,
        "--retries",
        0,
        "--timeout",
        "0.3",
        "--output",
        out,
        "--store",
        tmp_path / "s.db",
    )
    assert result.code == 3 and time.monotonic() - started < 4
    assert "timeout" in read_trials(out)[0]["error"]


def test_resume_after_sigkill(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(40)])
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    cmd = [
        sys.executable,
        "-m",
        "assay",
        "run",
        "--cases",
        str(cases),
        "--model",
        "mock:answer,latency=0.05",
        "--trials",
        "2",
        "--concurrency",
        "4",
        "--output",
        str(out),
        "--store",
        str(store),
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    import sqlite3

    while time.monotonic() < deadline:
        time.sleep(0.05)
        if store.exists():
            try:
                with sqlite3.connect(store) as db:
                    n = db.execute("SELECT count(*) FROM trials").fetchone()[0]
            except sqlite3.DatabaseError:
                continue
            if n >= 10:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    resumed = read_trials(out)
    assert len(resumed) == 80 and len({key_of(t) for t in resumed}) == 80
    fresh_out = tmp_path / "fresh.jsonl"
    fresh = [*cmd[:-4], "--output", str(fresh_out), "--store", str(tmp_path / "fresh.db")]
    assert subprocess.run(fresh, env=env, capture_output=True).returncode == 0
    strip = lambda t: {k: v for k, v in t.items() if k not in ("latency_s", "created_at")}  # noqa: E731
    assert [strip(t) for t in resumed] == [strip(t) for t in read_trials(fresh_out)]


def test_usage_errors_exit_2(cli, cases_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert (
        cli(
            "run", "--cases", cases_file, "--model", "mock", "--case", "nope", "--store", store
        ).code
        == 2
    )
    assert (
        cli(
            "run",
            "--cases",
            cases_file,
            "--model",
            "mock",
            "--condition",
            "candidate",
            "--store",
            store,
        ).code
        == 2
    )
    assert cli("run", "--cases", cases_file, "--model", "zzz:1", "--store", store).code == 2
    assert cli("run", "--cases", cases_file, "--trials", "0", "--store", store).code == 2
    empty = write_jsonl(tmp_path / "e.jsonl", [])
    assert cli("run", "--cases", empty, "--model", "mock", "--store", store).code == 2


def test_multi_turn_and_context(cli, tmp_path: Path) -> None:
    cases = write_jsonl(
        tmp_path / "c.jsonl",
        [
            make_case("m", turns=["and then?"], context=[{"id": "d1", "text": "Doc text"}]),
        ],
    )
    out = tmp_path / "t.jsonl"
    assert (
        cli(
            "run",
            "--cases",
            cases,
            "--model",
            "mock:echo",
            "--trials",
            1,
            "--output",
            out,
            "--store",
            tmp_path / "s.db",
        ).code
        == 0
    )
    (trial,) = read_trials(out)
    assert trial["response"] == "and then?"


def test_a_free_model_runs_and_judges_under_a_budget(cli, cases_file: Path, tmp_path: Path) -> None:
    """A priced model whose worst case is $0 (the mock models, the embedded model) reserves
    $0 per call; under a budget its calls must go ahead, not fail as "the call's reservation
    was spent by its failed attempts"."""
    trials = tmp_path / "trials.jsonl"
    ran = cli(
        "run", "--cases", cases_file, "--model", "mock:answer", "--budget-usd", "1",
        "--output", trials, "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    judged = cli(
        "judge", "--trials", trials, "--cases", cases_file, "--judge", "mock:fair",
        "--budget-usd", "5", "--output", tmp_path / "j.jsonl", "--store", tmp_path / "j.db",
    )  # fmt: skip
    assert judged.code == 0, judged.stderr
    assert "judging failed" not in judged.stderr
    assert len(read_trials(tmp_path / "j.jsonl")) == len(read_trials(trials))
