"""Interrupts: Ctrl+C (SIGINT) mid-run exits 3 (docs/design.md: interrupted, resumable), writes
`--output` from the store, and running the same command again finishes the remainder."""

from __future__ import annotations

import json
from pathlib import Path

from reliability_support import Command, interrupt_when, read_jsonl, run_once, stored_rows

from conftest import make_case, write_jsonl

CASES = 40


def run_command(cases: Path) -> Command:
    return Command(
        name="run",
        argv=lambda wd: [
            "run",
            "--cases",
            str(cases),
            "--model",
            "mock:answer,latency=0.05",
            "--trials",
            "2",
            "--concurrency",
            "2",
            "--output",
            str(wd / "out.jsonl"),
            "--store",
            str(wd / "store.db"),
            "--json",
        ],
        output="out.jsonl",
    )


def test_sigint_mid_run_exits_3_writes_output_and_resumes(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    command = run_command(cases)
    total = CASES * 2
    store = tmp_path / "store.db"

    stopped = interrupt_when(command, tmp_path, lambda: stored_rows(store, "trials") >= 4)
    assert stopped.returncode == 3, stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert "interrupted; run the same command again to resume" in stopped.stderr
    written = read_jsonl(tmp_path / "out.jsonl")
    # The output is what the store holds: every committed trial, and the run is unfinished.
    assert 4 <= len(written) == stored_rows(store, "trials") < total
    assert all(not t["error"] and t["response"] for t in written)

    resumed = run_once(command, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    # Only the remainder was asked again (from the model or the call cache).
    assert summary["answered"] == total
    assert summary["calls"] + summary["cache_hits"] == total - len(written)
    final = {(t["case_id"], t["trial"]): t for t in read_jsonl(tmp_path / "out.jsonl")}
    assert len(final) == total
    for trial in written:  # what was recorded before the interrupt is kept as it was
        assert final[(trial["case_id"], trial["trial"])] == trial


def test_sigint_mid_judging_exits_3_writes_what_was_judged_and_resumes(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(CASES)])
    trials = tmp_path / "out.jsonl"  # what run_command writes
    made = run_once(run_command(cases), tmp_path)
    assert made.returncode == 0, made.stderr
    store = tmp_path / "judge.db"
    command = Command(
        name="judge",
        argv=lambda wd: [
            "judge",
            "--trials",
            str(trials),
            "--cases",
            str(cases),
            "--judge",
            "mock:fair,latency=0.02",
            "--allow-unmetered",
            "--concurrency",
            "2",
            "--output",
            str(wd / "scores.jsonl"),
            "--store",
            str(store),
            "--json",
        ],
        output="scores.jsonl",
    )
    stopped = interrupt_when(command, tmp_path, lambda: stored_rows(store, "judgments") >= 4)
    assert stopped.returncode == 3, stopped.stderr
    assert "Traceback" not in stopped.stderr
    summary = json.loads(stopped.stdout)
    assert summary["stopped"] == "interrupted"
    written = read_jsonl(tmp_path / "scores.jsonl")
    # What was judged before the interrupt is written (and stored): nothing is lost.
    assert 4 <= len(written) == summary["judged"] == stored_rows(store, "judgments")
    assert len(written) < CASES * 2

    resumed = run_once(command, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed"] == len(written)
    final = {(r["case_id"], r["trial"]): r for r in read_jsonl(tmp_path / "scores.jsonl")}
    assert len(final) == CASES * 2
    for row in written:
        assert final[(row["case_id"], row["trial"])] == row
