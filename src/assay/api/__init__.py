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
They work from a thread whose event loop is running (Jupyter, pytest-asyncio), and each has an
`async` twin named with an `a` in front: `await assay.aevaluate(...)`, `arun`, `ajudge`, ...
(`api/entry.py`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.api.calibration import Calibration, calibrate
    from assay.api.entry import twin
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
    from assay.api.running import RunOutcome, Spent, run

    abias = twin(bias)
    acalibrate = twin(calibrate)
    aevaluate = twin(evaluate)
    ahistory = twin(history)
    aimport_results = twin(import_results)
    ajudge = twin(judge)
    ajudge_bench = twin(judge_bench)
    arank = twin(rank)
    arun = twin(run)
    awinrate = twin(winrate)

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
    "Spent": "running",
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
    "Spent",
    "WinRates",
    "abias",
    "acalibrate",
    "aevaluate",
    "ahistory",
    "aimport_results",
    "ajudge",
    "ajudge_bench",
    "arank",
    "arun",
    "awinrate",
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


def __getattr__(name: str) -> Any:
    """An API name, imported on first use: a function with its arguments checked
    (`api/arguments.py`) and callable from a running event loop (`api/entry.py`), `a`+name
    its async twin; cached in the module, so the next look-up finds it there."""
    base = name[1:] if name not in _HOME and name[1:] in _HOME else name
    if base not in _HOME:
        raise AttributeError(f"module 'assay.api' has no attribute {name!r}")
    found = getattr(import_module(f"assay.api.{_HOME[base]}"), base)
    if isinstance(found, type):
        if name != base:  # twins are for functions only
            raise AttributeError(f"module 'assay.api' has no attribute {name!r}")
        return found
    from assay.api.arguments import checked
    from assay.api.entry import public, twin

    checks = checked(found, f"assay.{base}")
    value = public(checks) if name == base else twin(checks)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names and the API (for `dir()`, `help()` and completion)."""
    return sorted({*(n for n in globals() if n.startswith("__")), *__all__})
