"""Each reviewer's queue: items the judge cascade sent to humans first, then the rest."""

from __future__ import annotations

from collections.abc import Sequence

from assay.review.items import ReviewItem
from assay.store.review import Mode, QueuedItem


def queue_order(items: Sequence[ReviewItem], queued: Sequence[QueuedItem]) -> list[ReviewItem]:
    """Items matching a `review_queue` row first (oldest row first), then catalogue order."""
    first_row: dict[int, int] = {}
    for rank, row in enumerate(queued):
        for item in items:
            if item.index not in first_row and row.matches(item.key):
                first_row[item.index] = rank
    flagged = sorted((i for i in items if i.index in first_row), key=lambda i: first_row[i.index])
    return flagged + [i for i in items if i.index not in first_row]


def flagged_indexes(items: Sequence[ReviewItem], queued: Sequence[QueuedItem]) -> set[int]:
    return {i.index for i in items if any(row.matches(i.key) for row in queued)}


def next_unanswered(
    order: Sequence[ReviewItem], answered: set[int], mode: Mode, after: int | None = None
) -> ReviewItem | None:
    """The first answerable item this reviewer has not answered, after `after` then wrapping."""
    start = 0
    if after is not None:
        positions = [i.index for i in order]
        start = positions.index(after) + 1 if after in positions else 0
    for item in [*order[start:], *order[:start]]:
        if item.answerable(mode) and item.index not in answered:
            return item
    return None
