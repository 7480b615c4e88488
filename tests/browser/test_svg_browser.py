"""Inline SVG charts keep their colours under a CSP that forbids inline styles."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import matplotlib
import pytest
from chromium import launch, needs_chromium

from assay.web.svg import figure_svg, new_figure

pytestmark = needs_chromium

POLICY = "default-src 'none'; script-src 'none'; style-src 'none'"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


def bar_fills(page: Any, body: str) -> list[str]:
    page.set_content(
        f'<!doctype html><meta http-equiv="Content-Security-Policy" content="{POLICY}">{body}'
    )
    return list(
        page.evaluate(
            "Array.from(document.querySelectorAll('svg path')).map(p => getComputedStyle(p).fill)"
        )
    )


def test_colours_survive_a_no_inline_style_policy(browser: Any) -> None:
    figure = new_figure(3, 2)
    figure.add_subplot().bar(["a", "b"], [1, 2], color="#2457a6")
    page = browser.new_page()
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if m.type == "error" else None)
    assert "rgb(36, 87, 166)" in bar_fills(page, figure_svg(figure))
    assert violations == []
    # the control: matplotlib's own SVG loses its colours under the same policy
    raw = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        figure.savefig(raw, format="svg")
    svg = raw.getvalue()
    assert "rgb(36, 87, 166)" not in bar_fills(page, svg[svg.index("<svg") :])
    page.close()
