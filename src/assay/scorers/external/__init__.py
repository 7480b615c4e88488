"""DeepEval and RAGAS metrics as assay scorers (the optional extra `assay[metrics]`).

`deepeval:<MetricClass>` (e.g. `deepeval:HallucinationMetric`) and `ragas:<metric>` (e.g.
`ragas:faithfulness`) in `[scoring] scorers` resolve here, lazily: the library is imported
only when a suite names one of its metrics (exit 2 "install assay[metrics]" when it is
missing; exit 2 listing the available metrics for an unknown name). The library's LLM calls
go through assay's model layer (`bridge.py`): the run's `Caller` (call cache, budget,
retries) and the judge model (the scorer's `judge` option, else the suite's first judge).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.scorers.base import PREFIXES


def _deepeval(name: str) -> Callable[..., Any]:
    from assay.scorers.external.deepeval_metrics import resolve

    return resolve(name)


def _ragas(name: str) -> Callable[..., Any]:
    from assay.scorers.external.ragas_metrics import resolve

    return resolve(name)


PREFIXES.update({"deepeval": _deepeval, "ragas": _ragas})
