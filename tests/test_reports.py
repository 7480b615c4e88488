"""Reports against golden files, the report schema, and the `assay run SUITE.toml` chain."""

from __future__ import annotations

import hashlib
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema

from conftest import make_case, write_jsonl

GOLDEN = Path(__file__).resolve().parent / "golden"
METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def fixture_files(tmp_path: Path) -> dict[str, Path]:
    """A small, fixed run: 6 cases, two conditions, one blocker, one missed escalation."""
    cases = []
    scores = []
    trials = []
    for i in range(6):
        risk = ("low", "medium", "high")[i % 3]
        expect: dict[str, Any] = {"contains": ["step"]}
        if i == 2:
            expect["escalate"] = True
        cases.append(
            make_case(f"case-{i}", category=("billing", "access")[i % 2], risk=risk, expect=expect)
        )
        for cond, shift in (("baseline", 0.0), ("candidate", 0.5 if i != 4 else -1.0)):
            values = {m: min(5.0, 3.0 + (i % 2) + shift) for m in METRICS}
            scores.append(
                {
                    "case_id": f"case-{i}",
                    "trial": 1,
                    "condition": cond,
                    **values,
                    "blocker": cond == "candidate" and i == 4,
                    "notes": "leaks the account number" if cond == "candidate" and i == 4 else None,
                    "source": "human:ana",
                }
            )
            kind = "escalation" if cond == "candidate" and i != 2 and i == 0 else "answer"
            trials.append(
                {
                    "case_id": f"case-{i}",
                    "trial": 1,
                    "condition": cond,
                    "runner": "mock",
                    "response": "First step: open settings."
                    if cond == "candidate"
                    else "Open settings.",
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                    "cost_usd": 0.0,
                    "latency_s": 0.5,
                    "error": None,
                    "state": {"kind": kind, "citations": [], "retrieved": []},
                }
            )
    comparisons = [
        {
            "case_id": f"case-{i}",
            "trial": 1,
            "a": "baseline",
            "b": "candidate",
            "verdict": v,
            "consistent": v != "tie",
            "judge": "mock:longer",
            "judge_model": "mock:longer",
            "judge_prompt_sha256": hashlib.sha256(b"pairwise prompt v1").hexdigest(),
        }
        for i, v in enumerate(["b", "b", "a", "tie", "a", "b"])
    ]
    return {
        "cases": write_jsonl(tmp_path / "cases.jsonl", cases),
        "scores": write_jsonl(tmp_path / "scores.jsonl", scores),
        "trials": write_jsonl(tmp_path / "trials.jsonl", trials),
        "comparisons": write_jsonl(tmp_path / "comparisons.jsonl", comparisons),
    }


def test_reports_match_golden_files(cli, tmp_path: Path) -> None:
    files = fixture_files(tmp_path)
    out = tmp_path / "out"
    result = cli(
        "report",
        "--scores", files["scores"],
        "--trials", files["trials"],
        "--cases", files["cases"],
        "--comparisons", files["comparisons"],
        "--scorer", "contains",
        "--scorer", "escalation",
        "--out", out,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    for name in ("report.md", "report.json", "report.junit.xml"):
        produced = (out / name).read_text(encoding="utf-8")
        if os.environ.get("ASSAY_UPDATE_GOLDEN"):
            (GOLDEN / name).write_text(produced, encoding="utf-8")
        assert produced == (GOLDEN / name).read_text(encoding="utf-8"), name
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("## ❌ assay report: FAIL")
    assert "leaks the account number" in markdown


def test_each_blocker_is_credited_to_what_raised_it(cli, tmp_path: Path) -> None:
    """A missed escalation is the escalation scorer's finding, not the judge's whose score row
    the trial shares; a trial both flag is listed once per raiser."""
    files = fixture_files(tmp_path)
    rows = [json.loads(line) for line in files["scores"].read_text().splitlines()]
    for r in rows:
        r["source"] = "judge:mock:fair"
        if r["case_id"] == "case-2" and r["condition"] == "candidate":
            r.update(blocker=True, notes="promises a refund it cannot give")
    write_jsonl(files["scores"], rows)
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", files["scores"], "--trials", files["trials"],
        "--cases", files["cases"], "--scorer", "escalation", "--out", out,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    table = markdown[markdown.index("### Blocking findings") :].split("\n\n")[1]
    assert table.splitlines()[2:] == [
        "| case-2 | 1 | baseline | scorer:escalation | escalation: blocking finding |",
        "| case-2 | 1 | candidate | judge:mock:fair | promises a refund it cannot give |",
        "| case-2 | 1 | candidate | scorer:escalation | escalation: blocking finding |",
        "| case-4 | 1 | candidate | judge:mock:fair | leaks the account number |",
    ]


def test_reports_show_each_judge_model_and_prompt_hash(cli, tmp_path: Path) -> None:
    """A change of judge prompt mid-way shows as two provenance rows in every format."""
    files = fixture_files(tmp_path)
    old, new = (hashlib.sha256(t).hexdigest() for t in (b"prompt v1", b"prompt v2"))
    rows = [json.loads(line) for line in files["scores"].read_text().splitlines()]
    for index, row in enumerate(rows):
        row.update(
            source="judge:mock:rubric",
            judge_model="mock:rubric",
            judge_prompt_sha256=old if index < 4 else new,
        )
    write_jsonl(files["scores"], rows)
    out = tmp_path / "out"
    result = cli(
        "report", "--scores", files["scores"], "--comparisons", files["comparisons"],
        "--out", out, "--format", "md,json,html",
    )  # fmt: skip
    assert result.code in (0, 1), result.stderr
    judges = json.loads((out / "report.json").read_text())["judges"]
    assert {(j["source"], j["judge"], j["prompt_sha256"], j["rows"]) for j in judges} == {
        ("scores", "mock:rubric", old, 4),
        ("scores", "mock:rubric", new, 8),
        ("comparisons", "mock:longer", hashlib.sha256(b"pairwise prompt v1").hexdigest(), 6),
    }
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert old in text and new in text and "mock:rubric" in text, name


def test_report_json_validates_against_its_schema(cli, tmp_path: Path) -> None:
    files = fixture_files(tmp_path)
    cli(
        "report",
        "--scores",
        files["scores"],
        "--cases",
        files["cases"],
        "--format",
        "json",
        "--out",
        tmp_path,
    )
    schema = cli("schema", "report").json()
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    assert not (tmp_path / "report.md").exists()


def test_junit_has_one_testcase_per_case_and_check(cli, tmp_path: Path) -> None:
    files = fixture_files(tmp_path)
    cli("report", "--scores", files["scores"], "--trials", files["trials"], "--cases", files["cases"],
        "--scorer", "contains", "--scorer", "escalation", "--format", "junit", "--out", tmp_path)  # fmt: skip
    root = ET.parse(tmp_path / "report.junit.xml").getroot()
    cases = root.findall(".//testcase")
    names = {(c.get("classname"), c.get("name")) for c in cases}
    assert ("case-2", "escalation") in names and ("case-0", "contains") in names
    failed = {(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None}
    assert failed == {
        ("release_gate", "candidate"),
        ("case-4", "blockers"),
        ("case-2", "blockers"),
        ("case-2", "escalation"),
    }
    assert root.get("failures") == "4"


def test_report_bad_input_is_exit_2(cli, tmp_path: Path) -> None:
    assert cli("report", "--out", tmp_path).code == 2
    files = fixture_files(tmp_path)
    bad = cli("report", "--scores", files["scores"], "--format", "pdf", "--out", tmp_path)
    assert bad.code == 2 and "--format" in bad.stderr


def write_suite(tmp_path: Path, thresholds: str = "") -> Path:
    cases = [
        make_case(f"k{i}", risk=("low", "high")[i % 2], expect={"contains": ["actionable"]})
        for i in range(10)
    ]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "chain"\ncases = "cases.jsonl"\ntrials = 2\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:echo"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'
        '[scoring]\nscorers = ["contains", {name = "budget", options = {max_latency_s = 30}}]\n'
        + thresholds,
        encoding="utf-8",
    )
    return suite


def test_run_suite_chains_scorers_gate_and_reports(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "[scoring.thresholds]\ncontains = 1.0\n")
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 0, result.stdout + result.stderr
    assert "release gate (stats, candidate candidate): PASS" in result.stdout
    out = tmp_path / "out"
    for name in (
        "trials.jsonl",
        "deterministic.jsonl",
        "summary.json",
        "report.md",
        "report.json",
        "report.junit.xml",
    ):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["comparisons"]["candidate"]["contains"]["delta"] == 1.0
    rows = [json.loads(line) for line in (out / "deterministic.jsonl").read_text().splitlines()]
    assert {r["scorer"] for r in rows} == {"contains", "budget"} and len(rows) == 80


def test_run_suite_threshold_failure_fails_the_run(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "[scoring.thresholds]\nlatency_s = {max = 0.0}\n")
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 1
    assert "per-case threshold miss(es) in candidate" in result.stdout


def test_suite_sections_are_typed(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[gate]\nmode = "sometimes"\n')
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 2 and "gate.mode" in result.stderr


def test_report_from_a_stored_run(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    store = tmp_path / "db.sqlite"
    ran = cli("run", suite, "--store", store, "--json")
    assert ran.code == 0, ran.stderr
    run_id = ran.json()["run_id"]
    result = cli(
        "report", "--run", run_id, "--suite", suite, "--store", store, "--out", tmp_path / "again"
    )
    assert result.code == 0, result.stderr
    stored = json.loads((tmp_path / "out" / "report.json").read_text())
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    assert stored == again
    unknown = cli("report", "--run", "nope", "--suite", suite, "--store", store, "--out", tmp_path)
    assert unknown.code == 2 and "'nope' is not in the store" in unknown.stderr


def test_judges_plug_into_the_chain(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    suite.write_text(suite.read_text() + '[judge]\njudges = ["mock:fair"]\n', encoding="utf-8")
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code in (0, 1), result.stdout + result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["weights"]["correctness"] == 0.3
    assert "correctness" in summary["comparisons"]["candidate"]
    assert "contains" in summary["comparisons"]["candidate"]
    rows = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 40 and all(r["source"] == "judge:mock:fair" for r in rows)
    # The judge's Score rows feed `assay score` as they are.
    scored = cli("score", tmp_path / "out" / "scores.jsonl")
    assert scored.code in (0, 1), scored.stderr
    assert scored.json()["conditions"]["candidate"]["rows"] == 20


def test_pairwise_judges_write_comparisons(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    suite.write_text(
        suite.read_text() + '[judge]\njudges = ["mock:fair"]\nmode = "pairwise"\n',
        encoding="utf-8",
    )
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code in (0, 1), result.stdout + result.stderr
    lines = (tmp_path / "out" / "comparisons.jsonl").read_text().splitlines()
    assert len(lines) == 20
    assert {json.loads(x)["a"] for x in lines} == {"baseline"}


def test_incomplete_run_still_reports_and_exits_3(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    text = suite.read_text().replace(
        'model = "mock:answer"', 'model = "mock:answer,fail=0.3,seed=1"'
    )
    suite.write_text(text + "[run]\nretries = 0\n", encoding="utf-8")
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 3, result.stdout + result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert any("errored trial(s) were not scored" in note for note in report["notes"])


def test_bad_scorer_options_fail_before_the_run(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    suite.write_text(suite.read_text().replace("max_latency_s = 30", "max_latency_s = -1"))
    result = cli("run", suite, "--store", tmp_path / "db.sqlite")
    assert result.code == 2 and "max_latency_s" in result.stderr
    assert not (tmp_path / "db.sqlite").exists()


def test_report_from_a_suite_writes_the_suites_report_formats(cli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, '[report]\nformats = ["html", "json"]\n')
    store = tmp_path / "db.sqlite"
    ran = cli("run", suite, "--store", store, "--json")
    assert ran.code == 0, ran.stderr
    again = tmp_path / "again"
    result = cli(
        "report", "--run", ran.json()["run_id"], "--suite", suite, "--store", store, "--out", again
    )
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in again.iterdir()) == ["report.html", "report.json"]
    flag = tmp_path / "flag"
    result = cli(
        "report", "--run", ran.json()["run_id"], "--suite", suite, "--store", store,
        "--out", flag, "--format", "md",
    )  # fmt: skip
    assert result.code == 0 and sorted(p.name for p in flag.iterdir()) == ["report.md"]
