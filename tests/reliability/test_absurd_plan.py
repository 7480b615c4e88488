"""An absurd plan (`trials = 1000000` by a slip) is not started without a word: before any
call assay warns with the plan's size, the model calls it makes and their worst-case cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.engine.preflight import ABSURD_TRIALS
from conftest import make_case, write_jsonl


def test_absurd_plan_is_warned_with_its_estimate(
    tmp_path: Path, cli: Any, mock_server: Any
) -> None:
    server = mock_server()
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'name = "slip"\ncases = "{cases}"\ntrials = 1000000\n'
        '[[conditions]]\nname = "baseline"\nmodel = "openai:gpt-4o-mini"\n'
    )
    # a budget smaller than one call's worst case: the run stops before any call
    done = cli("run", suite, "--base-url", server.url, "--budget-usd", "0.00001",
               "--store", tmp_path / "s.db", "--out", tmp_path / "out")  # fmt: skip
    assert done.code == 3, done.stderr
    warning = next(line for line in done.stderr.splitlines() if line.startswith("WARNING"))
    assert "3 cases × 1 conditions × 1,000,000 trials = 3,000,000 trials" in warning
    assert "3,000,000 model calls before retries, worst case $" in warning
    assert "0 model calls" in done.stdout + done.stderr


def test_ordinary_plans_say_nothing(tmp_path: Path, cli: Any) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    done = cli("run", "--cases", cases, "--model", "mock", "--trials", "3",
               "--store", tmp_path / "s.db")  # fmt: skip
    assert done.code == 0 and "WARNING" not in done.stderr
    assert ABSURD_TRIALS >= 10_000  # a large honest evaluation is not "absurd"
