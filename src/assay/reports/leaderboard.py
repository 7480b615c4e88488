"""The judge leaderboard page of `assay judge-bench --report`: every judge configuration
benchmarked in the store, per set, with the reference judges' figures, and a chart of
accuracy against position consistency (a good judge sits top right)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from assay.reports.charts import MARKERS, SERIES, _tidy
from assay.reports.html import content_security_policy, inline_svg, stylesheet
from assay.web.svg import figure_svg, new_figure, plain


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One judge on one set: a benchmarked configuration, or a reference (`source` set, and
    the `model` its authors ran). On a set of subsets, accuracy and position consistency are
    the subsets' mean and `subsets` each subset's accuracy."""

    set_name: str
    judge: str
    items: int
    accuracy: float | None
    accuracy_ci: list[float] | None
    position_consistency: float | None
    kappa: float | None
    position_bias: float | None
    p_prefer_longer: float | None
    source: str | None = None
    model: str | None = None
    subsets: dict[str, float | None] | None = None


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ci(interval: list[float] | None) -> str:
    return "" if not interval else f" [{interval[0]:.3f}, {interval[1]:.3f}]"


def _subsets(parts: dict[str, float | None] | None) -> str:
    return "" if not parts else " · ".join(f"{escape(k)} {_num(v)}" for k, v in parts.items())


def accuracy_chart(rows: Sequence[BoardRow]) -> str | None:
    """Accuracy against position consistency, one colour per set; references hollow."""
    drawn = [r for r in rows if r.accuracy is not None and r.position_consistency is not None]
    if not drawn:
        return None
    figure = new_figure(6.4, 3.6)
    axes = figure.add_subplot()
    for index, name in enumerate(sorted({r.set_name for r in drawn})):
        colour, marker = SERIES[index % len(SERIES)], MARKERS[index % len(MARKERS)]
        for reference in (False, True):
            part = [r for r in drawn if r.set_name == name and (r.source is not None) == reference]
            if not part:
                continue
            axes.scatter(
                [r.position_consistency or 0.0 for r in part],
                [r.accuracy or 0.0 for r in part],
                s=28,
                marker=marker,
                facecolors="none" if reference else colour,
                edgecolors=colour,
                label=plain(f"{name} ({'reference' if reference else 'benchmarked'})"),
            )
            for r in part:
                axes.annotate(
                    plain(r.judge),
                    (r.position_consistency or 0.0, r.accuracy or 0.0),
                    fontsize=6,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("position consistency", fontsize=8)
    axes.set_ylabel("accuracy (mean over both orders)", fontsize=8)
    axes.grid(color="#eeeeee", linewidth=0.6)
    axes.legend(fontsize=6, frameon=False, loc="lower left")
    _tidy(axes)
    return figure_svg(
        figure, title="Judge accuracy against position consistency", id_prefix="board-"
    )


def render_leaderboard(rows: Sequence[BoardRow]) -> str:
    """The page: one table row per judge and set (references marked), then the chart."""
    css = stylesheet()
    lines = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(css)}">',
        "<title>assay judge-bench</title>",
        f"<style>{css}</style></head><body><main>",
        "<h1>Judge benchmark</h1>",
        "<p>Accuracy against the sets' gold or human-majority labels (mean over both orders,"
        " 95% bootstrap interval), Cohen's κ of the final verdicts, position consistency, the"
        " net share of verdicts that followed the position, and how often the longer response"
        " won. Reference rows are published judges' verdicts on the whole set, with the model"
        " their authors ran. On a set of subsets (llmbar-adversarial) accuracy and position"
        " consistency are the unweighted mean of the subsets' figures, as LLMBar publishes"
        " them, for every row; each subset's accuracy is shown.</p>",
        "<table><thead><tr><th>set</th><th>judge</th><th>items</th><th>accuracy</th>"
        "<th>per subset</th><th>κ</th><th>position consistency</th><th>position bias</th>"
        "<th>P(longer wins)</th><th>source</th></tr></thead><tbody>",
    ]
    for r in rows:
        judge = escape(r.judge) + (f" ({escape(r.model)})" if r.model else "")
        lines.append(
            f"<tr><td>{escape(r.set_name)}</td><td>{judge}</td><td>{r.items}</td>"
            f"<td>{_num(r.accuracy)}{_ci(r.accuracy_ci)}</td><td>{_subsets(r.subsets)}</td>"
            f"<td>{_num(r.kappa)}</td>"
            f"<td>{_num(r.position_consistency)}</td><td>{_num(r.position_bias)}</td>"
            f"<td>{_num(r.p_prefer_longer)}</td>"
            f"<td>{escape(r.source or 'this store')}</td></tr>"
        )
    lines.append("</tbody></table>")
    chart = accuracy_chart(rows)
    if chart is not None:
        lines.append(f"<figure>{inline_svg(chart)}</figure>")
    lines.append("</main></body></html>")
    return "\n".join(lines) + "\n"
