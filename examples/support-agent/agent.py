"""Entry point for assay: `python:agent.py:run` (relative to this folder's suite.toml).

assay calls `run(case, settings)` once per trial; settings hold the condition's params:
`guardrails` (bool), `agent_model` (the model spec the answer node calls; default the
embedded llamacpp:gemma-3-270m), `top_k`, `max_tokens`.
"""

from __future__ import annotations

from typing import Any

from support_agent import run_agent


async def run(case: Any, settings: dict[str, Any]) -> dict[str, Any]:
    return await run_agent(case.prompt, settings)
