"""The run engine: conditions × cases × trials, concurrent, budgeted, cached, resumable."""

from assay.engine.plan import Condition, WorkItem, build_plan, render_prompt
from assay.engine.runner import Engine, RunResult, RunSettings
from assay.engine.session import RunRequest, execute, run_caller

__all__ = [
    "Condition",
    "Engine",
    "RunRequest",
    "RunResult",
    "RunSettings",
    "WorkItem",
    "build_plan",
    "execute",
    "render_prompt",
    "run_caller",
]
