"""What each run has spent (`run_spend`, and per role in `run_spend_roles`), committed with
the results it paid for, the reservations of its calls in flight (`run_reservations`), and
the most one call of each model has cost (`call_costs`).

A run resumed after a kill or a budget stop starts its Budget (engine/budget.py) from what it
has already spent, so `--budget-usd` caps the run, not each invocation of it. A metered call's
reservation is committed before the call is sent and removed in the same transaction that
records what the call cost; one a killed process left behind (its call may well have been
billed) therefore counts as spent, at its worst case, for every later invocation.

Spend has a role: the system under test's calls, the judges', or the model-backed scorers'
(`ROLES`). `run_spend` holds the total the budget reads; `run_spend_roles` the same spend
split by role (what a killed process left reserved, and spend recorded before the store had
roles, count in the total only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from assay.core.redact import scrub_known
from assay.store.db import Store, now_iso

Role = Literal["system", "judges", "scorers"]
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(slots=True)
class Spend:
    """USD by role: the system under test, its judges, its model-backed scorers; `total` is
    their sum unless given (a run's total also counts spend of no known role)."""

    system: float = 0.0
    judges: float = 0.0
    scorers: float = 0.0
    total: float | None = None

    def __post_init__(self) -> None:
        if self.total is None:
            self.total = self.system + self.judges + self.scorers

    def add(self, role: Role, amount: float) -> None:
        """Count `amount` under `role` (and in the total)."""
        setattr(self, role, getattr(self, role) + amount)
        self.total = (self.total or 0.0) + amount

    def plus(self, other: Spend) -> Spend:
        """Both spends together, role by role."""
        return Spend(
            self.system + other.system,
            self.judges + other.judges,
            self.scorers + other.scorers,
            (self.total or 0.0) + (other.total or 0.0),
        )

    def minus(self, earlier: Spend) -> Spend:
        """What was spent since `earlier` (the same run's spend read before), role by role."""
        return Spend(
            self.system - earlier.system,
            self.judges - earlier.judges,
            self.scorers - earlier.scorers,
            (self.total or 0.0) - (earlier.total or 0.0),
        )

    def rounded(self, digits: int = 6) -> dict[str, float]:
        """`{total, system, judges, scorers}`, each rounded (what the JSON outputs hold)."""
        return {
            "total": round(self.total or 0.0, digits),
            **{role: round(getattr(self, role), digits) for role in ROLES},
        }


def spent_so_far(store: Store, run_id: str) -> float:
    """What a run has spent in earlier invocations, with the reservations still unsettled
    (calls in flight elsewhere, or lost with a killed process) at their worst case."""
    row = store.db.execute("SELECT spent_usd FROM run_spend WHERE run_id = ?", (run_id,)).fetchone()
    return (float(row[0]) if row else 0.0) + unsettled(store, run_id)


def run_spend(store: Store, run_id: str) -> Spend:
    """What a run has spent in all its invocations, by role; the total is `spent_so_far`."""
    rows = store.db.execute(
        "SELECT role, spent_usd FROM run_spend_roles WHERE run_id = ?", (run_id,)
    ).fetchall()
    by_role = {str(role): float(spent) for role, spent in rows if role in ROLES}
    return Spend(**by_role, total=spent_so_far(store, run_id))


def unsettled(store: Store, run_id: str) -> float:
    """The reservations of a run's calls that no invocation has settled."""
    row = store.db.execute(
        "SELECT SUM(amount_usd) FROM run_reservations WHERE run_id = ?", (run_id,)
    ).fetchone()
    return float(row[0] or 0.0)


def hold_reservation(store: Store, run_id: str, holder: str, amount: float) -> int:
    """Record a call's reservation durably, now (before the call is sent); its id."""
    cursor = store.db.execute(
        "INSERT INTO run_reservations (run_id, holder, amount_usd, created_at) VALUES (?, ?, ?, ?)",
        (run_id, holder, amount, now_iso()),
    )
    return int(cursor.lastrowid or 0)


def queue_release(store: Store, reservation: int) -> None:
    """Remove a settled reservation at the next flush, with the spend it was settled at."""
    store.queue("DELETE FROM run_reservations WHERE id = ?", (reservation,))


def queue_spend(store: Store, run_id: str, amount: float, role: Role = "system") -> None:
    """Add to a run's recorded spend, in all and under `role`, at the next flush (with the
    results it paid for)."""
    store.queue(
        "INSERT INTO run_spend (run_id, spent_usd) VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE"
        " SET spent_usd = spent_usd + excluded.spent_usd",
        (run_id, amount),
    )
    store.queue(
        "INSERT INTO run_spend_roles (run_id, role, spent_usd) VALUES (?, ?, ?)"
        " ON CONFLICT(run_id, role) DO UPDATE SET spent_usd = spent_usd + excluded.spent_usd",
        (run_id, role, amount),
    )


def most_per_call(store: Store, spec: str) -> float | None:
    """The most one call of the model `spec` has cost in this store (None: none recorded).
    The spec is keyed as it is stored: without the secret values assay holds
    (`scrub_known`: a `command:` runner's `--api-key KEY`)."""
    row = store.db.execute(
        "SELECT most_usd FROM call_costs WHERE spec = ?", (scrub_known(spec),)
    ).fetchone()
    return float(row[0]) if row else None


def queue_call_cost(store: Store, spec: str, cost: float) -> None:
    """Keep `cost` as the most one call of `spec` has cost, when it is more (next flush);
    the spec stored without the secret values assay holds (`scrub_known`)."""
    store.queue(
        "INSERT INTO call_costs (spec, most_usd) VALUES (?, ?) ON CONFLICT(spec) DO UPDATE"
        " SET most_usd = MAX(most_usd, excluded.most_usd)",
        (scrub_known(spec), cost),
    )
