"""Score rows recorded for judge monitoring (`judge_scores`), and reading them back.

One row per run, source, prompt hash and trial, as `assay judge` (direct mode, also in the
suite chain), `assay history --add-scores` or `save_score_rows` recorded it (recording the same
row again replaces it in place): `run_id`, `source` (`judge:<model>` or `human:<id>`),
`prompt_sha256` (see `measure.history.prompt_hash`), the trial key, the row's `score` (the
`--metric` value, else the mean of its numeric metrics), the response `length` (from the trials
given at ingestion or the store's `trials` table), the JSON record. measure/history.py turns
the rows into the monitoring report.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.core.records import ScoreRow
from assay.measure.bias import score_value
from assay.measure.history import JudgeScore, prompt_hash
from assay.measure.inputs import TrialKey
from assay.store.db import Connected, Store, now_iso

_SAME_ROW = (
    "run_id = ? AND source = ? AND prompt_sha256 = ? AND case_id = ? AND trial = ?"
    " AND condition = ?"
)


def stored_trial_lengths(store: Store, run_id: str) -> dict[TrialKey, int]:
    """Response length in characters of each answered trial of a run in the store."""
    lengths: dict[TrialKey, int] = {}
    for record in store.trial_records(run_id):
        if record.get("error") is None and isinstance(record.get("response"), str):
            lengths[(record["case_id"], record["trial"], record["condition"])] = len(
                record["response"]
            )
    return lengths


def save_score_rows(
    store: Store,
    run_id: str,
    rows: Sequence[ScoreRow],
    trial_lengths: dict[TrialKey, int] | None = None,
    metric: str | None = None,
    lines: Sequence[str] | None = None,
) -> int:
    """Record score rows of one run for monitoring; lengths default to the store's trials;
    `lines` are the rows' JSON (`model_dump_json`) when the caller made them already.

    A row already recorded for the same run, source, prompt hash and trial is replaced in
    place (it keeps its position), so recording a run again never counts it twice.
    """
    lengths = trial_lengths if trial_lengths is not None else stored_trial_lengths(store, run_id)
    created = now_iso()
    # One statement per row key: a key given twice keeps its first position and its last
    # values, as replacing it in place row by row would. Then two batches: the keys already
    # recorded are updated, the others inserted in order (a run recorded for the first time,
    # as after each judged run, has only the second, as plain inserts).
    recorded: dict[tuple[str, str, str, str, int, str], tuple[object, ...]] = {}
    texts = lines if lines is not None else [row.model_dump_json() for row in rows]
    for row, text in zip(rows, texts, strict=True):
        key = (
            run_id,
            row.source or "unknown",
            prompt_hash(row),
            row.case_id,
            row.trial,
            row.condition,
        )
        recorded[key] = (
            score_value(row, metric),
            lengths.get((row.case_id, row.trial, row.condition)),
            text,
            created,
        )
    fresh = (
        store.db.execute("SELECT 1 FROM judge_scores WHERE run_id = ? LIMIT 1", (run_id,))
    ).fetchone() is None
    if fresh:  # nothing of this run recorded yet
        for key, values in recorded.items():
            store.queue(
                "INSERT INTO judge_scores (run_id, source, prompt_sha256, case_id, trial,"
                " condition, score, length, record, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, *values),
            )
    else:
        for key, values in recorded.items():
            store.queue(
                "UPDATE judge_scores SET score = ?, length = ?, record = ?, created_at = ?"
                f" WHERE {_SAME_ROW}",
                (*values, *key),
            )
        for key, values in recorded.items():
            store.queue(
                "INSERT INTO judge_scores (run_id, source, prompt_sha256, case_id, trial,"
                " condition, score, length, record, created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?,"
                f" ?, ? WHERE NOT EXISTS (SELECT 1 FROM judge_scores WHERE {_SAME_ROW})",
                (*key, *values, *key),
            )
    store.flush()
    return len(rows)


def judge_scores(store: Connected) -> list[JudgeScore]:
    """Every recorded score row, in the order it was first recorded."""
    cursor = store.db.execute(
        "SELECT run_id, source, prompt_sha256, case_id, trial, condition, score, length"
        " FROM judge_scores ORDER BY id"
    )
    return [JudgeScore(r, s, h, (c, t, k), v, n) for r, s, h, c, t, k, v, n in cursor]
