"""What `assay.evaluate` gives, read as people read it: each case × condition
(`result.cases`, `failed_cases`), the metric on every delta, `to_dict()`/`to_json()`; a
suite's condition parameters (`params`); `judge(**settings)` typed and checked; and what
mypy sees of it all in a user's script."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import assay
from assay.core.errors import InputError
from conftest import contains_case, contains_suite, write_jsonl


def _suite(tmp_path: Path, extra: str = "") -> Path:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [contains_case("ok", "actionable"), contains_case("zebra", "giraffe")],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(contains_suite("results") + extra, encoding="utf-8")
    return suite


def test_cases_hold_each_case_and_condition_and_failed_cases_the_gated_misses(
    tmp_path: Path,
) -> None:
    suite = _suite(tmp_path, '\n[judge]\njudges = ["mock:fair"]\n')
    result = assay.evaluate(suite, store=tmp_path / "s.db", out=tmp_path / "out")
    assert [(c.case_id, c.condition, c.passed) for c in result.cases] == [
        ("ok", "baseline", False),  # mock:echo repeats the question: no "actionable"
        ("zebra", "baseline", False),
        ("ok", "candidate", True),
        ("zebra", "candidate", False),
    ]
    [zebra] = result.failed_cases
    assert (zebra.case_id, zebra.condition, zebra.gated, zebra.errored) == (
        "zebra",
        "candidate",
        True,
        False,
    )
    assert zebra.response is not None and "Question zebra?" in zebra.response
    assert zebra.responses == [zebra.response]
    assert zebra.expect is not None and zebra.expect.contains == ["giraffe"]
    [check] = zebra.checks
    assert (check.metric, check.source, check.value, check.min, check.passed) == (
        "contains",
        "contains",
        0.0,
        1.0,
        False,
    )
    assert check.message == "contains 0 < min 1" and check.threshold == "min 1"
    assert zebra.problems == ["contains: contains 0 < min 1"]
    assert zebra.scores["contains"] == 0.0 and zebra.scores["correctness"] == 3.0
    assert zebra.sources["correctness"] == "judge:mock:fair"
    assert zebra.reasons and zebra.reasons[0].startswith("judge:mock:fair, trial 1: ")


def test_every_delta_names_its_metric(tmp_path: Path) -> None:
    result = assay.evaluate(_suite(tmp_path), store=tmp_path / "s.db", out=tmp_path / "out")
    deltas = result.comparisons["candidate"]
    assert deltas and all(delta.metric == name for name, delta in deltas.items())


def test_to_dict_and_to_json_carry_the_verdict_figures_and_cases(tmp_path: Path) -> None:
    result = assay.evaluate(_suite(tmp_path), store=tmp_path / "s.db", out=tmp_path / "out")
    data = json.loads(result.to_json())
    assert data == result.to_dict()
    assert (data["verdict"], data["passed"], data["exit_code"]) == ("FAIL", False, 1)
    assert data["release_gate"]["checks"] and data["comparisons"]["candidate"]["contains"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert {k: data[k] for k in summary} == summary  # summary.json's figures, as written
    zebra = next(c for c in data["cases"] if c["case_id"] == "zebra" and c["gated"])
    assert zebra["checks"][0]["message"] == "contains 0 < min 1"
    assert zebra["expect"] == {"contains": ["giraffe"]}


def test_evaluate_takes_the_suites_condition_params(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        "def answer(case, settings):\n    return f\"{settings.get('tone', 'plain')} answer\"\n",
        encoding="utf-8",
    )
    write_jsonl(tmp_path / "cases.jsonl", [contains_case("c0", "warm")])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "params"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "python:agent.py:answer"\n'
        "[run]\nallow_unmetered = true\n"
        '[[conditions]]\nname = "agent"\n[scoring]\nscorers = ["contains"]\n'
        "[scoring.thresholds]\ncontains = { min = 1 }\n",
        encoding="utf-8",
    )
    plain = assay.evaluate(suite, store=tmp_path / "a.db", out=tmp_path / "a")
    warm = assay.evaluate(
        suite, store=tmp_path / "b.db", out=tmp_path / "b", params={"tone": "warm"}
    )
    assert [c.responses for c in plain.cases] == [["plain answer"]]
    assert [c.responses for c in warm.cases] == [["warm answer"]]
    assert warm.cases[0].passed and not plain.cases[0].passed
    with pytest.raises(InputError, match=r"assay\.evaluate: params: .*a suite is run"):
        assay.evaluate(scores=tmp_path / "none.jsonl", params={"tone": "warm"})
    with pytest.raises(InputError, match=r"assay\.evaluate: params: expected Mapping"):
        assay.evaluate(suite, params="tone=warm")


def test_judge_settings_are_checked_like_every_argument(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"assay\.judge: shuffles: expected int, got str"):
        assay.judge(trials=[], judges=["mock:fair"], shuffles="3")
    with pytest.raises(InputError, match=r"assay\.judge: unexpected keyword 'shufles'"):
        assay.judge(trials=[], judges=["mock:fair"], shufles=3)
    with pytest.raises(InputError, match=r"assay\.judge: mode: expected 'direct' \| 'pairwise'"):
        assay.judge(trials=[], judges=["mock:fair"], mode="sideways")
    assert not (tmp_path / ".assay").exists()  # refused before anything is written


def test_the_typed_judge_settings_are_the_judge_configs_fields() -> None:
    from assay.api.judging import JudgeSettings
    from assay.scorers.judge import JudgeConfig

    fields = {f.name for f in dataclasses.fields(JudgeConfig)} - {"judges"}
    assert set(JudgeSettings.__annotations__) == fields


def test_mypy_strict_sees_the_real_types_in_a_users_script(tmp_path: Path) -> None:
    """As a user's project type-checks its own code against the installed assay (py.typed):
    no `Any`, and a misspelt or mistyped judge setting is a type error."""
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent(
            """
            import assay

            result = assay.evaluate("suite.toml", params={"tone": "warm"})
            reveal_type(result)
            reveal_type(result.cases)
            reveal_type(result.failed_cases[0].responses)
            reveal_type(result.comparisons["candidate"]["correctness"].metric)
            reveal_type(result.to_json())
            reveal_type(assay.judge(judges=["mock:fair"], shuffles=3, mode="pairwise"))
            assay.judge(judges=["mock:fair"], shuffles="3")
            assay.judge(judges=["mock:fair"], shufles=3)
            """
        ),
        encoding="utf-8",
    )
    # assay as the user's project sees an installed package: checked for its types, its own
    # errors not the user's
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nstrict = True\n\n[mypy-assay.*]\nfollow_imports = silent\n", encoding="utf-8"
    )
    source = Path(assay.__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file=mypy.ini", "--cache-dir=cache", "user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"MYPYPATH": str(source), "PATH": "/usr/bin:/bin"},
        timeout=240,
    )
    lines = [line.split(": ", 1)[1] for line in done.stdout.splitlines() if "user.py:" in line]
    assert lines == [
        'note: Revealed type is "assay.api.results.Result"',
        'note: Revealed type is "list[assay.api.cases.CaseResult]"',
        'note: Revealed type is "list[str]"',
        'note: Revealed type is "str"',
        'note: Revealed type is "str"',
        'note: Revealed type is "assay.scorers.judge.run.JudgeResult"',
        'error: Argument "shuffles" to "judge" has incompatible type "str"; expected "int" '
        " [arg-type]",
        'error: Unexpected keyword argument "shufles" for "judge"; did you mean "shuffles"?'
        "  [call-arg]",
        'note: "judge" defined in "assay.api.judging"',
    ], done.stdout + done.stderr
