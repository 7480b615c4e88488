"""A judge's figures against gold labels on one benchmark set (`assay judge-bench`).

Per set, from the judge's two-order Comparisons and the set's gold labels (`a`, `b`, `tie`):
- `accuracy`: per item, the share of the judge's passes (one per order) whose verdict is the
  gold label, averaged over items: the convention of the published judge benchmarks (LLMBar
  averages the two orders), so a judge that always picks the response shown first scores 0.5
  on a set without ties. 95% interval: percentile bootstrap over items.
- `verdict_accuracy`: the final verdict after assay's swap rule (passes that disagree are a
  tie) against the gold label, with its Wilson interval.
- `kappa`: Cohen's κ between the final verdicts and the gold labels
  (`measure.agreement.cohen_kappa`, the one `assay calibrate` uses), with a percentile
  bootstrap interval.
- position consistency, first-position share and the length preference, with their tests,
  from `measure.bias`, each with a Wilson interval; `position_bias` is
  |first-position wins − second-position wins| / two-order comparisons: the net share of
  items whose verdict followed the position (0 for a consistent judge, 1 for `mock:first`).

A set made of subsets (LLMBar's adversarial set) also gets each subset's accuracy and
position consistency (`subset_figures`) and their unweighted mean (`subset_mean`), the way
the LLMBar paper reports its judges, so a judge compares like with like with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assay.core.records import Comparison
from assay.measure.agreement import cohen_kappa, wilson
from assay.measure.bias import length_preference, position_bias, prefer_longer

LABELS = ("a", "b", "tie")
Orders = list[tuple[str | None, str | None]]
"""A judge's verdict per item in the set's order and in the swapped order (None: unread)."""
RESAMPLES = 2000
SEED = 0


def _resamples(n: int) -> np.ndarray:
    """RESAMPLES seeded bootstrap draws of n item indices, one row each."""
    return np.random.default_rng(SEED).integers(0, n, (RESAMPLES, n))


def _percentiles(values: np.ndarray) -> list[float] | None:
    kept = values[~np.isnan(values)]
    if not len(kept):
        return None
    low, high = np.percentile(kept, [2.5, 97.5])
    return [float(low), float(high)]


def mean_interval(values: np.ndarray) -> list[float] | None:
    """95% percentile bootstrap interval of the mean of per-item values."""
    if len(values) < 2:
        return None
    return _percentiles(values[_resamples(len(values))].mean(axis=1))


def kappa_interval(gold: Sequence[str], judged: Sequence[str]) -> list[float] | None:
    """95% percentile bootstrap interval of Cohen's κ over items. Each resample's κ comes
    from its 3×3 confusion matrix (the same formula as scikit-learn's unweighted κ, which
    `bench_figures` reports as the point estimate; thousands of sklearn calls are too slow)."""
    n = len(gold)
    if n < 2:
        return None
    code = {label: index for index, label in enumerate(LABELS)}
    cells = np.asarray([code[g] * 3 + code[j] for g, j in zip(gold, judged, strict=True)])
    draws = cells[_resamples(n)]
    counts = np.stack([(draws == c).sum(axis=1) for c in range(9)], axis=1).reshape(-1, 3, 3)
    observed = np.trace(counts, axis1=1, axis2=2) / n
    expected = (counts.sum(axis=2) * counts.sum(axis=1)).sum(axis=1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)
    return _percentiles(kappas)


def pass_accuracy(gold: str, comparison: Comparison) -> float:
    """The share of the comparison's passes whose verdict is the gold label."""
    passes = comparison.passes or []
    if not passes:
        return float(comparison.verdict == gold)
    return sum(p.winner == gold for p in passes) / len(passes)


def bench_figures(gold: Sequence[str], comparisons: Sequence[Comparison]) -> dict[str, Any]:
    """The judge's figures on one set; `gold[i]` labels `comparisons[i]`."""
    per_item = np.asarray([pass_accuracy(g, c) for g, c in zip(gold, comparisons, strict=True)])
    verdicts = [c.verdict for c in comparisons]
    hits = sum(v == g for v, g in zip(verdicts, gold, strict=True))
    bias = position_bias(comparisons)
    position = bias.as_json()
    decided = bias.first + bias.second
    longer_won, unequal = prefer_longer(comparisons, None)
    n = len(comparisons)
    return {
        "items": n,
        "accuracy": float(per_item.mean()) if n else None,
        "accuracy_ci": mean_interval(per_item),
        "verdict_accuracy": hits / n if n else None,
        "verdict_accuracy_ci": wilson(hits, n),
        "kappa": cohen_kappa(gold, verdicts, LABELS) if n >= 2 else None,
        "kappa_ci": kappa_interval(gold, verdicts),
        **position,
        "position_consistency_ci": wilson(bias.consistent, bias.two_order),
        "first_position_share_ci": wilson(bias.first, decided),
        "position_bias": abs(bias.first - bias.second) / bias.two_order if bias.two_order else None,
        **length_preference(longer_won, unequal),
        "p_prefer_longer_ci": wilson(longer_won, unequal),
    }


def subset_figures(
    gold: Sequence[str], comparisons: Sequence[Comparison], subsets: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per subset (`subsets[i]` holds item i; in order of first appearance): items,
    accuracy (as `bench_figures`) and position consistency."""
    found: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(subsets):
        chosen = [i for i, s in enumerate(subsets) if s == name]
        part = [comparisons[i] for i in chosen]
        consistency = position_bias(part).as_json()["position_consistency"]
        found[name] = {
            "items": len(chosen),
            "accuracy": float(np.mean([pass_accuracy(gold[i], comparisons[i]) for i in chosen])),
            "position_consistency": consistency,
        }
    return found


def subset_mean(parts: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
    """The unweighted mean over subsets of accuracy and of position consistency."""
    means: dict[str, float | None] = {}
    for key in ("accuracy", "position_consistency"):
        values = [p[key] for p in parts.values() if p.get(key) is not None]
        means[key] = sum(values) / len(values) if values else None
    return means


def reference_figures(gold: Sequence[str], orders: Orders) -> dict[str, Any]:
    """A reference judge's accuracy and position consistency from its published verdicts:
    `orders[i]` is its verdict on item i in the set's order and in the swapped order, mapped
    back to the set's labels (None: no parseable verdict, which counts as wrong)."""
    correct = sum((ab == g) + (ba == g) for g, (ab, ba) in zip(gold, orders, strict=True))
    agree = sum(ab == ba for ab, ba in orders)
    n = len(orders)
    return {
        "items": n,
        "accuracy": correct / (2 * n) if n else None,
        "position_consistency": agree / n if n else None,
    }
