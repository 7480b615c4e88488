"""The judgments and review_queue tables: stored judge verdicts (resume) and the cascade's
review queue.

Each finished judging item is written at once under its judgment key, so re-running the
same judging resumes: items stored with status `ok` are read back, not re-asked. Items whose
judging failed are stored with the error and every raw reply, and are asked again next time.
The review queue lists items the cascade sends to humans (`assay review` serves them first).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.store.db import Store, now_iso, record_json

CHUNK = 500  # keys per SELECT (SQLite's bound-parameter limit)


def save_judgment(
    store: Store,
    *,
    key: str,
    mode: str,
    case_id: str,
    trial: int,
    a: str,
    b: str,
    judge: str,
    prompt_sha256: str,
    status: str,
    record: dict[str, Any] | None,
    error: str | None,
    raw: Sequence[str],
) -> None:
    """Store one judged (status `ok`, with its record) or failed (`error`) item, committed
    at once so a kill loses no finished judgment (within a run, pipelined with it, at the
    run's next commit: `Store.commit_soon`)."""
    store.queue(
        "INSERT OR REPLACE INTO judgments (key, mode, case_id, trial, a, b, judge, prompt_sha256,"
        " status, record, error, raw, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            mode,
            case_id,
            trial,
            a,
            b,
            judge,
            prompt_sha256,
            status,
            record_json(record) if record is not None else None,
            error,
            record_json(list(raw)),
            now_iso(),
        ),
    )
    store.commit_soon()


def judged_records(store: Store, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The records of the items among `keys` already judged successfully (resume)."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(keys), CHUNK):
        chunk = list(keys[start : start + CHUNK])
        rows = store.db.execute(
            f"SELECT key, record FROM judgments WHERE status = 'ok' AND key IN"
            f" ({','.join('?' * len(chunk))})",
            chunk,
        )
        found.update({key: json.loads(record) for key, record in rows})
    return found


def queue_review(
    store: Store, case_id: str, trial: int, a: str, b: str, reason: str, source: str
) -> None:
    """Put an item on the review queue (written with the next flush)."""
    store.queue(
        "INSERT OR REPLACE INTO review_queue (case_id, trial, a, b, reason, source,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (case_id, trial, a, b, reason, source, now_iso()),
    )
