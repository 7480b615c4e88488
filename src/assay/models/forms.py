"""How a JSON Schema reaches an OpenAI-compatible server, and falling back when it refuses.

Servers take structured output in different forms: OpenAI and vLLM take
`response_format: {"type": "json_schema", ...}`; the llama-cpp-python server takes
`{"type": "json_object", "schema": ...}`; others take only `json_object`, or no
`response_format` at all. The forms, tried in this order:

- `json_schema`: `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`;
- `json_object`: `{"type": "json_object", "schema": SCHEMA}` (a server that ignores `schema`
  still returns JSON);
- `prompt`: no `response_format`; the schema goes into the instructions.

A form the server refuses (`rejects_form`) is dropped for the rest of the run and the same
call goes on with the next one; the form that answered is what the Caller remembers in the
store per base URL and model (store/servers.py), so a later run starts there. Whatever the
form, the caller still parses and validates the reply against the schema (a judge's
parse-and-repair): a fallback never turns a bad reply into a score.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.models.base import Message
from assay.models.http import OVERLOAD_STATUSES, says_invalid_request

FORMS = ("json_schema", "json_object", "prompt")

# What an error body says when the structured-output form itself is what the server refuses.
NAMES_FORM = re.compile(r"response_format|json_schema|json schema|\bschema\b|grammar", re.I)

SCHEMA_INSTRUCTIONS = (
    "Reply with one JSON object and nothing else: no prose, no code fences. "
    "It must be valid against this JSON Schema:\n"
)


def response_format(form: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` a form sends (None for `prompt`)."""
    if form == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema, "strict": True},
        }
    if form == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def messages_for(form: str, messages: list[Message], schema: dict[str, Any]) -> list[Message]:
    """The messages a form sends: for `prompt`, the schema is added to the last user turn
    (not a system message: some chat templates, Gemma's among them, have none)."""
    if form != "prompt":
        return messages
    note = SCHEMA_INSTRUCTIONS + json.dumps(schema, separators=(",", ":"))
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        return [*messages, Message("user", note)]
    turn = messages[last]
    return [*messages[:last], Message("user", f"{turn.content}\n\n{note}"), *messages[last + 1 :]]


def rejects_form(status: int, text: str) -> bool:
    """Whether an error reply refuses the structured-output form itself: a 400/422, or a 5xx
    that says the request is invalid, whose body names the form or the schema."""
    if status in OVERLOAD_STATUSES:
        return False
    invalid = status in (400, 422) or (status >= 500 and says_invalid_request(text))
    return invalid and bool(NAMES_FORM.search(text))


class Negotiation:
    """The forms still open for one server and model, and the one that answered.

    The Caller sends a served model's first structured call alone (engine/calls.py), so a
    refused form is sent once, not once per concurrent call. A later refusal (a schema one
    form cannot take) still moves on to the next form.
    """

    def __init__(self) -> None:
        self.open: list[str] = list(FORMS)
        self.settled: str | None = None

    def current(self) -> str:
        return self.open[0]

    def start_at(self, form: str) -> None:
        """Begin with a form remembered from an earlier run (the ones before it are skipped)."""
        if form in self.open and self.settled is None:
            self.open = self.open[self.open.index(form) :]

    def refused(self, form: str) -> bool:
        """Drop a refused form; True when the call should go on with the next one, False
        when it was the last (the refusal is then the call's error)."""
        if form not in self.open:
            return True  # another call has already moved past it
        if len(self.open) == 1:
            return False
        self.open.remove(form)
        if self.settled == form:
            self.settled = None
        return True

    def answered(self, form: str) -> None:
        self.settled = form
