"""The trajectory judge (`[judge] over = "trajectory"`, `assay judge --over trajectory`):
the steps rendered one line each (core/trajectory_text.py), judged with the same machinery."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.core.records import Trial
from assay.core.suite import load_suite
from assay.core.trajectory import STEPS
from assay.core.trajectory_text import judged_text, step_lines, with_steps
from assay.engine.plan import sha256_json, sha256_text
from assay.scorers.judge.items import direct_item
from conftest import make_case, write_jsonl

ANSWER = "Refunds are possible within 30 days of purchase."
SEARCHED = [
    {"type": "model", "text": "Let me\ncheck.", "input_tokens": 1200, "output_tokens": 40},
    {
        "type": "tool",
        "name": "search_kb",
        "arguments": {"query": "refund policy"},
        "result": "x" * 4000,
        "result_chars": 4812,
    },
    {"type": "tool", "name": "escalate", "arguments": {"urgency": "high"}, "error": "queue full"},
    {"type": "model", "text": ANSWER},
]
GUESSED = [{"type": "model", "text": ANSWER}]


def steps(raw: list[dict[str, Any]]) -> Any:
    return STEPS.validate_python(raw)


def test_each_step_is_one_numbered_line_with_long_texts_cut_and_sized() -> None:
    lines = step_lines(steps(SEARCHED), width=20)
    assert lines == [
        '#1 model "Let me check." (1,200 in / 40 out tokens)',
        '#2 tool search_kb(query="refund policy") → "xxxxxxxxxxxxxxxxxxxx…" (4,812 chars)',
        '#3 tool escalate(urgency="high") → error: "queue full"',
        '#4 model "Refunds are possible…" (48 chars)',
    ]
    long_argument = steps([{"type": "tool", "name": "read", "arguments": {"path": "p" * 200}}])
    (line,) = step_lines(long_argument)
    assert line == f'#1 tool read(path="{"p" * 79}… (202 chars))'
    assert step_lines(None) == []


def test_the_judge_reads_the_steps_then_the_response() -> None:
    trial = Trial(
        case_id="c", trial=1, condition="x", runner="m", response=ANSWER, trajectory=steps(GUESSED)
    )
    assert judged_text(trial, "response") == ANSWER
    assert judged_text(trial, "trajectory") == (
        f'Steps:\n#1 model "{ANSWER}"\n\nFinal response:\n{ANSWER}'
    )
    assert with_steps("ok", None) == "Steps:\n(no steps recorded)\n\nFinal response:\nok"


def test_item_keys_over_the_response_are_unchanged_and_over_steps_follow_them() -> None:
    case: Any = None
    one = Trial(
        case_id="c", trial=1, condition="x", runner="m", response=ANSWER, trajectory=steps(GUESSED)
    )
    other = one.model_copy(update={"trajectory": steps(SEARCHED)})
    old = sha256_json(["direct", "c", 1, "x", sha256_text(ANSWER), "K"])
    assert direct_item(0, one, case, "K").key == old == direct_item(0, other, case, "K").key
    assert (
        direct_item(0, one, case, "K", None, "trajectory").key
        != direct_item(0, other, case, "K", None, "trajectory").key
    )


def files(tmp_path: Path, mode: str) -> dict[str, Path]:
    case = make_case("c0", reference="search_kb refund policy")
    rows = [
        {"case_id": "c0", "trial": 1, "condition": "baseline", "runner": "m", "response": ANSWER,
         "trajectory": GUESSED},
        {"case_id": "c0", "trial": 1, "condition": "candidate", "runner": "m", "response": ANSWER,
         "trajectory": SEARCHED},
    ]  # fmt: skip
    return {
        "cases": write_jsonl(tmp_path / f"{mode}-cases.jsonl", [case]),
        "trials": write_jsonl(tmp_path / f"{mode}-trials.jsonl", rows),
        "out": tmp_path / f"{mode}-out.jsonl",
        "store": tmp_path / f"{mode}.db",
    }


def judge(cli: Any, paths: dict[str, Path], *args: str) -> Any:
    return cli(
        "judge",
        "--trials",
        paths["trials"],
        "--cases",
        paths["cases"],
        "--output",
        paths["out"],
        "--store",
        paths["store"],
        "--judge",
        "mock:fair",
        "--json",
        *args,
    )


def read_rows(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r.get("condition") or r["b"]: r for r in rows}


def test_the_direct_judge_over_the_trajectory_sees_what_the_agent_did(
    cli: Any, tmp_path: Path
) -> None:
    plain = files(tmp_path, "plain")
    assert judge(cli, plain).code == 0
    by_response = read_rows(plain["out"])
    assert by_response["baseline"]["correctness"] == by_response["candidate"]["correctness"]

    steps_ = files(tmp_path, "steps")
    result = judge(cli, steps_, "--over", "trajectory")
    assert result.code == 0, result.stderr
    by_steps = read_rows(steps_["out"])
    assert by_steps["candidate"]["correctness"] > by_steps["baseline"]["correctness"]
    evidence = by_steps["candidate"]["evidence"]["correctness"]
    assert evidence == ['Steps: #1 model "Let me check." (1,200 in']
    assert by_steps["candidate"]["confidence"] == by_response["candidate"]["confidence"]


def test_the_judge_prompt_holds_one_line_per_step_not_the_whole_result(
    cli: Any, tmp_path: Path
) -> None:
    paths = files(tmp_path, "echo")
    judge(cli, paths, "--over", "trajectory", "--judge", "mock:echo")  # echo: no JSON, kept raw
    (raw,) = (
        sqlite3.connect(paths["store"])
        .execute("SELECT raw FROM judgments WHERE a = 'candidate'")
        .fetchone()
    )
    prompt = json.loads(raw)[0]
    assert f'#2 tool search_kb(query="refund policy") → "{"x" * 400}…" (4,812 chars)' in prompt
    assert "x" * 401 not in prompt
    assert '#3 tool escalate(urgency="high") → error: "queue full"' in prompt
    assert f"Final response:\n{ANSWER}" in prompt


def test_pairwise_over_steps_judges_same_responses_that_took_different_steps(
    cli: Any, tmp_path: Path
) -> None:
    plain = files(tmp_path, "plain")
    assert judge(cli, plain, "--mode", "pairwise").json()["calls"] == 0  # a tie by rule
    steps_ = files(tmp_path, "steps")
    result = judge(cli, steps_, "--mode", "pairwise", "--over", "trajectory")
    assert result.json()["calls"] == 2  # both orders
    row = read_rows(steps_["out"])["candidate"]
    assert row["verdict"] == "b" and row["consistent"] is True


def test_over_must_name_response_or_trajectory(cli: Any, tmp_path: Path) -> None:
    result = judge(cli, files(tmp_path, "bad"), "--over", "steps")
    assert result.code == 2
    assert "--over: expected response or trajectory, got 'steps'" in result.stderr


def test_a_suite_judge_over_something_else_is_refused_with_its_file_and_field(
    cli: Any, tmp_path: Path
) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "s"\nmodel = "mock"\n[[conditions]]\nname = "a"\n'
        '[judge]\njudges = ["mock:fair"]\nover = "steps"\n'
    )
    with pytest.raises(InputError) as raised:
        load_suite(suite)
    assert f"{suite}:7: judge.over: Input should be 'response' or 'trajectory'" in str(raised.value)
    assert load_suite_text(suite, "trajectory").judge.over == "trajectory"


def load_suite_text(path: Path, over: str) -> Any:
    path.write_text(path.read_text().replace('"steps"', f'"{over}"'))
    return load_suite(path)
