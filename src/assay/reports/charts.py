"""The HTML report's charts, drawn with matplotlib from the report model, as inline SVG.

Each function returns an `<svg>` string (see `assay.web.svg.figure_svg`), or None when
the report has nothing to draw. Labels come from user data: `$` is escaped so matplotlib
never reads them as mathtext; XML escaping is the serialiser's.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from assay.reports.model import ConditionComparison, LengthSeries, PairwiseRow, WinTieLoss
from assay.web.svg import figure_svg, new_figure, plain

WEIGHTED = "weighted_score"
BETTER = "#1a7f37"
WORSE = "#c62828"
NEUTRAL = "#6e7781"
SERIES = ("#2457a6", "#d9822b", "#7b3fa0", "#2a9d8f", "#b5485d")
MARKERS = ("o", "s", "D", "^", "v")


def _tidy(axes: Axes) -> None:
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(labelsize=8)


def delta_forest(comparisons: Sequence[ConditionComparison]) -> str | None:
    """Each metric's paired delta against baseline with its 95% interval (a forest plot):
    green when the interval is above zero, red when below, grey when it straddles zero."""
    shown = [c for c in comparisons if any(d.delta is not None for d in c.deltas)]
    if not shown:
        return None
    metrics: list[str] = []
    for comparison in shown:
        for d in comparison.deltas:
            if d.metric not in metrics:
                metrics.append(d.metric)
    if WEIGHTED in metrics:  # the headline figure on top
        metrics.remove(WEIGHTED)
        metrics.insert(0, WEIGHTED)
    rows = {m: i for i, m in enumerate(reversed(metrics))}
    figure = new_figure(6.4, 0.9 + 0.32 * len(metrics) * max(1, len(shown) * 0.7))
    axes = figure.add_subplot()
    axes.axvline(0.0, color="#444444", linewidth=0.8)
    spread = 0.5 / len(shown)
    for index, comparison in enumerate(shown):
        offset = (index - (len(shown) - 1) / 2) * spread
        for d in comparison.deltas:
            if d.delta is None:
                continue
            low = d.ci_low if d.ci_low is not None else d.delta
            high = d.ci_high if d.ci_high is not None else d.delta
            colour = BETTER if low > 0 else WORSE if high < 0 else NEUTRAL
            axes.errorbar(
                [d.delta],
                [rows[d.metric] + offset],
                xerr=[[d.delta - low], [high - d.delta]],
                fmt=MARKERS[index % len(MARKERS)],
                color=colour,
                markersize=5,
                capsize=3,
                linewidth=1.4,
                label=plain(comparison.condition) if d is comparison.deltas[0] else None,
            )
    axes.set_yticks(list(rows.values()), [plain(m) for m in rows])
    axes.set_ylim(-0.6, len(metrics) - 0.4)
    axes.set_xlabel("delta against baseline (95% CI)", fontsize=8)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    _tidy(axes)
    if len(shown) > 1:
        axes.legend(fontsize=7, frameon=False, loc="best")
    return figure_svg(figure, title="Per-metric deltas with 95% intervals", id_prefix="delta-")


def win_tie_loss_bars(
    rows: Sequence[WinTieLoss], pairwise: Sequence[PairwiseRow], candidate: str
) -> str | None:
    """Share of cases the candidate won, tied and lost per metric, then each pairwise
    judge's verdicts (b's wins as wins)."""
    named: list[tuple[str, tuple[int, int, int]]] = [
        (r.metric, (r.wins, r.ties, r.losses)) for r in rows if r.condition == candidate
    ]
    named += [(f"pairwise: {p.b} vs {p.a}", (p.wins_b, p.ties, p.wins_a)) for p in pairwise]
    named = [(label, counts) for label, counts in reversed(named) if sum(counts)]
    if not named:
        return None
    figure = new_figure(6.4, 0.9 + 0.3 * len(named))
    axes = figure.add_subplot()
    left = [0.0] * len(named)
    for part, name, colour in ((0, "win", BETTER), (1, "tie", "#b8bfc7"), (2, "loss", WORSE)):
        counts = [c[part] for _, c in named]
        shares = [c[part] / sum(c) for _, c in named]
        drawn = axes.barh(
            range(len(named)), shares, left=left, color=colour, height=0.62, label=name
        )
        axes.bar_label(
            drawn,
            labels=[
                str(n) if share >= 0.06 else "" for n, share in zip(counts, shares, strict=True)
            ],
            label_type="center",
            fontsize=7,
            color="white" if name != "tie" else "#222222",
        )
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.set_yticks(range(len(named)), [plain(label) for label, _ in named])
    axes.set_xlim(0, 1)
    axes.xaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    axes.set_xlabel(f"share of cases ({plain(candidate)} against baseline)", fontsize=8)
    axes.legend(fontsize=7, frameon=False, ncols=3, loc="upper center", bbox_to_anchor=(0.5, 1.12))
    _tidy(axes)
    return figure_svg(figure, title="Wins, ties and losses per metric", id_prefix="wtl-")


def length_scatter(series: Sequence[LengthSeries]) -> str | None:
    """Response length against the trial's weighted score, one colour per condition."""
    drawn = [s for s in series if s.points]
    if not drawn:
        return None
    figure = new_figure(6.4, 3.2)
    axes = figure.add_subplot()
    for index, s in enumerate(drawn):
        rho = "–" if s.rho is None else f"{s.rho:+.2f}"
        axes.scatter(
            [p[0] for p in s.points],
            [p[1] for p in s.points],
            s=10,
            alpha=0.55,
            linewidths=0,
            color=SERIES[index % len(SERIES)],
            marker=MARKERS[index % len(MARKERS)],
            label=f"{plain(s.condition)} (n={s.trials}, Spearman ρ {rho})",
        )
    axes.set_xlabel("response length (characters)", fontsize=8)
    axes.set_ylabel("weighted score", fontsize=8)
    axes.grid(color="#eeeeee", linewidth=0.6)
    axes.legend(fontsize=7, frameon=False, loc="best")
    _tidy(axes)
    return figure_svg(figure, title="Response length against weighted score", id_prefix="len-")
