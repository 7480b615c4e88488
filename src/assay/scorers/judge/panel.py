"""Panels: several judges on the same item, combined into one row, and their agreement.

Direct: the median score per criterion with its spread (max - min), blocker by majority,
every judge's evidence, and each judge's own scores under `judges`. Pairwise: the majority
verdict (no majority → tie) with each judge's verdict under `judges`. `panel_alpha` is
Krippendorff's alpha among the judges over the items they all judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assay.scorers.judge import aggregate as agg
from assay.scorers.judge.readings import PairReading, Reading

if TYPE_CHECKING:
    from assay.scorers.judge.ask import JudgeSetup


def panel_direct(
    readings: Sequence[Reading], names: Sequence[str], setup: JudgeSetup
) -> tuple[dict[str, float], bool, float, dict[str, Any]]:
    """(scores, blocker, confidence, extra fields) of a direct panel."""
    panel = agg.panel_direct(
        [{"scores": r.scores, "blocker": r.blocker, "confidence": r.confidence} for r in readings],
        names,
        setup.low,
        setup.high,
    )
    extra: dict[str, Any] = {
        "evidence": {n: [q for r in readings for q in r.evidence[n]] for n in names},
        "spread": panel["spread"],
        "judges": [
            {
                "judge": r.judge,
                "scores": r.scores,
                "blocker": r.blocker,
                "confidence": r.confidence,
                "improvement": r.improvement,
            }
            for r in readings
        ],
    }
    return panel["scores"], panel["blocker"], panel["confidence"], extra


def panel_pairwise(readings: Sequence[PairReading]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(verdict fields, extra fields) of a pairwise panel."""
    verdict = agg.panel_pairwise(
        [
            {
                "verdict": r.verdict,
                "confidence": r.confidence,
                "consistent": r.consistent,
                "preference": r.preference,
                "criteria": r.criteria,
            }
            for r in readings
        ]
    )
    extra = {
        "judges": [
            {
                "judge": r.judge,
                "verdict": r.verdict,
                "confidence": r.confidence,
                "consistent": r.consistent,
                "criteria": r.criteria,
            }
            for r in readings
        ]
    }
    return verdict, extra


def panel_alpha(
    rows: Sequence[dict[str, Any]], judges: Sequence[str], pairwise: bool, names: Sequence[str]
) -> dict[str, float | None]:
    """Krippendorff's alpha among the panel's judges over the items they all judged."""
    # Here, not at the top: a suite run imports the judges before its first call, and
    # krippendorff imports numpy.
    from assay.measure.alpha import alpha_level, integer_scale, krippendorff_alpha

    panelled = [r for r in rows if r.get("judges")]
    if pairwise:
        matrix = [
            [
                next((agg.CODES[j["verdict"]] for j in r["judges"] if j["judge"] == spec), None)
                for r in panelled
            ]
            for spec in judges
        ]
        level = alpha_level(numeric=False, rating_scale=False)
        return {"verdict": krippendorff_alpha(matrix, level, digits=4)}
    alphas: dict[str, float | None] = {}
    for name in names:
        matrix = [
            [
                next((float(j["scores"][name]) for j in r["judges"] if j["judge"] == spec), None)
                for r in panelled
            ]
            for spec in judges
        ]
        seen = [v for row in matrix for v in row if v is not None]
        level = alpha_level(numeric=True, rating_scale=integer_scale(seen) is not None)
        alphas[name] = krippendorff_alpha(matrix, level, digits=4)
    return alphas
