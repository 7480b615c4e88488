"""The tail every judge row ends with: tier, review reason, judge model(s), prompt hash, scale.

Always written last and in this order, whichever scorer (direct, pairwise, screen, panel,
cascade) made the row, so the rows — and the judgments stored from them — stay
byte-identical across versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

TAIL = ("tier", "review", "judge_model", "judge_prompt_sha256", "scale")


def stamp(
    fields: dict[str, Any],
    *,
    tier: str,
    judges: Sequence[str],
    prompt_sha256: str,
    scale: str | None = None,
    review: str | None = None,
) -> None:
    """(Re)write the tail of a judge row in place: a cascade may re-stamp a judge's row."""
    for key in TAIL:
        fields.pop(key, None)
    fields["tier"] = tier
    if review is not None:
        fields["review"] = review
    fields["judge_model"] = "+".join(judges)
    fields["judge_prompt_sha256"] = prompt_sha256
    if scale is not None:
        fields["scale"] = scale
