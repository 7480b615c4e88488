"""The HTML report: one self-contained file, readable without JavaScript, that runs none.

- Every value from the report model is escaped by Jinja2's autoescape; only the charts
  (serialised by `assay.web.svg`, which escapes their text) and our own stylesheet
  are marked safe.
- A Content-Security-Policy meta tag allows nothing but the one `<style>` element, by its
  SHA-256 hash: no script, no inline `style` attribute, no image, font, frame or network
  request of any kind. The charts are inline SVG with presentation attributes only.
- The per-case drill-down uses `<details>`, so it opens and closes without script.
"""

from __future__ import annotations

import base64
import hashlib
import math
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from assay.reports import charts
from assay.reports.corpus import corpus_checks, value_interval
from assay.reports.model import CalibrationMatrix, MetricDelta, Report
from assay.reports.numbers import figure, figures
from assay.verdict.checks import Check, interval_text
from assay.web.svg import SVG_NS, XLINK_NS

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.{digits}f}"


def _interval(delta: MetricDelta | Check) -> str:
    """A delta's or a gate check's interval, in words when there is none."""
    if isinstance(delta, Check) and delta.value is not None:
        return value_interval(delta)  # a corpus bound's figure: an interval of values
    if isinstance(delta, Check) and (delta.delta is None or delta.cases is None):
        return "–"  # a check that is not about an interval (blockers, seed rules, coverage)
    return interval_text(delta.ci_low, delta.ci_high, delta.cases or 0)


def _heat(count: int, total: int) -> str:
    """A CSS class for a confusion-matrix cell: its share of the row, in five steps."""
    if total <= 0 or count <= 0:
        return "heat0"
    return f"heat{min(4, 1 + int(4 * count / total))}"


def _tone(value: float | None) -> str:
    if value is None or abs(value) < 1e-9:
        return "flat"
    return "up" if value > 0 else "down"


@cache
def stylesheet() -> str:
    return (TEMPLATES / "report.css").read_text(encoding="utf-8")


def content_security_policy(css: str) -> str:
    """Nothing but the stylesheet whose text is `css`."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=_num,
        signed=_signed,
        interval=_interval,
        heat=_heat,
        tone=_tone,
        figures=figures,
        figure=figure,
        corpus=corpus_checks,
    )
    return env


def _row_totals(matrix: CalibrationMatrix) -> list[int]:
    return [sum(row) for row in matrix.matrix]


def inline_svg(svg: str) -> Markup:
    """A chart for an HTML page: the HTML parser puts `<svg>` (and `xlink:href`) in their
    namespaces itself, so the namespace declarations go and no URL is left in the file."""
    for declaration in (f' xmlns="{SVG_NS}"', f' xmlns:xlink="{XLINK_NS}"'):
        svg = svg.replace(declaration, "", 1)
    return Markup(svg)


def render_html(report: Report) -> str:
    css = stylesheet()
    chart_svgs = {
        "deltas": charts.delta_forest(report.comparisons),
        "win_tie_loss": charts.win_tie_loss_bars(
            report.win_tie_loss, report.pairwise, report.candidate
        ),
        "lengths": charts.length_scatter(report.lengths),
    }
    template = environment().get_template("report.html.j2")
    return template.render(
        r=report,
        css=Markup(css),
        csp=content_security_policy(css),
        charts={k: inline_svg(v) if v else None for k, v in chart_svgs.items()},
        row_totals=_row_totals,
    )
