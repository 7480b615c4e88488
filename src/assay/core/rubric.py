"""The rubric: which metrics a Score row carries, their scale, and how they are weighted."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.core.errors import InputError

DEFAULT_WEIGHTS: dict[str, float] = {
    "correctness": 0.3,
    "autonomy": 0.2,
    "actionability": 0.2,
    "safety": 0.2,
    "concision": 0.1,
}
DEFAULT_SCALE: tuple[float, float] = (1.0, 5.0)
TOLERANCE = 1e-9
"""Numbers closer than this are equal: a drop of exactly 0.1 on decimal inputs is 0.1."""


def normalise(weights: Mapping[str, float], where: str = "weights") -> dict[str, float]:
    """Weights scaled to sum to 1; negative, non-finite or all-zero weights are an error."""
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"ERROR: {where}: {name}: must be a number")
        if not math.isfinite(value) or value < 0:
            raise InputError(f"ERROR: {where}: {name}: must be a finite number >= 0, got {value}")
    total = float(sum(weights.values()))
    if not weights or total <= 0:
        raise InputError(f"ERROR: {where}: at least one weight must be above 0")
    return {name: float(value) / total for name, value in weights.items()}


def parse_weights(text: str) -> dict[str, float]:
    """`correctness=0.3,safety=0.2` → normalised weights; errors name the bad item."""
    weights: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"ERROR: --weights: {item!r}: expected METRIC=NUMBER")
        try:
            weights[name] = float(value)
        except ValueError:
            raise InputError(
                f"ERROR: --weights: {name}: {value.strip()!r} is not a number"
            ) from None
    return normalise(weights, "--weights")


@dataclass(slots=True)
class Rubric:
    """Normalised weights and the scale every rubric metric must lie on."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    scale: tuple[float, float] = DEFAULT_SCALE

    def __post_init__(self) -> None:
        self.weights = normalise(self.weights)
        low, high = self.scale
        if not low < high:
            raise InputError(f"ERROR: scale: low ({low}) must be below high ({high})")

    def weighted(self, metrics: Mapping[str, float]) -> float | None:
        """The weighted score over the weighted metrics present (renormalised), or None."""
        total = weight = 0.0
        for name, w in self.weights.items():
            value = metrics.get(name)
            if value is not None and w > 0:
                total += w * value
                weight += w
        return total / weight if weight > 0 else None
