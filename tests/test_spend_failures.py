"""What a call counts as when its cost cannot be known: every failure after the request was
sent, and every cost or usage that is no amount, counts at the call's reservation, for every
runner (engine/costs.py). Before, a `python:` agent that raised, usage of `Infinity` or
`1e400`, a reply or CLI output nested 100,000 deep, a `command:` that exited 1 or claude's
`total_cost_usd` of -5, NaN or "0.01" settled at $0 (or at its tokens' price), and each rerun
paid again: 180 calls in three runs under a $0.50 cap."""

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

CAP = 0.5
PER_CALL = 0.05  # what one call of a one-turn model reserves here
CASES = 60
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    return folder


def _program(folder: Path, name: str, stdout: str, status: int = 0) -> None:
    """A CLI on PATH that prints `stdout` (whatever its arguments) and exits `status`."""
    path = folder / name
    path.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write({stdout!r})\nsys.exit({status})\n"
    )
    path.chmod(0o755)


def _claude(cost: Any = 0.01, usage: str = '{"input_tokens": 3, "output_tokens": 2}') -> str:
    """claude's result line with `total_cost_usd` as the raw JSON text `cost`."""
    head = '{"type": "result", "subtype": "success", "is_error": false, "result": "ok"'
    return f'{head}, "total_cost_usd": {cost}, "usage": {usage}}}\n'


def _codex(usage: str) -> str:
    message = {
        "type": "item.completed",
        "item": {"id": "i1", "type": "agent_message", "text": "ok"},
    }
    return json.dumps(message) + f'\n{{"type": "turn.completed", "usage": {usage}}}\n'


def _one_turn_price() -> str:
    """The price at which one call of a case's prompt (10 tokens out) reserves PER_CALL."""
    request = Request(messages=[Message("user", make_case("c0")["prompt"])], max_tokens=10)
    per_m = PER_CALL / Price(1, 1).worst_case(request)
    return f"{per_m},{per_m}"


# (runner, fault): the model spec and the arguments of a run whose every call fails after it
# was sent, or answers with a cost or usage that is no amount
FAULTS: dict[str, tuple[str, ...]] = {
    "openai-usage-infinity": ("openai:usage-infinity",),
    "openai-usage-1e400": ("openai:usage-1e400",),
    "openai-deep": ("openai:deep",),
    "anthropic-usage-infinity": ("anthropic:usage-infinity",),
    "anthropic-deep": ("anthropic:deep",),
    "python-raises": ("python:{agent}:raises", "--price", "1,1"),
    "python-usage-infinity": ("python:{agent}:usage", "--price", "1,1"),
    "claude-deep": ("claude",),
    "claude-cost-negative": ("claude",),
    "claude-cost-nan": ("claude",),
    "claude-cost-string": ("claude",),
    "codex-usage-1e400": ("codex", "--price", "1,1"),
    "codex-deep": ("codex", "--price", "1,1"),
    "command-exits-1": ("command:agent", "--format", "claude-json", "--price", "1,1"),
}

CLI_OUTPUT = {
    "claude-deep": ("claude", DEEP + "\n", 0),
    "claude-cost-negative": ("claude", _claude(-5), 0),
    "claude-cost-nan": ("claude", _claude("NaN"), 0),
    "claude-cost-string": ("claude", _claude('"0.01"'), 0),
    "codex-usage-1e400": ("codex", _codex('{"input_tokens": 1e400, "output_tokens": 2}'), 0),
    "codex-deep": ("codex", _codex(DEEP), 0),
    "command-exits-1": ("agent", "", 1),
}

AGENT = """\
def raises(case, settings):
    raise RuntimeError("the provider billed the call, then the agent failed")


def usage(case, settings):
    return {"response": "ok", "usage": {"input_tokens": float("inf"), "output_tokens": 2}}
"""


@pytest.mark.parametrize("fault", list(FAULTS))
def test_three_runs_of_failing_calls_stop_at_the_cap(  # type: ignore[no-untyped-def]
    cli, hostile_server, bin_dir: Path, tmp_path: Path, monkeypatch, fault: str
) -> None:
    """60 calls a run, each failing after it was sent (or reporting no amount), three runs
    under a $0.50 cap: they stop at the cap, and the reruns make no call."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", hostile_server.root)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    if fault in CLI_OUTPUT:
        _program(bin_dir, *CLI_OUTPUT[fault])
    spec, *options = FAULTS[fault]
    if spec.startswith(("openai:", "anthropic:")):  # one turn: each call reserves $0.05
        options += ["--price", _one_turn_price(), "--base-url", hostile_server.url]
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    args = ("run", "--cases", cases, "--model", spec.format(agent=agent), *options,
            "--max-tokens", 10, "--retries", 0, "--budget-usd", CAP, "--concurrency", 4,
            "--json", "--store", tmp_path / "s.db")  # fmt: skip
    runs = []
    for _ in range(3):
        done = cli(*args)
        assert done.code == 3, done.stderr
        runs.append(done.json())
    first, *reruns = runs
    assert first["stopped"] == "budget", first
    assert first["calls"] <= CAP / PER_CALL + 1
    assert CAP - 1.1 * PER_CALL <= first["run_spent_usd"] <= CAP + 1e-9
    for again in reruns:
        assert again["stopped"] == "budget" and again["calls"] == 0, again
        assert again["run_spent_usd"] == pytest.approx(first["run_spent_usd"])
    # the spend is the calls' and their roles' alike
    assert first["run_spend"]["system"] == pytest.approx(first["run_spent_usd"])


def test_a_judge_call_that_fails_after_it_was_sent_counts_at_its_reservation(  # type: ignore[no-untyped-def]
    cli, hostile_server, bin_dir: Path, tmp_path: Path
) -> None:
    """`assay judge` with a judge whose replies are nested too deep to read: 60 calls at $0,
    three times over, before; now they stop at the cap, and a rerun of the same judging
    (its spend is kept in the store) makes no call."""
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    trials = tmp_path / "t.jsonl"
    made = cli("run", "--cases", cases, "--model", "mock", "--output", trials,
               "--store", tmp_path / "s.db")  # fmt: skip
    assert made.code == 0, made.stderr
    args = ("judge", "--trials", trials, "--cases", cases, "--judge", "openai:deep",
            "--base-url", hostile_server.url, "--price", "10,10", "--budget-usd", CAP,
            "--retries", 0,
            "--store", tmp_path / "s.db", "--output", tmp_path / "j.jsonl", "--json")  # fmt: skip
    runs = []
    for _ in range(3):
        done = cli(*args)
        assert done.code == 3, done.stderr
        runs.append(done.json())
    assert runs[0]["calls"] > 0 and runs[0]["stopped"] == "budget", runs[0]
    assert 0 < runs[0]["spent_usd"] <= CAP + 1e-9, runs[0]
    for again in runs[1:]:  # the cap holds across reruns of the judging, as of a run
        assert again["calls"] == 0 and again["spent_usd"] == 0, again
        assert again["stopped"] == "budget", again


def test_a_reply_reporting_more_than_its_worst_case_cannot_pass_the_cap(  # type: ignore[no-untyped-def]
    cli, hostile_server, tmp_path: Path
) -> None:
    """A server reporting a million output tokens for a request of at most 10: with 8 calls
    in flight it spent $1.20 on a $0.50 cap; each such reply now counts at its worst case."""
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    out = tmp_path / "t.jsonl"
    done = cli("run", "--cases", cases, "--model", "openai:overbilled", "--base-url",
               hostile_server.url, "--price", _one_turn_price(), "--max-tokens", 10,
               "--budget-usd", CAP, "--concurrency", 8, "--json", "--output", out,
               "--store", tmp_path / "s.db")  # fmt: skip
    summary = done.json()
    assert done.code == 3 and summary["stopped"] == "budget", done.stderr
    assert CAP - 1.1 * PER_CALL <= summary["run_spent_usd"] <= CAP + 1e-9
    costs = [t["cost_usd"] for t in map(json.loads, out.read_text().splitlines())]
    assert costs and all(PER_CALL * 0.99 <= c <= PER_CALL * 1.1 for c in costs)


def test_failed_judge_replies_leave_no_reservation_counted_as_spent(
    cli: Any, tmp_path: Path
) -> None:
    """A judge whose replies fail validation stops the evaluation: what its calls (and the
    grounding scorer's) cost was left out of the invocation's figure, though the store
    counted it ("$0.1040 spent … $6.5040 by this run in all" on a fresh store, then "$0.0000
    spent … $12.9040"). Now the invocations' figures add up to the store's, which is the sum
    of its roles, and no reservation is left behind."""
    from assay.store import Store

    doc = "The Eiffel Tower is 330 metres tall and stands in Paris."
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"g{i}", prompt=doc, context=[{"id": "d1", "text": doc}]) for i in range(30)],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "grounded"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\n'
        'output = "out"\n[run]\nprice = "1000,1000"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        '[judge]\njudges = ["mock:malformed"]\nprice = "1000,1000"\n'
        '[scoring]\nscorers = [{ name = "groundedness" }]\n',
        encoding="utf-8",
    )
    store = tmp_path / "s.db"
    total = 0.0
    for _ in range(2):
        done = cli("run", suite, "--store", store, "--json", "--budget-usd", 100)
        assert done.code == 3, done.stderr
        summary = done.json()
        total += summary["spent_usd"]
        spend, run_spend = summary["spend"], summary["run_spend"]
        assert spend["judges"] > 0 and spend["scorers"] > 0, summary
        assert summary["run_spent_usd"] == pytest.approx(total), summary
        roles = run_spend["system"] + run_spend["judges"] + run_spend["scorers"]
        assert summary["run_spent_usd"] == pytest.approx(roles), summary
    handle = Store(store)
    try:
        left = handle.db.execute("SELECT COUNT(*) FROM run_reservations").fetchone()[0]
    finally:
        handle.close()
    assert left == 0


@pytest.mark.parametrize("budget", ["nan", "inf", "-5"])
def test_a_budget_that_is_no_amount_is_refused(cli: Any, tmp_path: Path, budget: str) -> None:
    """`--budget-usd nan` ran nothing and said nothing of why (exit 3, "stopped: budget")."""
    import assay
    from assay.core.errors import InputError

    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    done = cli("run", "--cases", cases, "--model", "mock", "--budget-usd", budget,
               "--store", tmp_path / "s.db")  # fmt: skip
    assert done.code == 2 and "budget" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(InputError, match="budget_usd"):
        assay.run(cases=cases, model="mock", budget_usd=float(budget), store=tmp_path / "a.db")


def test_an_unmetered_runner_is_said_to_be_unmetered(
    cli: Any, bin_dir: Path, tmp_path: Path
) -> None:
    """codex without a price printed "$0.0000 spent" as if its calls were free."""
    _program(bin_dir, "codex", _codex('{"input_tokens": 50, "output_tokens": 7}'))
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0")])
    done = cli("run", "--cases", cases, "--model", "codex", "--allow-unmetered",
               "--store", tmp_path / "s.db")  # fmt: skip
    assert done.code == 0, done.stderr
    assert "codex: unmetered" in done.stderr and "count its calls as $0" in done.stderr


class _Slow:
    """A priced one-turn model whose calls take a second (so they can be stopped in flight)."""

    spec = "slow"
    price = Price(1e6, 1e6)

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec}

    async def generate(self, request: Request) -> Any:
        import asyncio

        await asyncio.sleep(1)
        raise AssertionError("the test stops every call before it answers")

    async def aclose(self) -> None:
        return None


def test_calls_stopped_in_this_process_leave_no_reservation(tmp_path: Path) -> None:
    """Two calls under a limit of one at a time, both stopped (a scorer's failure cancels its
    siblings, or Ctrl+C): the one in flight may be billed, so it counts at its reservation;
    the one still waiting for its turn was never sent and costs nothing. Before, both kept
    their reservations in the store, counted as spent by every later invocation."""
    import asyncio

    from assay.engine.budget import Budget
    from assay.engine.calls import Caller
    from assay.store import Store
    from assay.store.spend import run_spend

    store = Store(tmp_path / "s.db")
    caller = Caller(store, Budget(100.0), concurrency=1, retries=0, ledger="r1")
    model = _Slow()
    requests = [Request(messages=[Message("user", f"q{i}")], max_tokens=1) for i in range(2)]
    worst = model.price.worst_case(requests[0])

    async def go() -> None:
        calls = [asyncio.create_task(caller.call(model, r, use_cache=False)) for r in requests]
        await asyncio.sleep(0.3)  # the first is in flight, the second waits for the limiter
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    try:
        asyncio.run(go())
        store.flush()
        left = store.db.execute("SELECT COUNT(*) FROM run_reservations").fetchone()[0]
        spend = run_spend(store, "r1")
    finally:
        store.close()
    assert left == 0
    assert caller.spent == pytest.approx(worst)
    assert spend.total == pytest.approx(worst) and spend.system == pytest.approx(worst)


def test_a_grounding_judge_call_that_fails_after_it_was_sent_counts_at_its_reservation(  # type: ignore[no-untyped-def]
    cli, hostile_server, bin_dir: Path, tmp_path: Path
) -> None:
    """The grounding scorer's judge (its replies nested too deep to read): its calls count
    at their reservations, under the scorers' role, and reruns stop at the cap."""
    doc = "The Eiffel Tower is 330 metres tall and stands in Paris."
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"g{i}", prompt=doc, context=[{"id": "d1", "text": doc}]) for i in range(20)],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "grounded"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\n'
        'output = "out"\n[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        f'[judge]\njudges = ["openai:deep"]\nbase_url = "{hostile_server.url}"\n'
        'price = "10,10"\n[scoring]\nscorers = [{ name = "groundedness" }]\n',
        encoding="utf-8",
    )
    from assay.store import Store
    from assay.store.spend import run_spend

    args = ("run", suite, "--store", tmp_path / "s.db", "--json", "--budget-usd", CAP)
    done = cli(*args)
    assert done.code == 3, done.stderr
    first = done.json()
    assert first["spend"]["scorers"] > 0 and first["run_spent_usd"] <= CAP + 1e-9
    assert first["spent_usd"] == pytest.approx(first["run_spent_usd"])
    for _ in range(2):  # (the budget stop of the grounding judge prints no summary)
        again = cli(*args)
        assert again.code == 3 and "budget cannot cover" in again.stderr, again.stderr
    handle = Store(tmp_path / "s.db")
    try:
        assert run_spend(handle, first["run_id"]).total == pytest.approx(first["run_spent_usd"])
    finally:
        handle.close()
