"""Pairwise judging applies the case's deterministic expectations first.

A response that fails the case's `expect` (JSON Schema, contains, regex, refusal, ...) loses
to one that meets it without a judge call, recorded in the Comparison (`expectations`, tier
`rule`); both failing or both passing go to the judge; `--no-expectations-first` (`[judge]
expectations_first = false`, `expectations_first=False`) asks the judge about every pair.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import InputError
from assay.core.records import Case, Comparison, Expect, Trial
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.measure.bias import audit
from assay.scorers import ScoreContext
from assay.scorers.expectations import Expectations
from assay.scorers.judge import Cascade, JudgeConfig, PairJudge
from assay.scorers.judge.ask import JudgeSetup
from assay.scorers.judge.config import build_judge_models, fingerprint
from assay.scorers.judge.labels import pairwise_labels
from assay.store import Store
from conftest import make_case, write_jsonl

SCHEMA = {
    "type": "object",
    "required": ["id", "total"],
    "properties": {"id": {"type": "string"}, "total": {"type": "number"}},
}
REFERENCE = '{"id": "A17", "total": 42.5}'
VALID = '{"id": "B9", "total": 0}'  # meets the schema, far from the reference
BROKEN = '{"id": "A17", "total": 42.5'  # close to the reference, but not JSON
WRONG = '{"id": "A17", "total": "42.5"}'  # JSON, but total is a string


def trial(condition: str, response: str, case_id: str = "order", **extra: Any) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "trial": 1,
        "condition": condition,
        "runner": "mock",
        "response": response,
        **extra,
    }


def order_case(**expect: Any) -> dict[str, Any]:
    return make_case(
        "order",
        prompt="Return the order as JSON with its id and total.",
        reference=REFERENCE,
        expect=expect or {"json_schema": SCHEMA},
    )


def files(tmp_path: Path, baseline: str, candidate: str, **expect: Any) -> dict[str, Path]:
    return {
        "cases": write_jsonl(tmp_path / "cases.jsonl", [order_case(**expect)]),
        "trials": write_jsonl(
            tmp_path / "trials.jsonl", [trial("baseline", baseline), trial("candidate", candidate)]
        ),
        "out": tmp_path / "out.jsonl",
        "store": tmp_path / "s.db",
    }


def judge(cli: Any, paths: dict[str, Path], *args: str | Path) -> Any:
    return cli(
        "judge", "--trials", paths["trials"], "--cases", paths["cases"], "--output",
        paths["out"], "--store", paths["store"], "--mode", "pairwise", "--json", *args,
    )  # fmt: skip


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- the CLI --------------------------------------------------------------------------------


def test_invalid_json_loses_to_valid_json_without_a_judge_call(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    paths = files(tmp_path, VALID, BROKEN)
    server = mock_server(judge_reply="schema")
    labels = tmp_path / "labels.jsonl"
    result = judge(
        cli, paths, "--judge", "openai:gpt-4o-mini", "--base-url", server.url,
        "--allow-unmetered", "--labels", labels,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["calls"] == 0 and server.stats()["requests"] == 0
    assert summary["by_expectations"] == 1 and summary["judged"] == summary["items"] == 1
    assert summary["tiers"] == {"rule": 1}
    (row,) = rows(paths["out"])
    comparison = Comparison.model_validate(row)
    assert comparison.verdict == "a" and comparison.preference == 0.0
    assert comparison.expectations == {"a": [], "b": ["json_schema"]}
    assert comparison.passes == [] and comparison.by_rule
    assert row["tier"] == "rule" and row["judge_model"] == "openai:gpt-4o-mini"
    assert labels.read_text() == ""  # the judge decided nothing: nothing to calibrate


def test_the_text_summary_says_what_the_expectations_decided(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, BROKEN, VALID)
    result = cli(
        "judge", "--trials", paths["trials"], "--cases", paths["cases"], "--output",
        paths["out"], "--store", paths["store"], "--mode", "pairwise", "--judge", "mock:fair",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert "decided by the case's expectations" in result.stdout
    assert "without a judge call: 1" in result.stdout
    (row,) = rows(paths["out"])
    assert row["verdict"] == "b" and row["expectations"] == {"a": ["json_schema"], "b": []}


def test_without_expectations_first_the_judge_decides(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, VALID, BROKEN)
    result = judge(cli, paths, "--judge", "mock:fair", "--no-expectations-first")
    assert result.code == 0, result.stderr
    assert result.json()["calls"] == 2 and result.json()["by_expectations"] == 0
    (row,) = rows(paths["out"])
    assert row["verdict"] == "b"  # the judge prefers the broken answer close to the reference
    assert row["tier"] == "judge" and "expectations" not in row


def test_both_failing_goes_to_the_judge(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, WRONG, BROKEN)
    result = judge(cli, paths, "--judge", "mock:fair")
    assert result.code == 0, result.stderr
    assert result.json()["calls"] == 2 and result.json()["by_expectations"] == 0
    (row,) = rows(paths["out"])
    assert row["tier"] == "judge" and "expectations" not in row


def test_both_passing_goes_to_the_judge(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, VALID, REFERENCE)
    result = judge(cli, paths, "--judge", "mock:fair")
    assert result.json()["calls"] == 2
    assert rows(paths["out"])[0]["verdict"] == "b"


def test_required_strings_decide_too(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, "Refunds take 30 days.", "Refunds are quick.", contains=["30 days"])
    result = judge(cli, paths, "--judge", "mock:fair")
    assert result.json()["calls"] == 0
    assert rows(paths["out"])[0]["expectations"] == {"a": [], "b": ["contains"]}


def test_the_cascade_applies_the_expectations_before_the_screen(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, VALID, BROKEN)
    result = judge(cli, paths, "--judge", "mock:fair", "--screen", "mock:fair")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["calls"] == 0 and summary["tiers"] == {"rule": 1}
    assert summary["cascade"]["screen_calls"] == 0


def test_no_expectations_first_is_refused_in_direct_mode(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, VALID, BROKEN)
    result = cli(
        "judge", "--trials", paths["trials"], "--cases", paths["cases"], "--output",
        paths["out"], "--store", paths["store"], "--judge", "mock:fair",
        "--no-expectations-first",
    )  # fmt: skip
    assert result.code == 2
    assert "--no-expectations-first" in result.stderr and "pairwise" in result.stderr
    assert not paths["out"].exists()


def test_an_invalid_schema_in_a_case_is_bad_input_before_any_call(cli: Any, tmp_path: Path) -> None:
    paths = files(tmp_path, VALID, BROKEN, json_schema={"type": "no-such-type"})
    result = judge(cli, paths, "--judge", "mock:fair")
    assert result.code == 2, result.stdout
    # refused as the catalogue is read, naming file, line and field
    assert f"{paths['cases']}:1: expect.json_schema: " in result.stderr
    assert "invalid JSON Schema" in result.stderr
    assert "Traceback" not in result.stderr and not paths["out"].exists()


# -- resuming stored judgments --------------------------------------------------------------


def test_the_option_is_not_part_of_the_judgment_key() -> None:
    """Judgments stored before the option existed (or with it off) keep their keys."""
    config = JudgeConfig(judges=["mock:fair"], mode="pairwise")
    off = JudgeConfig(judges=["mock:fair"], mode="pairwise", expectations_first=False)
    setup = JudgeSetup.from_config(config)
    models = build_judge_models(config)
    assert fingerprint(config, setup.criteria, setup.scale, models) == fingerprint(
        off, setup.criteria, setup.scale, models
    )


def test_judgments_stored_with_the_option_off_resume_with_zero_calls(
    cli: Any, tmp_path: Path
) -> None:
    cases = [order_case(), make_case("plain", reference="Paris.")]
    trials = [
        trial("baseline", VALID), trial("candidate", BROKEN),
        trial("baseline", "Lyon.", "plain"), trial("candidate", "Paris.", "plain"),
    ]  # fmt: skip
    paths = {
        "cases": write_jsonl(tmp_path / "cases.jsonl", cases),
        "trials": write_jsonl(tmp_path / "trials.jsonl", trials),
        "out": tmp_path / "out.jsonl",
        "store": tmp_path / "s.db",
    }
    first = judge(cli, paths, "--judge", "mock:fair", "--no-expectations-first").json()
    assert first["calls"] == 4 and first["resumed"] == 0
    default = judge(cli, paths, "--judge", "mock:fair").json()
    assert default["calls"] == 0 and default["by_expectations"] == 1 and default["resumed"] == 1
    assert [r["tier"] for r in rows(paths["out"])] == ["rule", "judge"]
    again = judge(cli, paths, "--judge", "mock:fair", "--no-expectations-first").json()
    assert again["calls"] == 0 and again["resumed"] == 2
    assert [r["verdict"] for r in rows(paths["out"])] == ["b", "b"]  # the judge's, kept


V0 = Path(__file__).parent / "fixtures" / "store-v0"  # written by assay before this option


def test_a_store_judged_by_an_earlier_assay_resumes_with_zero_calls(
    cli: Any, tmp_path: Path, v0_judge_templates: None
) -> None:
    """The fixture store holds pairwise judgments of run 748d58cfaa2b's 4 pairs; with an
    expectation the candidate misses on the refund case, the 2 refund pairs are decided by
    it and the 2 outage pairs resume, all without a call."""
    store = tmp_path / "s.db"
    store.write_bytes(gzip.decompress((V0 / "store-v0.db.gz").read_bytes()))
    cases = [json.loads(line) for line in (V0 / "cases.jsonl").read_text().splitlines()]
    cases[0]["expect"] = {"contains": ["refund"]}  # the candidate's mock answers lack it
    cases_file = write_jsonl(tmp_path / "cases.jsonl", cases)

    def rejudge(*flags: str) -> dict[str, Any]:
        result = cli(
            "judge", "--run", "748d58cfaa2b", "--cases", cases_file, "--judge", "mock:fair",
            "--mode", "pairwise", "--allow-unmetered", "--store", store, "--output",
            tmp_path / "out.jsonl", "--json", *flags,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        return dict(result.json())

    ruled = rejudge()
    assert ruled["calls"] == 0 and ruled["by_expectations"] == 2 and ruled["resumed"] == 2
    judged = rejudge("--no-expectations-first")
    assert judged["calls"] == 0 and judged["resumed"] == 4


# -- a suite and the Python API -------------------------------------------------------------


def suite_file(tmp_path: Path, server: Any, extra: str = "") -> Path:
    case = make_case("order", prompt=REFERENCE, reference=REFERENCE, expect={"json_schema": SCHEMA})
    write_jsonl(tmp_path / "cases.jsonl", [case])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "s"\ncases = "cases.jsonl"\ntrials = 2\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:echo"\n'  # echoes the JSON prompt
        '[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'  # prose: not JSON
        f'[judge]\njudges = ["openai:gpt-4o-mini"]\nmode = "pairwise"\nbase_url = "{server.url}"\n'
        f"allow_unmetered = true\n{extra}"
        '[[scoring.scorers]]\nname = "json_schema"\n',
        encoding="utf-8",
    )
    return suite


@pytest.mark.parametrize(("extra", "requests"), [("", 0), ("expectations_first = false\n", 4)])
def test_a_suite_applies_the_expectations_unless_told_not_to(
    cli: Any, tmp_path: Path, mock_server: Any, extra: str, requests: int
) -> None:
    server = mock_server(judge_reply="schema")
    suite = suite_file(tmp_path, server, extra)
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code in (0, 1), result.stdout + result.stderr
    assert server.stats()["requests"] == requests
    written = rows(tmp_path / "out" / "comparisons.jsonl")
    assert len(written) == 2
    if requests == 0:
        assert all(r["verdict"] == "a" and r["tier"] == "rule" for r in written)
        assert all(r["expectations"] == {"a": [], "b": ["json_schema"]} for r in written)
        report = json.loads((tmp_path / "out" / "report.json").read_text())
        (detail,) = report["drilldown"]
        assert {v["judge"] for v in detail["verdicts"]} == {"rule: the case's expectations"}
    else:
        assert all(r.get("expectations") is None and r["tier"] != "rule" for r in written)


def test_a_suite_with_a_bad_expectations_first_is_refused(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    suite = suite_file(tmp_path, mock_server(), 'expectations_first = "maybe"\n')
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code == 2 and "expectations_first" in result.stderr


def test_the_python_api_takes_the_option(tmp_path: Path) -> None:
    cases = [Case.model_validate(order_case())]
    trials = [Trial.model_validate(trial("baseline", VALID)), Trial.model_validate(trial("candidate", BROKEN))]  # fmt: skip
    store = tmp_path / "s.db"
    ruled = assay.judge(trials, judges=["mock:fair"], cases=cases, store=store, mode="pairwise")
    assert ruled.calls == 0 and ruled.by_expectations == 1
    assert ruled.comparisons[0].comparison().expectations == {"a": [], "b": ["json_schema"]}
    judged = assay.judge(
        trials, judges=["mock:fair"], cases=cases, store=store, mode="pairwise",
        expectations_first=False,
    )  # fmt: skip
    assert judged.calls == 2 and judged.rows[0]["verdict"] == "b"


# -- the scorer, the checks, and what reads the comparisons ---------------------------------


@pytest.fixture
def caller(tmp_path: Path) -> Any:
    store = Store(tmp_path / "c.db")
    yield Caller(store, Budget(None), concurrency=4)
    store.close()


def test_the_pair_judge_scorer_applies_them_itself(caller: Caller) -> None:
    setup = JudgeSetup.from_config(JudgeConfig(judges=["mock:fair"], mode="pairwise"))
    case = Case.model_validate(order_case())
    pair = (Trial.model_validate(trial("baseline", VALID)), Trial.model_validate(trial("candidate", BROKEN)))  # fmt: skip
    for scorer in (PairJudge(setup), Cascade(setup, PairJudge(setup), "mock:fair")):
        result = asyncio.run(scorer.score(ScoreContext.of(case, *pair, caller=caller)))
        assert result.row["verdict"] == "a" and result.row["tier"] == "rule"  # type: ignore[union-attr]
    assert caller.calls == 0


def test_expectations_name_each_missed_check() -> None:
    checks = Expectations()
    case = Case.model_validate(
        make_case(
            "x",
            expect={"contains": ["refund"], "not_contains": ["sorry"], "regex": r"\d+ days",
                    "refuse": False},
        )
    )  # fmt: skip
    good = Trial.model_validate(trial("c", "Your refund arrives in 5 days.", "x"))
    bad = Trial.model_validate(trial("c", "sorry, no refund", "x", state={"kind": "refusal"}))
    assert checks.failed(case, good) == []
    assert checks.failed(case, bad) == ["not_contains", "regex", "refusal_correct"]
    assert checks.failed(Case.model_validate(make_case("y")), bad) == []


def test_a_bias_audit_leaves_out_what_a_rule_decided() -> None:
    """A rule that always sides with the longer response says nothing about the judge."""
    ruled = [
        Comparison.model_validate(
            {"case_id": f"c{i}", "a": "x", "b": "y", "judge": "j", "verdict": "b", "len_a": 5,
             "len_b": 50, "expectations": {"a": ["json_schema"], "b": []}, "tier": "rule"}
        )
        for i in range(30)
    ]  # fmt: skip
    judged = [
        Comparison.model_validate(
            {"case_id": f"d{i}", "a": "x", "b": "y", "judge": "j", "verdict": "ab"[i % 2],
             "len_a": 5, "len_b": 50}
        )
        for i in range(10)
    ]  # fmt: skip
    report = audit([*ruled, *judged])["j"]
    assert report["comparisons"] == 10 and report["length_decided_comparisons"] == 10
    assert report["p_prefer_longer"] == 0.5 and report["length_preference_flagged"] is False


def test_labels_skip_verdicts_of_the_expectations() -> None:
    row = {"case_id": "c", "trial": 1, "a": "x", "b": "y", "judge": "j", "verdict": "a"}
    labels = pairwise_labels([row, {**row, "case_id": "d", "expectations": {"a": [], "b": ["x"]}}])
    assert [label.item_id for label in labels] == ["c:1:x|y"]


def test_an_unusable_expectation_is_bad_input_naming_the_case() -> None:
    with pytest.raises(ValueError, match=r"expect\.regex"):  # refused as the case is read
        Case.model_validate(make_case("z", expect={"regex": "("}))
    # one that reached scoring unchecked (built without validation) names the case
    case = Case.model_validate(make_case("z"))
    case.expect = Expect.model_construct(regex="(")
    with pytest.raises(InputError, match=r"case z: expect\.regex"):
        Expectations().failed(case, Trial.model_validate(trial("c", "text", "z")))
