"""What people see of a run: the progress display (`assay.cli.output.progress`: done,
errors so far, rate and time left on a terminal; without one, a line with the same figures at
most every few seconds) and `assay score`'s table, whose condition names wrap, never cut."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay.cli import output

GATE = Path(__file__).resolve().parents[1] / "examples" / "gate"


def test_without_a_terminal_a_line_at_most_every_few_seconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    now = 0.0
    with output.progress(1000, "trials", clock=lambda: now) as tick:
        for i in range(1000):
            now = (i + 1) / 50  # 50 trials a second: 20 s in all
            tick(i % 100 != 7)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 20 / output.PLAIN_EVERY_S  # every 5 s; the last is the end's
    assert lines[0] == "trials: 250/1000, 3 errors, 50.0/s, 5s elapsed, 15s left"
    assert lines[-1] == "trials: 1000/1000, 10 errors, 50.0/s, 20s elapsed"


def test_a_terminal_bar_shows_errors_rate_and_time_left() -> None:
    screen = Console(file=io.StringIO(), force_terminal=True, width=160)
    with output.progress(1000, "trials", console=screen) as tick:
        for i in range(300):
            tick(i not in (3, 9))
    shown = screen.file.getvalue()  # its frames, the last drawn as the bar stops
    assert "300/1000" in shown and "2 errors" in shown
    assert "/s" in shown and "left" in shown


def test_durations() -> None:
    assert output._duration(4.4) == "4s"
    assert output._duration(214) == "3m34s"
    assert output._duration(3 * 3600 + 125) == "3h02m"


def test_the_score_table_wraps_condition_names_instead_of_cutting_them(
    cli: Any, tmp_path: Path
) -> None:
    """Two conditions whose names share their first 14 characters stay told apart."""
    rows = [json.loads(line) for line in (GATE / "scores.jsonl").read_text().splitlines()]
    renamed = {"baseline": "baseline", "candidate": "openai:chat:model-candidate"}
    for row in rows:
        row["condition"] = renamed[row["condition"]]
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = cli("score", scores, "--candidate", "openai:chat:model-candidate", "--format", "table")
    header = [line.split() for line in done.stdout.splitlines()[:4]]
    assert header[:3] == [["metric", "baseline", "openai:chat:"], ["model-"], ["candidate"]]
    assert header[3][0] == "correctness" and len(header[3]) == 3


def test_the_lines_and_the_bar_show_spend_so_far_and_budget_left(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from assay.api import Spent

    now = 0.0
    with output.progress(2, "trials", clock=lambda: now) as tick:
        now = 5.0
        tick(True, Spent(0.25, 1.0))
        now = 6.0
        tick(True, Spent(0.5, None))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "trials: 1/2, 0.2/s, 5s elapsed, 5s left, $0.2500 spent, $0.7500 left"
    assert lines[1].endswith("6s elapsed, $0.5000 spent")
    screen = Console(file=io.StringIO(), force_terminal=True, width=200)
    with output.progress(10, "trials", console=screen) as tick:
        for i in range(4):
            tick(True, Spent(0.1 * (i + 1), 2.0))
    assert "$0.4000 spent, $1.6000 left" in screen.file.getvalue()


def test_a_run_tells_its_progress_the_spend_and_one_argument_callbacks_still_work(
    tmp_path: Path,
) -> None:
    """The engine tells each finished trial's callback what the run has spent and its
    budget; a callback of `ok` alone (as before) is called without it."""
    import assay
    from conftest import make_case

    cases = [make_case(f"c{i}") for i in range(3)]
    told: list[Any] = []
    assay.run(
        cases=cases, model="mock:echo", price="1000,1000", budget_usd=5.0,
        store=tmp_path / "s.db", progress=lambda ok, spent=None: told.append(spent),
    )  # fmt: skip
    assert told and all(s is not None and s.budget_usd == 5.0 for s in told)
    assert 0 < told[0].spent_usd <= told[-1].spent_usd < 5.0
    assert told[-1].left_usd == pytest.approx(5.0 - told[-1].spent_usd)
    alone: list[bool] = []
    assay.run(
        cases=cases, model="mock:echo", store=tmp_path / "t.db", progress=alone.append
    )  # fmt: skip
    assert alone == [True] * len(told)
