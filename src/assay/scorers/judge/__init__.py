"""LLM judges as scorers: direct rubric scoring, pairwise comparison with position swap,
panels, a cascade, rubric generation. Prompts are versioned templates in `templates/`.

The public surface: `JudgeConfig`, `run_judging(trials, cases, config, store, progress,
caller)` and `JudgeResult`; the scorers `DirectJudge` (one trial → Score), `PairJudge` (a
pair → Comparison) and `Cascade`; `Rubric` and `load_rubric` for rubric files. Each name is
imported from its module on first use, so importing one submodule (`judge.config` to check a
suite's judges before a run) does not load them all.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.core.rubric import Rubric, load_rubric
    from assay.scorers.judge.cascade import Cascade
    from assay.scorers.judge.config import JudgeConfig, config_from_suite
    from assay.scorers.judge.direct import DirectJudge
    from assay.scorers.judge.pairwise import PairJudge, PairScore
    from assay.scorers.judge.run import JudgeResult, run_judging, run_judging_async

# name -> the module that defines it
_HOME = {
    "Cascade": "assay.scorers.judge.cascade",
    "DirectJudge": "assay.scorers.judge.direct",
    "JudgeConfig": "assay.scorers.judge.config",
    "JudgeResult": "assay.scorers.judge.run",
    "PairJudge": "assay.scorers.judge.pairwise",
    "PairScore": "assay.scorers.judge.pairwise",
    "Rubric": "assay.core.rubric",
    "config_from_suite": "assay.scorers.judge.config",
    "load_rubric": "assay.core.rubric",
    "run_judging": "assay.scorers.judge.run",
    "run_judging_async": "assay.scorers.judge.run",
}
__all__ = [
    "Cascade",
    "DirectJudge",
    "JudgeConfig",
    "JudgeResult",
    "PairJudge",
    "PairScore",
    "Rubric",
    "config_from_suite",
    "load_rubric",
    "run_judging",
    "run_judging_async",
]


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module 'assay.scorers.judge' has no attribute {name!r}")
