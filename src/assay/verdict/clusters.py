"""Correlated cases: the cluster is the unit of evidence (docs/design.md, "Correlated cases").

Cases that share a template, a source document or a conversation declare one `cluster`
(a case field). Their scores move together, so n such cases carry less evidence than n
independent ones, and an interval over cases is too narrow (intra-class correlation 0.5 in
clusters of 10: a 95% t interval over cases covers the true delta about 73% of the time).
Cluster-robust inference (Miller 2024, "Adding Error Bars to Evals", section 2.2) makes the
cluster the independent unit; here each cluster is summarised by its mean, as each case's
trials are averaged first, and the interval runs over one value per cluster
(`verdict.interval.paired_intervals`'s input: one bounded value per independent unit).

Weights: every cluster weighs the same whatever its size, so the figure a check decides on
is the mean over clusters of each cluster's mean over its cases (the mean over cases when
the clusters are of one size). A big cluster is one template asked many ways, not more
independent evidence; the case-weighted alternative (Miller's ratio estimator) would feed
the interval values scaled by cluster size, no longer within the scale's bounds. A case
without a cluster is a cluster of its own, so a catalogue that declares none is gated
exactly as before. `MIN_CASES` counts clusters, and "cases that would likely settle it"
are clusters needed times the mean cluster size.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

import numpy as np

from assay.verdict.interval import FloatArray

Unit = tuple[bool, str]
"""A case's unit of evidence: (True, its cluster) or (False, its own id)."""


class Clustered(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def cluster(self) -> str | None: ...


C = TypeVar("C", bound=Clustered)


def cluster_map(cases: Iterable[Clustered] | None) -> dict[str, str] | None:
    """Each case id's declared cluster; None when no case declares one (then every case is
    its own unit and nothing changes)."""
    if cases is None:
        return None
    found = {case.id: case.cluster for case in cases if case.cluster is not None}
    return found or None


def units_of(case_ids: Sequence[str], clusters: Mapping[str, str] | None) -> list[Unit] | None:
    """Each case's unit, in the order of `case_ids`; None without declared clusters."""
    if clusters is None:
        return None
    return [(True, clusters[c]) if c in clusters else (False, c) for c in case_ids]


def unit_means(values: FloatArray, units: Sequence[Hashable]) -> FloatArray:
    """rows × columns (NaN = absent) → units × columns: each unit's mean over its rows that
    carry the column, NaN where none does; units in the order they first appear (a case's
    trials, `compare.case_means`; a cluster's cases, `Unit`)."""
    table = np.asarray(values, dtype=np.float64)
    if table.ndim == 1:
        table = table[:, None]
    codes: dict[Hashable, int] = {}
    index = np.fromiter((codes.setdefault(u, len(codes)) for u in units), dtype=np.int64)
    sums = np.zeros((len(codes), table.shape[1]))
    counts = np.zeros((len(codes), table.shape[1]))
    seen = ~np.isnan(table)
    np.add.at(sums, index, np.where(seen, table, 0.0))
    np.add.at(counts, index, seen.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        means: FloatArray = sums / counts
    return means


def cases_from_units(needed: int | None, cases: int, units: int) -> int | None:
    """Units (clusters) needed as cases: times the mean cases per unit seen so far."""
    if needed is None or units <= 0 or cases <= units:
        return needed
    return math.ceil(needed * cases / units)


def clusters_text(clusters: int | None) -> str:
    """` in 12 clusters` when clusters were declared, else nothing."""
    if clusters is None:
        return ""
    return f" in {clusters} cluster{'' if clusters == 1 else 's'}"


def whole_units(cases: Iterable[C]) -> list[list[C]]:
    """The cases as units of evidence, in the order each unit's first case comes: each
    cluster's cases together (in their order), every case without a cluster alone. A
    sequential run's look takes whole units (`verdict.looks.look_order`)."""
    units: dict[Unit, list[C]] = {}
    for case in cases:
        key = (True, case.cluster) if case.cluster is not None else (False, case.id)
        units.setdefault(key, []).append(case)
    return list(units.values())


def unit_ends(order: Sequence[Clustered], ends: Sequence[int]) -> list[int]:
    """Each look's end moved on to the end of the cluster its last case belongs to, so a
    look holds whole clusters (`order` keeps each cluster's cases together); ends that then
    repeat are dropped."""
    result: list[int] = []
    for end in ends:
        while 0 < end < len(order) and _same(order[end - 1], order[end]):
            end += 1
        if not result or end > result[-1]:
            result.append(end)
    return result


def _same(a: Clustered, b: Clustered) -> bool:
    return a.cluster is not None and a.cluster == b.cluster
