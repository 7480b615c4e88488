"""Rubric generation (`assay rubric`) and judging with a rubric file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from assay.core.rubric import load_rubric
from assay.core.suite import load_suite
from conftest import make_case, write_jsonl


def test_rubric_is_generated_validated_and_written_as_yaml(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "helpful.yaml"
    result = cli(
        "rubric", "helpfulness", "--description", "How well it solves the user's problem",
        "--domain", "support", "--scale", "1-10", "--strictness", "strict",
        "--model", "mock:fair", "--output", path, "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    data = yaml.safe_load(path.read_text())
    assert [level["score"] for level in data["levels"]] == list(range(1, 11))
    assert data["scale"] == "1-10" and data["strictness"] == "strict"
    rubric = load_rubric(path)
    assert rubric.edge_cases and rubric.scoring_guidelines


def test_rubric_from_a_malformed_model_exits_3(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    result = cli(
        "rubric", "x", "--description", "d", "--model", "mock:malformed", "--output", path,
        "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert result.code == 3 and "raw reply" in result.stderr
    assert not path.exists()


def test_judging_with_a_1_to_10_rubric(cli: Any, tmp_path: Path) -> None:
    rubric = tmp_path / "r.json"
    cli(
        "rubric", "Helpfulness", "--description", "Solves the problem", "--scale", "1-10",
        "--model", "mock:fair", "--output", rubric, "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert json.loads(rubric.read_text())["name"] == "Helpfulness"
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case("c0", reference="Use the red valve.")])
    trials = write_jsonl(
        tmp_path / "t.jsonl",
        [{"case_id": "c0", "trial": 1, "condition": "baseline", "runner": "mock",
          "response": "Use the red valve."}],
    )  # fmt: skip
    out = tmp_path / "o.jsonl"
    result = cli(
        "judge", "--trials", trials, "--cases", cases, "--judge", "mock:fair", "--rubric", rubric,
        "--concision", "--output", out, "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    row = json.loads(out.read_text())
    assert row["helpfulness"] == 10 and row["concision"] == 10 and row["scale"] == "1-10"


def test_a_bad_rubric_file_names_the_field(cli: Any, tmp_path: Path) -> None:
    rubric = tmp_path / "bad.yaml"
    rubric.write_text("name: x\ndescription: y\nscale: 1-3\nlevels: []\n")
    result = cli("judge", "--trials", rubric, "--judge", "mock:fair", "--rubric", rubric,
                 "--output", tmp_path / "o.jsonl")  # fmt: skip
    assert result.code == 2 and "bad.yaml" in result.stderr and "levels" in result.stderr


def test_suite_judge_section_is_typed(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text('[judge]\njudges = ["mock:fair"]\nmode = "pairwise"\nshuffles = 3\n')
    loaded = load_suite(suite)
    assert loaded.judge.judges == ["mock:fair"] and loaded.judge.shuffles == 3
    suite.write_text('[judge]\nmode = "sideways"\n')
    try:
        load_suite(suite)
    except Exception as exc:  # InputError naming the line
        assert "suite.toml:2" in str(exc)
    else:
        raise AssertionError("a bad mode must be rejected")
