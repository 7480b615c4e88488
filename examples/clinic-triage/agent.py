"""Entry point for assay: `python:agent.py:run` (relative to this folder's suite.toml).

NOT A MEDICAL DEVICE. NOT MEDICAL ADVICE. A synthetic triage assistant over a made-up
clinic's cards, for showing how an evaluation gates one; never use it with real patients.

assay calls `run(case, settings)` once per trial; settings hold the condition's params:
`guardrails` (bool, default true), `agent_model` (the model spec the answer node calls;
default the embedded llamacpp:gemma-3-270m), `top_k`, `max_tokens`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from clinic_triage import close_models, run_agent
from clinic_triage.knowledge import KB_PATH


async def run(case: Any, settings: dict[str, Any]) -> dict[str, Any]:
    return await run_agent(case.prompt, settings)


# Cached answers are only valid for this knowledge base; close the answer models at the end.
run.assay_version = hashlib.sha256(KB_PATH.read_bytes()).hexdigest()  # type: ignore[attr-defined]
run.assay_aclose = close_models  # type: ignore[attr-defined]
