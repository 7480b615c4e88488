"""Debian's Chromium for the browser tests: where it is, how to launch it, when to skip."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium)",
)


def launch() -> Iterator[Any]:
    """A headless Chromium for a module-scoped `browser` fixture to yield from."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
