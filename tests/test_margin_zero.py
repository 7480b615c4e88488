"""A margin of 0 means "no worse" (the high-risk tier's default): a candidate equal to the
baseline on every case passes it, one worse on a single case does not; and the sequential
guarantee states the design's exact one-sided rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.verdict.compare import Delta, intervals
from assay.verdict.gate import non_inferiority


def delta_of(values: list[float]) -> Delta:
    return intervals(np.asarray(values)[:, None], ["safety"], spans=np.array([4.0]))["safety"]


@pytest.mark.parametrize("cases", [5, 20, 200])
def test_a_candidate_equal_on_every_case_passes_a_margin_of_zero(cases: int) -> None:
    """Safety 5 on every case in both arms (or 1.0 on a share in both) was INCONCLUSIVE at 20
    and 200 cases ("+0.000 [-0.440, +0.440] reaches below 0")."""
    check = non_inferiority("safety", delta_of([0.0] * cases), 0.0, 0.95, "risk:high")
    assert check.status == "pass"
    assert f"no case is worse than baseline (0 of {cases}, every one equal" in check.reason


@pytest.mark.parametrize("cases", [20, 200])
def test_a_candidate_better_on_some_cases_and_equal_on_the_rest_passes(cases: int) -> None:
    """Nine missed escalations fixed, the rest equal: better on every case that differs, and
    nine are enough for the sign test (0.5^9 < 2.5%)."""
    fixed = [0.0] * (cases - 9) + [1.0] * 9
    check = non_inferiority("safety", delta_of(fixed), 0.0, 0.95)
    assert check.status == "pass"


def test_a_few_better_cases_are_not_enough_to_call_a_noisy_metric_no_worse() -> None:
    """Three of five cases better and none worse: a noisy judge shows that often for a
    candidate worse on a quarter of its cases (0.5^3 = 12.5% > 2.5%)."""
    check = non_inferiority("safety", delta_of([0.0, 0.0, 1.0, 1.0, 1.0]), 0.0, 0.95)
    assert check.status != "pass"


@pytest.mark.parametrize("cases", [5, 20, 200])
def test_one_case_worse_does_not_pass_a_margin_of_zero(cases: int) -> None:
    worse = [0.0] * (cases - 1) + [-1.0]
    check = non_inferiority("safety", delta_of(worse), 0.0, 0.95, "risk:high")
    assert check.status != "pass"
    better_elsewhere = [0.0] * (cases - 2) + [-1.0, 1.0]
    check = non_inferiority("safety", delta_of(better_elsewhere), 0.0, 0.95)
    assert check.status != "pass"


def test_equal_on_every_case_is_within_a_positive_margin_too() -> None:
    """A guarded metric with margin 0.1, equal on all 60 cases: INCONCLUSIVE before (the
    zero-spread interval reached below -0.1); no worse is within any margin."""
    check = non_inferiority("safety", delta_of([0.0] * 60), 0.1, 0.95)
    assert check.status == "pass" and "no case is worse" in check.reason
    check = non_inferiority("safety", delta_of([0.0] * 59 + [-1.0]), 0.1, 0.95)
    assert "no case is worse" not in check.reason


def test_a_no_worse_pass_does_not_settle_an_early_look() -> None:
    """Cases not looked at could still be worse: a sequential look does not stop on it."""
    from assay.verdict.sequential import settled

    check = non_inferiority("safety", delta_of([0.0] * 20), 0.0, 0.95)
    assert check.status == "pass" and not settled([check])


def test_the_sequential_guarantee_states_the_designs_exact_rate() -> None:
    """The guarantee said "at most 2.5% per check" where the design's one-sided rate over
    ten looks of 10% (the last at the fixed level) is 3.22%: the normal-approximation rate,
    checked against a direct simulation of the looks' z statistics."""
    from assay.verdict.sequential import METHOD, boundaries, one_sided_rate

    tenths = [k / 10 for k in range(1, 11)]
    rate = one_sided_rate(0.95, tenths)
    assert rate == pytest.approx(0.0322, abs=5e-5)
    assert "at most 3.22%" in METHOD.guarantee(0.95, tenths)
    rng = np.random.default_rng(0)
    z = np.cumsum(rng.normal(size=(200_000, 10)), axis=1) / np.sqrt(np.arange(1, 11))
    bounds = np.array([*boundaries(0.95, tenths[:-1]), 1.959964])
    crossed = (z >= bounds).any(axis=1).mean()
    assert crossed == pytest.approx(rate, abs=4 * math.sqrt(rate / 200_000))
