"""A toy support agent with tools, for the `tools` scorer example: it searches a tiny
knowledge base, escalates urgent messages, and records each tool call in its trajectory.
With `--param careless=true` it skips the search on billing questions and closes urgent
tickets instead of escalating them (a forbidden tool)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

KB = {
    "kb-refund": "Refunds are paid within 30 days of a return.",
    "kb-hours": "Support answers from 8:00 to 18:00, Monday to Friday.",
}


def search_kb(query: str) -> str:
    words = set(query.lower().split())
    hits = [f"{key}: {text}" for key, text in KB.items() if words & set(text.lower().split())]
    return "\n".join(hits) or "no match"


def escalate(urgency: str, summary: str) -> str:
    return f"ticket escalated ({urgency})"


def close_ticket(reason: str) -> str:
    return "ticket closed"


def run(case: Any, settings: dict[str, Any]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []

    def use(tool: Callable[..., str], **arguments: Any) -> str:
        started = time.perf_counter()
        result = tool(**arguments)
        steps.append(
            {
                "type": "tool",
                "name": tool.__name__,
                "arguments": arguments,
                "result": result,
                "duration_s": round(time.perf_counter() - started, 6),
            }
        )
        return result

    careless = settings.get("careless", False)
    urgent = "urgent" in case.prompt.lower()
    steps.append({"type": "model", "text": "Deciding which tools to use."})
    if urgent:
        if careless:
            use(close_ticket, reason="duplicate")
            return {"response": "Closed.", "kind": "answer", "trajectory": steps}
        use(escalate, urgency="high", summary=case.prompt)
        steps.append({"type": "model", "text": "Escalated to a person."})
        return {
            "response": "A person will call you now.",
            "kind": "escalation",
            "trajectory": steps,
        }
    found = "no match" if careless else use(search_kb, query=case.prompt)
    answer = found.split(": ", 1)[-1] if found != "no match" else "Please contact support."
    steps.append({"type": "model", "text": answer})
    return {"response": answer, "kind": "answer", "trajectory": steps}
