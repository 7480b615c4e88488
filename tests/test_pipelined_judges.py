"""A suite's judges pipelined with its run (scorers/judge/follow.py): judge calls start while
the run still makes its calls, and the outputs are exactly those of judging after the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.api import running
from assay.engine.budget import Budget
from conftest import make_case, write_jsonl

CASES = 12


def _suite(tmp_path: Path, url: str, judge: str) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"p{i}") for i in range(CASES)])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "piped"\ncases = "cases.jsonl"\ntrials = 2\nmodel = "openai:sut-model"\n'
        f'output = "out"\n[run]\nbase_url = "{url}"\nprice = "1,1"\nconcurrency = 4\n'
        '[[conditions]]\nname = "baseline"\n'
        '[[conditions]]\nname = "candidate"\nsystem = "Be brief."\n'
        f'[judge]\njudges = ["openai:judge-model"]\nprice = "1,1"\n{judge}'
        '[scoring]\nscorers = ["contains"]\n',
        encoding="utf-8",
    )
    return suite


def _outputs(folder: Path) -> dict[str, list[Any]]:
    """The suite's output files, timings aside (they differ between any two runs)."""
    timings = {"latency_s", "created_at"}
    found: dict[str, list[Any]] = {}
    for name in ("scores.jsonl", "comparisons.jsonl", "trials.jsonl"):
        path = folder / name
        if path.exists():
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            found[name] = [{k: v for k, v in r.items() if k not in timings} for r in rows]
    return found


@pytest.mark.parametrize(
    ("judge", "output"),
    [
        ("", "scores.jsonl"),
        ("length_normalised = true\n", "scores.jsonl"),
        ('mode = "pairwise"\nexpectations_first = false\n', "comparisons.jsonl"),
    ],
    ids=["direct", "length-normalised", "pairwise"],
)
def test_judge_calls_start_before_the_runs_last_call_and_outputs_match_judging_after(
    tmp_path: Path,
    mock_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    judge: str,
    output: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(latency=0.02, judge_reply="schema", record=True)
    suite = _suite(tmp_path, server.url, judge)
    piped = running.run(suite, store=tmp_path / "piped.db", out=tmp_path / "piped")
    assert piped.exit_code in (0, 1), piped.notes
    log = server.requests()
    sut = [r["arrived"] for r in log if r["model"] == "sut-model"]
    judged = [r["arrived"] for r in log if r["model"] == "judge-model"]
    assert len(sut) == CASES * 2 * 2 and judged
    # Overlap: some judge requests reached the server before the run's last request did.
    assert min(judged) < max(sut)
    assert sum(1 for t in judged if t < max(sut)) >= 1

    # The same suite judged only after the run (no follower) writes the same rows, in the
    # same order, whatever order the pipelined calls completed in.
    monkeypatch.setattr(running, "_follower", lambda *args: None)
    after = running.run(suite, store=tmp_path / "after.db", out=tmp_path / "after")
    assert after.exit_code == piped.exit_code
    assert (tmp_path / "piped" / output).exists()
    assert _outputs(tmp_path / "piped") == _outputs(tmp_path / "after")


def test_judges_of_the_runs_own_model_share_its_slots_as_the_run_goes(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge that is the run's own model shares its limiter: a slot freed while judge
    calls wait goes to them, so they are made as the run goes (with the run's workers taking
    every freed slot back, the judges waited for the run's last call)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(latency=0.02, judge_reply="schema", record=True)
    suite = _suite(tmp_path, server.url, "")
    text = suite.read_text(encoding="utf-8").replace("concurrency = 4", "concurrency = 2")
    suite.write_text(text.replace("openai:judge-model", "openai:sut-model"), encoding="utf-8")
    outcome = running.run(suite, store=tmp_path / "s.db", out=tmp_path / "out")
    assert outcome.exit_code in (0, 1), outcome.notes
    log = server.requests()
    sut = [r["arrived"] for r in log if not r["schema"]]
    judged = [r["arrived"] for r in log if r["schema"]]
    # Each distinct judge request once: two trials with the same reply make the same judge
    # call, which the second waits for (engine/claims.py) instead of making it again.
    assert len(sut) == CASES * 2 * 2
    assert len(judged) == len({r["body"] for r in log if r["schema"]}) >= len(sut) // 2
    assert sum(1 for t in judged if t < max(sut)) >= len(judged) // 4


def test_a_rerun_of_a_pipelined_suite_makes_no_call(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Everything judged while the run went on is stored: the rerun reads it all back."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(judge_reply="schema", record=True)
    suite = _suite(tmp_path, server.url, "")
    first = running.run(suite, store=tmp_path / "s.db")
    assert first.evaluation is not None and first.evaluation.judged is not None
    before = len(server.requests())
    again = running.run(suite, store=tmp_path / "s.db")
    assert len(server.requests()) == before
    assert again.evaluation is not None
    assert again.evaluation.judged.scores == first.evaluation.judged.scores


def test_a_judge_budget_within_the_runs_caps_both() -> None:
    """A budget drawing on another (`Budget.within`): a reservation must fit its own limit
    and the parent's; what it holds and spends counts in the parent too."""
    run = Budget(1.0)
    judge = run.within(0.5)
    assert judge.reserve(0.4)
    assert run.reserved == pytest.approx(0.4)
    judge.settle(0.4, 0.3)
    assert (judge.spent, run.spent) == (pytest.approx(0.3), pytest.approx(0.3))
    assert not judge.reserve(0.25)  # over the judge's own 0.5
    assert judge.exhausted and not run.exhausted
    assert run.reserve(0.6)  # the run's own calls fill the parent
    assert judge.remaining() == pytest.approx(0.1)
    other = run.within(None)
    assert not other.reserve(0.2)  # no limit of its own, but the run's is full
    unlimited = Budget(None).within(None)
    assert unlimited.reserve(10.0) and unlimited.remaining() is None


def test_the_judge_budget_caps_pipelined_judges_and_the_rest_after_the_run(
    tmp_path: Path,
) -> None:
    """[judge] budget_usd holds across the judge calls made while the run went on and those
    made after it: the judging stops at the cap (exit 3, resumable), the trials all finish."""
    from assay.store import Store
    from assay.store.spend import spent_so_far

    # 16 cases: the two conditions answer alike, so each case's two items make one judge call
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"b{i}") for i in range(16)])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "capped"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:answer,latency=0.01"\n'
        'output = "out"\n[run]\nprice = "0,0"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        '[judge]\njudges = ["mock:fair"]\nprice = "100,100"\nbudget_usd = 1\n',
        encoding="utf-8",
    )
    done = running.run(suite, store=tmp_path / "s.db")
    assert done.run.answered == done.run.total == 32
    assert done.exit_code == 3, done.notes
    assert done.evaluation is not None and done.evaluation.judged is not None
    assert done.evaluation.judged.stopped == "budget"
    assert 0 < len(done.evaluation.judged.scores) < 32
    handle = Store(tmp_path / "s.db")
    try:
        spent = spent_so_far(handle, done.run.run_id)
        assert 0 < spent <= 1 + 1e-9, (spent, done.notes)
    finally:
        handle.close()


def test_the_judges_are_built_once_the_runs_first_calls_are_out(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the judges (their modules, models, prompts) is not on the way to the run's
    first call: the follower begins at the run's first recorded trial, and is handed it."""
    from assay.scorers.judge.follow import JudgeFollower

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(judge_reply="schema", record=True)
    suite = _suite(tmp_path, server.url, "")
    seen: list[int] = []
    begin, recorded = JudgeFollower.begin, JudgeFollower.recorded

    def counting_begin(self: JudgeFollower, caller: Any, run_id: str) -> None:
        seen.append(len(server.requests()))  # requests that reached the server by then
        begin(self, caller, run_id)

    handed: list[str] = []

    def counting_recorded(self: JudgeFollower, record: dict[str, Any]) -> None:
        handed.append(record["case_id"])
        recorded(self, record)

    monkeypatch.setattr(JudgeFollower, "begin", counting_begin)
    monkeypatch.setattr(JudgeFollower, "recorded", counting_recorded)
    done = running.run(suite, store=tmp_path / "s.db")
    assert done.exit_code in (0, 1), done.notes
    assert len(seen) == 1 and seen[0] >= 1
    assert len(handed) == CASES * 2 * 2  # every trial reached the judges


class _Follower:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.spent_usd = 0.5

    def begin(self, caller: Any, run_id: str) -> None:
        self.events.append(("begin", caller, run_id))

    def recorded(self, record: dict[str, Any]) -> None:
        self.events.append(("recorded", record))

    async def finish(self) -> None:
        self.events.append("finish")


def test_a_deferred_follower_is_built_at_the_first_record_or_at_the_end() -> None:
    import asyncio

    from assay.engine.runner import DeferredFollower

    builds: list[_Follower] = []

    def build() -> _Follower:
        builds.append(_Follower())
        return builds[-1]

    deferred = DeferredFollower(build)
    deferred.begin("caller", "run-1")  # type: ignore[arg-type]
    assert not builds and deferred.built is None and deferred.spent_usd == 0.0
    deferred.recorded({"n": 1})
    deferred.recorded({"n": 2})
    asyncio.run(deferred.finish())
    assert len(builds) == 1 and deferred.built is builds[0] and deferred.spent_usd == 0.5
    assert builds[0].events == [
        ("begin", "caller", "run-1"),
        ("recorded", {"n": 1}),
        ("recorded", {"n": 2}),
        "finish",
    ]
    # No trial recorded (everything resumed): built, and begun, as the run ends.
    at_end = DeferredFollower(build)
    at_end.begin("caller", "run-2")
    asyncio.run(at_end.finish())
    assert builds[1].events == [("begin", "caller", "run-2"), "finish"]
    # Nothing to follow: built once, then nothing.
    calls: list[int] = []

    def nothing() -> _Follower | None:
        calls.append(1)
        return None

    none = DeferredFollower(nothing)
    none.begin("caller", "run-3")
    none.recorded({"n": 1})
    asyncio.run(none.finish())
    assert calls == [1] and none.built is None and none.spent_usd == 0.0
