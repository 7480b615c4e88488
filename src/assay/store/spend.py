"""What each run has spent (`run_spend`), committed with the results it paid for.

A run resumed after a kill or a budget stop starts its Budget (engine/budget.py) from what it
has already spent, so `--budget-usd` caps the run, not each invocation of it.
"""

from __future__ import annotations

from assay.store.db import Store


def spent_so_far(store: Store, run_id: str) -> float:
    """What a run has spent in earlier invocations."""
    row = store.db.execute("SELECT spent_usd FROM run_spend WHERE run_id = ?", (run_id,)).fetchone()
    return float(row[0]) if row else 0.0


def queue_spend(store: Store, run_id: str, amount: float) -> None:
    """Add to a run's recorded spend at the next flush (with the results it paid for)."""
    store.queue(
        "INSERT INTO run_spend (run_id, spent_usd) VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE"
        " SET spent_usd = spent_usd + excluded.spent_usd",
        (run_id, amount),
    )
