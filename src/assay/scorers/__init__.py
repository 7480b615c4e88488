"""Scorers behind one async protocol, registered by name.

Importing this package registers the built-in deterministic scorers: citation_coverage,
citation_correctness, refusal, escalation, retrieval, exact, contains, regex, json_schema,
budget and tools (an agent's tool calls, scorers/tools.py), and the grounding scorers groundedness, faithfulness and hallucination. A
scorer returns None for a case it has nothing to check (never 1.0); a metric named
`blocker` above 0 is a blocking finding; `primary` names the metrics that feed the release
gate. `assay.scorers.runner` runs scorers over trials; `assay.scorers.judge` holds the LLM
judges, which are scorers too; `assay.scorers.external` makes DeepEval and RAGAS metrics
scorers (`deepeval:<Metric>`, `ragas:<metric>`, resolved when a suite names one).
"""

from assay.scorers import (  # noqa: F401
    behaviour,
    budget,
    citations,
    retrieval,
    structured,
    text,
    tools,
)
from assay.scorers.base import (
    SCORERS,
    CheckScorer,
    Metrics,
    Score,
    ScoreContext,
    Scorer,
    create_scorer,
    mean_aggregate,
    register,
)

__all__ = [
    "SCORERS",
    "CheckScorer",
    "Metrics",
    "Score",
    "ScoreContext",
    "Scorer",
    "create_scorer",
    "mean_aggregate",
    "register",
]

# grounding registers groundedness, faithfulness and hallucination; external the deepeval:
# and ragas: prefixes.
from assay.scorers import external, grounding  # noqa: F401
