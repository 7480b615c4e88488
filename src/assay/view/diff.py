"""A word-level diff of two responses (difflib), as segments a template shows escaped."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

TOKENS = re.compile(r"\s+|[^\s]+")
Op = Literal["same", "added", "removed"]
LIMIT = 20_000  # tokens per side: beyond, the diff would take seconds; shown whole instead


@dataclass(frozen=True, slots=True)
class Segment:
    op: Op
    text: str


def word_diff(old: str, new: str) -> list[Segment]:
    """`new` against `old`, word by word (whitespace kept): what is the same, what `new`
    added and what it removed, in reading order."""
    a, b = TOKENS.findall(old), TOKENS.findall(new)
    if len(a) > LIMIT or len(b) > LIMIT:
        return [Segment("removed", old), Segment("added", new)]
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            segments.append(Segment("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            segments.append(Segment("removed", "".join(a[i1:i2])))
        if j2 > j1:
            segments.append(Segment("added", "".join(b[j1:j2])))
    return segments
