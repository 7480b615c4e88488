"""`--batch`: calls through the OpenAI Batch API and Anthropic Message Batches (local mocks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_server import BatchServer
from conftest import make_case, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
# gpt-4o-mini: $0.15 / $0.60 per million tokens; each mock answer is 1000 in, 100 out.
HALF_PRICE = (1000 * 0.15 + 100 * 0.60) / 1e6 * 0.5


@pytest.fixture
def batch_server() -> Iterator[Any]:
    servers: list[BatchServer] = []

    def start(**kwargs: Any) -> BatchServer:
        servers.append(BatchServer(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def cases(tmp_path: Path, n: int = 5, failing: tuple[int, ...] = ()) -> Path:
    rows = [
        make_case(f"c{i}", prompt=f"Question {i}{' FAIL' if i in failing else ''}?")
        for i in range(n)
    ]
    return write_jsonl(tmp_path / "cases.jsonl", rows)


def run_openai(cli: Any, server: BatchServer, catalogue: Path, *extra: str) -> Any:
    return cli(
        "run", "--cases", catalogue, "--model", "openai:gpt-4o-mini",
        "--base-url", f"{server.root}/v1", "--batch", "--batch-poll-s", "0.01",
        "--output", "trials.jsonl", "--trials", "1", "--json", *extra,
    )  # fmt: skip


def trials() -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path("trials.jsonl").read_text().splitlines()]


def test_openai_batch_answers_at_half_price_and_errors_per_request(
    cli: Any, batch_server: Any, tmp_path: Path
) -> None:
    server = batch_server()
    result = run_openai(cli, server, cases(tmp_path, failing=(3,)))
    assert result.code == 3, result.stderr
    assert server.submissions == 1 and server.direct_calls == 0
    (batch,) = server.batches.values()
    assert len(batch.requests) == 5
    records = {r["case_id"]: r for r in trials()}
    assert records["c3"]["error"] == "batch request failed: HTTP 400: the prompt was refused"
    for case_id in ("c0", "c1", "c2", "c4"):
        assert records[case_id]["error"] is None
        assert records[case_id]["response"].startswith("batch answer to:")
        assert records[case_id]["cost_usd"] == pytest.approx(HALF_PRICE)
    assert result.json()["spent_usd"] == pytest.approx(4 * HALF_PRICE)

    # The next run submits only the request that failed, in a new batch.
    again = run_openai(cli, server, cases(tmp_path, failing=(3,)))
    assert again.code == 3
    assert server.submissions == 2
    assert len(server.batches["batch_2"].requests) == 1


def test_expired_batch_requests_are_errors_and_submitted_again(
    cli: Any, batch_server: Any, tmp_path: Path
) -> None:
    server = batch_server(expire=2)
    catalogue = cases(tmp_path)
    first = run_openai(cli, server, catalogue)
    assert first.code == 3
    errors = [r["error"] for r in trials() if r["error"]]
    assert len(errors) == 3
    assert all(e == "batch batch_1 expired: the request did not run" for e in errors)
    server.expire = None
    second = run_openai(cli, server, catalogue)
    assert second.code == 0, second.stderr
    assert server.submissions == 2
    assert len(server.batches["batch_2"].requests) == 3  # the answered two are not sent again
    assert all(r["error"] is None for r in trials())


def test_cached_answers_are_not_submitted(cli: Any, batch_server: Any, tmp_path: Path) -> None:
    server = batch_server()
    assert run_openai(cli, server, cases(tmp_path)).code == 0
    # Another run with one more case: the five calls made before are answered from the cache.
    again = run_openai(cli, server, cases(tmp_path, n=6))
    assert again.code == 0
    assert server.submissions == 2
    assert len(server.batches["batch_2"].requests) == 1


def test_budget_is_reserved_before_submitting(cli: Any, batch_server: Any, tmp_path: Path) -> None:
    server = batch_server()
    result = run_openai(cli, server, cases(tmp_path), "--budget-usd", "0.0000001")
    assert result.code == 3
    assert server.submissions == 0


def test_killed_run_resumes_the_submitted_batch(
    cli: Any, batch_server: Any, tmp_path: Path
) -> None:
    server = batch_server(hold=True)
    catalogue = cases(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = [
        sys.executable, "-m", "assay", "run", "--cases", str(catalogue),
        "--model", "openai:gpt-4o-mini", "--base-url", f"{server.root}/v1",
        "--batch", "--batch-poll-s", "0.01", "--output", "trials.jsonl", "--trials", "1",
        "--budget-usd", "1",
    ]  # fmt: skip
    process = subprocess.Popen(args, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while server.submissions == 0 and time.monotonic() < deadline:
            assert process.poll() is None
            time.sleep(0.05)
        assert server.submissions == 1
        time.sleep(0.2)  # it polls the batch now
    finally:
        process.kill()
        process.wait(30)
    server.hold = False
    result = run_openai(cli, server, catalogue, "--budget-usd", "1")
    assert result.code == 0, result.stderr
    assert server.submissions == 1  # the same batch, not a second submission
    # The killed process's calls are paid once, when the rerun collects them.
    assert result.json()["run_spent_usd"] == pytest.approx(5 * HALF_PRICE)
    assert len(trials()) == 5 and all(r["error"] is None for r in trials())


def test_anthropic_message_batches(
    cli: Any, batch_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = batch_server(expire=4)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    catalogue = cases(tmp_path, failing=(1,))
    args = (
        "run", "--cases", catalogue, "--model", "anthropic:claude-haiku-4-5", "--batch",
        "--batch-poll-s", "0.01", "--output", "trials.jsonl", "--trials", "1", "--json",
    )  # fmt: skip
    result = cli(*args)
    assert result.code == 3, result.stderr
    records = {r["case_id"]: r for r in trials()}
    assert records["c1"]["error"] == "batch request failed: the prompt was refused"
    assert records["c4"]["error"] == "batch request expired: it did not run"
    # claude-haiku-4-5: $1 / $5 per million tokens, at half price
    assert records["c0"]["cost_usd"] == pytest.approx((1000 * 1.0 + 100 * 5.0) / 1e6 / 2)
    assert records["c0"]["response"].startswith("batch answer to:")
    server.expire = None
    assert cli(*args).code == 3  # c1 still fails; c4 now runs
    assert len(server.batches["msgbatch_2"].requests) == 2
    assert {r["case_id"] for r in trials() if r["error"]} == {"c1"}


def test_judge_batch(cli: Any, batch_server: Any, tmp_path: Path) -> None:
    server = batch_server()
    catalogue = cases(tmp_path, n=3)
    answers = [
        {"case_id": f"c{i}", "trial": 1, "condition": "baseline", "runner": "mock",
         "response": f"Answer {i}."}
        for i in range(3)
    ]  # fmt: skip
    write_jsonl(tmp_path / "answers.jsonl", answers)
    args = (
        "judge", "--trials", "answers.jsonl", "--cases", catalogue, "--judge",
        "openai:gpt-4o-mini", "--base-url", f"{server.root}/v1", "--batch",
        "--batch-poll-s", "0.01", "--output", "scores.jsonl", "--json",
    )  # fmt: skip
    result = cli(*args)
    assert result.code == 0, result.stderr
    assert server.submissions == 1 and server.direct_calls == 0
    assert len(server.batches["batch_1"].requests) == 3
    assert result.json()["judged"] == 3
    assert cli(*args).code == 0 and server.submissions == 1  # judged already: no new batch


def test_suite_batch_settings_for_the_run_and_its_judge(
    cli: Any, batch_server: Any, tmp_path: Path
) -> None:
    server = batch_server()
    cases(tmp_path, n=3)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""name = "batched"
cases = "cases.jsonl"
trials = 1
output = "out"
[run]
base_url = "{server.root}/v1"
batch = true
batch_poll_s = 0.01
[[conditions]]
name = "only"
model = "openai:gpt-4o-mini"
[judge]
judges = ["openai:gpt-4o-mini"]
batch = true
""",
        encoding="utf-8",
    )
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code in (0, 1), result.stderr
    assert server.direct_calls == 0
    assert server.submissions == 2  # the run's batch, then the judge's
    assert [len(b.requests) for b in server.batches.values()] == [3, 3]
