"""Helpers the deterministic scorers share."""

from __future__ import annotations

import re

from assay.core.records import AgentState, Trial
from assay.scorers.base import BLOCKER

__all__ = ["BLOCKER", "flag", "normalise_text", "state_of"]


def state_of(trial: Trial) -> AgentState | None:
    """The agent's final state, or None for a plain model (state-based checks then skip)."""
    return trial.state


def flag(value: bool) -> float:
    return 1.0 if value else 0.0


def normalise_text(text: str, case_sensitive: bool) -> str:
    collapsed = re.sub(r"\s+", " ", text).strip()
    return collapsed if case_sensitive else collapsed.casefold()
