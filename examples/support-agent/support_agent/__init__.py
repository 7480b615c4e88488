"""A customer-support agent for Tidewell (a made-up smart water-leak system), built with
LangGraph: BM25 retrieval over a card knowledge base, a rule-based guardrail that refuses or
escalates, and an answer node that asks a model to cite the cards it used."""

from support_agent.graph import build_graph, close_models, run_agent

__all__ = ["build_graph", "close_models", "run_agent"]
