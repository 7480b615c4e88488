"""Rubric generation for `assay rubric`: the generator, its strictness levels, the store it
caches its calls in, and the errors that end it (the judge could not answer; the budget)."""

from __future__ import annotations

from assay.engine.calls import BudgetExhausted
from assay.scorers.judge.ask import JudgeFailure
from assay.scorers.judge.generate import STRICTNESS_NOTES, generate_rubric
from assay.store import Store

__all__ = ["STRICTNESS_NOTES", "BudgetExhausted", "JudgeFailure", "Store", "generate_rubric"]
