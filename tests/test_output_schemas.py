"""`assay schema NAME` covers every output; real command output validates against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from assay.api.schemas import SCHEMAS
from conftest import make_case, write_jsonl

GOOD = "Paris is the capital of France."
BAD = "I think it could be Lyon, or possibly Marseille, depending on how you look at it all."


VALIDATORS: dict[str, Draft202012Validator] = {}


def valid(cli: Any, name: str, data: Any) -> None:
    """Validate against the schema `assay schema NAME` prints (fetched once per name)."""
    if name not in VALIDATORS:
        schema = cli("schema", name).json()
        Draft202012Validator.check_schema(schema)
        VALIDATORS[name] = Draft202012Validator(schema)
    errors = sorted(VALIDATORS[name].iter_errors(data), key=str)
    assert not errors, f"{name}: " + "; ".join(e.message for e in errors[:5])


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_every_documented_output_has_a_schema() -> None:
    assert set(SCHEMAS) >= {
        "case", "trial", "score", "comparison", "label", "rubric", "report",
        "run-summary", "judge-summary", "summary", "calibration", "bias", "winrate", "rank",
        "history",
    }  # fmt: skip


@pytest.fixture
def world(cli: Any, tmp_path: Path) -> dict[str, Any]:
    """A suite run with a judge, then every command's JSON over its outputs."""
    cases = [make_case(f"k{i}", prompt=GOOD, reference=GOOD) for i in range(12)]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "s"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:answer"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:echo"\n'
        '[judge]\njudges = ["mock:fair"]\n',
        encoding="utf-8",
    )
    store = tmp_path / "s.db"
    ran = cli("run", suite, "--store", store, "--json", "--output", tmp_path / "trials.jsonl")
    assert ran.code == 0, ran.stderr
    out = tmp_path / "out"
    trials = tmp_path / "trials.jsonl"
    comparisons = tmp_path / "comparisons.jsonl"
    judged = cli("judge", "--trials", trials, "--cases", tmp_path / "cases.jsonl",
                 "--judge", "mock:longer", "--judge", "mock:fair", "--mode", "pairwise",
                 "--output", comparisons, "--labels", tmp_path / "pl.jsonl", "--store", store,
                 "--json")  # fmt: skip
    screened = cli("judge", "--trials", trials, "--cases", tmp_path / "cases.jsonl",
                   "--judge", "mock:fair", "--screen", "mock:fair", "--labels",
                   tmp_path / "labels.jsonl", "--output", tmp_path / "screened.jsonl",
                   "--store", store, "--json")  # fmt: skip
    labels = lines(tmp_path / "labels.jsonl")
    humans = [{**x, "rater": "human:h"} for x in labels if x["dimension"] == "correctness"]
    humans = [{k: v for k, v in x.items() if k != "prompt_sha256"} for x in humans]
    write_jsonl(tmp_path / "all-labels.jsonl", humans + labels)
    return {
        "tmp": tmp_path, "store": store, "out": out, "trials": trials,
        "comparisons": comparisons, "run": ran.json(), "judge": judged.json(),
        "screen": screened.json(),
    }  # fmt: skip


def test_command_outputs_validate_against_their_schemas(cli: Any, world: dict[str, Any]) -> None:
    tmp, store = world["tmp"], world["store"]
    valid(cli, "run-summary", world["run"])
    valid(cli, "judge-summary", world["judge"])
    valid(cli, "judge-summary", world["screen"])
    assert world["screen"]["cascade"] and world["judge"]["krippendorff_alpha"]
    valid(cli, "summary", json.loads((world["out"] / "summary.json").read_text()))
    valid(cli, "summary", cli("score", world["out"] / "scores.jsonl", "--json").json())
    valid(cli, "report", json.loads((world["out"] / "report.json").read_text()))
    for row in lines(world["out"] / "scores.jsonl") + lines(tmp / "screened.jsonl"):
        valid(cli, "score", row)
    for row in lines(world["comparisons"]):
        valid(cli, "comparison", row)
    for row in lines(tmp / "all-labels.jsonl") + lines(tmp / "pl.jsonl"):
        valid(cli, "label", row)
    for row in lines(world["trials"]):
        valid(cli, "trial", row)
    calibration = cli("calibrate", "--labels", tmp / "all-labels.jsonl", "--store", store,
                      "--json")  # fmt: skip
    valid(cli, "calibration", calibration.json())
    bias = cli("bias", "--comparisons", world["comparisons"], "--scores",
               world["out"] / "scores.jsonl", "--trials", world["trials"], "--json")  # fmt: skip
    valid(cli, "bias", bias.json())
    winrate = cli("winrate", "--comparisons", world["comparisons"], "--baseline", "baseline",
                  "--length-controlled", "--json")  # fmt: skip
    valid(cli, "winrate", winrate.json())
    ranked = cli("rank", "--comparisons", world["comparisons"], "--bootstrap", "20", "--json")
    valid(cli, "rank", ranked.json())
    history = cli("history", "--store", store, "--json").json()
    assert history["judges"]
    valid(cli, "history", history)


def test_a_drifting_output_fails_its_schema(cli: Any, world: dict[str, Any]) -> None:
    data = dict(world["run"], surprise=1)
    schema = cli("schema", "run-summary").json()
    assert list(Draft202012Validator(schema).iter_errors(data))
