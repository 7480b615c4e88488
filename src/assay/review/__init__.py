"""Human review in the browser: `assay review serve` and `assay review export`."""

from assay.core.raters import item_id, pair_item_id
from assay.review.app import ReviewConfig, create_app
from assay.review.export import export
from assay.review.items import ReviewItem, ReviewSet, open_review_set
from assay.review.rubric import DEFAULT_RUBRIC, Metric, Rubric
from assay.review.security import is_loopback
from assay.store.review import ItemKey, ReviewStore

__all__ = [
    "DEFAULT_RUBRIC",
    "ItemKey",
    "Metric",
    "ReviewConfig",
    "ReviewItem",
    "ReviewSet",
    "ReviewStore",
    "Rubric",
    "create_app",
    "export",
    "is_loopback",
    "item_id",
    "open_review_set",
    "pair_item_id",
]
