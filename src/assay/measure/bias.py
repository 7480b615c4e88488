"""Judge bias audit: position bias from two-order comparisons, length bias.

Comparisons decided by a rule, not by the judge (identical responses, or a response that
failed the case's expectations: `Comparison.by_rule`), say nothing of the judge's biases and
are left out. Per judge:
- `position_consistency`: the fraction of two-order comparisons (one `ab` and one `ba` pass)
  whose passes agree.
- `first_position_wins` / `second_position_wins`: inconsistent comparisons where both passes
  chose the response shown first (resp. second); `first_position_share` = first / (first +
  second), tested against 0.5 (`z`, and `p` from scipy's exact binomial test; `flagged` when
  p < 0.05: the flag and the printed p come from the same test, where |z| > 2 flagged 5 of 5
  (z 2.236) at p 0.0625).
- `p_prefer_longer`: among decided comparisons with responses of different lengths
  (`length_decided_comparisons`), how often the longer one won, with the same binomial test
  against 0.5 (`length_preference_z`, `length_preference_p`; `length_preference_flagged` when
  p < 0.05: the judge prefers the longer, or the shorter, response beyond chance).
- a panel's comparisons (`judges`: each judge's verdict; passes tagged with their judge) are
  audited per judge as well as pooled under the panel's name: pooled, one judge that always
  prefers the longer response is averaged away by the others.
- with score rows: the Spearman correlation between response length and score
  (`length_score_rho`, `length_score_p`, `length_flagged` when ρ > 0.3 with p < 0.05).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.core.records import Comparison, ScoreRow
from assay.measure.inputs import TrialKey, comparison_lengths, judge_name

P_BIAS = 0.05  # a position or length preference is flagged when the exact binomial p < this
RHO_FLAG = 0.3
P_FLAG = 0.05
FIXED_FIELDS = frozenset(
    {"case_id", "trial", "condition", "blocker", "notes", "source", "confidence", "evidence"}
)


@dataclass
class PositionBias:
    two_order: int = 0
    consistent: int = 0
    first: int = 0
    second: int = 0

    def as_json(self) -> dict[str, Any]:
        decided = self.first + self.second
        share = self.first / decided if decided else None
        z, p = binomial_z(self.first, decided)
        return {
            "two_order_comparisons": self.two_order,
            "position_consistency": self.consistent / self.two_order if self.two_order else None,
            "first_position_wins": self.first,
            "second_position_wins": self.second,
            "first_position_share": share,
            "z": z,
            "p": p,
            "flagged": bool(p is not None and p < P_BIAS),
        }


def position_bias(comparisons: Sequence[Comparison]) -> PositionBias:
    """Count consistent and position-driven two-order comparisons (ties never count as a position)."""
    bias = PositionBias()
    for comparison in comparisons:
        by_order = {p.order: p.winner for p in comparison.passes}
        if "ab" not in by_order or "ba" not in by_order:
            continue
        bias.two_order += 1
        ab, ba = by_order["ab"], by_order["ba"]
        if ab == ba:
            bias.consistent += 1
        elif ab == "a" and ba == "b":  # shown first both times
            bias.first += 1
        elif ab == "b" and ba == "a":  # shown second both times
            bias.second += 1
    return bias


def binomial_z(successes: int, trials: int) -> tuple[float | None, float | None]:
    """z of a count of successes against half the trials, and the exact binomial p-value."""
    if not trials:
        return None, None
    # scipy.stats is imported where it is used: a judge run records its scores through this
    # module (store/history.py: score_value) and has no use for scipy (about 0.5 s of CPU).
    from scipy import stats

    z = (successes - trials / 2) / math.sqrt(trials / 4)
    return z, float(stats.binomtest(successes, trials, 0.5).pvalue)


def length_preference(longer_won: int, decided: int) -> dict[str, Any]:
    """How often the longer response won, tested against 0.5 like the position preference."""
    z, p = binomial_z(longer_won, decided)
    return {
        "p_prefer_longer": longer_won / decided if decided else None,
        "length_decided_comparisons": decided,
        "length_preference_z": z,
        "length_preference_p": p,
        "length_preference_flagged": bool(p is not None and p < P_BIAS),
    }


def prefer_longer(
    comparisons: Sequence[Comparison], trial_lengths: dict[TrialKey, int] | None
) -> tuple[int, int]:
    """Decided, unequal-length comparisons won by the longer response, and their count."""
    longer_won = total = 0
    for comparison in comparisons:
        if comparison.verdict == "tie":
            continue
        len_a, len_b = comparison_lengths(comparison, trial_lengths)
        if len_a is None or len_b is None or len_a == len_b:
            continue
        total += 1
        longer = "a" if len_a > len_b else "b"
        longer_won += comparison.verdict == longer
    return longer_won, total


NUMERIC_FIELDS = frozenset({"overall", "overall_ln", "adequacy"})
"""Score-row fields declared on ScoreRow (judge annotations) that `--metric` may name."""


def metric_names(rows: Sequence[ScoreRow]) -> list[str]:
    """Every metric `--metric` may name: the rows' numeric metric fields and judge figures."""
    names: set[str] = set()
    for row in rows:
        for key, value in (row.model_extra or {}).items():
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if numeric and key not in FIXED_FIELDS:
                names.add(key)
        names.update(f for f in NUMERIC_FIELDS if getattr(row, f) is not None)
    return sorted(names)


def score_value(row: ScoreRow, metric: str | None) -> float | None:
    """The row's score: the named metric, else the mean of its numeric metric fields."""
    extra = row.model_extra or {}
    if metric is not None:
        value = extra.get(metric, getattr(row, metric) if metric in NUMERIC_FIELDS else None)
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    values = [
        float(v)
        for k, v in extra.items()
        if k not in FIXED_FIELDS and isinstance(v, int | float) and not isinstance(v, bool)
    ]
    if not values:
        return None
    if len(values) < 8:
        # numpy's mean of under 8 values adds them in order from 0.0 (its pairwise sum
        # starts there) and divides: the same float, without an array per row.
        total = 0.0
        for value in values:
            total += value
        return total / len(values)
    return float(np.mean(values))


def length_score(
    rows: Sequence[ScoreRow], trial_lengths: dict[TrialKey, int], metric: str | None
) -> dict[str, dict[str, Any]]:
    """Per score source: Spearman ρ between response length and score, with its p-value."""
    pairs: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for row in rows:
        length = trial_lengths.get((row.case_id, row.trial, row.condition))
        value = score_value(row, metric)
        if (row.source or "").startswith("human:"):
            continue  # a bias audit is of judges; human rows are spot checks
        if length is not None and value is not None:
            pairs[row.source or "unknown"].append((length, value))
    result: dict[str, dict[str, Any]] = {}
    for source, values in pairs.items():
        x = np.asarray([v[0] for v in values], dtype=float)
        y = np.asarray([v[1] for v in values], dtype=float)
        rho = p = None
        if len(values) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
            from scipy import stats

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                test = stats.spearmanr(x, y)
            rho, p = float(test.statistic), float(test.pvalue)
        result[source] = {
            "scored_trials": len(values),
            "length_score_rho": rho,
            "length_score_p": p,
            "length_flagged": bool(
                rho is not None and p is not None and rho > RHO_FLAG and p < P_FLAG
            ),
        }
    return result


def judge_key_of_source(source: str) -> str:
    """`judge:gpt-4o` → `gpt-4o`, so score sources line up with comparison judges."""
    return source.split(":", 1)[1] if source.startswith("judge:") else source


def panel_members(comparison: Comparison) -> list[Comparison]:
    """A panel's comparison as each judge's own: its verdict and its passes, so one judge's
    bias is not averaged away by the others (the pooled panel is audited as well)."""
    judges = (comparison.model_extra or {}).get("judges")
    if not isinstance(judges, list) or len(judges) < 2:
        return []
    members = []
    for entry in judges:
        if not isinstance(entry, dict) or entry.get("verdict") not in ("a", "b", "tie"):
            continue
        spec = str(entry.get("judge"))
        passes = [p for p in comparison.passes if p.judge == spec]
        members.append(
            comparison.model_copy(
                update={"judge": spec, "verdict": entry["verdict"], "passes": passes}
            )
        )
    return members


def audit(
    comparisons: Sequence[Comparison],
    trial_lengths: dict[TrialKey, int] | None = None,
    scores: Sequence[ScoreRow] | None = None,
    metric: str | None = None,
) -> dict[str, dict[str, Any]]:
    """The bias report per judge."""
    by_judge: dict[str, list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        if comparison.by_rule:
            continue
        by_judge[judge_key_of_source(judge_name(comparison))].append(comparison)
        for member in panel_members(comparison):
            by_judge[judge_key_of_source(judge_name(member))].append(member)
    report: dict[str, dict[str, Any]] = {}
    for judge, items in sorted(by_judge.items()):
        entry = {"comparisons": len(items), **position_bias(items).as_json()}
        entry.update(length_preference(*prefer_longer(items, trial_lengths)))
        entry.update({"length_score_rho": None, "length_score_p": None, "length_flagged": False})
        report[judge] = entry
    if scores is not None and trial_lengths is not None:
        for source, figures in length_score(scores, trial_lengths, metric).items():
            judge = judge_key_of_source(source)
            entry = report.setdefault(
                judge,
                {"comparisons": 0, **PositionBias().as_json(), **length_preference(0, 0)},
            )
            entry.update(figures)
    for entry in report.values():
        entry.setdefault("length_score_rho", None)
        entry.setdefault("length_score_p", None)
        entry.setdefault("length_flagged", False)
    return report
