"""What a call counts as spent, and the most one call of each model has cost.

A reported cost is trusted only when it is a finite number of at least $0 (and, for a priced
one-turn call, no more than its worst case, which no provider can bill beyond): any other (a
server's usage of more tokens than the request allows, a `python:` agent's `cost_usd` of -5,
claude's `total_cost_usd` of NaN or "0.01", usage that cannot be read: `UNREADABLE_COST`)
counts at the call's reservation, its worst case, never as $0, never as a credit and never
priced from tokens instead. So does a failure after the request was sent that nobody reported
a cost for (`ModelError.may_be_billed`: a timeout, an unreadable 200 reply, an agent that
raised, output nested too deep to read; not an HTTP error reply, the provider's refusal).
`Tally` keeps one call's reservation and what its attempts have cost; `Priciest` the most one
call of each model spec has cost, in this process and in the store (`call_costs`), so a rerun
after a budget stop reserves at least that for an agent's call.
"""

from __future__ import annotations

import dataclasses
import math

from assay.engine.budget import TOLERANCE
from assay.models.base import Model
from assay.models.registry import is_agent, model_price
from assay.store import Store
from assay.store.spend import most_per_call, queue_call_cost


def trusted(cost: object) -> bool:
    """Whether a reported cost can be taken as it is (None, or a finite amount ≥ 0)."""
    if cost is None:
        return True
    if isinstance(cost, bool) or not isinstance(cost, float | int):
        return False
    return math.isfinite(cost) and cost >= 0


def one_turn(model: Model, reserved: float) -> float | None:
    """A priced model's call that is not an agent's: what each of its attempts reserves
    (its worst case, `reserved`); None for an agent's or an unpriced model's call."""
    return reserved if model_price(model) is not None and not is_agent(model) else None


@dataclasses.dataclass(slots=True)
class Tally:
    """One call's reservation (`held`, what its attempts may cost in all; `limited`: the run
    has a budget; `turn`: what one attempt needs, for a priced one-turn call), what its
    attempts count as spent (`cost`) and, of that, what was reported (`seen`: not an amount
    counted at its worst case); `holds` are its durable reservations."""

    held: float
    limited: bool
    turn: float | None = None  # what one attempt reserves (one-turn priced calls only)
    sent: bool = False  # an attempt has been handed to the model (it may be billed)
    cost: float = 0.0
    seen: float = 0.0
    holds: list[int] = dataclasses.field(default_factory=list)

    def left(self) -> float | None:
        """What the next attempt may spend (None without a budget: no limit to tell it)."""
        return self.held - self.cost if self.limited else None

    def worst(self) -> float:
        """The most the attempt in flight may have cost: what is left of the reservation."""
        return max(0.0, self.held - self.cost)

    def charge(self, reported: float | None, billed: bool = False) -> float | None:
        """Count an attempt's reported cost (`billed`: it may have cost something nobody
        reported); returns what it counts as, None when unknown and nothing is held. A
        one-turn attempt reporting more than its worst case (`turn`) reports what no request
        of its size can cost: it counts at what is left of the reservation."""
        if (
            trusted(reported)
            and not (billed and reported is None)
            and (self.turn is None or reported is None or reported <= self.turn + TOLERANCE)
        ):
            self.cost += reported or 0.0
            self.seen += reported or 0.0
            return reported
        worst = self.worst()
        self.cost += worst
        return worst if worst > 0 else None


class Priciest:
    """The most one call of each model spec has cost: what this process has seen, and the
    store's record (read once per spec, kept when a call costs more)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._most: dict[str, float | None] = {}

    def get(self, spec: str) -> float | None:
        """The most one call of `spec` has cost (None: no call has reported a cost yet)."""
        if spec not in self._most:
            self._most[spec] = most_per_call(self.store, spec)
        return self._most[spec]

    def saw(self, spec: str, cost: float) -> None:
        """A call of `spec` cost `cost` (answered, or a failed one that reported a cost)."""
        known = self.get(spec)
        if known is None or cost > known:
            self._most[spec] = cost
            queue_call_cost(self.store, spec, cost)
