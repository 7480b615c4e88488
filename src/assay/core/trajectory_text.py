"""A trajectory as text: one line per step, numbered from 1, for judges and people.

`#1 model "I will look it up." (812 in / 40 out tokens)`,
`#2 tool search_kb(query="refund policy") → "Refunds within 30 days…" (4,812 chars)`,
`#3 tool escalate(urgency="high") → error: "queue full"`. Whitespace runs become one space,
so a step is always one line; an argument, a text or a result longer than the line's
`width` is cut with `…` and its full size in characters given, so a long tool result costs a
few dozen characters, never thousands. The trajectory judge (`[judge] over = "trajectory"`)
reads these lines and quotes them as evidence (`#2 tool search_kb`); the reports, the review
app and `assay view` show the same lines, so a step has one number and one text everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from assay.core.trajectory import STEPS, ModelTurn, ToolCall

if TYPE_CHECKING:
    from assay.core.records import Trial

Over = Literal["response", "trajectory"]
"""What a judge reads of a trial (`[judge] over`): its final response, or its steps too."""

JUDGE_WIDTH = 400
"""How much of each text a judge sees of a step (characters of its text, result, error)."""
SHOWN_WIDTH = 160
"""How much of each text a report or page shows of a step."""
ARG_WIDTH = 80
"""The longest argument value shown, as JSON, before it is cut."""
SHOWN_STEPS = 40
"""The most steps a report or page lists of one trial (the rest counted in a last line)."""

_BLANKS = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _BLANKS.sub(" ", text).strip()


def _cut(text: str, width: int, full: int | None = None) -> str:
    """`text` on one line, cut at `width` characters with `…` and its full size noted."""
    flat = _flat(text)
    size = max(full or 0, len(text))
    if len(flat) <= width and size <= len(text):
        return json.dumps(flat, ensure_ascii=False)
    return f"{json.dumps(flat[:width] + '…', ensure_ascii=False)} ({size:,} chars)"


def _argument(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    flat = _flat(text)
    if len(flat) <= ARG_WIDTH:
        return flat
    return f"{flat[:ARG_WIDTH]}… ({len(text):,} chars)"


def step_line(number: int, step: ModelTurn | ToolCall, width: int = SHOWN_WIDTH) -> str:
    """One step as one line (see the module's docstring)."""
    if isinstance(step, ModelTurn):
        parts = [f"#{number} model"]
        if step.text.strip():
            parts.append(_cut(step.text, width))
        tokens = [
            f"{n:,} {label}"
            for n, label in ((step.input_tokens, "in"), (step.output_tokens, "out"))
            if n is not None
        ]
        if tokens:
            parts.append(f"({' / '.join(tokens)} tokens)")
        return " ".join(parts)
    arguments = ", ".join(f"{key}={_argument(value)}" for key, value in step.arguments.items())
    line = f"#{number} tool {_flat(step.name)}({arguments})"
    if step.error is not None:
        return f"{line} → error: {_cut(step.error, width, step.result_chars)}"
    if step.result is not None:
        return f"{line} → {_cut(step.result, width, step.result_chars)}"
    return line


def step_lines(steps: Sequence[ModelTurn | ToolCall] | None, width: int = SHOWN_WIDTH) -> list[str]:
    """Every step of a trajectory as its line, in order (none for no trajectory)."""
    return [step_line(i, step, width) for i, step in enumerate(steps or (), start=1)]


def shown_lines(steps: Sequence[ModelTurn | ToolCall] | None, most: int = SHOWN_STEPS) -> list[str]:
    """The lines a report or page shows of a trajectory: its first `most` steps and, when
    there are more, a last line counting them."""
    lines = step_lines((steps or [])[:most])
    extra = len(steps or ()) - most
    if extra > 0:
        lines.append(f"… {extra:,} more step{'s' if extra > 1 else ''}")
    return lines


def recorded_lines(value: Any) -> list[str]:
    """`shown_lines` of a trajectory as recorded (a trial record's JSON `trajectory`); a
    line saying so when it does not read as one (never an error: it is only shown)."""
    if not value:
        return []
    try:
        return shown_lines(STEPS.validate_python(value))
    except ValueError:
        return ["(the recorded trajectory could not be read)"]


def with_steps(response: str, steps: Sequence[ModelTurn | ToolCall] | None) -> str:
    """What the trajectory judge reads of a trial: its steps, then its final response."""
    lines = step_lines(steps, JUDGE_WIDTH) or ["(no steps recorded)"]
    return "Steps:\n" + "\n".join(lines) + "\n\nFinal response:\n" + response


def judged_text(trial: Trial, over: Over) -> str:
    """The text a judge grades of a trial: the response, or `with_steps` over the trajectory."""
    if over == "trajectory":
        return with_steps(trial.response, trial.trajectory)
    return trial.response
