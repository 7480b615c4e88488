"""Matplotlib figures as inline SVG strings for HTML reports.

The result is one `<svg>` element, ready to paste into an HTML page:

- no XML declaration, DOCTYPE, comments or metadata;
- no `<style>` element and no `style` attribute: matplotlib's inline CSS becomes SVG
  presentation attributes, so the chart renders under a Content-Security-Policy that
  forbids inline styles as well as scripts;
- every `id` (and each `url(#…)` / `href="#…"` pointing at one) carries a prefix, so
  several charts can share a page without their clip paths and markers colliding;
- deterministic: the same figure gives the same string (no date, fixed hash salt).

Build figures with `new_figure()` (a bare `Figure`, no pyplot global state, safe in
threads). Text is kept as `<text>` (searchable, small) unless `text_as_paths=True`.
Matplotlib reads `$…$` in labels as mathtext: escape `$` in untrusted labels.
"""

from __future__ import annotations

import hashlib
import io
import re
import xml.etree.ElementTree as ET

import matplotlib
from matplotlib.figure import Figure

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

_HREF_ATTRS = (f"{{{XLINK_NS}}}href", "href")
_URL_REF = re.compile(r"url\(#([^)\s]+)\)")
_RULE = re.compile(r"\*\s*\{([^}]*)\}")


def plain(text: str) -> str:
    """Untrusted text as a matplotlib label: no mathtext."""
    return text.replace("$", r"\$")


def new_figure(width: float = 6.0, height: float = 3.0) -> Figure:
    """A figure of `width` × `height` inches, independent of pyplot and its backends."""
    return Figure(figsize=(width, height), layout="constrained")


def _declarations(css: str) -> list[tuple[str, str]]:
    """`fill: #fff; stroke-width: 0.8` -> [("fill", "#fff"), ("stroke-width", "0.8")]."""
    pairs = []
    for part in css.split(";"):
        name, sep, value = part.partition(":")
        if sep and name.strip() and value.strip():
            pairs.append((name.strip(), value.strip()))
    return pairs


def _inline_styles(root: ET.Element) -> None:
    """Turn style attributes and the `*{…}` rule into presentation attributes."""
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == f"{{{SVG_NS}}}style":
                for rule in _RULE.findall(child.text or ""):
                    for name, value in _declarations(rule):
                        root.set(name, value)  # inherited by every element below
                parent.remove(child)
            elif child.tag == f"{{{SVG_NS}}}metadata":
                parent.remove(child)
    for element in root.iter():
        style = element.attrib.pop("style", None)
        if style:
            for name, value in _declarations(style):
                element.set(name, value)
    for defs in root.findall(f"{{{SVG_NS}}}defs"):
        if len(defs) == 0:
            root.remove(defs)


def _prefix_ids(root: ET.Element, prefix: str) -> None:
    ids = {e.get("id") for e in root.iter() if e.get("id")}

    def fix(match: re.Match[str]) -> str:
        target = match.group(1)
        return f"url(#{prefix}{target})" if target in ids else match.group(0)

    for element in root.iter():
        for name, value in list(element.attrib.items()):
            if name == "id" and value in ids:
                element.set(name, prefix + value)
            elif name in _HREF_ATTRS and value.startswith("#") and value[1:] in ids:
                element.set(name, f"#{prefix}{value[1:]}")
            elif "url(#" in value:
                element.set(name, _URL_REF.sub(fix, value))


def figure_svg(
    figure: Figure,
    *,
    title: str | None = None,
    id_prefix: str | None = None,
    text_as_paths: bool = False,
) -> str:
    """Render `figure` as an inline `<svg>` element string (see the module docstring).

    `title` becomes the chart's accessible name (`<title>`, `role="img"`, `aria-label`).
    `id_prefix` defaults to one derived from the chart itself.
    """
    buffer = io.StringIO()
    fonttype = "path" if text_as_paths else "none"
    with matplotlib.rc_context({"svg.fonttype": fonttype, "svg.hashsalt": "assay"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    raw = buffer.getvalue()
    root = ET.fromstring(raw)
    _inline_styles(root)
    prefix = id_prefix or "c" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8] + "-"
    _prefix_ids(root, prefix)
    root.set("role", "img")
    if title:
        root.set("aria-label", title)
        heading = ET.Element(f"{{{SVG_NS}}}title")
        heading.text = title
        root.insert(0, heading)
    return ET.tostring(root, encoding="unicode")
