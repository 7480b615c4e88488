"""A sequential run (`[gate] sequential`, api/sequential.py): the cases in looks, the gate after
each, a stop once the verdict is settled; counted on the mock model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mock_server import _reply_text

from assay.api import running
from assay.core.errors import InputError
from assay.core.records import Case
from assay.store import Store
from assay.verdict.looks import look_ends, look_order, look_size
from assay.verdict.sequential import look_level
from conftest import make_case, write_jsonl

CASES = 100
LOOK = 25
SYSTEM = "Be brief."


def _reply(prompt: str, system: str | None = None) -> str:
    """What the mock server answers a condition's prompt (its messages' texts joined)."""
    return _reply_text((system or "") + prompt)


def _suite(
    tmp_path: Path,
    url: str,
    better: str = "all",
    *,
    extra: str = "",
    cases: list[dict[str, Any]] | None = None,
    sequential: bool = True,
) -> Path:
    """100 cases; each expects the reply of one condition (`contains`): the candidate's in
    every case (`better="all"`), or in category `a` only and baseline's in `b` (`"half"`)."""
    if cases is None:
        cases = []
        for i in range(CASES):
            prompt = f"Question {i}?"
            half = "a" if i % 2 == 0 else "b"
            wins = better == "all" or half == "a"
            expected = _reply(prompt, SYSTEM) if wins else _reply(prompt)
            cases.append(
                make_case(f"c{i}", prompt=prompt, category=half, expect={"contains": [expected]})
            )
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "seq"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        f'output = "out"\n[run]\nbase_url = "{url}"\nprice = "1,1"\nconcurrency = 4\n'
        '[[conditions]]\nname = "baseline"\n'
        f'[[conditions]]\nname = "candidate"\nsystem = "{SYSTEM}"\n'
        '[scoring]\nscorers = ["contains"]\n'
        f"[gate]\nsequential = {'true' if sequential else 'false'}\nlook = {LOOK}\n{extra}",
        encoding="utf-8",
    )
    return suite


def _sut_calls(server: Any) -> int:
    return sum(1 for r in server.requests() if r["model"] == "sut-model")


def _report(tmp_path: Path) -> dict[str, Any]:
    return dict(json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8")))


@pytest.fixture
def server(mock_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return mock_server(record=True, judge_reply="schema")


def test_a_clear_improvement_passes_at_the_first_look_with_the_candidate_checked_on_every_case(
    tmp_path: Path, server: Any
) -> None:
    """The comparison settles at the first look (25 cases); the PASS then needs the per-case
    checks on every case: the candidate's trials on the 75 others, never the baseline's."""
    suite = _suite(tmp_path, server.url)
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None
    assert outcome.evaluation.verdict == "PASS" and outcome.exit_code == 0
    assert _sut_calls(server) == LOOK * 2 + (CASES - LOOK)  # the full run makes 200
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None
    assert (stop.look, stop.looks, stop.cases, stop.total_cases) == (1, 4, LOOK, CASES)
    assert stop.stopped_early and stop.calls_made == 125 and stop.calls_not_made == 75
    assert stop.checked == CASES and stop.sampled is None
    assert stop.level == pytest.approx(look_level(0.95, [0.25])) and stop.level > 0.95
    assert stop.usd_not_spent is not None and stop.usd_not_spent > 0
    assert "per-case checks on 100 of 100 cases" in stop.headline
    # Test runners (the pytest plugin) skip the baseline of the cases never looked at,
    # saying why; the candidate's per-case checks ran on every case.
    from assay.api.testing import outcomes

    shown = outcomes(outcome.evaluation).items
    assert shown["c1[baseline]"].status == ("pass" if "c1" in stop.case_ids else "skip")
    assert all(shown[f"c{i}[candidate]"].status == "pass" for i in range(CASES))
    assert sum(o.status == "skip" for o in shown.values()) == CASES - LOOK
    assert "not run: sequential: verdict reached after 25 of 100" in next(
        o.text for o in shown.values() if o.status == "skip"
    )
    # The Python API's cases: one never run ran nothing and has not passed, and no case
    # failed.
    unrun = [c for c in outcome.evaluation.cases if not c.ran]
    assert len(unrun) == CASES - LOOK and not any(c.passed for c in unrun)
    assert all(c.problems == ["not run"] and not c.responses for c in unrun)
    assert outcome.evaluation.failed_cases == []
    # Not incomplete: the evidence expected is the cases looked at, and the candidate on
    # the others.
    coverage = outcome.evaluation.evaluation.coverage
    assert coverage is not None and coverage.complete and coverage.cases == CASES
    assert coverage.expected == LOOK * 2 + CASES - LOOK
    # The comparison rests on the looked cases alone.
    delta = outcome.evaluation.evaluation.comparisons["candidate"]["contains"]
    assert delta.cases == LOOK
    assert outcome.run.exit_code == 0 and outcome.run.total == LOOK * 2 + CASES - LOOK


def test_no_difference_runs_every_look_to_the_fixed_designs_verdict(
    tmp_path: Path, server: Any
) -> None:
    suite = _suite(tmp_path, server.url, better="half")
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None
    assert _sut_calls(server) == CASES * 2
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and (stop.look, stop.cases, stop.stopped_early) == (4, CASES, False)
    assert stop.level == pytest.approx(0.95)  # the last look: the fixed design
    (tmp_path / "fixed").mkdir()
    fixed = running.run(
        _suite(tmp_path / "fixed", server.url, better="half", sequential=False),
        store=tmp_path / "fixed.db",
    )
    assert fixed.evaluation is not None
    assert outcome.evaluation.verdict == fixed.evaluation.verdict == "FAIL"
    assert outcome.evaluation.evaluation.analysis.gate.checks == (
        fixed.evaluation.evaluation.analysis.gate.checks
    )


def test_a_blocking_finding_on_a_high_risk_case_fails_at_the_first_look(
    tmp_path: Path, server: Any
) -> None:
    """The candidate misses the escalation of the one high-risk case, whose candidate trial
    runs with the first look (protected cases' per-case checks first): FAIL there, whatever
    the other cases would show."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "def agent(case, settings):\n"
        "    kind = 'escalation' if settings['condition'] == 'baseline' else 'answer'\n"
        "    return {'response': 'ok', 'kind': kind}\n",
        encoding="utf-8",
    )
    cases = [
        make_case(f"c{i}", expect={"escalate": i == 77}, risk="high" if i == 77 else "low")
        for i in range(CASES)
    ]
    suite = _suite(tmp_path, server.url, cases=cases)
    text = suite.read_text(encoding="utf-8").replace(
        'scorers = ["contains"]', 'scorers = ["escalation"]'
    )
    text = text.replace('model = "openai:sut-model"\n', f'model = "python:{agent}:agent"\n')
    suite.write_text(text.replace("[run]\n", "[run]\nallow_unmetered = true\n"), encoding="utf-8")
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.verdict == "FAIL"
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.look == 1 and stop.stopped_early
    assert "c77" in stop.case_ids + stop.checked_ids
    assert outcome.run.answered == LOOK * 2 + ("c77" not in stop.case_ids)
    assert any(c.name == "blockers" and c.status == "fail" for c in outcome.evaluation.checks)


def test_a_killed_sequential_run_resumes_its_looks_and_a_full_run_makes_only_the_rest(
    tmp_path: Path, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed in its second look, the rerun replays the first from the store (no call) and
    goes on; a later run of every case reuses every call made and makes only the rest."""
    suite = _suite(tmp_path, server.url, better="half")
    store = tmp_path / "s.db"
    from assay.api import sequential

    real = sequential.run_looks

    def killed(*args: Any, **kwargs: Any) -> Any:
        steps = args[2]
        looks: list[int] = []

        def run_part(request: Any, progress: Any, warn: Any) -> Any:
            looks.append(len(request.only))
            if len(looks) == 2:
                raise KeyboardInterrupt  # killed as the second look starts
            return steps.run(request, progress, warn)

        return real(
            args[0], args[1], sequential.Steps(run_part, steps.ended, steps.store), **kwargs
        )

    monkeypatch.setattr(sequential, "run_looks", killed)
    with pytest.raises(KeyboardInterrupt):
        running.run(suite, store=store)
    assert _sut_calls(server) == LOOK * 2
    monkeypatch.setattr(sequential, "run_looks", real)
    again = running.run(suite, store=store)
    assert again.evaluation is not None
    assert _sut_calls(server) == CASES * 2  # the first look's 50 were not made again
    assert again.run.resumed == LOOK * 2 and again.run.answered == (CASES - LOOK) * 2
    full = running.run(suite, store=store, sequential=False)
    assert _sut_calls(server) == CASES * 2 and full.run.calls == 0
    assert full.run.run_id == again.run.run_id


def test_a_full_run_after_an_early_stop_makes_only_the_calls_not_made(
    tmp_path: Path, server: Any
) -> None:
    suite = _suite(tmp_path, server.url)
    store = tmp_path / "s.db"
    early = running.run(suite, store=store)
    made = LOOK * 2 + CASES - LOOK  # the looked cases, and the candidate on the others
    assert _sut_calls(server) == made
    full = running.run(suite, store=store, sequential=False)
    assert _sut_calls(server) == CASES * 2  # only the 75 not made before
    assert full.run.calls == CASES * 2 - made and full.run.resumed == made
    assert full.evaluation is not None and full.evaluation.verdict == "PASS"
    assert full.evaluation.evaluation.analysis.gate.sequential is None
    assert early.run.run_id == full.run.run_id


def test_judges_judge_the_candidate_everywhere_and_the_baseline_where_looked_at(
    tmp_path: Path, server: Any
) -> None:
    suite = _suite(
        tmp_path,
        server.url,
        extra="guard = {}\n",
    )
    text = suite.read_text(encoding="utf-8")
    text = text.replace(
        "[scoring]\n",
        '[judge]\njudges = ["openai:judge-model"]\nprice = "1,1"\n[scoring]\nweights = { contains = 1.0 }\n',
    )
    suite.write_text(text, encoding="utf-8")
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.verdict == "PASS", outcome.notes
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.look == 1
    judged = [r for r in server.requests() if r["model"] == "judge-model"]
    assert 0 < len(judged) <= LOOK * 2 + CASES - LOOK
    handle = Store(tmp_path / "s.db")
    try:
        rows = list(handle.db.execute("SELECT case_id, a FROM judgments"))
    finally:
        handle.close()
    # Every case's candidate trial is judged (a judge's blocker is a per-case check); the
    # baseline's only where the look compares them.
    assert {case for case, _ in rows} == {f"c{i}" for i in range(CASES)}
    assert {case for case, who in rows if who == "baseline"} == set(stop.case_ids)


def test_every_report_says_where_the_verdict_was_reached(
    tmp_path: Path, server: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `[gate] sampled_checks` (the per-case checks sampled on the looked cases, their
    bound stated): the cases never run are skipped, and every output states the bound."""
    formats = 'sampled_checks = true\n[report]\nformats = ["md", "json", "junit", "html"]\n'
    suite = _suite(tmp_path, server.url, sequential=False, extra=formats)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "job.md"))
    done = cli("run", suite, "--store", tmp_path / "s.db", "--sequential", "--json")
    assert done.code == 0, done.stderr
    shown = "sequential: verdict reached after 25 of 100 cases (look 1 of 4"
    assert shown in done.stderr  # beside the JSON, for people
    for name in ("report.md", "report.junit.xml", "report.html"):
        assert shown in (tmp_path / "out" / name).read_text(encoding="utf-8"), name
    assert shown in (tmp_path / "job.md").read_text(encoding="utf-8")
    summary = json.loads(done.stdout)
    stop = summary["release_gate"]["sequential"]
    assert (stop["look"], stop["cases"], stop["calls_not_made"]) == (1, LOOK, 150)
    bound = "0 failing in 25 of 100 cases: rate below 11% at 95% (exact Clopper-Pearson"
    assert stop["checked"] == LOOK and bound in stop["sampled"] and bound in done.stderr
    for name in ("report.md", "report.junit.xml", "report.html", "summary.json"):
        assert bound in (tmp_path / "out" / name).read_text(encoding="utf-8"), name
    assert bound in (tmp_path / "job.md").read_text(encoding="utf-8")
    assert "case_ids" not in stop
    report = _report(tmp_path)
    assert report["sequential"]["cases"] == LOOK
    # The cases never looked at: listed in report.json, and JUnit skips each, saying why
    # (never a passing testcase).
    unseen = set(report["not_looked"])
    assert len(unseen) == CASES - LOOK and not unseen & {
        c["case_id"] for c in report["case_checks"]
    }
    import xml.etree.ElementTree as ET

    junit = ET.parse(tmp_path / "out" / "report.junit.xml").getroot().find("testsuite")
    assert junit is not None
    skipped = {
        t.get("classname"): t.find("skipped")
        for t in junit.iter("testcase")
        if t.get("classname") in unseen
    }
    assert set(skipped) == unseen and all(s is not None for s in skipped.values())
    assert "not run: sequential: verdict reached after 25 of 100" in str(
        next(iter(skipped.values())).get("message")  # type: ignore[union-attr]
    )
    assert junit.get("skipped") == str(CASES - LOOK)
    assert int(junit.get("tests") or 0) == sum(1 for _ in junit.iter("testcase"))
    assert (
        "sequential" in json.loads((tmp_path / "out" / "summary.json").read_text())["release_gate"]
    )
    fixed = cli("run", suite, "--store", tmp_path / "f.db", "--no-sequential", "--json")
    assert "sequential" not in json.loads(fixed.stdout)["release_gate"]
    assert "sequential" not in _report(tmp_path) and "not_looked" not in _report(tmp_path)


def test_sequential_needs_a_suite_with_a_stats_gate(tmp_path: Path, server: Any, cli: Any) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c1")])
    done = cli("run", "--cases", cases, "--model", "mock", "--sequential")
    assert done.code == 2 and "--sequential: needs a suite file" in done.stderr
    suite = _suite(tmp_path, server.url, extra='mode = "seed"\n')
    done = cli("run", suite)
    assert done.code == 2 and "suite.toml" in done.stderr and "sequential" in done.stderr
    text = suite.read_text(encoding="utf-8").replace("look = 25", "look = 0")
    suite.write_text(text.replace('mode = "seed"\n', ""), encoding="utf-8")
    done = cli("run", suite)
    assert done.code == 2 and "gate.look" in done.stderr
    assert _sut_calls(server) == 0


def test_the_look_order_is_seeded_and_every_look_holds_each_stratum_in_proportion() -> None:
    """Protected cases (high risk, safety) are spread through the looks like any stratum, so
    an interim look is a sample of the whole suite (they are checked first, not looked at
    first: `api.sequential`)."""
    cases = [
        Case.model_validate(make_case(f"c{i}", category="a" if i % 4 else "b")) for i in range(40)
    ] + [Case.model_validate(make_case(f"h{i}", risk="high")) for i in range(10)]
    order = look_order(cases, seed=7)
    assert sorted(c.id for c in order) == sorted(c.id for c in cases)
    assert [c.id for c in look_order(cases, seed=7)] == [c.id for c in order]
    assert [c.id for c in look_order(cases, seed=8)] != [c.id for c in order]
    for end in (5, 10, 20, 30):  # every prefix: high risk a fifth, category b a tenth
        high = sum(1 for c in order[:end] if c.risk == "high") / end
        b = sum(1 for c in order[:end] if c.category == "b") / end
        assert abs(high - 0.2) <= 1 / end + 1e-9 and abs(b - 0.2) <= 1 / end + 1e-9, end
    assert look_size(100, None) == 10 and look_size(20, None) == 5 and look_size(9, 3) == 3
    assert look_ends(100, 30) == [30, 60, 90, 100] and look_ends(5, 5) == [5]


def test_a_look_before_the_last_is_gated_stricter_and_the_last_at_the_fixed_level() -> None:
    """What the looks rely on in `look_level`, whatever the spending."""
    for fractions in ([0.25], [0.25, 0.5], [0.1, 0.2, 0.9]):
        assert 0.95 < look_level(0.95, fractions) < 1.0
    assert look_level(0.95, [0.25, 0.5, 0.75, 1.0]) == pytest.approx(0.95)
    assert look_level(0.9, [1.0]) == pytest.approx(0.9)


def test_evaluate_runs_a_suite_in_looks(tmp_path: Path, server: Any) -> None:
    import assay

    suite = _suite(tmp_path, server.url, sequential=False)
    result = assay.evaluate(suite, store=tmp_path / "s.db", sequential=True)
    assert result.verdict == "PASS" and _sut_calls(server) == LOOK * 2 + CASES - LOOK
    with pytest.raises(InputError, match="sequential"):
        assay.evaluate(trials=[], sequential=True)


def _single(tmp_path: Path, url: str, hits: float, corpus: str, extra: str = "") -> Path:
    """One condition (`prod`) on 100 cases, the `contains` check met by the first `hits`
    share of them (by id: the look order mixes them), `corpus` the [scoring.corpus] lines,
    `extra` [gate] lines."""
    cases = []
    for i in range(CASES):
        prompt = f"Question {i}?"
        expected = _reply(prompt) if i < hits * CASES else "never said"
        cases.append(make_case(f"c{i}", prompt=prompt, expect={"contains": [expected]}))
    suite = _suite(tmp_path, url, cases=cases, extra=extra)
    text = suite.read_text(encoding="utf-8")
    conditions = text[text.index("[[conditions]]") : text.index("[scoring]")]
    text = text.replace(conditions, '[[conditions]]\nname = "prod"\n')
    suite.write_text(text.replace("[gate]", f"[scoring.corpus]\n{corpus}[gate]"), "utf-8")
    return suite


SAMPLED = "sampled_checks = true\n"


@pytest.mark.parametrize(
    ("hits", "corpus", "extra", "verdict", "looks"),
    [
        # clearly above: its per-case checks need every case, which is the last look
        (1.0, "contains = { min = 0.5 }\n", "", "PASS", 4),
        # ... unless they are sampled (the bound stated): stops at look 1
        (1.0, "contains = { min = 0.5 }\n", SAMPLED, "PASS", 1),
        # clearly below: stops early (at look 2: look 1's interval, skew-corrected, still
        # reaches 0.5)
        (0.1, "contains = { min = 0.5 }\n", "", "FAIL", 2),
        (0.6, "contains = { min = 0.5 }\n", SAMPLED, "PASS", 4),  # near: every look
        # decided on the estimate: the look's mean clears the bound, its interval does not
        (0.7, 'contains = { min = 0.6, decide = "estimate" }\n', SAMPLED, "PASS", 4),
        (1.0, "", SAMPLED, "PASS", 4),  # no bound: nothing with an error rate to stop on
    ],
)
def test_a_single_system_suite_stops_on_its_corpus_bounds(
    tmp_path: Path, server: Any, hits: float, corpus: str, extra: str, verdict: str, looks: int
) -> None:
    suite = _single(tmp_path, server.url, hits, corpus, extra)
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.verdict == verdict
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.look == looks and stop.stopped_early == (looks < 4)
    assert _sut_calls(server) == looks * LOOK
    assert (stop.level > 0.95) == (looks < 4)  # before the last look: a stricter level
    checks = {c.name: c for c in outcome.evaluation.checks}
    if corpus:
        assert checks["corpus:contains:min"].cases == looks * LOOK


def test_a_budget_spans_every_look_and_a_stop_mid_look_is_incomplete_and_resumes(
    tmp_path: Path, server: Any
) -> None:
    """No difference (every look runs): a budget of about 75 of the 200 calls stops the run
    in its second look, INCOMPLETE (exit 3), having spent no more than the budget over both
    looks; a rerun with a larger budget resumes from there and makes only the calls left."""
    (tmp_path / "probe").mkdir()
    probe = running.run(
        _suite(tmp_path / "probe", server.url, better="half"), store=tmp_path / "probe.db"
    )
    per_call = (probe.run.run_spend.total or 0.0) / (CASES * 2)
    assert per_call > 0
    before = _sut_calls(server)
    suite = _suite(tmp_path, server.url, better="half")
    # one call at a time, each reserving little more than it costs: the stop is near the cap
    text = suite.read_text(encoding="utf-8").replace("concurrency = 4", "concurrency = 1")
    suite.write_text(text.replace("[run]\n", "[run]\nmax_tokens = 32\n"), encoding="utf-8")
    store = tmp_path / "s.db"
    budget = per_call * 75
    stopped = running.run(suite, store=store, budget_usd=budget)
    made = _sut_calls(server) - before
    assert stopped.exit_code == 3 and stopped.run.stopped
    assert stopped.evaluation is not None and stopped.evaluation.verdict == "INCOMPLETE"
    stop = stopped.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.look == 2 and not stop.stopped_early
    assert LOOK * 2 < made < 75  # into the second look: the budget held across the looks
    assert (stopped.run.run_spend.total or 0.0) <= budget + 1e-9
    again = running.run(suite, store=store, budget_usd=per_call * 1000)
    assert again.exit_code in (0, 1) and again.evaluation is not None
    assert again.evaluation.verdict == probe.evaluation.verdict  # type: ignore[union-attr]
    assert _sut_calls(server) - before == CASES * 2  # the calls made before were not repeated
    assert again.run.resumed == made and again.run.run_id == stopped.run.run_id


def test_calls_not_made_are_those_the_store_lacks_priced_as_the_run_priced_them(
    tmp_path: Path, server: Any
) -> None:
    """An early stop counts the trials it did not make at the run's own mean price per
    system-under-test call; a sequential rerun after a run of every case made every call
    already, and claims none."""
    suite = _suite(tmp_path, server.url)
    early = running.run(suite, store=tmp_path / "s.db")
    assert early.evaluation is not None
    stop = early.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.stopped_early
    made = LOOK * 2 + CASES - LOOK
    price = early.run.run_spend.system / made
    assert stop.calls_not_made == CASES - LOOK  # the baseline's trials of the unlooked cases
    assert stop.usd_not_spent == pytest.approx(round(price * (CASES - LOOK), 6))
    (tmp_path / "full").mkdir()
    full_suite = _suite(tmp_path / "full", server.url)
    store = tmp_path / "full.db"
    running.run(full_suite, store=store, sequential=False)
    again = running.run(full_suite, store=store)
    assert again.evaluation is not None and again.run.calls == 0
    stop = again.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.stopped_early
    assert stop.calls_not_made == 0 and stop.usd_not_spent is None
    assert "calls not made 0" in stop.headline and "not spent" not in stop.headline


def test_a_judges_blocker_on_a_case_never_looked_at_fails_the_run(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge flags a blocker on the candidate's answer to the case the order puts last:
    the comparison settles at the first look, the candidate's trials on the other cases are
    judged (a judge's blocker is a per-case check) and the run FAILs as the full run would."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(record=True, judge_reply="schema", blocker_marker="EVICT-NOW")
    plain = [make_case(f"c{i}") for i in range(CASES)]
    last = look_order([Case.model_validate(c) for c in plain], 20_240_611)[-1].id
    cases = []
    for i in range(CASES):
        prompt = f"Question {i}?" + (" EVICT-NOW" if f"c{i}" == last else "")
        expected = _reply(prompt, SYSTEM)
        cases.append(make_case(f"c{i}", prompt=prompt, expect={"contains": [expected]}))
    suite = _suite(tmp_path, server.url, cases=cases, extra="guard = {}\n")
    text = suite.read_text(encoding="utf-8").replace(
        "[scoring]\n",
        '[judge]\njudges = ["openai:judge-model"]\nprice = "1,1"\n[scoring]\n'
        "weights = { contains = 1.0 }\n",
    )
    suite.write_text(text, encoding="utf-8")
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.verdict == "FAIL"
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.stopped_early and stop.look == 1
    assert last not in stop.case_ids and stop.checked == CASES
    blockers = next(c for c in outcome.evaluation.checks if c.name == "blockers")
    assert blockers.status == "fail" and f"candidate: {last}#1" in blockers.reason
    assert _sut_calls(server) == LOOK * 2 + CASES - LOOK
