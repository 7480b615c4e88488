"""Matplotlib figures as inline SVG: one element, no styles, prefixed ids, escaped text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from matplotlib.figure import Figure

from assay.web.svg import SVG_NS, XLINK_NS, figure_svg, new_figure

BAR = "#2457a6"
HOSTILE = "<script>alert(1)</script> & $x$"


def bar_chart(labels: list[str], title: str = "deltas") -> Figure:
    figure = new_figure(4, 2.5)
    axes = figure.add_subplot()
    axes.bar(labels, range(1, len(labels) + 1), color=BAR)
    axes.errorbar(range(len(labels)), [1] * len(labels), yerr=0.5, fmt="o")
    axes.set_title(title)
    return figure


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_one_svg_element_without_prologue_or_metadata() -> None:
    svg = figure_svg(bar_chart(["a", "b"]))
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<!--" not in svg
    root = parse(svg)
    assert root.tag == f"{{{SVG_NS}}}svg"
    assert root.get("viewBox")
    assert root.find(f"{{{SVG_NS}}}metadata") is None


def test_no_inline_css_survives_and_colours_do() -> None:
    svg = figure_svg(bar_chart(["a", "b"]))
    root = parse(svg)
    assert not [e for e in root.iter() if "style" in e.attrib]
    assert not [e for e in root.iter() if e.tag == f"{{{SVG_NS}}}style"]
    assert any(e.get("fill") == BAR for e in root.iter())
    assert root.get("stroke-linejoin") == "round"  # the `*{…}` rule, now inherited
    texts = [e for e in root.iter() if e.tag == f"{{{SVG_NS}}}text"]
    assert texts and all(t.get("font-size") for t in texts)


def ids_and_refs(svg: str) -> tuple[set[str], set[str]]:
    root = parse(svg)
    ids = {e.get("id", "") for e in root.iter()} - {""}
    refs = set(re.findall(r"url\(#([^)]+)\)", svg))
    for element in root.iter():
        href = element.get(f"{{{XLINK_NS}}}href") or element.get("href")
        if href and href.startswith("#"):
            refs.add(href[1:])
    return ids, refs


def test_ids_are_prefixed_and_every_reference_resolves() -> None:
    first, second = figure_svg(bar_chart(["a", "b"])), figure_svg(bar_chart(["c", "d", "e"]))
    ids1, refs1 = ids_and_refs(first)
    ids2, refs2 = ids_and_refs(second)
    assert refs1 and refs1 <= ids1 and refs2 <= ids2
    assert not ids1 & ids2  # two charts can share a page
    prefixed = figure_svg(bar_chart(["a"]), id_prefix="delta-")
    ids, refs = ids_and_refs(prefixed)
    assert all(i.startswith("delta-") for i in ids) and refs <= ids


def test_text_is_escaped() -> None:
    figure = bar_chart(["<b>", "a&b"], title=HOSTILE.replace("$", r"\$"))
    svg = figure_svg(figure, title=HOSTILE)
    root = parse(svg)
    tags = {e.tag.split("}")[-1] for e in root.iter()}
    assert "script" not in tags and "b" not in tags
    assert "<script>" not in svg
    texts = ["".join(e.itertext()) for e in root.iter() if e.tag == f"{{{SVG_NS}}}text"]
    assert HOSTILE in texts and "a&b" in texts


def test_title_names_the_chart() -> None:
    root = parse(figure_svg(bar_chart(["a"]), title="Win rate"))
    assert root.get("role") == "img" and root.get("aria-label") == "Win rate"
    assert root[0].tag == f"{{{SVG_NS}}}title" and root[0].text == "Win rate"


def test_deterministic() -> None:
    assert figure_svg(bar_chart(["a", "b"])) == figure_svg(bar_chart(["a", "b"]))


@pytest.mark.parametrize("as_paths", [False, True])
def test_text_as_text_or_paths(as_paths: bool) -> None:
    root = parse(figure_svg(bar_chart(["a"]), text_as_paths=as_paths))
    texts = [e for e in root.iter() if e.tag == f"{{{SVG_NS}}}text"]
    assert bool(texts) is not as_paths
