"""assay: evaluate LLM prompts, models and agents before they ship.

The public API (see `assay.api`): `run`, `judge`, `evaluate`, `calibrate`, `bias`, `winrate`,
`rank`, `history` and their result types. They are imported on first use, so `import assay` and the command line start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.api import (
        BiasAudit,
        Calibration,
        History,
        Ranking,
        Result,
        RunOutcome,
        WinRates,
        bias,
        calibrate,
        evaluate,
        history,
        judge,
        rank,
        run,
        winrate,
    )

__all__ = [
    "BiasAudit",
    "Calibration",
    "History",
    "Ranking",
    "Result",
    "RunOutcome",
    "WinRates",
    "bias",
    "calibrate",
    "evaluate",
    "history",
    "judge",
    "rank",
    "run",
    "winrate",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from assay import api

        return getattr(api, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
