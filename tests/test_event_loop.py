"""assay.core.aio: coroutines run on uvloop when it is installed, on asyncio's loop otherwise."""

from __future__ import annotations

import asyncio
import sys

import pytest

from assay.core import aio


async def loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_run_uses_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    monkeypatch.delenv("ASSAY_EVENT_LOOP", raising=False)
    assert aio.run(loop_module()).startswith("uvloop")


def test_run_falls_back_to_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_EVENT_LOOP", raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert aio.loop_factory() is None
    assert aio.run(loop_module()).startswith("asyncio")


def test_the_environment_can_rule_uvloop_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_EVENT_LOOP", "asyncio")
    assert aio.loop_factory() is None
    assert aio.run(loop_module()).startswith("asyncio")
