"""Human review in the browser: `assay review serve` and `assay review export`."""

from assay.core.raters import item_id, pair_item_id
from assay.review.app import create_app
from assay.review.config import ReviewConfig
from assay.review.export import export
from assay.review.items import ReviewItem, ReviewSet, open_review_set
from assay.store.review import ItemKey, ReviewStore
from assay.web.security import is_loopback, suggest_token, token_weakness

__all__ = [
    "ItemKey",
    "ReviewConfig",
    "ReviewItem",
    "ReviewSet",
    "ReviewStore",
    "create_app",
    "export",
    "is_loopback",
    "item_id",
    "open_review_set",
    "pair_item_id",
    "suggest_token",
    "token_weakness",
]
