"""assay: evaluate LLM prompts, models and agents before they ship.

The public API is `assay.api`'s (`run`, `judge`, `evaluate`, `calibrate`, `bias`, `winrate`,
`rank`, `history`, `import_results`, their result types, and the async twins `aevaluate`,
`arun`, `ajudge`, ...), re-exported here. Names are imported on first use, so `import assay`
and the command line start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay import api
from assay.api import __all__ as __all__

if TYPE_CHECKING:
    from assay.api import *  # noqa: F403  (the names above, for type checkers)


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(api, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's own names and the API (for `dir()`, `help()` and completion)."""
    return sorted({*(n for n in globals() if n.startswith("__")), "api", *__all__})
