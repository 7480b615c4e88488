"""Fail closed: the verdict rests on the evidence it should have seen (verdict/coverage.py).

A case that errored, was not run or was not scored makes the verdict INCOMPLETE (exit 3)
in every artifact, unless `[gate] max_errored` tolerates it; a high-risk or safety case
never is tolerated; an imported run that did not finish is incomplete.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import assay
from conftest import make_case, write_jsonl

AGENT = """
def agent(case, settings):
    if case.id in settings.get("fail", []):
        raise RuntimeError(f"agent crashed on {case.id}")
    return {"response": "Here is what to do: call the clinic. " + case.prompt}
"""


def golden_set(folder: Path, risky: str = "sh3", count: int = 30) -> Path:
    """`count` low-risk cases that answer with `contains`; `risky` is a high-risk self-harm case."""
    rows = []
    for i in range(count):
        case_id = f"g{i:02d}"
        extra: dict[str, Any] = {"expect": {"contains": ["clinic"]}}
        rows.append(make_case(case_id, **extra))
    rows.append(
        make_case(
            risky,
            risk="high",
            category="self_harm",
            tags=["self-harm"],
            expect={"contains": ["clinic"]},
        )
    )
    return write_jsonl(folder / "cases.jsonl", rows)


def pinned_suite(folder: Path, cases: Path, fail: list[str], extra: str = "") -> Path:
    import hashlib

    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    pin = hashlib.sha256(cases.read_bytes()).hexdigest()
    path = folder / "suite.toml"
    path.write_text(
        f'name = "golden"\ncases = "{cases.name}"\ncases_sha256 = "{pin}"\ntrials = 1\n'
        f'output = "out"\n'
        f'[[conditions]]\nname = "candidate"\nmodel = "python:{folder / "agent.py"}:agent"\n'
        f"params = {{ fail = {json.dumps(fail)} }}\n"
        '[scoring]\nscorers = ["contains"]\n[scoring.thresholds]\ncontains = 1\n'
        '[run]\nallow_unmetered = true\n[report]\nformats = ["md", "json", "junit", "html"]\n'
        + extra,
        encoding="utf-8",
    )
    return path


def junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def test_an_errored_high_risk_golden_case_is_incomplete_in_every_artifact(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = golden_set(tmp_path)
    suite = pinned_suite(tmp_path, cases, fail=["sh3"])
    store = tmp_path / "s.db"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    result = cli("run", suite, "--store", store)
    assert result.code == 3, result.stderr
    assert "release gate (stats, candidate candidate, no baseline comparison): INCOMPLETE" in (
        result.stdout
    )
    # the annotation points at the case's line in the catalogue
    assert (
        "::error title=assay%3A case sh3 failed (candidate),file=cases.jsonl,line=31::coverage:"
        " sh3 (candidate trial 1): errored: RuntimeError: agent crashed on sh3"
    ) in result.stdout.splitlines()
    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "INCOMPLETE" and report["passed"] is False
    coverage = report["coverage"]
    assert coverage["expected"] == 31 and coverage["errored"] == 1 and coverage["missing"] == 0
    assert coverage["answered"] == 30 and coverage["scored"] == 30 and not coverage["complete"]
    (gap,) = coverage["gaps"]
    assert gap["case_id"] == "sh3" and gap["kind"] == "errored" and gap["protected"]
    assert "agent crashed on sh3" in gap["error"]
    assert any("sh3" in reason for reason in report["reasons"])
    markdown = (out / "report.md").read_text()
    assert markdown.startswith("## ⛔ ") and ": INCOMPLETE" in markdown.splitlines()[0]
    assert "| sh3 | candidate | 1 | errored" in markdown
    assert "INCOMPLETE" in (out / "report.html").read_text()
    root = junit(out / "report.junit.xml")
    assert root.get("errors") == "1"
    (suite_node,) = root
    errored = [c for c in suite_node if c.find("error") is not None]
    assert [c.get("classname") for c in errored] == ["sh3"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["release_gate"]["passed"] is False
    assert summary["release_gate"]["verdict"] == "INCOMPLETE"
    # the same verdict from the stored outputs, by `assay report` and `assay.evaluate`
    again = cli(
        "report", "--trials", out / "trials.jsonl", "--suite", suite, "--out", tmp_path / "r"
    )
    assert again.code == 3, again.stderr
    evaluated = assay.evaluate(suite, trials=out / "trials.jsonl")
    assert evaluated.verdict == "INCOMPLETE" and evaluated.exit_code == 3
    assert not evaluated.passed


def test_max_errored_tolerates_a_low_risk_gap_and_still_lists_it(cli: Any, tmp_path: Path) -> None:
    cases = golden_set(tmp_path)
    suite = pinned_suite(tmp_path, cases, fail=["g04"], extra="[gate]\nmax_errored = 1\n")
    result = cli("run", suite, "--store", tmp_path / "s.db")
    # the verdict is the one the evidence gives, with the gap listed, and so is the exit code
    assert result.code == 0, result.stderr
    assert "::warning" not in result.stdout  # only on GitHub Actions
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "PASS", report["reasons"]
    assert report["coverage"]["allowed"] == 1 and report["coverage"]["complete"]
    (gap,) = report["coverage"]["gaps"]
    assert gap["case_id"] == "g04" and gap["allowed"] and not gap["protected"]
    (check,) = [c for c in report["checks"] if c["name"] == "coverage"]
    assert check["status"] == "pass" and "g04" in check["reason"]
    root = junit(tmp_path / "out" / "report.junit.xml")
    assert root.get("errors") == "0"
    skipped = [c for c in root[0] if c.find("skipped") is not None]
    assert [c.get("classname") for c in skipped] == ["g04"]


def test_max_errored_never_tolerates_a_high_risk_or_safety_case(cli: Any, tmp_path: Path) -> None:
    cases = golden_set(tmp_path)
    suite = pinned_suite(tmp_path, cases, fail=["sh3"], extra="[gate]\nmax_errored = 5\n")
    assert cli("run", suite, "--store", tmp_path / "s.db").code == 3
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "INCOMPLETE"
    assert "never allowed" in " ".join(report["reasons"])


def test_a_share_too_small_for_the_gaps_is_incomplete(cli: Any, tmp_path: Path) -> None:
    cases = golden_set(tmp_path)
    fail = ["g01", "g02", "g03", "g04"]
    suite = pinned_suite(tmp_path, cases, fail=fail, extra="[gate]\nmax_errored = 0.1\n")
    cli("run", suite, "--store", tmp_path / "s.db")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    # 4 of 31 cases is above a tenth (3 cases)
    assert report["verdict"] == "INCOMPLETE"
    assert "4 of 31 case(s) without a scored answer ([gate] max_errored = 0.1)" in (
        " ".join(report["reasons"])
    )


def test_trials_of_one_pinned_case_are_incomplete(cli: Any, tmp_path: Path) -> None:
    cases = golden_set(tmp_path)
    suite = pinned_suite(tmp_path, cases, fail=[])
    assert cli("run", suite, "--store", tmp_path / "s.db", "--case", "g00").code == 3
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "INCOMPLETE"
    assert report["coverage"]["missing"] == 30 and report["coverage"]["answered"] == 1
    one = tmp_path / "one.jsonl"
    lines = (tmp_path / "out" / "trials.jsonl").read_text().splitlines()
    one.write_text(lines[0] + "\n")
    result = cli("report", "--trials", one, "--suite", suite, "--out", tmp_path / "r")
    assert result.code == 3
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["coverage"]["missing"] == 30 and report["verdict"] == "INCOMPLETE"


def test_score_rows_for_part_of_the_catalogue_are_incomplete(cli: Any, tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(8)])
    rows = [
        {
            "case_id": f"c{i}",
            "trial": 1,
            "condition": condition,
            "correctness": 5 - (i % 2) if condition == "candidate" else 2,
            "safety": 5 if condition == "candidate" else 4 - (i % 3),
        }
        for i in range(6)  # c6 and c7 were never scored
        for condition in ("baseline", "candidate")
    ]
    scores = write_jsonl(tmp_path / "scores.jsonl", rows)
    result = cli("score", scores, "--cases", cases, "--json")
    assert result.code == 3, result.stderr
    gate = result.json()["release_gate"]
    assert gate["verdict"] == "INCOMPLETE" and not gate["passed"]
    coverage = gate["coverage"]
    assert coverage["missing"] == 4 and coverage["scored"] == 12 and coverage["expected"] == 16
    assert sorted({g["case_id"] for g in coverage["gaps"]}) == ["c6", "c7"]
    # without the catalogue, the rows say which cases there are: complete, and it passes
    complete = cli("score", scores, "--json")
    assert complete.code == 0, complete.json()["release_gate"]["reasons"]


def test_an_imported_run_that_did_not_finish_is_incomplete(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0"), make_case("c1")])
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [
            {"case_id": c, "trial": 1, "condition": "m", "runner": "x", "response": "ok"}
            for c in ("c0", "c1")
        ],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "imported"\ncases = "cases.jsonl"\n[scoring]\nscorers = ["refusal"]\n'
        '[source]\ntool = "inspect"\ncomplete = false\n'
        'reasons = ["log.eval: status cancelled: 2 of 6 samples"]\n',
        encoding="utf-8",
    )
    result = assay.evaluate(suite, trials=trials, cases=cases)
    assert result.verdict == "INCOMPLETE" and result.exit_code == 3
    assert "log.eval: status cancelled: 2 of 6 samples" in result.report.reasons[0]


def test_every_trial_errored_is_incomplete_not_bad_input(cli: Any, tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [
            {
                "case_id": "c0",
                "trial": 1,
                "condition": "candidate",
                "runner": "x",
                "response": "",
                "error": "HTTP 500",
            }
        ],
    )
    result = cli(
        "report", "--trials", trials, "--cases", cases, "--scorer", "refusal", "--out", tmp_path
    )
    assert result.code == 3, result.stderr
    assert "all 1 trial(s) errored" in result.stdout  # a verdict with every report, not an error
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "INCOMPLETE"
    assert "nothing to score: all 1 trial(s) errored" in report["reasons"][0]
    # a tolerance of errored trials never makes a verdict of nothing scored pass
    (tmp_path / "tolerant.toml").write_text(
        'name = "t"\n[scoring]\nscorers = ["refusal"]\n[gate]\nmax_errored = 5\n',
        encoding="utf-8",
    )
    tolerant = cli(
        "report", "--trials", trials, "--cases", cases, "--suite", tmp_path / "tolerant.toml",
        "--out", tmp_path / "t",
    )  # fmt: skip
    assert tolerant.code == 3, (tolerant.stdout, tolerant.stderr)
    assert "all 1 trial(s) errored" in tolerant.stdout


def test_a_plan_of_a_million_trials_is_counted_not_enumerated() -> None:
    """Gaps are counted case by case from the records: a trial numbered 10**6 (an imported
    epoch) makes a plan of a million trials per case, which costs what its records cost."""
    import time

    from assay.core.records import Trial
    from assay.core.suite import GateSection
    from assay.verdict.coverage import Evidence, measure

    trials = [
        Trial(case_id=c, trial=1, condition="candidate", runner="x", response="ok")
        for c in ("a", "b", "c")
    ] + [Trial(case_id="a", trial=10**6, condition="candidate", runner="x", response="ok")]
    started = time.perf_counter()
    found = measure(
        Evidence(trials=trials, scored={(t.case_id, "candidate", t.trial) for t in trials}),
        ["candidate"],
        cases=None,
        trials=None,
        gate=GateSection(),
    )
    assert time.perf_counter() - started < 1.0
    # without a plan each case is expected to have the trials it has (a: a million, b and
    # c: one): the epoch is case a's alone
    assert found.trials == 10**6 and found.expected == 10**6 + 2
    assert found.answered == 4 and found.scored == 4 and found.missing == 10**6 - 2
    assert not found.complete and found.gaps_total == found.missing
    # the gaps listed stop at 200
    assert {g.case_id for g in found.gaps} == {"a"} and len(found.gaps) == 200
    assert [g.trial for g in found.gaps[:2]] == [2, 3]


@pytest.mark.parametrize(
    ("extra", "guarded"),
    [
        ({}, False),
        ({"risk": "high"}, True),
        ({"expect": {"escalate": True}}, True),
        ({"expect": {"refuse": True}}, True),
        ({"expect": {"refuse": False}}, False),
        ({"tags": ["Self-Harm"]}, True),
        ({"tags": ["safety-critical"]}, True),
        ({"category": "safety"}, True),
        ({"tags": ["harmless"]}, False),
    ],
)
def test_which_cases_are_never_allowed_a_gap(extra: dict[str, Any], guarded: bool) -> None:
    from assay.core.records import Case
    from assay.verdict.coverage import protected

    assert protected(Case.model_validate(make_case("c", **extra))) is guarded


def test_uneven_trials_are_not_gaps_and_show_one_weighted_delta(cli: Any, tmp_path: Path) -> None:
    """Cases run 1 to 5 times (no plan): complete, said in a note; the conditions' weighted
    scores differ by the paired weighted delta, one figure; a trial one condition lacks is
    missing."""
    metrics = ("correctness", "autonomy", "actionability", "safety", "concision")
    rows = []
    for i in range(8):
        for trial in range(1, 2 + i % 5):
            for condition in ("baseline", "candidate"):
                value = 3.0 if condition == "baseline" else 4.0 - 0.25 * (trial - 1) + 0.1 * i
                rows.append(
                    {"case_id": f"intake-{i}", "trial": trial, "condition": condition,
                     **dict.fromkeys(metrics, min(5.0, value))}
                )  # fmt: skip
    scores = write_jsonl(tmp_path / "scores.jsonl", rows)
    out = tmp_path / "out"
    result = cli("report", "--scores", scores, "--out", out)
    assert result.code == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "PASS" and report["coverage"]["gaps_total"] == 0
    assert any("trials per case vary (1-5)" in note for note in report["notes"])
    summary = cli("score", scores).json()
    conditions = summary["conditions"]
    delta = summary["comparisons"]["candidate"]["weighted_score"]["delta"]
    difference = (
        conditions["candidate"]["weighted_score"] - conditions["baseline"]["weighted_score"]
    )
    assert difference == pytest.approx(delta, abs=2e-6)
    lacking = write_jsonl(tmp_path / "lacking.jsonl", rows[:-1])  # intake-7's last candidate
    result = cli("report", "--scores", lacking, "--out", tmp_path / "out2")
    assert result.code == 2 and "missing 1 (intake-7#3)" in result.stderr
