"""Deterministic scorers behind one protocol, registered by name.

Importing this package registers the built-in scorers: citation_coverage,
citation_correctness, refusal, escalation, retrieval, exact, contains, regex, json_schema
and budget. A scorer returns None for a case it has nothing to check (never 1.0); a metric
named `blocker` above 0 is a blocking finding; `primary` names the metrics that feed the
release gate.
"""

from assay.scorers import behaviour, budget, citations, retrieval, structured, text  # noqa: F401
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
