"""LLM judges: direct rubric scoring, pairwise comparison with position swap, panels, a
cascade, rubric generation. Prompts are versioned templates in `templates/`.

The public surface: `JudgeConfig`, `run_judging(trials, cases, config, store)` and
`JudgeResult`; `Rubric` and `load_rubric` for rubric files.
"""

from assay.core.rubric import Rubric, load_rubric
from assay.scorers.judge import mock  # noqa: F401  (registers the scripted judges mock:first, mock:fair, ...)
from assay.scorers.judge.session import JudgeConfig, JudgeResult, config_from_suite, run_judging

__all__ = [
    "JudgeConfig",
    "JudgeResult",
    "Rubric",
    "config_from_suite",
    "load_rubric",
    "run_judging",
]
