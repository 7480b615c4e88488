"""What `assay judge` and `assay judge-bench` build from their flags: the judge's
configuration and result, and the warnings about judging a model of the same family."""

from __future__ import annotations

from assay.scorers.judge import JudgeConfig, JudgeResult
from assay.scorers.judge.config import family_warnings

__all__ = ["JudgeConfig", "JudgeResult", "family_warnings"]
