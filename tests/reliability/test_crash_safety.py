"""Crash safety: SIGKILL a command at random points; running it again completes to exactly
the records an uninterrupted run produces (by key and content, timings aside).

The parametrized factories list what is checked: `assay run`, `assay judge` on the trials
of an uninterrupted run, and `assay run SUITE.toml` with a judge pipelined with the run (its
judge calls start while trials are still being made; a kill lands among both).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability_support import (
    Command,
    crash_points,
    kill_after,
    records,
    run_once,
    stored_rows,
)

from conftest import invoke, make_case, write_jsonl

SEED = 20261129
POINTS = 10
CASES = 24


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("catalogue")
    rows = [make_case(f"c{i}") for i in range(CASES)]
    rows.append(make_case("multi", turns=["and then?", "finally?"]))
    return write_jsonl(folder / "cases.jsonl", rows)


def run_command(catalogue: Path) -> Command:
    """`assay run` on the mock model: some latency, some injected failures, retried."""
    # fmt: off
    return Command(
        name="run",
        argv=lambda wd: [
            "run",
            "--cases",
            str(catalogue),
            "--model",
            "mock:answer,latency=0.02,fail=0.1",
            "--trials",
            "2",
            "--concurrency",
            "4",
            "--retries",
            "10",
            "--output",
            str(wd / "out.jsonl"),
            "--store",
            str(wd / "store.db"),
        ],
        output="out.jsonl",
        progress=lambda wd: stored_rows(wd / "store.db", "trials"),
    )
    # fmt: on


def judge_command(catalogue: Path) -> Command:
    """`assay judge` (a mock judge with latency and injected failures, retried) on trials
    made once next to the catalogue; each workdir has its own store and output."""
    trials = catalogue.parent / "trials.jsonl"
    if not trials.exists():
        made = invoke("run", "--cases", catalogue, "--model", "mock:answer", "--trials", "2",
                      "--output", trials, "--store", catalogue.parent / "run.db")  # fmt: skip
        assert made.code == 0, made.stderr
    # fmt: off
    return Command(
        name="judge",
        argv=lambda wd: [
            "judge",
            "--trials",
            str(trials),
            "--cases",
            str(catalogue),
            "--judge",
            "mock:fair,latency=0.03,fail=0.1",
            "--allow-unmetered",
            "--concurrency",
            "4",
            "--retries",
            "10",
            "--output",
            str(wd / "scores.jsonl"),
            "--store",
            str(wd / "store.db"),
        ],
        output="scores.jsonl",
        progress=lambda wd: stored_rows(wd / "store.db", "judgments"),
    )
    # fmt: on


def suite_command(catalogue: Path) -> Command:
    """`assay run SUITE.toml`: mock model and mock judge, both with latency and injected
    failures (retried); the judge is pipelined with the run. Checked: the judge's rows."""
    suite = catalogue.parent / "suite.toml"
    suite.write_text(
        f'name = "crash"\ncases = "{catalogue.name}"\ntrials = 2\n'
        'model = "mock:answer,latency=0.05,fail=0.1"\n'
        "[run]\nconcurrency = 2\nretries = 10\n"
        '[[conditions]]\nname = "baseline"\n'
        '[judge]\njudges = ["mock:fair,latency=0.05,fail=0.1"]\nallow_unmetered = true\n',
        encoding="utf-8",
    )
    # fmt: off
    return Command(
        name="suite",
        argv=lambda wd: [
            "run",
            str(suite),
            "--out",
            str(wd / "out"),
            "--store",
            str(wd / "store.db"),
        ],
        output="out/scores.jsonl",
        progress=lambda wd: stored_rows(wd / "store.db", "judgments"),
    )
    # fmt: on


@pytest.mark.slow
@pytest.mark.parametrize(
    "factory", [run_command, judge_command, suite_command], ids=["run", "judge", "suite"]
)
def test_sigkill_at_random_points_then_resume_gives_the_uninterrupted_records(
    factory: Callable[[Path], Command], catalogue: Path, tmp_path: Path
) -> None:
    command = factory(catalogue)
    reference = tmp_path / "reference"
    reference.mkdir()
    if command.setup:
        command.setup(reference)
    started = time.monotonic()
    done = run_once(command, reference)
    span = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    expected = records(command, reference)
    assert expected

    interrupted = mid_run = 0
    for index, delay in enumerate(crash_points(SEED, POINTS, span)):
        workdir = tmp_path / f"kill{index}"
        workdir.mkdir()
        if command.setup:
            command.setup(workdir)
        if kill_after(command, workdir, delay) is None:
            interrupted += 1
            if command.progress and 0 < command.progress(workdir) < len(expected):
                mid_run += 1
        resumed = run_once(command, workdir)
        assert resumed.returncode == 0, f"kill at {delay:.2f}s: {resumed.stderr}"
        assert records(command, workdir) == expected, f"kill at {delay:.2f}s"
    assert interrupted >= POINTS // 2  # most points really interrupted the command
    assert command.progress is None or mid_run >= 2, f"only {mid_run} kills hit mid-run"
