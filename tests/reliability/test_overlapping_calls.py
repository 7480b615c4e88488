"""Overlapping work on one store never pays for a call twice: a call's cache key is claimed in
the store before it is sent, and another process that needs the same call waits for its reply
(store/claims.py, engine/claims.py). Two identical `assay judge` at once, `assay run
--trials 2` and `--trials 3` at once, a full run and a subset of it at once: each distinct
call reaches the server once. A claim left by a killed process blocks no one."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assay.store.lease import STALE_S
from conftest import make_case, write_jsonl

JUDGE = "openai:judge-model"


def assay(*argv: Any) -> list[str]:
    return [sys.executable, "-m", "assay", *map(str, argv)]


def together(*commands: list[str], timeout: float = 180) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once and wait for them all."""
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    done = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    return done


def run_argv(cases: Path, url: str, store: Path, trials: int, *extra: Any) -> list[str]:
    return assay("run", "--cases", cases, "--model", "openai:gpt-4o-mini", "--base-url", url,
                 "--trials", trials, "--concurrency", 4, "--store", store, "--json",
                 *extra)  # fmt: skip


def test_two_identical_judges_at_once_call_each_item_once(
    tmp_path: Path, cli: Any, mock_server: Any
) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(20)])
    trials = tmp_path / "trials.jsonl"
    made = cli("run", "--cases", cases, "--model", "mock", "--trials", 2, "--output", trials,
               "--store", tmp_path / "run.db")  # fmt: skip
    assert made.code == 0, made.stderr
    server = mock_server(latency=0.2, judge_reply="schema")
    argv = ["judge", "--trials", trials, "--cases", cases, "--judge", JUDGE,
            "--base-url", server.url, "--price", "0,0", "--concurrency", 4,
            "--store", tmp_path / "s.db", "--json"]  # fmt: skip
    first, second = together(assay(*argv, "--output", tmp_path / "a.jsonl"),
                             assay(*argv, "--output", tmp_path / "b.jsonl"))  # fmt: skip
    for done in (first, second):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["judged"] == 40
    assert server.stats()["requests"] == 40  # 40 items, one call each: not 80
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def test_runs_of_two_and_three_trials_at_once_share_their_calls(
    tmp_path: Path, mock_server: Any
) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(10)])
    server = mock_server(latency=0.2)
    store = tmp_path / "s.db"
    two, three = together(run_argv(cases, server.url, store, 2),
                          run_argv(cases, server.url, store, 3))  # fmt: skip
    assert two.returncode == 0 and three.returncode == 0, two.stderr + three.stderr
    assert json.loads(two.stdout)["answered"] == 20
    assert json.loads(three.stdout)["answered"] == 30
    assert server.stats()["requests"] == 30  # trials 0 and 1 are the same calls in both


def test_a_full_run_and_a_subset_at_once_share_their_calls(
    tmp_path: Path, mock_server: Any
) -> None:
    rows = [make_case(f"c{i}") for i in range(20)]
    full = write_jsonl(tmp_path / "cases.jsonl", rows)
    subset = write_jsonl(tmp_path / "subset.jsonl", rows[:5])
    server = mock_server(latency=0.2)
    store = tmp_path / "s.db"
    whole, part = together(run_argv(full, server.url, store, 1),
                           run_argv(subset, server.url, store, 1))  # fmt: skip
    assert whole.returncode == 0 and part.returncode == 0, whole.stderr + part.stderr
    assert json.loads(part.stdout)["answered"] == 5
    assert server.stats()["requests"] == 20


def test_a_killed_processs_claims_block_no_one(tmp_path: Path, mock_server: Any) -> None:
    """Killed with calls in flight, a process leaves their claims; the next process on this
    host sees their holder is gone and makes those calls at once."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(8)])
    server = mock_server(latency=2.0)
    store = tmp_path / "s.db"
    first = subprocess.Popen(run_argv(cases, server.url, store, 1), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while server.stats()["requests"] < 4:
        assert time.monotonic() < deadline, "the first run never called the model"
        time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    db = sqlite3.connect(store)
    left = db.execute("SELECT count(*) FROM call_claims").fetchone()[0]
    db.close()
    assert left == 4  # the calls in flight when it was killed
    # Its holder is a dead process of this host: taken over at once, not after STALE_S of
    # silence (the rerun would time out first).
    again = subprocess.run(run_argv(cases, server.url, store, 1), capture_output=True,
                           text=True, timeout=STALE_S / 2)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["answered"] == 8
