"""Judge prompts rendered from the versioned templates in `templates/` (jinja2).

Responses are framed by tags (`<response>`, `<response_1>`, `<response_2>`); any such tag
inside a response is neutralised first, so a response can neither break out of its frame nor
pose as the other one, and scripted judges can find the framed texts reliably. The SHA-256
of a template's source is stored with every judgment made with it.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from assay.core.records import Case
from assay.engine.plan import sha256_text
from assay.models.base import Message

if TYPE_CHECKING:
    from jinja2 import Environment, Template

SYSTEM = (
    "You are an impartial evaluator of AI assistant responses. You follow the grading "
    "instructions exactly and reply with JSON only."
)
FRAME_TAG = re.compile(
    r"<(/?)(response(?:_\d+)?|reference_answer|task|document|claims)\b", re.IGNORECASE
)
FRAMED = re.compile(r"<(response(?:_[12])?)>\n(.*?)\n</\1>", re.DOTALL)
CONTEXT_CHARS = 6000


@cache
def _environment() -> Environment:
    # jinja2 is imported here, on the first render: a run checks its judges without it.
    from jinja2 import Environment, StrictUndefined

    return Environment(
        autoescape=False,
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=False,
    )


@cache
def template_source(name: str) -> str:
    """The text of a packaged template, e.g. `direct`."""
    return (files("assay.scorers.judge") / "templates" / f"{name}.j2").read_text(encoding="utf-8")


@cache
def _compiled(name: str) -> Template:
    return _environment().from_string(template_source(name))


def template_sha256(name: str) -> str:
    """The prompt hash recorded with every judgment made with this template."""
    return sha256_text(template_source(name))


def render(template: str, /, **values: Any) -> str:
    """Render a template with its values; a missing value is an error, never blank."""
    text = _compiled(template).render(**values)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def neutralise(text: str) -> str:
    """Defuse frame tags inside a response (`<response_1>` becomes `‹response_1>`)."""
    return FRAME_TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def framed_responses(prompt: str) -> dict[str, str]:
    """The texts between frame tags of a rendered prompt: `response`, `response_1`, ..."""
    return {m.group(1): m.group(2) for m in FRAMED.finditer(prompt)}


def case_values(case: Case) -> dict[str, Any]:
    """What every judge template shows of a case (never the condition that answered)."""
    context, used = [], 0
    for doc in case.context or []:
        text = doc.text[: max(0, CONTEXT_CHARS - used)]
        used += len(text)
        if text:
            context.append({"id": doc.id, "text": neutralise(text)})
    return {
        "prompt": neutralise(case.prompt),
        "turns": [neutralise(t) for t in case.turns or []],
        "reference": neutralise(case.reference) if case.reference else None,
        "context": context,
        "requirements": list(case.criteria),
    }


def chat(user: str) -> list[Message]:
    """The judge conversation: the fixed system message and one user message."""
    return [Message("system", SYSTEM), Message("user", user)]
