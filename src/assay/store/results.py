"""What a suite run's evaluation found, recorded for `assay view` (`run_results`, `run_cases`,
`run_scores`, `run_cells`; read back by views.py), and each run's wall time and git commit
(`run_provenance`).

Recording a run again (a rerun of the same suite resumes the same run id) replaces what was
recorded for it, in one transaction. The verdict and report are kept per suite: another suite
gating the same trials (the same run id) adds its own beside them, so each suite's history
keeps the run; the cases, score rows and cells are those of the evaluation recorded last.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from assay.store.db import Store, now_iso

TABLES = ("run_results", "run_cases", "run_scores", "run_cells")


@dataclass(frozen=True, slots=True)
class CaseEntry:
    """One case of the catalogue a run answered, as its JSON record."""

    case_id: str
    category: str
    risk: str
    record: str


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    """One score row (`kind` "judge" or "scorer") or comparison ("comparison": `condition`
    is the compared condition, b), as its JSON record."""

    kind: str
    case_id: str
    trial: int
    condition: str
    record: str


@dataclass(frozen=True, slots=True)
class Cell:
    """One case under one condition: its weighted score (mean over trials; None when
    unscored) and whether any of its trials has a blocking finding."""

    case_id: str
    condition: str
    weighted: float | None
    blocker: bool


def save_results(
    store: Store,
    run_id: str,
    *,
    suite: str,
    verdict: str,
    report: str,
    cases: Iterable[CaseEntry],
    scores: Iterable[ScoreEntry],
    cells: Iterable[Cell],
) -> None:
    """Record (or replace) what the evaluation of run `run_id` by `suite` found, committed
    at once: the suite's verdict and report beside any other suite's, and the run's cases,
    score rows and cells in place of those recorded before."""
    store.queue("DELETE FROM run_results WHERE run_id = ? AND suite = ?", (run_id, suite))
    for table in TABLES[1:]:
        store.queue(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    store.queue(
        "INSERT INTO run_results (run_id, suite, verdict, report, saved_at) VALUES (?, ?, ?, ?, ?)",
        (run_id, suite, verdict, report, now_iso()),
    )
    for seq, case in enumerate(cases):
        store.queue(
            "INSERT OR REPLACE INTO run_cases (run_id, seq, case_id, category, risk, record)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, seq, case.case_id, case.category, case.risk, case.record),
        )
    for seq, score in enumerate(scores):
        store.queue(
            "INSERT INTO run_scores (run_id, seq, kind, case_id, trial, condition, record)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, seq, score.kind, score.case_id, score.trial, score.condition, score.record),
        )
    for cell in cells:
        store.queue(
            "INSERT OR REPLACE INTO run_cells (run_id, case_id, condition, weighted, blocker)"
            " VALUES (?, ?, ?, ?, ?)",
            (run_id, cell.case_id, cell.condition, cell.weighted, int(cell.blocker)),
        )
    store.flush()


def add_run_time(store: Store, run_id: str, seconds: float, git_commit: str | None) -> None:
    """Add one invocation's wall time to the run's, and record the commit it ran from (a
    resumed run keeps the commit it had when this one's is unknown)."""
    store.queue(
        "INSERT INTO run_provenance (run_id, git_commit, duration_s, updated_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET"
        " duration_s = duration_s + excluded.duration_s,"
        " git_commit = COALESCE(excluded.git_commit, git_commit), updated_at = excluded.updated_at",
        (run_id, git_commit, max(0.0, seconds), now_iso()),
    )
    store.flush()
