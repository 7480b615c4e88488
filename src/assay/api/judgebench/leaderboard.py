"""The judge leaderboard: the store's benchmarked judges and the reference figures, as HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.api.judgebench.references import load_references
from assay.core.jsonl import atomic_writer
from assay.reports.leaderboard import BoardRow, render_leaderboard
from assay.store import Store
from assay.store.benchmarks import latest_benchmarks


def _accuracies(parts: dict[str, Any] | None) -> dict[str, float | None] | None:
    return None if not parts else {name: p.get("accuracy") for name, p in parts.items()}


def board_rows(store: Store) -> list[BoardRow]:
    """Every judge configuration benchmarked in `store` per set, then the references of those
    sets. On a set of subsets, every row's accuracy and position consistency is the subsets'
    mean (as the references are published)."""
    rows = []
    for b in latest_benchmarks(store):
        mean = b.figures.get("subset_mean")
        rows.append(
            BoardRow(
                set_name=b.set_name,
                judge=b.judge if not b.prompt_sha256 else f"{b.judge} ({b.prompt_sha256[:8]})",
                items=b.items,
                accuracy=mean["accuracy"] if mean else b.accuracy,
                accuracy_ci=None if mean else b.figures.get("accuracy_ci"),
                position_consistency=mean["position_consistency"]
                if mean
                else b.position_consistency,
                kappa=b.figures.get("kappa"),
                position_bias=b.figures.get("position_bias"),
                p_prefer_longer=b.figures.get("p_prefer_longer"),
                subsets=_accuracies(b.figures.get("subsets")),
            )
        )
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
                    model=ref["model"],
                    subsets=_accuracies(ref["subsets"]),
                )
            )
    return rows


def write_leaderboard(path: Path, store: Store) -> None:
    """Write the leaderboard page of `store` to `path`."""
    page = render_leaderboard(board_rows(store))
    with atomic_writer(path) as handle:
        handle.write(page)
