"""The comparison's interval on few cases: small samples are INCONCLUSIVE, never PASS; one
rule for every column, so identical deltas get identical intervals; the weighted score is
Σ weight × metric mean (issue 25, items 1, 4, 5)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from conftest import write_jsonl

MIN_CASES = 5  # verdict.interval.MIN_CASES, the documented minimum

METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def rows_for(deltas: list[float], base: float = 3.0, trials: int = 1) -> list[dict[str, Any]]:
    """One case per delta: every metric of the candidate is `delta` above the baseline's."""
    rows = []
    for i, delta in enumerate(deltas):
        for trial in range(1, trials + 1):
            for condition, value in (("baseline", base), ("candidate", base + delta)):
                metrics = dict.fromkeys(METRICS, value)
                rows.append({"case_id": f"c{i}", "trial": trial, "condition": condition, **metrics})
    return rows


def score(cli: Any, tmp_path: Path, rows: list[dict[str, Any]], *args: str) -> Any:
    return cli("score", write_jsonl(tmp_path / "scores.jsonl", rows), *args)


def test_two_cases_are_inconclusive_and_say_how_many_would_do(cli, tmp_path: Path) -> None:
    """Two clearly better cases used to PASS with +0.750 [+0.500, +1.000]."""
    result = score(cli, tmp_path, rows_for([0.5, 1.0]))
    summary = result.json()
    gate = summary["release_gate"]
    assert result.code == 1 and gate["verdict"] == "INCONCLUSIVE"
    assert gate["cases_needed"] >= MIN_CASES
    weighted = summary["comparisons"]["candidate"]["weighted_score"]
    assert weighted["ci_low"] < 0 < weighted["ci_high"]  # t(1 df) is wide: 0.75 ± 12.7 * 0.25
    assert any("2 cases cannot pass (it takes 5)" in r for r in gate["reasons"])


@pytest.mark.parametrize("cases", [2, 3, 4])
def test_fewer_than_the_minimum_never_pass_however_clear(cli, tmp_path: Path, cases: int) -> None:
    deltas = [1.0 + 0.01 * i for i in range(cases)]  # narrow enough to clear 0 from 3 cases up
    gate = score(cli, tmp_path, rows_for(deltas)).json()["release_gate"]
    assert gate["verdict"] == "INCONCLUSIVE" and gate["cases_needed"] == MIN_CASES
    enough = score(cli, tmp_path, rows_for([1.0 + 0.01 * i for i in range(MIN_CASES)]))
    assert enough.json()["release_gate"]["verdict"] == "PASS"


def test_a_clear_loss_on_few_cases_still_fails(cli, tmp_path: Path) -> None:
    gate = score(cli, tmp_path, rows_for([-1.0, -1.5])).json()["release_gate"]
    assert gate["verdict"] == "FAIL"


def test_identical_deltas_never_give_a_zero_width_interval(cli, tmp_path: Path) -> None:
    """Cases that all share one delta: the distribution-free bound, not [d, d]."""
    comparisons = score(cli, tmp_path, rows_for([0.5] * 6)).json()["comparisons"]["candidate"]
    for figures in comparisons.values():
        assert figures["ci_low"] < 0.5 < figures["ci_high"]
    # the bound: at most 1 - 0.025^(1/n) of all cases differ (Clopper-Pearson for 0 of n)
    share = stats.binomtest(0, 6).proportion_ci(confidence_level=0.95).high
    span = 5.0  # values lie in [0, 5]: the 1-5 scale, or shares in [0, 1]
    assert comparisons["correctness"]["ci_low"] == pytest.approx(0.5 - share * (0.5 + span))
    assert comparisons["correctness"]["ci_high"] == pytest.approx(0.5 + share * (span - 0.5))


def test_identical_deltas_get_identical_intervals(cli, tmp_path: Path) -> None:
    """Every column is one function of its deltas: five metrics with the same per-case deltas,
    and a weighted score equal to its only metric, have one interval."""
    rng = np.random.default_rng(5)
    deltas = np.round(rng.normal(-3.474, 0.2, 40), 3).clip(-3.9, -1).tolist()
    comparisons = score(cli, tmp_path, rows_for(deltas, base=4.9)).json()["comparisons"]
    intervals = {(f["ci_low"], f["ci_high"]) for f in comparisons["candidate"].values()}
    assert len(intervals) == 1
    alone = score(cli, tmp_path, rows_for(deltas, base=4.9), "--weights", "correctness=1")
    alone = alone.json()["comparisons"]
    figures = alone["candidate"]
    assert (figures["weighted_score"]["ci_low"], figures["weighted_score"]["ci_high"]) == (
        figures["correctness"]["ci_low"],
        figures["correctness"]["ci_high"],
    )


def test_the_interval_is_scipys_t_interval_column_by_column() -> None:
    from assay.verdict.interval import paired_intervals

    rng = np.random.default_rng(11)
    deltas = rng.normal(0.2, 0.7, size=(30, 3))
    deltas[rng.random((30, 3)) < 0.2] = np.nan  # some cases lack a metric
    result = paired_intervals(deltas, level=0.9, span=5.0)
    for column in range(3):
        present = deltas[:, column][~np.isnan(deltas[:, column])]
        low, high = stats.ttest_1samp(present, 0.0).confidence_interval(0.9)
        assert result.n[column] == present.size
        assert result.low[column] == pytest.approx(low, rel=1e-12)
        assert result.high[column] == pytest.approx(high, rel=1e-12)
        alone = paired_intervals(present, level=0.9, span=5.0)
        assert alone.low[0] == pytest.approx(result.low[column], rel=1e-12)


def test_one_case_has_a_mean_and_no_interval() -> None:
    from assay.verdict.interval import paired_intervals

    result = paired_intervals(np.array([[0.4, np.nan]]), span=5.0)
    assert result.mean[0] == 0.4 and math.isnan(result.low[0]) and result.n.tolist() == [1, 0]


@pytest.mark.parametrize(("sd", "distance"), [(0.9, 0.3), (0.2, 0.5), (1.5, 0.05), (0.3, 2.0)])
def test_cases_to_clear_is_the_least_n_whose_t_interval_clears(sd: float, distance: float) -> None:
    from assay.verdict.interval import cases_to_clear

    n = cases_to_clear(0.0, sd, distance, span=5.0)
    assert n is not None and n >= 2

    def half(k: int) -> float:
        return float(stats.t.ppf(0.975, k - 1) * sd / math.sqrt(k))

    assert half(n) <= distance and (n == 2 or half(n - 1) > distance)


def test_weighted_score_is_the_weighted_sum_of_the_metric_means() -> None:
    """Σ weight × metric mean, as documented; a trial lacking a metric (a scorer that did not
    score it) does not reweigh the others on that trial. It used to be the mean of per-trial
    renormalised scores: 8 equal weights over the means gave 0.95, summary.json 0.9365."""
    from assay.core.rubric import Rubric
    from assay.core.suite import GateSection
    from assay.verdict.analysis import analyse
    from assay.verdict.rows import ScoredTrial

    names = [f"m{k}" for k in range(8)]
    rng = np.random.default_rng(3)
    rows = []
    for case in range(20):
        for condition in ("baseline", "candidate"):
            metrics = {m: float(rng.integers(0, 2)) for m in names}
            if case % 3 == 0:
                del metrics["m0"]  # e.g. no claims to check: the scorer returned nothing
            rows.append(ScoredTrial(f"c{case}", 1, condition, metrics))
    rubric = Rubric.from_weights(dict.fromkeys(names, 1.0), (0.0, 1.0))
    analysis = analyse(rows, rubric, GateSection())
    for summary in analysis.summaries.values():
        expected = sum(0.125 * summary.means[m] for m in names)
        assert summary.weighted_score == pytest.approx(expected, abs=1e-12)
