"""The budget's waiting reservation: wait while calls in flight may free room, else refuse."""

from __future__ import annotations

import asyncio

from assay.engine.budget import Budget


def test_reservation_waits_for_settlement_then_fits() -> None:
    async def go() -> None:
        budget = Budget(1.0)
        assert await budget.reserve_when_settled(0.8)
        waiting = asyncio.create_task(budget.reserve_when_settled(0.8))
        await asyncio.sleep(0)
        assert not waiting.done()
        budget.settle(0.8, 0.1)  # the first call cost far less than its worst case
        assert await asyncio.wait_for(waiting, 1)
        assert budget.spent + budget.reserved <= 1.0

    asyncio.run(go())


def test_reservation_refused_when_nothing_in_flight_can_free_room() -> None:
    async def go() -> None:
        budget = Budget(1.0, spent_usd=0.5)
        assert not await budget.reserve_when_settled(0.6)
        assert budget.exhausted
        assert await budget.reserve_when_settled(0.5)
        waiting = asyncio.create_task(budget.reserve_when_settled(0.1))
        await asyncio.sleep(0)
        budget.settle(0.5, 0.5)  # spent all: the waiter must now be refused, not hang
        assert not await asyncio.wait_for(waiting, 1)

    asyncio.run(go())
