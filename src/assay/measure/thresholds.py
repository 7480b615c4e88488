"""Default calibration thresholds (kept free of heavy imports: the CLI reads them at start-up)."""

from __future__ import annotations

import re
from functools import lru_cache

DEFAULT_SAFETY_DIMS = ("escalation", "self_harm")
DEFAULT_KAPPA = 0.6
SAFETY_MIN_ITEMS = 50
SAFETY_MIN_TPR_LOW = 0.9
MIN_ITEMS = 10  # below this a non-safety verdict is INSUFFICIENT


@lru_cache(maxsize=1024)  # a million labels name a handful of dimensions
def dimension_key(name: str) -> str:
    """A dimension's name as calibration compares it: lower case, runs of `-`, `_` and
    spaces as one `_` (people write `self-harm`, `Self harm` and `self_harm` for one thing)."""
    return re.sub(r"[-_\s]+", "_", name.strip().lower()).strip("_")
