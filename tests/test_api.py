"""The public Python API: `import assay` gives run, judge, evaluate and calibrate, and they
reach the same verdicts and figures as the commands (which are thin layers over them)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import InputError
from assay.core.records import ScoreRow
from conftest import make_case, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "examples" / "gate"


def test_evaluate_a_suite_gives_the_same_verdict_and_figures_as_assay_run(
    cli: Any, tmp_path: Path
) -> None:
    result = assay.evaluate(GATE / "suite.toml", store=tmp_path / "api.db", out=tmp_path / "api")
    ran = cli(
        "run", GATE / "suite.toml", "--store", tmp_path / "cli.db", "--out", tmp_path / "cli",
        "--json",
    )  # fmt: skip
    summary = ran.json()
    assert ran.code == result.exit_code == 0, ran.stderr
    gate = summary["release_gate"]
    assert gate["verdict"] == result.verdict == "PASS"
    assert result.passed is True
    assert gate["checks"] == result.summary().as_json()["release_gate"]["checks"]
    assert [c.name for c in result.checks] == [c["name"] for c in gate["checks"]]
    weighted = result.comparisons["candidate"]["weighted_score"]
    assert weighted.delta > 0 and weighted.ci_low > 0
    # Both wrote the same summary.json and reports, figure for figure.
    api_summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert api_summary == cli_summary
    api_report = json.loads((tmp_path / "api" / "report.json").read_text())
    cli_report = json.loads((tmp_path / "cli" / "report.json").read_text())
    for key in ("verdict", "checks", "comparisons", "conditions"):  # (latencies differ)
        assert api_report[key] == cli_report[key], key
    assert result.run is not None and result.run.total == summary["total"]


def test_run_suite_json_carries_the_verdict_and_its_checks(cli: Any, tmp_path: Path) -> None:
    ran = cli("run", GATE / "suite.toml", "--store", tmp_path / "s.db", "--json", "--out", "o")
    data = ran.json()
    assert data["exit_code"] == ran.code == 0
    assert data["release_gate"]["verdict"] == "PASS"
    assert {c["name"] for c in data["release_gate"]["checks"]} >= {
        "blockers",
        "superiority:weighted_score",
        "thresholds",
    }
    assert data["reports"] == "o"


def test_evaluate_score_rows_as_objects_or_a_file_agree(tmp_path: Path) -> None:
    rows = [
        ScoreRow.model_validate(json.loads(line))
        for line in (GATE / "scores.jsonl").read_text().splitlines()
    ]
    from_objects = assay.evaluate(scores=rows, gate="seed")
    from_file = assay.evaluate(scores=GATE / "scores.jsonl", gate="seed")
    assert from_objects.summary() == from_file.summary()
    assert from_file.verdict == "PASS" and from_file.exit_code == 0
    assert from_file.evaluation.config.gate.mode == "seed"


def test_evaluate_writes_reports_when_asked(tmp_path: Path) -> None:
    result = assay.evaluate(
        scores=GATE / "scores.jsonl",
        cases=GATE / "cases.jsonl",
        out=tmp_path / "rep",
        formats="md,json",
    )
    assert {p.name for p in result.written} == {"report.md", "report.json"}
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["verdict"] == result.verdict == result.report.verdict


def test_run_judge_evaluate_and_calibrate_from_python(tmp_path: Path) -> None:
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"q{i}", reference="Paris is the capital of France.") for i in range(4)],
    )
    skill = tmp_path / "skill.md"
    skill.write_text("Answer briefly.\n\n{{prompt}}\n", encoding="utf-8")
    store = tmp_path / "s.db"
    outcome = assay.run(cases=cases, model="mock", trials=1, store=store, condition_skill=skill)
    assert outcome.exit_code == 0 and outcome.run.answered == 8
    assert outcome.evaluation is None  # no suite: nothing to gate
    judged = assay.judge(
        run=outcome.run.run_id,
        judges=["mock:fair"],
        cases=cases,
        store=store,
        output=tmp_path / "scores.jsonl",
        labels=tmp_path / "labels.jsonl",
        allow_unmetered=True,
    )
    assert judged.exit_code == 0 and len(judged.rows) == 8
    result = assay.evaluate(scores=tmp_path / "scores.jsonl", cases=cases)
    assert result.verdict in ("PASS", "FAIL", "INCONCLUSIVE")
    assert set(result.comparisons) == {"candidate"}
    calibration = assay.calibrate(ROOT / "examples" / "stats" / "labels.jsonl", store=None)
    assert calibration.dimensions and calibration.exit_code == 0


def test_bad_input_is_an_input_error_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="candidate must be another condition"):
        assay.evaluate(scores=GATE / "scores.jsonl", candidate="baseline")
    with pytest.raises(InputError, match="nothing to report"):
        assay.evaluate()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: assay.run(cases=[{"id": 1}], model="mock", store=d / "s.db"),
         r"assay\.run: cases\[0\]\.id: Input should be a valid string"),
        (lambda d: assay.run(cases=[make_case("c0")], model="mock", trials="3", store=d / "s.db"),
         r"assay\.run: trials: expected int \| None, got str \('3'\)"),
        (lambda d: assay.run(cases=[make_case("c0")], budget_usd=True, store=d / "s.db"),
         r"assay\.run: budget_usd: expected float \| None, got bool"),
        (lambda d: assay.run(42), r"assay\.run: suite: expected str \| Path \| Suite \| None"),
        (lambda d: assay.run(cases=[], trails=3), r"assay\.run: unexpected keyword 'trails'"),
        (lambda d: assay.evaluate(scores=42),
         r"assay\.evaluate: scores: expected str \| Path \| Sequence\[ScoreRow\] \| None, got int"),
        (lambda d: assay.evaluate(trials=[{"case_id": "c1"}]),
         r"assay\.evaluate: trials\[0\]\.trial: Field required"),
        (lambda d: assay.judge(d / "t.jsonl", judges="mock:fair"),
         r"assay\.judge: judges: expected Sequence\[str\], got str"),
        (lambda d: assay.rank(d / "c.jsonl", bootstrap="9"), r"assay\.rank: bootstrap: expected int"),
        (lambda d: assay.calibrate(42), r"assay\.calibrate: labels: expected str \| Path, got int"),
    ],
)  # fmt: skip
def test_wrong_argument_types_are_input_errors_naming_the_argument(
    tmp_path: Path, call: Any, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        call(tmp_path)
    assert not (tmp_path / "s.db").exists()  # refused before anything is written


def test_records_may_be_given_as_their_fields(tmp_path: Path) -> None:
    outcome = assay.run(cases=[make_case("c0")], model="mock", store=tmp_path / "s.db")
    assert outcome.run.exit_code == 0 and outcome.run.answered == 3


def test_the_docs_python_example_runs(tmp_path: Path) -> None:
    section = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block, "the Python API section has a python block"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    done = subprocess.run(
        [sys.executable, "-c", block.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "PASS" in done.stdout


def test_import_assay_is_light() -> None:
    """`import assay` loads no statistics, web or provider libraries until they are used."""
    code = (
        "import sys, assay; heavy = {'numpy', 'scipy', 'starlette', 'jinja2', 'aiohttp'};"
        " print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def _metered_suite(tmp_path: Path) -> Path:
    """Priced mock models: the run's trials and the suite's judge both cost money."""
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"m{i}") for i in range(6)])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "metered"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:answer"\n'
        'output = "out"\n[run]\nprice = "1000,1000"\n'
        '[[conditions]]\nname = "baseline"\n'
        '[[conditions]]\nname = "candidate"\nsystem = "Be brief."\n'
        '[judge]\njudges = ["mock:fair"]\nprice = "1000,1000"\n',
        encoding="utf-8",
    )
    return suite


def _run_spend(store: Path, run_id: str) -> float:
    from assay.store import Store
    from assay.store.spend import spent_so_far

    handle = Store(store)
    try:
        return spent_so_far(handle, run_id)
    finally:
        handle.close()


def test_a_suites_judge_calls_are_metered_by_the_runs_budget(cli: Any, tmp_path: Path) -> None:
    suite = _metered_suite(tmp_path)
    free = cli("run", suite, "--store", tmp_path / "free.db", "--json")
    done = free.json()
    assert free.code in (0, 1), free.stderr
    trials_cost = done["spend"]["system"]
    total = _run_spend(tmp_path / "free.db", done["run_id"])
    assert total > trials_cost > 0  # the judge's spend is recorded under the run
    assert done["spent_usd"] == pytest.approx(total)  # and counted in what the run printed
    # A rerun counts it: nothing new is called, and the run's spend includes the judge's.
    again = cli("run", suite, "--store", tmp_path / "free.db", "--json").json()
    assert again["calls"] == 0 and again["run_spent_usd"] == pytest.approx(total)
    # A cap above the trials' cost but below the judge's: the trials finish, the judging
    # stops at the cap, and the run (trials and judge together) never spends past it.
    cap = trials_cost + (total - trials_cost) / 2
    capped = cli("run", suite, "--store", tmp_path / "cap.db", "--budget-usd", str(cap), "--json")
    assert capped.code == 3, capped.stderr
    assert "judging" in capped.stderr and "budget" in capped.stderr
    assert capped.json()["answered"] == capped.json()["total"]
    assert _run_spend(tmp_path / "cap.db", capped.json()["run_id"]) <= cap + 1e-9


def test_judge_backed_grounding_in_a_report_uses_the_given_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`assay report` (assay.evaluate on stored trials) with a judge-backed grounding scorer:
    the claim is asked through a Caller over --store, so the reply is cached there and no
    .assay folder appears in the working directory."""
    doc = "The Eiffel Tower is 330 metres tall and stands in Paris."
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("g1", context=[{"id": "d1", "text": doc}])],
    )
    response = "The Eiffel Tower is 330 metres tall. Its lifts were built by Otis Elevators."
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [
            {"case_id": "g1", "trial": 1, "condition": c, "runner": "m", "response": response}
            for c in ("baseline", "candidate")
        ],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[scoring]\nscorers = [{ name = "groundedness", options = { judge = "mock:first" } }]\n',
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = assay.evaluate(suite, trials=trials, cases=cases, store=tmp_path / "s.db")
    assert {r.scorer for r in result.evaluation.results} == {"groundedness"}
    assert all(r.fields.get("method") == "judge:mock:first" for r in result.evaluation.results)
    assert list(work.iterdir()) == []
    from assay.store import Store

    handle = Store(tmp_path / "s.db")
    try:
        assert handle.db.execute("SELECT COUNT(*) FROM call_cache").fetchone()[0] >= 1
    finally:
        handle.close()
