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
