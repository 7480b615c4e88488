"""Calibration results in the run store, per judge configuration, and the suite-gate check.

Table `judge_calibrations` (declared in store/schema.py; one row per calibrate run × dimension
× judge configuration): `judge` (the rater, e.g. `judge:gpt-4o`), `prompt_sha256` ('' when the
labels carry none), `dimension`, `verdict`, `n`, `kappa`, `weighted_kappa`, `agreement`,
`tpr_low`, `result` (the JSON figures), `labels_sha256`, `created_at`. The latest row per
configuration and dimension wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assay.measure.agreement import DimensionResult
from assay.measure.thresholds import dimension_key
from assay.store.db import Connected, Store, now_iso


@dataclass
class StoredCalibration:
    judge: str
    prompt_sha256: str | None
    dimension: str
    verdict: str
    n: int
    kappa: float | None
    agreement: float | None
    safety: bool
    created_at: str


def save_calibration(store: Store, results: dict[str, DimensionResult], labels_sha256: str) -> int:
    """Record every judge verdict of a calibrate run; return how many rows were written."""
    created = now_iso()
    count = 0
    for dimension, result in results.items():
        for judge in result.judges.values():
            kappa = judge.kappa if judge.kappa is not None else judge.weighted_kappa
            store.queue(
                "INSERT INTO judge_calibrations (judge, prompt_sha256, dimension, verdict, n, kappa,"
                " weighted_kappa, agreement, tpr_low, safety, result, labels_sha256, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    judge.rater,
                    judge.prompt_sha256 or "",
                    dimension,
                    judge.verdict,
                    judge.n,
                    kappa,
                    judge.weighted_kappa,
                    judge.agreement,
                    judge.tpr_ci[0] if judge.tpr_ci else None,
                    int(result.safety),
                    json.dumps(judge.as_json(), sort_keys=True),
                    labels_sha256,
                    created,
                ),
            )
            count += 1
    store.flush()
    return count


def latest_calibrations(store: Connected) -> list[StoredCalibration]:
    """The latest stored verdict per judge configuration and dimension."""
    rows = store.db.execute(
        "SELECT judge, prompt_sha256, dimension, verdict, n, kappa, agreement, safety, created_at"
        " FROM judge_calibrations WHERE id IN (SELECT MAX(id) FROM judge_calibrations"
        " GROUP BY judge, prompt_sha256, dimension) ORDER BY judge, prompt_sha256, dimension"
    )
    return [
        StoredCalibration(j, s or None, d, v, n, k, a, bool(safe), c)
        for j, s, d, v, n, k, a, safe, c in rows
    ]


def calibration_history(store: Store) -> list[dict[str, Any]]:
    """Every stored calibration row, oldest first (for `assay history`)."""
    rows = store.db.execute(
        "SELECT judge, prompt_sha256, dimension, verdict, n, kappa, agreement, created_at"
        " FROM judge_calibrations ORDER BY id"
    )
    keys = (
        "judge",
        "prompt_sha256",
        "dimension",
        "verdict",
        "n",
        "kappa",
        "agreement",
        "created_at",
    )
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _normalise_judge(judge: str) -> str:
    return judge if judge.startswith(("judge:", "human:")) else f"judge:{judge}"


def require_calibrated_judge(
    store: Store,
    judge: str,
    prompt_sha256: str | None = None,
    dimensions: Iterable[str] | None = None,
) -> list[str]:
    """Why this judge configuration may not gate a release (an empty list: it may).

    The configuration is calibrated when its latest stored verdict is PASS on every dimension
    asked for (default: every dimension it was calibrated on, at least one; names compared by
    `dimension_key`, so `self-harm` finds `self_harm`). `judge` is the
    model spec or the `judge:` rater; `prompt_sha256` the hash of its prompt template.
    """
    rater = _normalise_judge(judge)
    stored = {
        dimension_key(c.dimension): c
        for c in latest_calibrations(store)
        if c.judge == rater and (c.prompt_sha256 or None) == (prompt_sha256 or None)
    }
    config = rater + (f" (prompt {prompt_sha256[:12]})" if prompt_sha256 else "")
    wanted = list(dimensions) if dimensions is not None else sorted(stored)
    if not wanted:
        return [f"judge {config} has no stored calibration; run `assay calibrate --labels FILE`"]
    problems = []
    for dimension in wanted:
        result = stored.get(dimension_key(dimension))
        if result is None:
            problems.append(f"judge {config} is not calibrated on {dimension!r}")
        elif result.verdict != "PASS":
            problems.append(
                f"judge {config} calibration on {dimension!r} is {result.verdict}"
                f" (n={result.n}, {result.created_at})"
            )
    return problems
