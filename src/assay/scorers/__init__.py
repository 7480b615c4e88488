"""Deterministic scorers behind one protocol, registered by name."""

from assay.scorers.base import (
    SCORERS,
    Metrics,
    ScoreInput,
    Scorer,
    create_scorer,
    mean_aggregate,
    register,
)

__all__ = [
    "SCORERS",
    "Metrics",
    "ScoreInput",
    "Scorer",
    "create_scorer",
    "mean_aggregate",
    "register",
]

from assay.scorers import grounding  # noqa: F401  (registers groundedness, faithfulness, hallucination)
