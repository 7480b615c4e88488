"""The deterministic scorer protocol and its registry.

A scorer reads one trial (with its case) and returns named per-trial metrics, or None when
the case gives it nothing to check — a skipped case is never scored 1.0. `aggregate` turns
the per-trial metrics of a corpus into corpus figures. Scorers register by name so a suite
can select them, and plugins can add more through the `assay.scorers` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, ClassVar, Protocol, TypeVar

from assay.core.errors import InputError
from assay.core.records import Case, Trial

Metrics = dict[str, float]


@dataclass(slots=True)
class ScoreInput:
    """What a scorer sees: the case, the trial, and known document ids (knowledge base)."""

    case: Case
    trial: Trial
    documents: dict[str, str] = field(default_factory=dict)


class Scorer(Protocol):
    """One deterministic check; `name` is its registry key."""

    name: ClassVar[str]

    def score(self, item: ScoreInput) -> Metrics | None:
        """Per-trial metrics, or None when there is nothing to check."""
        ...

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        """Corpus figures over the trials that were scored."""
        ...


def mean_aggregate(rows: Sequence[Metrics]) -> Metrics:
    """The default corpus aggregate: the mean of each metric over the rows that have it."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for key, value in row.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}


S = TypeVar("S")
SCORERS: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable[[type[S]], type[S]]:
    """Class decorator: make a scorer selectable by `name`."""

    def decorate(cls: type[S]) -> type[S]:
        SCORERS[name] = cls
        return cls

    return decorate


def _load_plugins() -> None:
    for entry in entry_points(group="assay.scorers"):
        if entry.name not in SCORERS:
            SCORERS[entry.name] = entry.load()


def create_scorer(name: str, **options: Any) -> Scorer:
    """Build a registered scorer with its options (from the suite file)."""
    if name not in SCORERS:
        _load_plugins()
    if name not in SCORERS:
        raise InputError(f"ERROR: scorer {name!r}: unknown (known: {', '.join(sorted(SCORERS))})")
    try:
        scorer: Scorer = SCORERS[name](**options)
    except TypeError as exc:
        raise InputError(f"ERROR: scorer {name!r}: bad options: {exc}") from None
    return scorer
