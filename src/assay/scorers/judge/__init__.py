"""LLM judges as scorers: direct rubric scoring, pairwise comparison with position swap,
panels, a cascade, rubric generation. Prompts are versioned templates in `templates/`.

The public surface: `JudgeConfig`, `run_judging(trials, cases, config, store, progress,
caller)` and `JudgeResult`; the scorers `DirectJudge` (one trial → Score), `PairJudge` (a
pair → Comparison) and `Cascade`; `Rubric` and `load_rubric` for rubric files.
"""

from assay.core.rubric import Rubric, load_rubric
from assay.scorers.judge import mock  # noqa: F401  (registers the scripted judges mock:first, mock:fair, ...)
from assay.scorers.judge.cascade import Cascade
from assay.scorers.judge.config import JudgeConfig, config_from_suite
from assay.scorers.judge.direct import DirectJudge
from assay.scorers.judge.pairwise import PairJudge, PairScore
from assay.scorers.judge.run import JudgeResult, run_judging, run_judging_async

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
