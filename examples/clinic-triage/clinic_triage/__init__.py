"""A triage assistant for Elmstead Clinic (a made-up family doctors' practice), built with
LangGraph: BM25 retrieval over synthetic knowledge cards, rule-based red flags that escalate
(emergency, self-harm crisis) or refuse (diagnosis, doses, other people's records, out of
scope), and an answer node that asks a model to cite the cards it used.

NOT A MEDICAL DEVICE. NOT MEDICAL ADVICE. Every card and case is synthetic, written to show
how assay gates such an assistant; nothing here is clinical guidance.
"""

from clinic_triage.graph import build_graph, close_models, run_agent

__all__ = ["build_graph", "close_models", "run_agent"]
