"""Gating a single system: one condition scored, reported and gated on blockers, per-case
thresholds and corpus thresholds, with no baseline comparison; corpus thresholds also apply
to the gated condition of a comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import assay
from assay.core.errors import InputError
from assay.core.records import ScoreRow
from assay.core.suite import CorpusThreshold, Threshold
from assay.verdict.thresholds import parse_corpus
from conftest import make_case, write_jsonl

KB = {
    "c1": "The Tidewell hub joins 2.4 GHz Wi-Fi networks only.",
    "c2": "Drop sensors run for two years on one CR2032 battery.",
    "c3": "The shut-off valve closes the water main within five seconds of a leak alert.",
}
AGENT = '''
def run(case, settings):
    """Faithful: repeats its context. Hallucinating: states things no document says."""
    if settings.get("faithful"):
        return " ".join(doc.text for doc in case.context or [])
    return ("Bananas ripen quickly on distant planets under purple lamps. "
            "Volcanic rocks sing loudly every Tuesday night near the harbour.")
'''


def grounded_world(tmp_path: Path, *, conditions: str, scoring: str = "", gate: str = "") -> Path:
    """A suite over a python agent whose answers are checked against each case's context."""
    cases = [
        make_case(cid, prompt=f"Tell me about {cid}.", context=[{"id": f"d-{cid}", "text": text}])
        for cid, text in KB.items()
    ]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "grounded"\ncases = "cases.jsonl"\nmodel = "python:agent.py:run"\ntrials = 2\n'
        'output = "out"\n[run]\nallow_unmetered = true\n'
        f"{conditions}\n"
        '[scoring]\nscorers = ["hallucination", "groundedness"]\n'
        f"{scoring}\n{gate}\n"
        '[report]\nformats = ["md", "json", "junit", "html"]\n',
        encoding="utf-8",
    )
    return suite


ONE_HALLUCINATING = '[[conditions]]\nname = "agent"\n'
ONE_FAITHFUL = '[[conditions]]\nname = "agent"\nparams = { faithful = true }\n'
CORPUS = "[scoring.corpus]\nhallucination = { max = 0.2 }\ngroundedness = 0.8\n"


def report_json(suite: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((suite.parent / "out" / "report.json").read_text())
    return data


def checks_by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in data["checks"]}


def test_one_condition_suite_runs_scores_reports_and_passes(cli: Any, tmp_path: Path) -> None:
    cases = [make_case(f"k{i}", prompt="Paris is the capital of France.") for i in range(4)]
    for case in cases:
        case["reference"] = case["prompt"]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "solo"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "prod"\nmodel = "mock:echo"\n'
        '[judge]\njudges = ["mock:fair"]\n'
        '[report]\nformats = ["md", "json", "junit", "html"]\n',
        encoding="utf-8",
    )
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert ran.code == 0, ran.stderr
    summary = ran.json()
    assert summary["release_gate"]["verdict"] == "PASS"
    assert summary["release_gate"]["candidate"] == "prod"
    assert summary["release_gate"]["baseline_compared"] is False
    assert summary["reports"] and not summary["notes"]
    out = tmp_path / "out"
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] == "PASS" and data["baseline_compared"] is False
    assert data["candidate"] == "prod" and data["comparisons"] == []
    markdown, html = (out / "report.md").read_text(), (out / "report.html").read_text()
    assert "No baseline comparison was made" in markdown
    assert "No baseline comparison was made" in html
    assert "no baseline comparison was made" in (out / "report.junit.xml").read_text()
    # The by-risk table shows the gated condition alone: no empty baseline or delta columns.
    assert "| risk | cases | prod |\n" in markdown and "baseline |" not in markdown
    assert ">baseline</th>" not in html and "Per-metric deltas" not in html
    scored = json.loads((out / "summary.json").read_text())
    assert scored["baseline"] is None and scored["candidate"]["rows"] == 4
    assert (out / "scores.jsonl").exists()
    report_schema = cli("schema", "report").json()
    assert not list(Draft202012Validator(report_schema).iter_errors(data))
    run_schema = cli("schema", "run-summary").json()
    assert not list(Draft202012Validator(run_schema).iter_errors(summary))


def test_a_hallucinating_agent_fails_its_corpus_threshold(cli: Any, tmp_path: Path) -> None:
    suite = grounded_world(tmp_path, conditions=ONE_HALLUCINATING, scoring=CORPUS)
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert ran.code == 1, ran.stderr
    gate = ran.json()["release_gate"]
    assert gate["verdict"] == "FAIL" and gate["baseline_compared"] is False
    checks = checks_by_name(report_json(suite))
    hallucination = checks["corpus:hallucination:max"]
    assert hallucination["status"] == "fail" and hallucination["metric"] == "hallucination"
    assert (hallucination["value"], hallucination["bound"], hallucination["cases"]) == (1.0, 0.2, 3)
    assert checks["corpus:groundedness:min"]["status"] == "fail"
    out = tmp_path / "out"
    # every case hallucinates: the interval's lower bound, 0.025^(1/3), lies above 0.2
    assert (
        "| corpus:hallucination:max | lexical | interval | fail | 1.000 | [0.292, 1.000] | 0.200 | 3 |"
        in (out / "report.md").read_text()
    )
    junit = (out / "report.junit.xml").read_text()
    assert 'classname="corpus" name="corpus:hallucination:max"' in junit
    assert "corpus:hallucination:max" in (out / "report.html").read_text()


def test_a_faithful_agent_on_three_cases_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """No case hallucinates, but 3 cases cannot show the corpus's rate is at most 0.2: the
    interval's upper bound is 1 − 0.025^(1/3) = 0.708; 17 such cases would. Decided on the
    estimate, the bounds pass."""
    suite = grounded_world(tmp_path, conditions=ONE_FAITHFUL, scoring=CORPUS)
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert ran.code == 1, ran.stderr
    assert ran.json()["release_gate"]["verdict"] == "INCONCLUSIVE"
    checks = checks_by_name(report_json(suite))
    hallucination = checks["corpus:hallucination:max"]
    assert hallucination["status"] == "inconclusive" and hallucination["value"] == 0.0
    assert (hallucination["ci_low"], hallucination["ci_high"]) == (0.0, 0.707598)
    assert hallucination["cases_needed"] == 17
    assert checks["corpus:groundedness:min"]["value"] == 1.0
    estimate = grounded_world(
        tmp_path, conditions=ONE_FAITHFUL, scoring='corpus_decide = "estimate"\n' + CORPUS
    )
    again = cli("run", estimate, "--store", tmp_path / "s.db", "--json")
    assert again.code == 0, again.stderr
    checks = checks_by_name(report_json(estimate))
    assert checks["corpus:hallucination:max"]["status"] == "pass"
    assert checks["corpus:hallucination:max"]["decide"] == "estimate"


def test_the_grounding_threshold_option_is_the_same_corpus_check(cli: Any, tmp_path: Path) -> None:
    suite = grounded_world(tmp_path, conditions=ONE_HALLUCINATING)
    text = suite.read_text().replace(
        'scorers = ["hallucination", "groundedness"]',
        'scorers = [{ name = "hallucination", options = { threshold = 0.2 } }]',
    )
    suite.write_text(text, encoding="utf-8")
    ran = cli("run", suite, "--store", tmp_path / "s.db")
    assert ran.code == 1, ran.stderr
    data = report_json(suite)
    assert checks_by_name(data)["corpus:hallucination:max"]["status"] == "fail"
    figures = [s["metrics"] for s in data["scorers"]]
    assert all("hallucination_ok" not in f and "hallucination_threshold" not in f for f in figures)


def test_per_case_thresholds_gate_a_single_condition(cli: Any, tmp_path: Path) -> None:
    thresholds = "[scoring.thresholds]\nhallucination = { max = 0.2 }\n"
    suite = grounded_world(tmp_path, conditions=ONE_HALLUCINATING, scoring=thresholds)
    ran = cli("run", suite, "--store", tmp_path / "s.db")
    assert ran.code == 1, ran.stderr
    check = checks_by_name(report_json(suite))["thresholds"]
    assert check["status"] == "fail" and "3 per-case threshold miss(es) in agent" in check["reason"]


def test_seed_mode_gates_a_single_condition(cli: Any, tmp_path: Path) -> None:
    suite = grounded_world(
        tmp_path, conditions=ONE_HALLUCINATING, scoring=CORPUS, gate='[gate]\nmode = "seed"\n'
    )
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert ran.code == 1, ran.stderr
    gate = ran.json()["release_gate"]
    assert gate["mode"] == "seed" and not gate["baseline_compared"]
    assert "corpus:hallucination:max" in {c["name"] for c in gate["checks"]}


TWO = (
    '[[conditions]]\nname = "baseline"\nparams = { faithful = true }\n'
    '[[conditions]]\nname = "candidate"\n'
)


def test_grounding_metrics_are_compared_and_weighted_with_their_direction(
    cli: Any, tmp_path: Path
) -> None:
    weights = "[scoring.weights]\ngroundedness = 1\nhallucination = 1\n"
    suite = grounded_world(tmp_path, conditions=TWO, scoring=weights + CORPUS)
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert ran.code == 1, ran.stderr
    data = report_json(suite)
    assert data["baseline_compared"] is True
    deltas = {d["metric"]: d["delta"] for d in data["comparisons"][0]["deltas"]}
    assert deltas["groundedness"] == -1.0 and deltas["hallucination"] == 1.0
    # hallucination weighs as 1 - value: the faithful baseline scores 1, the candidate 0
    means = {c["name"]: c["weighted_score"] for c in data["conditions"]}
    assert means == {"baseline": 1.0, "candidate": 0.0}
    assert deltas["weighted_score"] == -1.0
    checks = checks_by_name(data)
    assert checks["superiority:weighted_score"]["status"] == "fail"
    assert checks["corpus:hallucination:max"]["status"] == "fail"  # on the gated condition


def test_a_guarded_lower_is_better_metric_fails_when_it_rises(cli: Any, tmp_path: Path) -> None:
    guard = "[gate]\nguard = { hallucination = 0.1 }\n"
    suite = grounded_world(tmp_path, conditions=TWO, gate=guard)
    ran = cli("run", suite, "--store", tmp_path / "s.db")
    assert ran.code == 1, ran.stderr
    check = checks_by_name(report_json(suite))["non-inferiority:hallucination"]
    assert check["status"] == "fail" and check["delta"] == -1.0


def score_rows(condition: str, correctness: list[int]) -> list[dict[str, Any]]:
    return [
        {"case_id": f"k{i}", "trial": 1, "condition": condition, "correctness": value}
        for i, value in enumerate(correctness)
    ]


def test_score_rows_of_one_condition_are_gated_on_their_own(cli: Any, tmp_path: Path) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", score_rows("prod", [4, 5, 3, 4]))
    ran = cli("score", scores, "--weights", "correctness=1", "--json")
    assert ran.code == 0, ran.stderr
    gate = ran.json()["release_gate"]
    assert gate["verdict"] == "PASS" and gate["candidate"] == "prod"
    assert gate["baseline_compared"] is False
    failed = cli("score", scores, "--weights", "correctness=1", "--corpus", "correctness>=4.5")
    assert failed.code == 1, failed.stderr
    check = {c["name"]: c for c in failed.json()["release_gate"]["checks"]}
    assert check["corpus:correctness:min"]["value"] == 4.0
    assert check["corpus:correctness:min"]["cases"] == 4
    table = cli("score", scores, "--weights", "correctness=1", "--format", "table")
    assert "no baseline comparison" in table.stdout


def test_per_case_thresholds_apply_to_judge_metrics(cli: Any, tmp_path: Path) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", score_rows("prod", [4, 5, 2, 4]))
    suite = tmp_path / "suite.toml"
    suite.write_text(
        "[scoring]\nweights = { correctness = 1 }\n[scoring.thresholds]\ncorrectness = 3\n",
        encoding="utf-8",
    )
    ran = cli("score", scores, "--suite", suite)
    assert ran.code == 1, ran.stderr
    check = {c["name"]: c for c in ran.json()["release_gate"]["checks"]}["thresholds"]
    assert "k2: correctness 2 < min 3" in check["reason"]


@pytest.mark.parametrize(
    "bad", ["hallucination", "hallucination<0.2", "hallucination<=x", "<=0.2", "h<=nan"]
)
def test_bad_corpus_flag_is_exit_2_naming_the_flag(cli: Any, tmp_path: Path, bad: str) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", score_rows("prod", [4, 5]))
    ran = cli("score", scores, "--weights", "correctness=1", "--corpus", bad)
    assert ran.code == 2
    assert "--corpus" in ran.stderr and "METRIC<=NUMBER" in ran.stderr
    assert not ran.stdout


def test_corpus_flag_parsing() -> None:
    assert parse_corpus(["hallucination<=0.2", "groundedness >= 0.8", "hallucination>=0"]) == {
        "hallucination": Threshold(min=0.0, max=0.2),
        "groundedness": Threshold(min=0.8),
    }
    with pytest.raises(InputError, match="has a max bound already"):
        parse_corpus(["h<=0.2", "h<=0.3"])


def test_python_api_gates_a_single_system_with_corpus_thresholds(tmp_path: Path) -> None:
    rows = [ScoreRow.model_validate(r) for r in score_rows("prod", [4, 5, 3, 4])]
    result = assay.evaluate(scores=rows, weights={"correctness": 1.0}, corpus=["correctness>=4"])
    assert result.verdict == "INCONCLUSIVE" and result.exit_code == 1  # 4 cases: no PASS
    assert not result.summary().release_gate.baseline_compared
    [corpus] = [c for c in result.checks if c.name.startswith("corpus:")]
    assert (corpus.value, corpus.bound, corpus.cases) == (4.0, 4.0, 4)
    estimate = CorpusThreshold(min=4, decide="estimate")
    passed = assay.evaluate(
        scores=rows, weights={"correctness": 1.0}, corpus={"correctness": estimate}
    )
    assert passed.passed and passed.exit_code == 0
    failed = assay.evaluate(
        scores=rows,
        weights={"correctness": 1.0},
        corpus={"correctness": CorpusThreshold(min=4.5, decide="estimate")},
    )
    assert failed.verdict == "FAIL" and failed.exit_code == 1
    assert failed.report.baseline_compared is False


def test_report_on_trials_of_one_condition(cli: Any, tmp_path: Path) -> None:
    suite = grounded_world(tmp_path, conditions=ONE_HALLUCINATING)
    trials = tmp_path / "trials.jsonl"
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--output", trials)
    assert ran.code == 0, ran.stderr
    out = tmp_path / "again"
    reported = cli(
        "report", "--trials", trials, "--cases", tmp_path / "cases.jsonl",
        "--scorer", "hallucination", "--corpus", "hallucination<=0.2", "--out", out,
    )  # fmt: skip
    assert reported.code == 1, reported.stderr
    assert "no baseline comparison" in reported.stdout
    data = json.loads((out / "report.json").read_text())
    assert {c["name"]: c["status"] for c in data["checks"]}["corpus:hallucination:max"] == "fail"


def test_run_corpus_flag_gates_the_suite(cli: Any, tmp_path: Path) -> None:
    suite = grounded_world(tmp_path, conditions=ONE_HALLUCINATING)
    store = tmp_path / "s.db"
    bad = cli("run", suite, "--store", store, "--corpus", "hallucination=0.2")
    assert bad.code == 2 and "--corpus" in bad.stderr
    assert not store.exists()  # refused before any call
    loose = cli("run", suite, "--store", store, "--corpus", "hallucination<=1", "--json")
    assert loose.code == 1, loose.stderr  # within the bound, but 3 cases cannot pass
    [check] = [c for c in loose.json()["release_gate"]["checks"] if c["name"].startswith("corpus")]
    assert (check["status"], check["bound"], check["cases_needed"]) == ("inconclusive", 1.0, 5)
    ran = cli("run", suite, "--store", store, "--corpus", "hallucination<=0.2", "--json")
    assert ran.code == 1, ran.stderr
    checks = {c["name"]: c for c in ran.json()["release_gate"]["checks"]}
    assert checks["corpus:hallucination:max"]["bound"] == 0.2
    alone = cli("run", "--model", "mock", "--corpus", "x>=1", "--store", tmp_path / "t.db")
    assert alone.code == 2 and "needs a suite file" in alone.stderr


def test_single_condition_score_json_matches_its_schema(cli: Any, tmp_path: Path) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", score_rows("prod", [4, 5, 3, 4]))
    ran = cli("score", scores, "--weights", "correctness=1", "--corpus", "correctness>=4", "--json")
    assert ran.code == 1, ran.stderr  # 4 cases: INCONCLUSIVE
    schema = cli("schema", "summary").json()
    assert not list(Draft202012Validator(schema).iter_errors(ran.json()))


def test_a_corpus_metric_no_case_carries_is_skipped(cli: Any, tmp_path: Path) -> None:
    """recall@5 is a known metric, but no case names the documents to retrieve."""
    suite = grounded_world(tmp_path, conditions=ONE_FAITHFUL)
    text = suite.read_text().replace(
        'scorers = ["hallucination", "groundedness"]',
        'scorers = ["hallucination", { name = "retrieval", options = { k = 5 } }]',
    )
    suite.write_text(text, encoding="utf-8")
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--corpus", "recall@5>=0.5", "--json")
    assert ran.code == 0, ran.stderr
    skipped = {c["name"]: c for c in ran.json()["release_gate"]["checks"]}["corpus:recall@5"]
    assert skipped["status"] == "skipped" and skipped["cases"] == 0
    assert (
        'classname="corpus" name="corpus:recall@5"'
        in (tmp_path / "out" / "report.junit.xml").read_text()
    )


def test_no_per_case_threshold_asks_for_no_per_case_means(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.scorers.base import Score
    from assay.verdict import thresholds
    from assay.verdict.rows import ScoredTrial

    def refused(*args: Any) -> Any:
        raise AssertionError("per-case means made for no threshold")

    monkeypatch.setattr(thresholds, "case_metric_means", refused)
    results = [Score("c", 1, "x", "contains", {"contains": 1.0})]
    rows = [ScoredTrial(case_id="c", trial=1, condition="x", metrics={"correctness": 4.0})]
    assert thresholds.threshold_misses(results, {}, "x", rows) == []
    assert thresholds.threshold_checks(results, {}, "x", rows) == []


def test_rows_of_the_candidate_alone_are_a_comparison_missing_its_baseline(
    cli: Any, tmp_path: Path
) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", score_rows("candidate", [5, 5, 4, 5, 5, 4]))
    ran = cli("score", scores, "--weights", "correctness=1")
    assert ran.code == 2, ran.stdout
    assert f"ERROR: {scores}: condition: every row is 'candidate'" in ran.stderr
    assert "'baseline'" in ran.stderr and "Traceback" not in ran.stderr
    out = tmp_path / "out"
    report = cli("report", "--scores", scores, "--weights", "correctness=1", "--out", out)
    assert report.code == 2 and not out.exists()
    with pytest.raises(InputError, match="every row is 'candidate'"):
        assay.evaluate(scores=[ScoreRow.model_validate(r) for r in score_rows("candidate", [5])])
    # a suite that gates one system, named candidate, says so: gated on its own
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "one"\n[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'
        "[scoring]\nweights = { correctness = 1 }\n",
        encoding="utf-8",
    )
    alone = cli("score", scores, "--suite", suite, "--json")
    assert alone.code == 0, alone.stderr
    assert alone.json()["release_gate"]["baseline_compared"] is False


def test_numpy_numbers_are_numbers_in_the_python_api() -> None:
    np = pytest.importorskip("numpy")
    rows = [
        {
            "case_id": f"k{i}",
            "trial": np.int64(1),
            "condition": condition,
            "correctness": np.float64(4.0 + (0.5 if condition == "candidate" else 0.0)),
            "safety": np.int64(5),
        }
        for i in range(8)
        for condition in ("baseline", "candidate")
    ]
    plain = [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in rows]
    weights = {"correctness": np.float64(0.5), "safety": np.int64(1)}
    result = assay.evaluate(scores=rows, weights=weights, corpus=["correctness>=4"])
    expected = assay.evaluate(
        scores=plain, weights={"correctness": 0.5, "safety": 1}, corpus=["correctness>=4"]
    )
    assert result.to_dict() == expected.to_dict()
    validated = [ScoreRow.model_validate(dict(r, trial=1)) for r in rows]  # numpy extras kept
    assert (
        assay.evaluate(scores=validated, weights=weights).to_dict()["comparisons"]
        == (expected.to_dict()["comparisons"])
    )
