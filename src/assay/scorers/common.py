"""Helpers the deterministic scorers share."""

from __future__ import annotations

from assay.core.records import AgentState, Trial
from assay.scorers.base import BLOCKER

__all__ = ["BLOCKER", "flag", "normalise_text", "state_of"]


def state_of(trial: Trial) -> AgentState | None:
    """The agent's final state, or None for a plain model (state-based checks then skip)."""
    return trial.state


def flag(value: bool) -> float:
    return 1.0 if value else 0.0


def normalise_text(text: str, case_sensitive: bool) -> str:
    """Runs of whitespace as one space, no space at either end (`str.split` splits on the
    characters `\\s` matches), casefolded unless `case_sensitive`."""
    collapsed = " ".join(text.split())
    return collapsed if case_sensitive else collapsed.casefold()
