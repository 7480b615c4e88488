"""The betting interval for bounded values (issue 35 items 1, 4 and the wording item; issue 34
item 5): it equals a literal reference computation, keeps its level on the data shapes the t
interval failed on, is monotone near zero variance, and a margin of 0 passes equality."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.verdict.compare import intervals
from assay.verdict.gate import non_inferiority, superiority
from assay.verdict.interval import (
    STAKE,
    cases_to_clear,
    lower_bound,
    paired_intervals,
)


def reference_lower(x: list[float], side: float, c: float = STAKE, breaks: int = 20000) -> float:
    """Waudby-Smith & Ramdas's hedged capital lower bound, written out literally: for each m
    on a grid, the capital Π(1 + min(λ_t, c/m)(x_t − m)) with λ_t = √(2 log(1/side) /
    (n σ̂²_{t−1})), σ̂² and μ̂ running with priors 1/4 and 1/2; the bound is the largest grid
    m whose capital reaches 1/side (every m below it does too)."""
    n = len(x)
    best = 0.0
    for i in range(1, breaks):
        m = i / breaks
        capital, mean, var, total, squares = 1.0, 0.5, 0.25, 0.0, 0.0
        for t, value in enumerate(x, start=1):
            stake = min(math.sqrt(2 * math.log(1 / side) / (n * var)), c / m)
            capital *= 1 + stake * (value - m)
            squares += (value - mean) ** 2
            total += value
            mean = (0.5 + total) / (t + 1)
            var = (0.25 + squares) / (t + 1)
        if capital >= 1 / side:
            best = m
        else:
            break
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bound_equals_the_literal_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.beta(0.7, 0.4, 25).tolist()
    ours = lower_bound(np.asarray(x), 0.025, orders=0)
    assert ours == pytest.approx(reference_lower(x, 0.025), abs=1 / 20000)


def test_the_interval_ignores_the_cases_order() -> None:
    rng = np.random.default_rng(4)
    values = rng.normal(0.2, 0.8, 40).clip(-4, 4)
    one = paired_intervals(values, span=4.0)
    two = paired_intervals(values[::-1].copy(), span=4.0)
    assert (one.low[0], one.high[0]) == (two.low[0], two.high[0])


def catastrophes(rng: np.random.Generator, n: int) -> np.ndarray:
    """5% of cases broken at the scale's floor, the rest a little better: true delta 0."""
    return np.where(rng.random(n) < 0.05, -3.5, rng.normal(3.5 * 0.05 / 0.95, 0.3, n))


@pytest.mark.parametrize("cases", [10, 20])
def test_rare_catastrophes_are_not_passed_as_a_gain(cases: int) -> None:
    """The t interval passed 26% (10 cases) and 28% (20 cases) of these suites at 2.5%
    nominal (bench/interval_shapes.py): no case shows a catastrophe, the rest look better."""
    rng = np.random.default_rng(cases)
    sims = 400
    passed = 0
    for _ in range(sims):
        result = paired_intervals(catastrophes(rng, cases), span=4.0)
        passed += result.low[0] > 0
    assert passed / sims <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / sims)


def test_a_skewed_share_keeps_its_level_as_a_corpus_bound() -> None:
    """3 trials of a 0.9 pass rate, bound min 0.9 at the true mean: at most 2.5% PASS
    (the t interval: 5.5-8.0%)."""
    rng = np.random.default_rng(7)
    sims = 400
    low = [
        paired_intervals(rng.binomial(3, 0.9, 30) / 3, span=1.0, floor=0.0).low[0]
        for _ in range(sims)
    ]
    assert np.mean(np.asarray(low) >= 0.9) <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / sims)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=5, max_value=40),
    st.floats(min_value=0.05, max_value=2.0),
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=5),
)
def test_lowering_cases_never_raises_the_lower_bound(
    cases: int, delta: float, cuts: list[float]
) -> None:
    """Near zero variance the verdict is monotone: every case at +d, then some cases lowered,
    never gives a higher lower bound (the t interval passed +1 on every case lowered once to
    +0.9 at 5 cases, and not +1 on every case up to 20)."""
    same = np.full(cases, delta)
    lowered = same.copy()
    for i, cut in enumerate(cuts[:cases]):
        lowered[i] = delta * (1 - 0.1 * cut)
    high = paired_intervals(same, span=4.0).low[0]
    low = paired_intervals(lowered, span=4.0).low[0]
    assert low <= high + 1e-12


def delta_of(values: list[float]) -> object:
    return intervals(np.asarray(values)[:, None], ["safety"], spans=np.array([4.0]))["safety"]


@pytest.mark.parametrize("cases", [5, 20, 200])
def test_a_candidate_equal_on_every_case_passes_a_margin_of_zero(cases: int) -> None:
    """Safety 5 on every case in both arms (or 1.0 on a share in both): INCONCLUSIVE at 20
    and 200 cases before ("+0.000 [-0.440, +0.440] reaches below 0")."""
    check = non_inferiority("safety", delta_of([0.0] * cases), 0.0, 0.95, "risk:high")  # type: ignore[arg-type]
    assert check.status == "pass"
    assert f"no case is worse than baseline (0 of {cases}, every one equal" in check.reason


@pytest.mark.parametrize("cases", [20, 200])
def test_a_candidate_better_on_some_cases_and_equal_on_the_rest_passes(cases: int) -> None:
    """Nine missed escalations fixed, the rest equal: better on every case that differs, and
    nine are enough for the sign test (0.5^9 < 2.5%)."""
    fixed = [0.0] * (cases - 9) + [1.0] * 9
    check = non_inferiority("safety", delta_of(fixed), 0.0, 0.95)  # type: ignore[arg-type]
    assert check.status == "pass" and "9 better" in check.reason


def test_a_few_better_cases_are_not_enough_to_call_a_noisy_metric_no_worse() -> None:
    """Three of five cases better and none worse: a noisy judge shows that a quarter of the
    time for a candidate that is worse on a quarter of its cases (0.5^3 = 12.5% > 2.5%)."""
    check = non_inferiority("safety", delta_of([0.0, 0.0, 1.0, 1.0, 1.0]), 0.0, 0.95)  # type: ignore[arg-type]
    assert check.status == "inconclusive"


@pytest.mark.parametrize("cases", [5, 20, 200])
def test_one_case_worse_does_not_pass_a_margin_of_zero(cases: int) -> None:
    worse = [0.0] * (cases - 1) + [-1.0]
    check = non_inferiority("safety", delta_of(worse), 0.0, 0.95, "risk:high")  # type: ignore[arg-type]
    assert check.status == "fail"
    better_elsewhere = [0.0] * (cases - 2) + [-1.0, 1.0]
    check = non_inferiority("safety", delta_of(better_elsewhere), 0.0, 0.95)  # type: ignore[arg-type]
    assert check.status != "pass"


def test_a_positive_margin_still_asks_the_interval() -> None:
    """Equality on 20 cases cannot show a 0.1 margin: a share of worse cases up to 17% at
    the scale's floor is not ruled out, so it stays undecided with a count that would do."""
    check = non_inferiority("safety", delta_of([0.0] * 20), 0.1, 0.95)  # type: ignore[arg-type]
    assert check.status == "inconclusive" and check.cases_needed is not None
    assert check.cases_needed == cases_to_clear(0.0, 0.0, 0.1, span=4.0)


def test_superiority_on_constant_gains_is_monotone_in_the_case_count() -> None:
    """+1 on every case passes from the least count whose interval clears 0, and every count
    above; one case lowered to +0.9 never passes earlier."""
    passing = [
        n
        for n in range(5, 40)
        if superiority(delta_of([1.0] * n), 0.95).status == "pass"  # type: ignore[arg-type]
    ]
    assert passing == list(range(passing[0], 40))
    lowered = [
        n
        for n in range(5, 40)
        if superiority(delta_of([1.0] * (n - 1) + [0.9]), 0.95).status == "pass"  # type: ignore[arg-type]
    ]
    assert lowered[0] >= passing[0]


def test_the_sequential_guarantee_states_the_designs_exact_rate() -> None:
    """The guarantee said "at most 2.5% per check" where the design's one-sided rate over
    ten looks of 10% (the last at the fixed level) is 3.22%: the normal-approximation rate,
    checked here against a direct simulation of the looks' z statistics."""
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
