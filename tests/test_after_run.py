"""The evaluation after a suite's run: what it imports while the run waits, what it does not
ask the store again, and how the judges' scores are recorded for history."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from assay.api import running, warming
from assay.core.records import ScoreRow
from assay.core.suite import Suite
from assay.scorers.judge import run as judge_run
from assay.store import Store
from assay.store.history import judge_scores, save_score_rows
from conftest import make_case, write_jsonl


def test_the_first_finished_trial_starts_importing_the_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "warm_probe.py").write_text("LOADED = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe", raising=False)
    seen: list[bool] = []
    tick = warming.warming(seen.append, ["warm_probe_missing", "warm_probe"])
    assert tick is not None
    assert "warm_probe" not in sys.modules  # nothing before the first trial
    tick(True)
    tick(False)
    assert seen == [True, False]  # the run's own progress still sees every trial
    warmers = [t for t in threading.enumerate() if t.name == "assay-warm"]
    for thread in warmers:
        thread.join(timeout=30)
    # A module that fails to import stops the warming quietly: the evaluation reports it.
    assert "warm_probe" not in sys.modules
    tick = warming.warming(None, ["warm_probe"])
    assert tick is not None
    tick(True)
    for thread in [t for t in threading.enumerate() if t.name == "assay-warm"]:
        thread.join(timeout=30)
    assert "warm_probe" in sys.modules


def test_only_a_run_that_is_evaluated_warms_what_its_evaluation_needs() -> None:
    request = running.run_request(cases=[], model="mock")
    assert warming.warming(None, ()) is None
    nothing = Suite.model_validate({"name": "s"})
    assert running._evaluation_modules(nothing, None, request) == ()
    scored = Suite.model_validate(
        {"name": "s", "scoring": {"scorers": ["contains"]}, "report": {"formats": ["json"]}}
    )
    modules = running._evaluation_modules(scored, None, request)
    assert "assay.api.suites" in modules and "jinja2" not in modules
    markdown = scored.model_copy(
        update={"report": scored.report.model_copy(update={"formats": ["md"]})}
    )
    assert "jinja2" in running._evaluation_modules(markdown, None, request)


def test_the_evaluation_runs_without_collector_passes(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.api import suites

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server()
    write_jsonl(tmp_path / "cases.jsonl", [make_case("p0")])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "s"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        f'[run]\nbase_url = "{server.url}"\nprice = "1,1"\n[scoring]\nscorers = ["contains"]\n',
        encoding="utf-8",
    )
    collecting: list[bool] = []
    evaluate = suites.evaluate_run

    def spy(*args: Any) -> Any:
        collecting.append(gc.isenabled())
        return evaluate(*args)

    monkeypatch.setattr(suites, "evaluate_run", spy)
    outcome = running.run(suite, store=tmp_path / "s.db", out=tmp_path / "out")
    assert outcome.evaluation is not None
    assert collecting == [False]
    assert gc.isenabled()  # and on again after


def test_a_json_report_imports_neither_templates_nor_xml() -> None:
    code = (
        "import json, sys\nfrom assay.reports import render\nprint(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert "jinja2" not in loaded and "xml.etree.ElementTree" not in loaded


def _piped(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mock_server: Any,
    *,
    cases: int,
    trials: int,
    top: str = "",
    conditions: bool = False,
    tail: str = "",
) -> Path:
    """A suite whose judge follows its run on the mock server: `cases` cases of `trials`
    trials each, under two conditions or the suite's model alone."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(judge_reply="schema")
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"p{i}") for i in range(cases)])
    suite = tmp_path / "suite.toml"
    both = '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
    suite.write_text(
        f'name = "piped"\ncases = "cases.jsonl"\ntrials = {trials}\nmodel = "openai:sut-model"\n'
        f'{top}[run]\nbase_url = "{server.url}"\nprice = "1,1"\n{both if conditions else ""}'
        f'[judge]\njudges = ["openai:judge-model"]\nprice = "1,1"\n{tail}',
        encoding="utf-8",
    )
    return suite


def test_what_the_judges_judged_while_the_run_went_on_is_not_read_back(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _piped(
        tmp_path,
        monkeypatch,
        mock_server,
        cases=4,
        trials=1,
        top='output = "out"\n',
        conditions=True,
        tail='[scoring]\nscorers = ["contains"]\n',
    )
    asked: list[list[str]] = []
    read_back = judge_run.judged_records

    def spy(store: Store, keys: list[str]) -> dict[str, dict[str, Any]]:
        asked.append(list(keys))
        return read_back(store, keys)

    monkeypatch.setattr(judge_run, "judged_records", spy)
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.judged is not None
    assert len(outcome.evaluation.judged.scores) == 8
    assert asked == [[]]  # all 8 were judged ahead: none is read back from the store
    # The rows the evaluation gated are those the store recorded for history.
    store = Store(tmp_path / "s.db")
    try:
        recorded = judge_scores(store)
    finally:
        store.close()
    assert [s.key for s in recorded] == [
        (r.case_id, r.trial, r.condition) for r in outcome.evaluation.judged.scores
    ]


def test_each_judged_row_is_made_once_as_its_judgment_lands(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipelined judgment's Score row is validated and serialised when it lands, while the
    run waits on the network; scores.jsonl and the history record share that one JSON."""
    suite = _piped(tmp_path, monkeypatch, mock_server, cases=4, trials=1, conditions=True)
    dumped: list[str] = []
    dump = ScoreRow.model_dump_json

    def counted(row: ScoreRow, **options: Any) -> str:
        dumped.append(row.case_id)
        return dump(row, **options)

    monkeypatch.setattr(ScoreRow, "model_dump_json", counted)
    evaluating: list[int] = []
    evaluate = running._evaluate_run

    def spy(*args: Any) -> None:
        evaluating.append(len(dumped))
        evaluate(*args)

    monkeypatch.setattr(running, "_evaluate_run", spy)
    outcome = running.run(suite, store=tmp_path / "s.db", out=tmp_path / "out")
    assert outcome.evaluation is not None
    assert evaluating == [8]  # all made while the run went on
    assert len(dumped) == 8  # and never again
    store = Store(tmp_path / "s.db")
    try:
        records = [r for (r,) in store.db.execute("SELECT record FROM judge_scores ORDER BY id")]
    finally:
        store.close()
    assert (tmp_path / "out" / "scores.jsonl").read_text().splitlines() == records


def test_the_trials_the_judges_followed_are_not_read_again_after_the_run(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judges pipelined with a run validate each trial from the text the store holds and
    make its trials.jsonl line as it is recorded; the evaluation after the run takes both."""
    from assay.core.records import Trial

    suite = _piped(tmp_path, monkeypatch, mock_server, cases=3, trials=2)
    made_after: list[str] = []
    made = running.model_line

    def counted(model: Any) -> str:
        made_after.append(model.case_id)
        return made(model)

    monkeypatch.setattr(running, "model_line", counted)
    outcome = running.run(suite, store=tmp_path / "s.db", out=tmp_path / "out")
    assert outcome.evaluation is not None
    assert made_after == []
    lines = (tmp_path / "out" / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    assert lines == [
        json.dumps(Trial.model_validate_json(line).model_dump(mode="json"), ensure_ascii=False)
        for line in lines
    ]


def test_the_keys_the_judges_made_while_the_run_went_on_are_not_hashed_again(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _piped(tmp_path, monkeypatch, mock_server, cases=3, trials=2)
    from assay.scorers.judge import items as judge_items

    hashed: list[str] = []
    sha = judge_items.sha256_text
    phase: list[str] = ["run"]

    def counted(text: str) -> str:
        hashed.append(phase[0])
        return sha(text)

    monkeypatch.setattr(judge_items, "sha256_text", counted)
    evaluate = running._evaluate_run
    followers: list[Any] = []

    def spy(*args: Any) -> None:
        phase[0] = "after"
        followers.append(args[3])
        evaluate(*args)

    monkeypatch.setattr(running, "_evaluate_run", spy)
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None and outcome.evaluation.judged is not None
    assert len(outcome.evaluation.judged.scores) == 6
    assert hashed == ["run"] * 6  # each item's key once, as its trial was recorded
    follower = followers[0]
    trial = next(iter(follower.trials.values()))[0]
    key = follower.direct_key(trial, follower.config_key)
    assert key is not None
    assert follower.direct_key(trial, "another configuration") is None
    assert follower.direct_key(trial.model_copy(), follower.config_key) is None


def test_response_lengths_are_counted_only_for_length_normalised_judging(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(judge_reply="schema")
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"p{i}") for i in range(2)])
    counted: list[str] = []
    words = judge_run.words

    def spy(text: str) -> int:
        counted.append(text)
        return words(text)

    monkeypatch.setattr(judge_run, "words", spy)
    template = (
        'name = "s"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        '[run]\nbase_url = "URL"\nprice = "1,1"\n'
        '[judge]\njudges = ["openai:judge-model"]\nprice = "1,1"\nlength_normalised = '
    )
    found = []
    for normalised in ("false", "true"):
        suite = tmp_path / (normalised + ".toml")
        suite.write_text(template.replace("URL", server.url) + normalised + "\n", encoding="utf-8")
        outcome = running.run(
            suite, store=tmp_path / (normalised + ".db"), out=tmp_path / normalised
        )
        assert outcome.evaluation is not None
        found.append(len(counted))
    assert found == [0, 2]  # two answers, counted once length normalisation asks


def _row(case_id: str, correctness: int) -> ScoreRow:
    return ScoreRow.model_validate(
        {
            "case_id": case_id,
            "trial": 1,
            "condition": "x",
            "source": "judge:m",
            "correctness": correctness,
        }
    )


def test_recorded_score_rows_are_replaced_in_place_even_within_one_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        save_score_rows(store, "r1", [_row("a", 1), _row("b", 2)], {})
        # b again, then c new, then c again: b keeps its place, c is recorded once, last wins
        save_score_rows(store, "r1", [_row("b", 4), _row("c", 3), _row("c", 5)], {})
        rows = judge_scores(store)
    finally:
        store.close()
    assert [(s.key[0], s.score) for s in rows] == [("a", 1.0), ("b", 4.0), ("c", 5.0)]


def test_the_command_lines_exit_freezes_the_heap_instead_of_collecting_it() -> None:
    """At exit, finalization's collections skip frozen objects: the command's are freed,
    not traversed again."""
    code = (
        "import atexit, gc\nimport assay.cli\natexit._run_exitfuncs()\nprint(gc.get_freeze_count())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout) > 0


def test_a_score_rows_evidence_text_is_made_only_when_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assay.verdict import rows as verdict_rows
    from assay.verdict.pipeline import rows_from_scores

    made: list[str] = []
    text_of = verdict_rows.evidence_text

    def counted(row: ScoreRow) -> str | None:
        made.append(row.case_id)
        return text_of(row)

    monkeypatch.setattr(verdict_rows, "evidence_text", counted)
    scores = [
        ScoreRow.model_validate(
            {
                "case_id": f"c{i}",
                "trial": 1,
                "condition": "x",
                "correctness": 4,
                "evidence": {"correctness": ["quote"]},
                "justification": "because",
            }
        )
        for i in range(3)
    ]
    rows = rows_from_scores(scores)
    assert made == []  # thousands of rows, a few shown: none made up front
    assert rows[1].shown_evidence() == '{"correctness": ["quote"]}\nbecause'
    assert made == ["c1"]


def test_history_hashes_the_responses_only_for_trials_without_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.core.records import Trial

    hashed: list[str] = []
    sha = judge_run.sha256_text

    def counted(text: str) -> str:
        hashed.append(text)
        return sha(text)

    monkeypatch.setattr(judge_run, "sha256_text", counted)
    trial = {"case_id": "a", "trial": 1, "condition": "x", "runner": "m", "response": "r"}
    store = Store(tmp_path / "s.db")
    try:
        judge_run.record_history(
            store, [Trial.model_validate({**trial, "run_id": "r1"})], [_row("a", 1)]
        )
        assert hashed == []
        judge_run.record_history(store, [Trial.model_validate(trial)], [_row("a", 2)])
        assert hashed == ["r"]  # the fallback run id of a trials file from another tool
        runs = [s.run_id for s in judge_scores(store)]
    finally:
        store.close()
    assert runs[0] == "r1" and runs[1].startswith("trials-")


def test_the_warmed_modules_cover_what_the_interval_imports_on_first_use() -> None:
    code = (
        "import sys\nfrom assay.api import warming\n"
        "for name in warming.EVALUATION_MODULES: __import__(name)\n"
        "from assay.verdict.interval import paired_intervals\n"
        "before = set(sys.modules)\n"
        "paired_intervals([[0.1], [0.4], [0.2], [0.9]], span=4.0)\n"
        "print(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
