"""A suite's history page: each metric (the weighted score first), the verdict and the spend
across its recorded runs, as inline SVG charts drawn with matplotlib on the server
(`assay.web.svg`: no script, no style attribute, CSP-safe), and the judge monitoring alerts
of `assay history` (`assay.measure.history`, the one definition) over the suite's runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from assay.measure.history import history as monitor
from assay.store.views import ReadOnlyStore, RunSummary

WEIGHTED = "weighted_score"
VERDICTS = ("PASS", "INCONCLUSIVE", "INCOMPLETE", "FAIL")
VERDICT_COLOURS = {"PASS": "#1a7f37", "INCONCLUSIVE": "#9a6700", "INCOMPLETE": "#6e7781"}
FAIL_COLOUR = "#c62828"
SERIES = ("#2457a6", "#d9822b", "#7b3fa0", "#2a9d8f", "#b5485d")
MARKERS = ("o", "s", "D", "^", "v")


@dataclass(slots=True)
class Point:
    """One run of the suite as the history shows it."""

    number: int
    summary: RunSummary
    weighted: dict[str, float | None] = field(default_factory=dict)
    """Each condition's weighted score in the run's report."""


@dataclass(slots=True)
class Chart:
    title: str
    svg: Markup


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def series(
    runs: list[tuple[RunSummary, dict[str, Any]]],
) -> tuple[list[Point], dict[str, dict[str, list[float | None]]]]:
    """The suite's runs in order, and metric → condition → value per run (None where the
    run has no such figure), from each recorded report's per-condition rows."""
    points: list[Point] = []
    metrics: dict[str, dict[str, list[float | None]]] = {WEIGHTED: {}}
    for index, (summary, report) in enumerate(runs):
        point = Point(index + 1, summary)
        for row in report.get("conditions", []):
            if not isinstance(row, dict) or not row.get("name"):
                continue
            name = str(row["name"])
            values = {WEIGHTED: row.get("weighted_score")}
            means = row.get("means")
            if isinstance(means, dict):
                values.update({str(k): v for k, v in means.items() if k != WEIGHTED})
            point.weighted[name] = _finite(row.get("weighted_score"))
            for metric, value in values.items():
                column = metrics.setdefault(metric, {}).setdefault(name, [None] * len(runs))
                column[index] = _finite(value)
        points.append(point)
    return points, {m: c for m, c in metrics.items() if c}


def _axes_runs(axes: Any, count: int) -> None:
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(labelsize=8)
    step = max(1, math.ceil(count / 12))
    axes.set_xticks(range(1, count + 1, step))
    axes.set_xlim(0.5, count + 0.5)
    axes.set_xlabel("run (oldest first)", fontsize=8)


def metric_chart(metric: str, columns: dict[str, list[float | None]], count: int) -> Chart:
    """One metric across runs: a line per condition (a gap where a run has no figure)."""
    from assay.web.svg import figure_svg, new_figure, plain

    figure = new_figure(6.4, 2.1)
    axes = figure.add_subplot()
    for index, (condition, values) in enumerate(columns.items()):
        axes.plot(
            range(1, count + 1),
            [math.nan if v is None else v for v in values],
            marker=MARKERS[index % len(MARKERS)],
            markersize=4,
            linewidth=1.4,
            color=SERIES[index % len(SERIES)],
            label=plain(condition),
        )
    _axes_runs(axes, count)
    axes.set_ylabel(plain(metric), fontsize=8)
    axes.legend(fontsize=7, frameon=False, loc="best")
    title = f"{metric} across runs"
    return Chart(title, Markup(figure_svg(figure, title=title)))


def verdict_chart(points: list[Point]) -> Chart:
    """Each run's verdict, one marker a run on the verdict's row."""
    from assay.web.svg import figure_svg, new_figure

    figure = new_figure(6.4, 1.5)
    axes = figure.add_subplot()
    for point in points:
        verdict = point.summary.verdict or ""
        row = VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)
        axes.scatter([point.number], [row], s=36, color=VERDICT_COLOURS.get(verdict, FAIL_COLOUR))
    axes.set_yticks(range(len(VERDICTS) + 1), [*VERDICTS, "other"])
    axes.set_ylim(-0.5, len(VERDICTS) + 0.5)
    _axes_runs(axes, len(points))
    return Chart("verdict across runs", Markup(figure_svg(figure, title="verdict across runs")))


def spend_chart(points: list[Point]) -> Chart:
    """What each run spent (USD, every role); a run without a recorded spend draws nothing."""
    from assay.web.svg import figure_svg, new_figure

    figure = new_figure(6.4, 1.8)
    axes = figure.add_subplot()
    axes.bar(
        [p.number for p in points],
        [p.summary.spent_usd or 0.0 for p in points],
        color="#2457a6",
        width=0.6,
    )
    _axes_runs(axes, len(points))
    axes.set_ylabel("USD", fontsize=8)
    return Chart("spend per run", Markup(figure_svg(figure, title="spend per run")))


def history_page(store: ReadOnlyStore, suite: str) -> dict[str, Any] | None:
    """The history page's data, or None when no run of `suite` is recorded."""
    runs = store.suite_runs(suite)
    if not runs:
        return None
    points, metrics = series(runs)
    charts = [metric_chart(m, columns, len(points)) for m, columns in metrics.items()]
    ids = {p.summary.run_id for p in points}
    rows, calibrations = store.judge_history()
    report = monitor([r for r in rows if r.run_id in ids], calibrations)["judges"]
    judges = {name: judge for name, judge in report.items() if judge["runs"]}  # this suite's
    return {
        "suite": suite,
        "points": list(reversed(points)),
        "conditions": sorted({c for p in points for c in p.weighted}),
        "charts": charts,
        "verdicts": verdict_chart(points),
        "spend": spend_chart(points),
        "judges": judges,
        "alerts": [(name, alert) for name, judge in judges.items() for alert in judge["alerts"]],
    }
