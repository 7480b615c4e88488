"""The public Python API: what the command line does, as functions returning typed results.

    import assay
    result = assay.evaluate("examples/gate/suite.toml")   # run, judge, score, gate, report
    result.verdict, result.passed, result.exit_code, result.checks, result.comparisons

`run` (cases × conditions × trials; a suite is then evaluated), `judge` (LLM judges over
trials), `evaluate` (trials, score rows or a suite → verdict and report) and `calibrate`
(judges against human labels), `judge_bench` (a judge against public human-labelled sets);
`bias`, `winrate`, `rank` and `history` (measuring judges and
models from comparisons and score rows); `import_results` (promptfoo results and Inspect AI
logs as cases, trials and score rows). The command line parses flags, calls these and prints.

The functions got here (`assay.run`, `assay.api.evaluate`, ...) check their arguments against
their type hints first (`api/arguments.py`): a wrong type is an InputError naming the argument.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.api.calibration import Calibration, calibrate
    from assay.api.evaluation import evaluate
    from assay.api.importing import ImportResult, import_results
    from assay.api.judgebench import BenchResult, judge_bench
    from assay.api.judging import judge
    from assay.api.measuring import (
        BiasAudit,
        History,
        Ranking,
        WinRates,
        bias,
        history,
        rank,
        winrate,
    )
    from assay.api.results import Result
    from assay.api.running import RunOutcome, run

# name -> the module that defines it; imported on first use, so the command line stays quick.
_HOME = {
    "Calibration": "calibration",
    "calibrate": "calibration",
    "evaluate": "evaluation",
    "ImportResult": "importing",
    "import_results": "importing",
    "judge": "judging",
    "BenchResult": "judgebench",
    "judge_bench": "judgebench",
    "BiasAudit": "measuring",
    "History": "measuring",
    "Ranking": "measuring",
    "WinRates": "measuring",
    "bias": "measuring",
    "history": "measuring",
    "rank": "measuring",
    "winrate": "measuring",
    "Result": "results",
    "RunOutcome": "running",
    "run": "running",
}
__all__ = [
    "BenchResult",
    "BiasAudit",
    "Calibration",
    "History",
    "ImportResult",
    "Ranking",
    "Result",
    "RunOutcome",
    "WinRates",
    "bias",
    "calibrate",
    "evaluate",
    "history",
    "import_results",
    "judge",
    "judge_bench",
    "rank",
    "run",
    "winrate",
]


_CHECKED: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name in _CHECKED:
        return _CHECKED[name]
    if name in _HOME:
        found = getattr(import_module(f"assay.api.{_HOME[name]}"), name)
        if isinstance(found, type):
            return found
        from assay.api.arguments import checked

        _CHECKED[name] = checked(found, f"assay.{name}")
        return _CHECKED[name]
    raise AttributeError(f"module 'assay.api' has no attribute {name!r}")
