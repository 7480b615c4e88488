"""A pinned golden set (issue 11, item 6): `cases_sha256` in a suite pins the case file;
`assay validate --cases F --print-sha256` prints the hash to pin."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])


def test_validate_prints_the_sha256_of_the_file_bytes(cli: Any, golden: Path) -> None:
    result = cli("validate", "--cases", golden, "--print-sha256")
    assert result.code == 0
    assert result.stdout == sha256(golden) + "\n"
    as_json = cli("validate", "--cases", golden, "--print-sha256", "--json").json()
    assert as_json == {"valid": True, "cases": 3, "path": str(golden), "sha256": sha256(golden)}
    assert "sha256" not in cli("validate", "--cases", golden, "--json").json()


def test_validate_prints_no_hash_for_an_invalid_catalogue(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    result = cli("validate", "--cases", bad, "--print-sha256")
    assert result.code == 2 and result.stdout == ""


def suite(folder: Path, pin: str, model: str = "mock:answer") -> Path:
    path = folder / "suite.toml"
    path.write_text(
        f'name = "pinned"\ncases = "cases.jsonl"\ncases_sha256 = "{pin}"\ntrials = 1\n'
        f'[[conditions]]\nname = "baseline"\nmodel = "{model}"\n'
        f'[[conditions]]\nname = "candidate"\nmodel = "{model}"\n',
        encoding="utf-8",
    )
    return path


def test_a_suite_runs_its_pinned_golden_set(cli: Any, golden: Path, tmp_path: Path) -> None:
    pin = cli("validate", "--cases", golden, "--print-sha256").stdout.strip()
    path = suite(tmp_path, pin)
    result = cli("run", path, "--store", tmp_path / "s.db", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["total"] == 6


def test_a_changed_case_file_is_exit_2_before_any_call(
    cli: Any, golden: Path, tmp_path: Path, mock_server: Any
) -> None:
    server = mock_server()
    pinned = sha256(golden)
    path = suite(tmp_path, pinned, model="openai:local-llm")
    (tmp_path / "suite.toml").write_text(
        path.read_text() + f'[run]\nbase_url = "{server.url}"\nallow_unmetered = true\n',
        encoding="utf-8",
    )
    golden.write_text(golden.read_text().replace("Question c1?", "Question c1, edited?"))
    actual = sha256(golden)
    store = tmp_path / "s.db"
    result = cli("run", path, "--store", store)
    assert result.code == 2
    (message,) = result.stderr.strip().splitlines()
    assert message.startswith(f"ERROR: {golden}: not the pinned golden set: {path} expects")
    assert f"cases_sha256 = {pinned}" in message
    assert f"the file's sha256 is {actual}" in message
    assert f"assay validate --cases {golden} --print-sha256" in message
    assert server.stats()["requests"] == 0
    assert not store.exists()


def test_the_pin_holds_for_a_cases_flag_and_for_report(
    cli: Any, golden: Path, tmp_path: Path
) -> None:
    """Another file given with --cases is not the golden set either; `assay report` with
    the suite checks the catalogue it reads too."""
    path = suite(tmp_path, sha256(golden))
    other = write_jsonl(tmp_path / "other.jsonl", [make_case("x")])
    ran = cli("run", path, "--cases", other, "--store", tmp_path / "s.db")
    assert ran.code == 2 and f"ERROR: {other}: not the pinned golden set" in ran.stderr
    scores = write_jsonl(
        tmp_path / "scores.jsonl",
        [
            {"case_id": f"c{i}", "trial": 1, "condition": cond, "accuracy": 3}
            for i in range(3)
            for cond in ("baseline", "candidate")
        ],
    )
    ok = cli("report", "--scores", scores, "--suite", path, "--out", tmp_path / "ok")
    assert ok.code in (0, 1), ok.stderr
    golden.write_text(golden.read_text() + "\n")  # one byte more: another file
    bad = cli("report", "--scores", scores, "--suite", path, "--out", tmp_path / "bad")
    assert bad.code == 2 and f"ERROR: {golden}: not the pinned golden set" in bad.stderr
    assert not (tmp_path / "bad").exists()


def test_a_malformed_pin_names_the_suite_line(cli: Any, golden: Path, tmp_path: Path) -> None:
    path = suite(tmp_path, "abc123")
    result = cli("run", path, "--store", tmp_path / "s.db")
    assert result.code == 2
    assert result.stderr.startswith(f"ERROR: {path}:3: cases_sha256:")
