"""`assay import` carries what the source tool knew about its own run: an Inspect log that did
not finish (status error, cancelled, started) is an incomplete import, errored samples and
promptfoo errors are errored trials with no score, promptfoo's verdict of each test gates its
case, and Inspect's per-sample cost and tokens are kept. The inputs are real output of the
tools (tests/fixtures/imports, see the README there)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.jsonl import load_records
from assay.core.records import ScoreRow, Trial
from assay.core.suite import load_suite

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
STATUS = FIXTURES / "inspect" / "status"
COST = FIXTURES / "inspect" / "cost" / "gpt-4o-mini.eval"
GRADED = FIXTURES / "inspect" / "graded" / "mock-c.eval"
PROMPTFOO = FIXTURES / "promptfoo"
MOCK_B = "openai-api/mockb/mock-b"


def import_(cli: Any, out: Path, tool: str, *args: str | Path) -> Any:
    done = cli("import", tool, *args, "--output", out, "--json")
    assert done.code == 0, done.stderr
    return done.json()


def trials(folder: Path) -> list[Trial]:
    return [t for _, t in load_records(folder / "trials.jsonl", Trial)]


def scored(folder: Path) -> set[tuple[str, int, str]]:
    if not (folder / "scores.jsonl").exists():
        return set()
    return {
        (r.case_id, r.trial, r.condition)
        for _, r in load_records(folder / "scores.jsonl", ScoreRow)
    }


def errored(folder: Path) -> set[tuple[str, int, str]]:
    return {(t.case_id, t.trial, t.condition) for t in trials(folder) if t.error is not None}


def gate(cli: Any, folder: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """`assay report` over the import's folder: its exit code and report.json."""
    done = cli(
        "report", "--suite", folder / "suite.toml", "--scores", folder / "scores.jsonl",
        "--trials", folder / "trials.jsonl", "--out", folder / "report",
        "--format", "json,junit", *extra,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    report = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
    return done.code, report


# -- Inspect: a log that did not finish is an incomplete import ----------------------------


@pytest.mark.parametrize(
    ("log", "status", "counted", "errors"),
    [
        ("mock-b-error.eval", "error", "9 of 10 samples (1 errored)", 1),
        ("mock-a-cancelled.eval", "cancelled", "10 of 10 samples (4 errored)", 4),
        ("mock-a-started.eval", "started", "6 of 10 samples", 0),
    ],
)
def test_an_unfinished_inspect_log_is_an_incomplete_import(
    cli: Any, tmp_path: Path, log: str, status: str, counted: str, errors: int
) -> None:
    source = STATUS / log
    done = cli("import", "inspect", source, "--output", tmp_path)
    assert done.code == 0, done.stderr
    reason = f"{source}: status {status}: {counted}"
    assert f"incomplete: {reason}" in done.stderr
    suite = load_suite(tmp_path / "suite.toml")
    assert suite.source is not None
    assert (suite.source.tool, suite.source.complete, suite.source.reasons) == (
        "inspect", False, [reason]
    )  # fmt: skip
    assert len(errored(tmp_path)) == errors
    assert not errored(tmp_path) & scored(tmp_path)  # an errored sample has no score row
    code, report = gate(cli, tmp_path)
    assert (code, report["verdict"]) == (3, "INCOMPLETE")  # it gated PASS, exit 0
    assert any(reason in line for line in report["reasons"])


def test_a_finished_log_is_a_complete_import(cli: Any, tmp_path: Path) -> None:
    summary = import_(cli, tmp_path, "inspect", COST)
    assert (summary["complete"], summary["reasons"]) == (True, [])
    source = load_suite(tmp_path / "suite.toml").source
    assert source is not None and (source.tool, source.complete) == ("inspect", True)
    assert gate(cli, tmp_path)[0] == 0


def test_a_killed_json_log_without_samples(cli: Any, tmp_path: Path) -> None:
    empty = STATUS / "mock-a-started.json"  # the header only: killed before a sample was logged
    alone = cli("import", "inspect", empty, "--output", tmp_path / "alone")
    assert alone.code == 2 and not (tmp_path / "alone").exists()
    assert f"ERROR: {empty}: status started: 0 of 10 samples: the log holds no samples" in (
        alone.stderr
    )
    summary = import_(cli, tmp_path / "with", "inspect", empty, COST)
    assert summary["complete"] is False
    assert summary["reasons"] == [f"{empty}: status started: 0 of 10 samples"]


def test_an_errored_log_beside_a_finished_one_gates_incomplete(cli: Any, tmp_path: Path) -> None:
    error = STATUS / "mock-b-error.eval"
    summary = import_(cli, tmp_path, "inspect", COST, error, "--baseline", "openai/gpt-4o-mini")
    assert summary["candidate"] == MOCK_B and summary["complete"] is False
    # japan epoch 1 was never logged, epoch 2 errored: neither has a score row
    assert errored(tmp_path) == {("japan", 2, MOCK_B)}
    assert ("japan", 1, MOCK_B) not in {(t.case_id, t.trial, t.condition) for t in trials(tmp_path)}
    code, report = gate(cli, tmp_path)
    assert (code, report["verdict"]) == (3, "INCOMPLETE")  # not an input error over pairing
    # score rows alone cannot tell an errored trial from a lost row: the hint gives the trials
    done = cli("import", "inspect", COST, error, "--output", tmp_path / "again", "--baseline",
               "openai/gpt-4o-mini")  # fmt: skip
    assert "next: assay report" in done.stdout and "assay score" not in done.stdout
    gaps = {(g["case_id"], g["trial"], g["kind"]) for g in report["coverage"]["gaps"]}
    assert gaps == {("japan", 1, "missing"), ("japan", 2, "errored")}


def test_an_errored_sample_is_never_partly_scored(cli: Any, tmp_path: Path) -> None:
    # japan's grader failed after includes() had scored it: the sample holds one score
    summary = import_(cli, tmp_path, "inspect", GRADED)
    assert (summary["trials"], summary["errored"], summary["scores"]) == (5, 1, 4)
    (key,) = errored(tmp_path)
    assert key[0] == "japan" and key not in scored(tmp_path)


def test_inspect_model_usage_gives_cost_and_tokens(tmp_path: Path) -> None:
    result = assay.import_results("inspect", COST, tmp_path)
    france = next(t for t in result.imported.trials if t.case_id == "france")
    # model_usage: 15 input and 12 output tokens at $2 and $8 per million
    assert france.cost_usd == pytest.approx(15 * 2e-6 + 12 * 8e-6)
    assert france.usage is not None
    assert (france.usage.input_tokens, france.usage.output_tokens) == (15, 12)
    assert all(t.cost_usd is not None for t in result.imported.trials)
    # a sample that called two models (the answer and its grader) counts both; no price, no cost
    graded = assay.import_results("inspect", GRADED, tmp_path / "graded").imported.trials
    spain = next(t for t in graded if t.case_id == "spain")
    assert spain.usage is not None and spain.usage.input_tokens == 15 + 248
    assert spain.cost_usd is None


# -- promptfoo: errors are errored trials, promptfoo's verdict gates each case -------------


def test_promptfoo_errors_are_errored_trials_without_scores(cli: Any, tmp_path: Path) -> None:
    summary = import_(cli, tmp_path, "promptfoo", PROMPTFOO / "results-single.json")
    assert (summary["trials"], summary["errored"], summary["scores"]) == (10, 2, 8)
    assert {k[0] for k in errored(tmp_path)} == {"japan"}
    assert not errored(tmp_path) & scored(tmp_path)  # they had rows of pass 0, score 0
    assert summary["complete"] is True and summary["source_gate"] == "pass"
    source = load_suite(tmp_path / "suite.toml").source
    assert source is not None and (source.tool, source.complete) == ("promptfoo", True)


def test_a_test_promptfoo_failed_fails_its_case(cli: Any, tmp_path: Path) -> None:
    # promptfoo exits 100 on this run: 4 failed (tokyo and short, twice) and 2 errors (japan)
    out = tmp_path / "single"
    import_(cli, out, "promptfoo", PROMPTFOO / "results-single.json")
    assert load_suite(out / "suite.toml").scoring.thresholds["pass"].min == 1.0
    code, report = gate(cli, out)
    assert (code, report["verdict"]) == (3, "INCOMPLETE")  # the errors; the failures are listed
    checks = report["case_checks"]
    failing = {c["case_id"] for c in checks if c["check"] == "promptfoo" and not c["passed"]}
    assert failing == {"tokyo", "short"}
    junit = ET.parse(out / "report" / "report.junit.xml").getroot()
    failures = {
        case.get("classname")
        for case in junit.iter("testcase")
        if case.find("failure") is not None and case.get("classname") != "release_gate"
    }
    assert failures == {"tokyo", "short"}  # it had none: the suite had no threshold

    # with japan's errors tolerated: FAIL, exit 1, as promptfoo exits 100 for the failures
    with (out / "suite.toml").open("a", encoding="utf-8") as suite:
        suite.write("\n[gate]\nmax_errored = 1\n")
    code, report = gate(cli, out)
    assert (code, report["verdict"]) == (1, "FAIL")


def test_a_run_promptfoo_passed_passes(cli: Any, tmp_path: Path) -> None:
    import_(cli, tmp_path, "promptfoo", PROMPTFOO / "results-pass.json")  # promptfoo exits 0
    code, report = gate(cli, tmp_path)
    assert (code, report["verdict"]) == (0, "PASS")


def test_no_source_gate_leaves_promptfoo_verdict_out(cli: Any, tmp_path: Path) -> None:
    summary = import_(
        cli, tmp_path, "promptfoo", PROMPTFOO / "results-single.json", "--no-source-gate"
    )
    assert summary["source_gate"] is None
    assert load_suite(tmp_path / "suite.toml").scoring.thresholds == {}
    code, report = gate(cli, tmp_path)
    assert code == 3  # japan's errors still make it INCOMPLETE; no case fails
    assert not [c for c in report["case_checks"] if c["check"] == "promptfoo"]
    result = assay.import_results(
        "promptfoo", PROMPTFOO / "results-single.json", tmp_path / "api", source_gate=False
    )
    assert result.summary().source_gate is None


def test_a_provider_down_on_every_call_is_incomplete_not_a_regression(
    cli: Any, tmp_path: Path
) -> None:
    summary = import_(
        cli, tmp_path, "promptfoo", PROMPTFOO / "results-down.json",
        "--baseline", "baseline/prompt-1", "--candidate", "candidate/prompt-1",
    )  # fmt: skip
    assert summary["errored"] == 8
    assert not {k for k in scored(tmp_path) if k[2].startswith("candidate/")}
    code, report = gate(cli, tmp_path)
    assert (code, report["verdict"]) == (3, "INCOMPLETE")  # it was FAIL: a -1.0 regression
    assert report["coverage"]["errored"] == 4  # the gated condition: 2 cases x 2 trials
    compared = {c["condition"] for c in report["comparisons"]}
    assert "candidate/prompt-1" not in compared  # nothing to compare: it never answered
