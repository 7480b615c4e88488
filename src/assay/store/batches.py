"""Provider batches (`batches`) and the requests in each (`batch_requests`).

A request is keyed by its call cache key (the batch entry's custom_id) under the endpoint
(provider and base URL) its batch belongs to. Submissions are committed at once, not at the
next flush: a process killed a moment later must find the batch it submitted.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.store.db import Store, now_iso
from assay.store.transactions import immediate


def batch_holding(store: Store, endpoint: str, custom_id: str) -> str | None:
    """The id of the batch that holds the request, or None (never submitted, or dropped)."""
    row = store.db.execute(
        "SELECT batch_id FROM batch_requests WHERE endpoint = ? AND custom_id = ?",
        (endpoint, custom_id),
    ).fetchone()
    return str(row[0]) if row else None


def save_batch(store: Store, endpoint: str, batch_id: str, custom_ids: Sequence[str]) -> None:
    """Record a submitted batch and its requests, committed now."""
    now = now_iso()
    with immediate(store.db) as db:
        db.execute(
            "INSERT OR REPLACE INTO batches (batch_id, endpoint, status, created_at, updated_at)"
            " VALUES (?, ?, 'submitted', ?, ?)",
            (batch_id, endpoint, now, now),
        )
        db.executemany(
            "INSERT OR REPLACE INTO batch_requests (endpoint, custom_id, batch_id)"
            " VALUES (?, ?, ?)",
            [(endpoint, custom_id, batch_id) for custom_id in custom_ids],
        )


def batch_status(store: Store, endpoint: str, batch_id: str) -> str | None:
    """The status last recorded for a batch (None: not in the store)."""
    row = store.db.execute(
        "SELECT status FROM batches WHERE endpoint = ? AND batch_id = ?", (endpoint, batch_id)
    ).fetchone()
    return str(row[0]) if row else None


def queue_batch_status(store: Store, endpoint: str, batch_id: str, status: str) -> None:
    """Record a batch's status at the next flush."""
    store.queue(
        "UPDATE batches SET status = ?, updated_at = ? WHERE endpoint = ? AND batch_id = ?",
        (status, now_iso(), endpoint, batch_id),
    )


def queue_drop_requests(store: Store, endpoint: str, custom_ids: Sequence[str]) -> None:
    """Forget requests whose batch gave no answer (an error, or expired before they ran), at
    the next flush: a later run submits them again."""
    for custom_id in custom_ids:
        store.queue(
            "DELETE FROM batch_requests WHERE endpoint = ? AND custom_id = ?",
            (endpoint, custom_id),
        )
