"""Judge prompts rendered from the versioned templates in `templates/` (jinja2).

Every text a prompt frames (the task, the reference, documents, claims, the responses) is
between tags that carry the prompt's boundary, `<response-BOUNDARY>` ... `</response-BOUNDARY>`,
and the prompt tells the judge that what a frame holds is data, never instructions. The
boundary is derived from the hash of the framed texts (`boundary`): a response cannot know it
in advance, since it changes with the text that would have to contain it, yet the same
request renders the same prompt (the call cache). Frame-like tags inside a text are
neutralised too (`neutralise`), so scripted judges find the framed texts reliably. The
SHA-256 of a template's source is stored with every judgment made with it.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
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
# A tag a judge could read as a frame's: blanks around the slash too (`</ response>`).
FRAME_TAG = re.compile(
    r"<\s*(/?)\s*(response(?:_\d+)?|reference_answer|task|document|claims)\b", re.IGNORECASE
)
BOUNDARY_CHARS = 16
BOUNDARY = f"[0-9a-f]{{{BOUNDARY_CHARS}}}"
FRAMED = re.compile(rf"<(response(?:_[12])?)-({BOUNDARY})>\n(.*?)\n</\1-\2>", re.DOTALL)
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


def _texts(value: Any) -> Iterator[str]:
    """Every text in a template's values (dict keys and items, list items), as printed."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
    else:
        yield str(value)


def boundary(values: dict[str, Any]) -> str:
    """The frame tags' boundary of one prompt: hex digits of the SHA-256 of the texts it
    frames, never a string any of them holds (the next salt's digits otherwise)."""
    texts = list(_texts(values))
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).digest()
    for salt in itertools.count():
        made = hashlib.sha256(digest + str(salt).encode()).hexdigest()[:BOUNDARY_CHARS]
        if not any(made in text for text in texts):
            return made
    raise AssertionError("unreachable")  # pragma: no cover


def render(template: str, /, **values: Any) -> str:
    """Render a template with its values and their `boundary`; a missing value is an error,
    never blank."""
    return _render(template, {**values, "boundary": boundary(values)})


def _render(template: str, values: dict[str, Any]) -> str:
    return _tidy(_compiled(template).render(**values))


BLANK_LINES = re.compile("\n\n\n+")  # (not `\n{3,}`: a literal start is searched for fast)


def _tidy(text: str) -> str:
    """At most one blank line in a row; no blank start or end."""
    return BLANK_LINES.sub("\n\n", text).strip() + "\n"


class _Unmarkable(Exception):
    """A value `Prompt` cannot stand in for with markers (not JSON-like data)."""


MARKER = re.compile("\x00([0-9]+)\x00")
SHAPES_KEPT = 256


def _mark(value: Any, strings: list[str]) -> tuple[Any, Any]:
    """`value` with each non-empty string replaced by a marker naming its place in `strings`
    (where the string is appended), and its shape: everything about `value` a template can
    act on other than the text of its strings (lengths, keys, empty strings, numbers)."""
    if type(value) is str:  # (a subclass may print otherwise)
        if not value:
            return value, ""
        strings.append(value)
        return f"\x00{len(strings) - 1}\x00", str
    if value is None or isinstance(value, bool | int | float):
        return value, (type(value), repr(value))  # (0.0 == -0.0, yet they print otherwise)
    if isinstance(value, dict):
        marked, shapes = {}, []
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Unmarkable
            marked[key], shape = _mark(item, strings)
            shapes.append((key, shape))
        return marked, (dict, tuple(shapes))
    if isinstance(value, list | tuple):
        pairs = [_mark(item, strings) for item in value]
        return type(value)(p[0] for p in pairs), (type(value), tuple(p[1] for p in pairs))
    raise _Unmarkable


def _fixed_safe(value: Any) -> bool:
    """Whether a fixed value can be rendered into a skeleton (no string holds a NUL, which
    would read as a marker)."""
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_fixed_safe(k) and _fixed_safe(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_fixed_safe(v) for v in value)
    return True


class Prompt:
    """A template with the values that every call of one judge configuration shares fixed
    (criteria, scale, rubric guidance), rendered as `render(name, **fixed, **values)` renders
    it, byte for byte, at a fraction of the cost.

    The template is rendered once per shape of the other values (how many turns, documents
    and requirements a case has, which are empty; `_mark`) with each of their strings as a
    marker; a call puts its strings in place of the markers and tidies the text as `render`
    does. The judge templates only print these strings and test whether they are empty, so
    the markers take the same branches as the strings (test_judge_prompt_text_never_changes);
    values that are not JSON-like data are rendered by jinja as before.
    """

    def __init__(self, name: str, /, **fixed: Any) -> None:
        self.name = name
        self.fixed = fixed
        self._skeletons: dict[Any, list[str | int]] | None = {} if _fixed_safe(fixed) else None

    def render(self, **values: Any) -> str:
        """The prompt for these values, framed by their `boundary` (not the fixed ones')."""
        values = {**values, "boundary": boundary(values)}
        strings: list[str] = []
        try:
            marked, shape = _mark(values, strings)
        except _Unmarkable:
            return _render(self.name, {**self.fixed, **values})
        if self._skeletons is None:
            return _render(self.name, {**self.fixed, **values})
        skeleton = self._skeletons.get(shape)
        if skeleton is None:
            skeleton = self._skeleton(marked, shape)
        text = "".join(piece if isinstance(piece, str) else strings[piece] for piece in skeleton)
        return _tidy(text)

    def _skeleton(self, marked: dict[str, Any], shape: Any) -> list[str | int]:
        """The template rendered with markers, as text pieces and the places of strings."""
        parts = MARKER.split(_compiled(self.name).render(**self.fixed, **marked))
        pieces: list[str | int] = [
            part if i % 2 == 0 else int(part) for i, part in enumerate(parts) if part
        ]
        assert self._skeletons is not None
        if len(self._skeletons) >= SHAPES_KEPT:
            self._skeletons.clear()
        self._skeletons[shape] = pieces
        return pieces


def neutralise(text: str) -> str:
    """Defuse frame-like tags inside a text (`<response_1>`, `</ response>` become
    `‹response_1>`, `‹/response>`)."""
    return FRAME_TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def framed_responses(prompt: str) -> dict[str, str]:
    """The texts between frame tags of a rendered prompt: `response`, `response_1`, ..."""
    return {m.group(1): m.group(3) for m in FRAMED.finditer(prompt)}


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
