"""Scripted answers to DeepEval's and RAGAS's own prompts, for the mock judges of `mock.py`.

The libraries ask for JSON of their pydantic schemas; the bridge (`scorers/external`) sends
each schema as the request's JSON Schema, so its title says which prompt it is. The answers
follow the mock judge's grounding `Check` (`mock_grounding.py`), so tests can assert exact
figures:

* DeepEval HallucinationMetric (`Verdicts`, `HallucinationScoreReason`): one verdict per
  context, "no" when a sentence of the actual output is contradicted by the context;
* RAGAS faithfulness (`StatementGeneratorOutput`, `NLIStatementOutput`): the statements are
  the answer's sentences; a statement is faithful (1) when a context sentence supports it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

from assay.scorers.judge.mock_grounding import Check, _verdict, sentences

DEEPEVAL_CONTEXTS = re.compile(r"Contexts:\n(.*?)\n+Actual Output:\n(.*?)\n+JSON:", re.DOTALL)
RAGAS_INPUT = re.compile(r"\ninput: (\{.*\})\nOutput: ?$", re.DOTALL)


def _ragas_input(prompt: str) -> dict[str, Any]:
    found = RAGAS_INPUT.search(prompt)
    data = json.loads(found.group(1)) if found else {}
    return data if isinstance(data, dict) else {}


def deepeval_hallucination(prompt: str, check: Check) -> dict[str, Any]:
    found = DEEPEVAL_CONTEXTS.search(prompt)
    if found is None:
        return {"verdicts": []}
    contexts = [str(c) for c in ast.literal_eval(found.group(1).strip())]
    claims = sentences(found.group(2))
    verdicts = []
    for context in contexts:
        against = [c for c in claims if _verdict(c, [context], check)[0] == "contradicted"]
        reason = f"contradicts: {against[0]}" if against else "agrees with the context"
        verdicts.append({"verdict": "no" if against else "yes", "reason": reason})
    return {"verdicts": verdicts}


def ragas_statements(prompt: str, check: Check) -> dict[str, Any]:
    return {"statements": sentences(str(_ragas_input(prompt).get("answer", "")))}


def ragas_verdicts(prompt: str, check: Check) -> dict[str, Any]:
    data = _ragas_input(prompt)
    context = str(data.get("context", ""))
    out = []
    for statement in data.get("statements", []):
        verdict, quote = _verdict(str(statement), [context], check)
        out.append(
            {
                "statement": statement,
                "reason": f"{verdict}: {quote}" if quote else verdict,
                "verdict": int(verdict == "supported"),
            }
        )
    return {"statements": out}


EXTERNAL: dict[str, Callable[[str, Check], dict[str, Any]]] = {
    "Verdicts": deepeval_hallucination,
    "HallucinationScoreReason": lambda prompt, check: {"reason": "scripted"},
    "StatementGeneratorOutput": ragas_statements,
    "NLIStatementOutput": ragas_verdicts,
}
"""Schema title → the scripted reply to that library prompt."""
