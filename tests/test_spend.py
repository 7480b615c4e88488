"""Spend is one figure, split by role, and the cap holds across reruns (issue 24, point 3)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.models import Message, Request
from assay.models.pricing import Price
from conftest import make_case, write_jsonl


def _store_spend(store: Path, run_id: str) -> tuple[float, dict[str, float]]:
    """The store's total for the run and its split by role."""
    from assay.store import Store
    from assay.store.spend import run_spend

    handle = Store(store)
    try:
        spend = run_spend(handle, run_id)
    finally:
        handle.close()
    return spend.total or 0.0, spend.rounded()


def _judged_suite(tmp_path: Path, *, judge_budget: float | None = None) -> Path:
    """Priced mock models: the run's trials and the suite's judge both cost money."""
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"m{i}") for i in range(4)])
    suite = tmp_path / "suite.toml"
    cap = f"budget_usd = {judge_budget}\n" if judge_budget is not None else ""
    suite.write_text(
        'name = "metered"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:answer"\n'
        'output = "out"\n[run]\nprice = "1000,1000"\n'
        '[[conditions]]\nname = "baseline"\n'
        '[[conditions]]\nname = "candidate"\nsystem = "Be brief."\n'
        f'[judge]\njudges = ["mock:fair"]\nprice = "1000,1000"\n{cap}',
        encoding="utf-8",
    )
    return suite


@pytest.mark.parametrize("capped", [False, True], ids=["pipelined-judges", "judges-after-run"])
def test_every_spend_figure_counts_the_judges_split_by_role(
    cli: Any, tmp_path: Path, capped: bool
) -> None:
    """The issue's case: `spent_usd` left out the judges' spend that the store had. Without
    a budget the judges follow the run; with one they judge after it: both count."""
    suite, store = _judged_suite(tmp_path), tmp_path / "s.db"
    budget = ("--budget-usd", "100") if capped else ()
    done = cli("run", suite, "--store", store, "--json", *budget)
    assert done.code in (0, 1), done.stderr
    summary = done.json()
    spend, total = summary["spend"], summary["spent_usd"]
    assert spend["system"] > 0 and spend["judges"] > 0 and spend["scorers"] == 0
    assert total == spend["total"] == pytest.approx(spend["system"] + spend["judges"])
    stored, by_role = _store_spend(store, summary["run_id"])
    assert total == pytest.approx(stored) and summary["run_spent_usd"] == pytest.approx(stored)
    assert summary["run_spend"] == pytest.approx(by_role) and by_role == pytest.approx(spend)
    # What the suite writes says the same: summary.json, the JSON and Markdown reports.
    written = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert written["spend"] == pytest.approx(by_role)
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["spend"] == pytest.approx(by_role)
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    row = " | ".join(f"{by_role[k]:.4f}" for k in ("total", "system", "judges", "scorers"))
    assert f"| {row} |" in markdown
    # A rerun spends nothing, and says what the run has spent in all, by role.
    again = cli("run", suite, "--store", store)
    assert again.code in (0, 1), again.stderr
    assert "$0.0000 spent (system $0.0000, judges $0.0000, scorers $0.0000)" in again.stdout
    assert (
        f"${stored:.4f} by this run in all (system ${spend['system']:.4f},"
        f" judges ${spend['judges']:.4f}, scorers $0.0000)" in again.stdout
    )


def test_a_judge_backed_scorer_is_spend_of_the_scorers(cli: Any, tmp_path: Path) -> None:
    """The grounding scorer's judge calls count as the scorers', not the judges'."""
    doc = "The Eiffel Tower is 330 metres tall and stands in Paris."
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("g1", prompt=doc, context=[{"id": "d1", "text": doc}])],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "grounded"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\n'
        'output = "out"\n[run]\nprice = "1000,1000"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        '[judge]\njudges = ["mock:fair"]\nprice = "1000,1000"\n'
        '[scoring]\nscorers = [{ name = "groundedness" }]\n',
        encoding="utf-8",
    )
    done = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert done.code in (0, 1), done.stderr
    spend = done.json()["spend"]
    assert spend["scorers"] > 0 and spend["judges"] > 0 and spend["system"] > 0
    assert spend["total"] == pytest.approx(spend["system"] + spend["judges"] + spend["scorers"])


def _agent(bin_dir: Path, cost: float) -> None:
    """A `command:` agent whose every call costs `cost` (claude-json output)."""
    path = bin_dir / "agent"
    path.write_text(
        f"#!{sys.executable}\nimport json\n"
        "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False,"
        f" 'result': 'ok', 'total_cost_usd': {cost}}}))\n"
    )
    path.chmod(0o755)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


def test_a_rerun_after_a_budget_stop_remembers_the_priciest_call(
    cli: Any, bin_dir: Path, tmp_path: Path
) -> None:
    """Calls of $0.03 on a $0.10 cap stop at $0.09; the rerun used to forget what one call
    costs and send one on the $0.01 left (3× over its reservation): $0.12 billed."""
    _agent(bin_dir, 0.03)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(6)])
    args = ("run", "--cases", cases, "--model", "command:agent {prompt}", "--format",
            "claude-json", "--price", "3,15", "--budget-usd", "0.1", "--concurrency", "1",
            "--json", "--store", tmp_path / "s.db")  # fmt: skip
    first = cli(*args)
    assert first.code == 3 and first.json()["stopped"] == "budget"
    assert first.json()["run_spent_usd"] == pytest.approx(0.09)
    again = cli(*args)
    assert again.code == 3 and again.json()["stopped"] == "budget", again.stderr
    assert again.json()["calls"] == 0
    assert again.json()["run_spent_usd"] <= 0.1 + 1e-9
    # What one call costs is the store's, not the run's: another run of the agent knows it.
    other = write_jsonl(tmp_path / "other.jsonl", [make_case("x0"), make_case("x1")])
    fresh = cli(*args[:2], other, *args[3:-2], "--store", tmp_path / "s.db", "--budget-usd", "0.05")
    assert fresh.json()["calls"] == 1 and fresh.json()["run_spent_usd"] <= 0.05 + 1e-9


@pytest.mark.parametrize("cost", ["-5", "float('nan')", "float('inf')"])
def test_a_cost_that_is_no_amount_counts_at_its_reservation(
    cli: Any, tmp_path: Path, cost: str
) -> None:
    """A python: agent reporting cost_usd -5 made all 20 calls under a $1 cap and left the
    run's spend at -$100 (no cap for later resumes); NaN and infinity are no amounts either."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        f"def run(case, settings):\n    return {{'response': 'ok', 'cost_usd': {cost}}}\n"
    )
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(20)])
    out = tmp_path / "t.jsonl"
    done = cli(
        "run", "--cases", cases, "--model", f"python:{agent}:run", "--price", "1,1",
        "--budget-usd", 1, "--concurrency", 1, "--output", out, "--json",
        "--store", tmp_path / "s.db",
    )  # fmt: skip
    summary = done.json()
    assert done.code == 3 and summary["stopped"] == "budget", done.stderr
    # the first call runs alone with all the $1 reserved: it counts as $1, the cap is reached
    assert summary["calls"] == 1 and summary["run_spent_usd"] == pytest.approx(1.0)
    assert [t["cost_usd"] for t in map(json.loads, out.read_text().splitlines())] == [1.0]


def _worst(prompt: str, max_tokens: int) -> float:
    """What one call of the mock server's model reserves at $1000 per million tokens."""
    request = Request(messages=[Message("user", prompt)], max_tokens=max_tokens)
    return Price(1000, 1000).worst_case(request)


@pytest.mark.parametrize("fault", ["non-json", "timeout"])
def test_an_unreadable_reply_or_a_timeout_counts_at_its_reservation(
    cli: Any, tmp_path: Path, mock_server: Any, fault: str
) -> None:
    """An unreadable 200 reply and a timed-out call may be billed: never counted as $0."""
    server = mock_server(rates={fault: 1.0}, timeout_sleep=3)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    done = cli(
        "run", "--cases", cases, "--model", "openai:m", "--base-url", server.url,
        "--price", "1000,1000", "--max-tokens", 10, "--budget-usd", 5, "--retries", 0,
        "--trials", 1, "--timeout", "0.3", "--json", "--store", tmp_path / "s.db",
    )  # fmt: skip
    summary = done.json()
    assert done.code == 3 and summary["errored"] == 1, done.stderr
    worst = _worst(make_case("c0")["prompt"], 10)
    assert summary["spent_usd"] == pytest.approx(worst)
    assert summary["run_spent_usd"] == pytest.approx(worst)


def test_a_retry_after_a_timeout_reserves_its_worst_case_again(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """Each timed-out attempt counts at its worst case; a retry holds a new one, and when the
    budget cannot, the call fails there (its trial records what it counted) rather than
    spend past the cap."""
    server = mock_server(rates={"timeout": 1.0}, timeout_sleep=3, retry_after=0.01)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    worst = _worst(make_case("c0")["prompt"], 10)
    args = ("run", "--cases", cases, "--model", "openai:m", "--base-url", server.url,
            "--price", "1000,1000", "--max-tokens", 10, "--retries", 2, "--timeout", "0.2",
            "--trials", 1, "--json")  # fmt: skip
    room = cli(*args, "--budget-usd", 5, "--store", tmp_path / "a.db").json()
    assert room["errored"] == 1 and room["spent_usd"] == pytest.approx(3 * worst)
    out = tmp_path / "b.jsonl"
    tight = cli(*args, "--budget-usd", 1.5 * worst, "--store", tmp_path / "b.db", "--output", out)
    assert tight.code == 3 and tight.json()["errored"] == 1, tight.stderr
    assert tight.json()["run_spent_usd"] == pytest.approx(worst)
    (trial,) = map(json.loads, out.read_text().splitlines())
    assert "budget cannot cover another attempt" in trial["error"]
    assert trial["cost_usd"] == pytest.approx(worst)


@pytest.mark.parametrize("price", ["nan,nan", "inf,1", "1,-inf", "-1,2"])
def test_a_price_that_is_no_amount_is_refused_before_any_call(
    cli: Any, cases_file: Path, tmp_path: Path, price: str
) -> None:
    """`--price nan,nan` ended in an IntegrityError traceback, an empty output file and a
    reservation left held."""
    out, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    done = cli(
        "run", "--cases", cases_file, "--model", "mock", f"--price={price}",
        "--budget-usd", 1, "--output", out, "--store", store,
    )  # fmt: skip
    assert done.code == 2
    assert "--price" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and not store.exists()


def test_a_suite_price_that_is_no_amount_names_its_file_and_line(cli: Any, tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "x"\n[run]\nbudget_usd = 1\nprice = "nan,nan"\n', encoding="utf-8")
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code == 2 and f"{suite}:4" in done.stderr and "price" in done.stderr


CODEX_EVENTS = (
    '{"type": "item.completed", "item": {"type": "agent_message", "text": "ok"}}\n'
    '{"type": "turn.completed", "usage": {"input_tokens": 600, "output_tokens": 400}}\n'
)


def test_codex_is_metered_by_price(cli: Any, bin_dir: Path, tmp_path: Path) -> None:
    """codex ignored --price, then asked for --price."""
    codex = bin_dir / "codex"
    codex.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write({CODEX_EVENTS!r})\n")
    codex.chmod(0o755)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0"), make_case("c1")])
    args = ("run", "--cases", cases, "--model", "codex", "--budget-usd", 1, "--trials", 1,
            "--json", "--store", tmp_path / "s.db")  # fmt: skip
    unpriced = cli(*args)
    assert unpriced.code == 2 and "--price" in unpriced.stderr
    priced = cli(*args, "--price", "10,20")
    assert priced.code == 0, priced.stderr
    # 600 input and 400 output tokens at $10 and $20 per million: $0.014 a call
    assert priced.json()["spent_usd"] == pytest.approx(2 * 0.014)


def test_no_error_asks_for_a_price_that_cannot_meter(
    cli: Any, bin_dir: Path, tmp_path: Path
) -> None:
    """A `command:` with the text format reports no usage: a price meters nothing, so the
    error says what does help (and --price no longer passes the check silently)."""
    _agent(bin_dir, 0.01)
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    for extra in ((), ("--price", "1,1")):
        done = cli(
            "run", "--cases", cases, "--model", "command:agent {prompt}", "--budget-usd", 1,
            "--store", tmp_path / "s.db", *extra,
        )  # fmt: skip
        assert done.code == 2
        assert "no price can meter it" in done.stderr and "--allow-unmetered" in done.stderr
        assert "give --price" not in done.stderr


def test_an_unmetered_suite_judge_is_told_the_suite_keys(cli: Any, tmp_path: Path) -> None:
    """A suite's judge is priced by [judge] price, never by the run's --price."""
    write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "x"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock"\n'
        '[judge]\njudges = ["python:judge.py:run"]\n',
        encoding="utf-8",
    )
    (tmp_path / "judge.py").write_text("def run(case, settings):\n    return 'x'\n")
    done = cli("run", suite, "--store", tmp_path / "s.db", "--budget-usd", 1)
    assert done.code == 2, done.stderr
    assert "[judge] price" in done.stderr and "[judge] allow_unmetered" in done.stderr
    assert "give --price" not in done.stderr


def test_calls_adding_to_their_reservations_do_not_wait_on_each_other() -> None:
    """Two calls each holding half the cap and each asking for more for a retry: neither can
    settle while it waits, so one is refused at once (no deadlock); once that call settles,
    the other's fits. A call in flight that is not waiting is waited for."""
    import asyncio

    from assay.engine.budget import Budget

    async def go() -> None:
        budget = Budget(1.0)
        assert budget.reserve(0.5) and budget.reserve(0.5)
        first = asyncio.create_task(budget.reserve_when_settled(0.5, own=0.5))
        second = asyncio.create_task(budget.reserve_when_settled(0.5, own=0.5))
        done, pending = await asyncio.wait(
            {first, second}, timeout=1, return_when="FIRST_COMPLETED"
        )
        assert len(done) == 1 and done.pop().result() is False
        budget.settle(0.5, 0.0)  # the refused call fails, and releases its reservation
        assert await asyncio.wait_for(pending.pop(), 1) is True
        budget = Budget(1.0)
        assert budget.reserve(0.4) and budget.reserve(0.4) and budget.reserve(0.2)
        waiting = asyncio.create_task(budget.reserve_when_settled(0.2, own=0.4))
        await asyncio.sleep(0)
        assert not waiting.done()
        budget.settle(0.2, 0.0)  # the third call settles: the retry's 0.2 fits
        assert await asyncio.wait_for(waiting, 1) is True

    asyncio.run(go())
