"""What a run does: conditions × cases × trials, each with its prompt and resume key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.core.jsonl import read_text
from assay.core.records import Case
from assay.models.base import Message


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# One encoder for every canonical text: `json.dumps` with these options would build a new
# JSONEncoder per call (a measurable part of each model call's CPU); the text is the same.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def canonical_json(value: Any) -> str:
    """The one JSON text assay hashes a value by (sorted keys, UTF-8 kept, other types as str)."""
    return _CANONICAL.encode(value)


def sha256_json(value: Any) -> str:
    return sha256_text(canonical_json(value))


@dataclass(slots=True)
class Condition:
    """A named variant of the system under test: a model spec and an optional skill file."""

    name: str
    model: str
    skill: str | None = None
    skill_path: Path | None = None
    system: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    response_format: str | None = None  # for command: models (text|claude-json|codex-jsonl)
    workdir: Path | None = None  # for CLI models; None: a fresh temporary folder per call

    @property
    def skill_sha256(self) -> str | None:
        return sha256_text(self.skill) if self.skill is not None else None

    @classmethod
    def with_skill_file(cls, name: str, model: str, path: Path | None) -> Condition:
        skill = read_text(path) if path is not None else None
        return cls(name=name, model=model, skill=skill, skill_path=path)


@dataclass(slots=True)
class WorkItem:
    """One trial to produce: a case under a condition, with its first-turn messages."""

    seq: int
    case: Case
    condition: Condition
    trial: int
    messages: list[Message]
    prompt_sha256: str
    key: str = field(default="")


def render_prompt(case: Case, skill: str | None) -> str:
    """The first user message: context documents, the task, wrapped in the skill if any."""
    task = case.prompt
    if case.context:
        docs = "\n\n".join(f"[{doc.id}] {doc.text}" for doc in case.context)
        task = f"Context documents:\n\n{docs}\n\nQuestion:\n{task}"
    if skill is None:
        return task
    return f"{skill.rstrip()}\n\n## Task\n\n{task}"


def first_messages(case: Case, condition: Condition) -> list[Message]:
    messages = []
    if condition.system:
        messages.append(Message("system", condition.system))
    messages.append(Message("user", render_prompt(case, condition.skill)))
    return messages


def build_plan(
    cases: Sequence[Case],
    conditions: Sequence[Condition],
    trials: int,
    identities: dict[str, dict[str, Any]],
) -> Iterator[WorkItem]:
    """Yield work items in a stable order: case, then condition, then trial."""
    if trials < 1:
        raise InputError("ERROR: --trials: must be at least 1")
    seq = 0
    for case in cases:
        for condition in conditions:
            messages = first_messages(case, condition)
            prompt_sha = sha256_json([[m.role, m.content] for m in messages] + [case.turns or []])
            for trial in range(1, trials + 1):
                item = WorkItem(seq, case, condition, trial, messages, prompt_sha)
                item.key = sha256_json(
                    [identities[condition.name], condition.name, case.id, trial, prompt_sha]
                )[:32]
                yield item
                seq += 1


_NOT_IN_RUN_ID = {"cluster"}


def run_id_for(
    cases: Sequence[Case],
    conditions: Sequence[Condition],
    trials: int,
    identities: dict[str, dict[str, Any]],
    params: dict[str, Any],
) -> str:
    """A stable id: the same command on the same inputs resumes the same run. A case's
    `cluster` is left out: it changes how the verdict weighs the cases, not a call, and a
    field added later must not change the id of a run made before it."""
    digest = hashlib.sha256()
    for case in cases:
        digest.update(case.model_dump_json(exclude=_NOT_IN_RUN_ID).encode())
    head = [
        [c.name, identities[c.name], c.skill_sha256, c.system, c.params] for c in conditions
    ] + [
        trials,
        params,
    ]
    digest.update(json.dumps(head, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:12]
