"""The case fields scorers require, checked on the whole catalogue before any call.

A scorer that can only measure a trial whose case gives certain fields (a DeepEval or RAGAS
metric: its `context`, its `reference`) declares them as `case_fields` (field → what needs
it). A case without one is an input error naming the case file, the line and the field,
so a metric never runs on nothing, writes no row and lets the gate pass. `context` counts
as given when the suite has a knowledge base the system can retrieve from (the trial's
retrieved documents are its context then; a trial that retrieves none is an error row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.core.cases import case_lines
from assay.core.errors import InputError
from assay.core.records import Case
from assay.scorers.base import Scorer

SHOWN = 20
"""Problems listed one by one (the rest are counted)."""
FIXES = {
    "context": "give the case context documents, or the suite a [scoring] knowledge_base",
    "reference": "give the case a reference answer",
}


def _given(case: Case, field: str, retrievable: bool) -> bool:
    if field == "context":
        return retrievable or any(doc.text.strip() for doc in case.context or [])
    value = getattr(case, field, None)
    return not (value is None or (isinstance(value, str | list) and not value))


def missing_inputs(
    scorers: Sequence[Scorer], cases: Sequence[Case], retrievable: bool = False
) -> list[tuple[Case, str, str]]:
    """(case, field, problem) for each field a scorer requires that a case lacks."""
    needed: dict[str, list[str]] = {}
    for scorer in scorers:
        fields: Mapping[str, str] = getattr(scorer, "case_fields", {})
        for field, inputs in fields.items():
            needed.setdefault(field, []).append(f"scorer {scorer.name!r} ({inputs})")
    if not needed:
        return []  # no pass over the catalogue (a streamed one is read from its file)
    found = []
    for case in cases:
        for field, users in needed.items():
            if not _given(case, field, retrievable):
                fix = FIXES.get(field, f"give the case a {field}")
                found.append((case, field, f"missing, and {'; '.join(users)} needs it: {fix}"))
    return found


def check_inputs(
    scorers: Sequence[Scorer],
    cases: Sequence[Case],
    catalogue: Path | None,
    retrievable: bool = False,
) -> None:
    """Raise InputError naming `catalogue:line: field` (the case id when the cases were
    given as objects) for every field a scorer requires that a case lacks."""
    found = missing_inputs(scorers, cases, retrievable)
    if not found:
        return
    lines = case_lines(catalogue) if catalogue is not None else {}
    messages = []
    for case, field, problem in found[:SHOWN]:
        line = lines.get(case.id)
        where = f"{catalogue}:{line}" if line is not None else f"case {case.id!r}"
        messages.append(f"ERROR: {where}: {field}: {problem}")
    if len(found) > SHOWN:
        messages.append(f"ERROR: and {len(found) - SHOWN} more missing case field(s)")
    raise InputError(messages)
