"""What one review server needs: the items, the store, the mode, the rubric, the token."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.core.rubric import DEFAULT_RUBRIC, Rubric
from assay.review.items import ReviewSet
from assay.store.review import ItemKey, Mode, ReviewStore


@dataclass
class ReviewConfig:
    """Everything one review server needs."""

    review: ReviewSet
    store: ReviewStore
    mode: Mode = "scores"
    rubric: Rubric = field(default_factory=lambda: DEFAULT_RUBRIC)
    token: str | None = None
    title: str = "assay review"
    first: dict[ItemKey, str] = field(default_factory=dict)
