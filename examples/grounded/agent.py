"""A toy answer bot for the single-system gate example: it answers from the case's context
(faithful), or with `--param faithful=false` it makes things up (hallucinating)."""

from __future__ import annotations

from typing import Any


def run(case: Any, settings: dict[str, Any]) -> str:
    if settings.get("faithful", True):
        return " ".join(doc.text for doc in case.context or [])
    return (
        "Every sensor is powered by a tiny solar panel on its lid. "
        "The hub phones the fire brigade automatically after any leak."
    )
