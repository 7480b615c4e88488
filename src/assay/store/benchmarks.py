"""The judge_benchmarks table: `assay judge-bench` figures per judge configuration and set,
so the judge leaderboard (`--report`) shows every judge benchmarked in this store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assay.store.db import Store, now_iso


@dataclass(frozen=True, slots=True)
class StoredBenchmark:
    """The latest figures of one judge configuration on one set."""

    judge: str
    prompt_sha256: str
    set_name: str
    items: int
    accuracy: float | None
    position_consistency: float | None
    figures: dict[str, Any]
    created_at: str


def save_benchmark(
    store: Store, judge: str, prompt_sha256: str, set_name: str, figures: dict[str, Any]
) -> None:
    """Record one judge configuration's figures on one set (committed at once)."""
    store.queue(
        "INSERT INTO judge_benchmarks (judge, prompt_sha256, set_name, items, accuracy,"
        " position_consistency, figures, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            judge,
            prompt_sha256,
            set_name,
            int(figures["items"]),
            figures.get("accuracy"),
            figures.get("position_consistency"),
            json.dumps(figures, ensure_ascii=False),
            now_iso(),
        ),
    )
    store.flush()


def latest_benchmarks(store: Store) -> list[StoredBenchmark]:
    """The latest figures per judge configuration and set, by judge then set."""
    rows = store.db.execute(
        "SELECT judge, prompt_sha256, set_name, items, accuracy, position_consistency, figures,"
        " created_at FROM judge_benchmarks WHERE id IN (SELECT MAX(id) FROM judge_benchmarks"
        " GROUP BY judge, prompt_sha256, set_name) ORDER BY judge, prompt_sha256, set_name"
    )
    return [StoredBenchmark(j, s, n, i, a, c, json.loads(f), t) for j, s, n, i, a, c, f, t in rows]
