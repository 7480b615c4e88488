"""What each run has spent (`run_spend`), committed with the results it paid for, and the
reservations of its calls in flight (`run_reservations`).

A run resumed after a kill or a budget stop starts its Budget (engine/budget.py) from what it
has already spent, so `--budget-usd` caps the run, not each invocation of it. A metered call's
reservation is committed before the call is sent and removed in the same transaction that
records what the call cost; one a killed process left behind (its call may well have been
billed) therefore counts as spent, at its worst case, for every later invocation.
"""

from __future__ import annotations

from assay.store.db import Store, now_iso


def spent_so_far(store: Store, run_id: str) -> float:
    """What a run has spent in earlier invocations, with the reservations still unsettled
    (calls in flight elsewhere, or lost with a killed process) at their worst case."""
    row = store.db.execute("SELECT spent_usd FROM run_spend WHERE run_id = ?", (run_id,)).fetchone()
    return (float(row[0]) if row else 0.0) + unsettled(store, run_id)


def unsettled(store: Store, run_id: str) -> float:
    """The reservations of a run's calls that no invocation has settled."""
    row = store.db.execute(
        "SELECT SUM(amount_usd) FROM run_reservations WHERE run_id = ?", (run_id,)
    ).fetchone()
    return float(row[0] or 0.0)


def hold_reservation(store: Store, run_id: str, holder: str, amount: float) -> int:
    """Record a call's reservation durably, now (before the call is sent); its id."""
    cursor = store.db.execute(
        "INSERT INTO run_reservations (run_id, holder, amount_usd, created_at) VALUES (?, ?, ?, ?)",
        (run_id, holder, amount, now_iso()),
    )
    return int(cursor.lastrowid or 0)


def queue_release(store: Store, reservation: int) -> None:
    """Remove a settled reservation at the next flush, with the spend it was settled at."""
    store.queue("DELETE FROM run_reservations WHERE id = ?", (reservation,))


def queue_spend(store: Store, run_id: str, amount: float) -> None:
    """Add to a run's recorded spend at the next flush (with the results it paid for)."""
    store.queue(
        "INSERT INTO run_spend (run_id, spent_usd) VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE"
        " SET spent_usd = spent_usd + excluded.spent_usd",
        (run_id, amount),
    )
