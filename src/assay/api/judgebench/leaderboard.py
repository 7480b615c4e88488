"""The judge leaderboard: the store's benchmarked judges and the reference figures, as HTML."""

from __future__ import annotations

from pathlib import Path

from assay.api.judgebench.references import load_references
from assay.core.jsonl import atomic_writer
from assay.reports.leaderboard import BoardRow, render_leaderboard
from assay.store import Store
from assay.store.benchmarks import latest_benchmarks


def board_rows(store: Store) -> list[BoardRow]:
    """Every judge configuration benchmarked in `store` per set, then the references of those sets."""
    rows = [
        BoardRow(
            set_name=b.set_name,
            judge=b.judge if not b.prompt_sha256 else f"{b.judge} ({b.prompt_sha256[:8]})",
            items=b.items,
            accuracy=b.accuracy,
            accuracy_ci=b.figures.get("accuracy_ci"),
            position_consistency=b.position_consistency,
            kappa=b.figures.get("kappa"),
            position_bias=b.figures.get("position_bias"),
            p_prefer_longer=b.figures.get("p_prefer_longer"),
        )
        for b in latest_benchmarks(store)
    ]
    references = load_references()
    for name in sorted({r.set_name for r in rows}):
        for ref in references.get(name, []):
            rows.append(
                BoardRow(
                    set_name=name,
                    judge=ref["judge"],
                    items=ref["items"],
                    accuracy=ref["accuracy"],
                    accuracy_ci=None,
                    position_consistency=ref["position_consistency"],
                    kappa=None,
                    position_bias=None,
                    p_prefer_longer=None,
                    source=ref["source"],
                )
            )
    return rows


def write_leaderboard(path: Path, store: Store) -> None:
    """Write the leaderboard page of `store` to `path`."""
    page = render_leaderboard(board_rows(store))
    with atomic_writer(path) as handle:
        handle.write(page)
