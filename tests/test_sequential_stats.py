"""The sequential gate's boundaries and levels (verdict/sequential.py).

Reference boundaries: the R package gsDesign's Lan–DeMets O'Brien–Fleming-type bounds
(`gsDesign(k, test.type = 2, alpha = 0.025, sfu = sfLDOF)`, two-sided symmetric, 5% in all):
for 5 equal looks 4.877, 3.357, 2.680, 2.290, 2.031; for looks at 1/2 and 1, 2.963 and 1.969.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time

import numpy as np
import pytest
from scipy.special import ndtr

from assay.verdict.checks import Check, Status
from assay.verdict.interval import cases_to_clear, paired_intervals
from assay.verdict.sequential import (
    DEFAULT_SPENDING,
    METHOD,
    SPENDINGS,
    Spending,
    boundaries,
    look_level,
    settled,
    spent,
)


def test_five_equal_looks_match_the_published_bounds() -> None:
    found = boundaries(0.95, [0.2, 0.4, 0.6, 0.8, 1.0], spending="obrien-fleming")
    assert found == pytest.approx((4.877, 3.357, 2.680, 2.290, 2.031), abs=0.01)
    assert found == pytest.approx((4.8769, 3.3570, 2.6803, 2.2898, 2.0310), abs=2e-4)


def test_one_look_is_the_fixed_design() -> None:
    assert boundaries(0.95, [1.0]) == pytest.approx((1.95996,), abs=1e-4)
    assert look_level(0.95, [1.0]) == 0.95
    assert look_level(0.9, [1.3]) == 0.9  # more cases than planned: still the fixed level


def test_unequal_looks() -> None:
    halves = boundaries(0.95, [0.5, 1.0], spending="obrien-fleming")
    assert halves == pytest.approx((2.963, 1.969), abs=2e-3)
    # each look spends what the spending function allows since the last: the chance of
    # crossing at look 1 alone is the first spending
    first = boundaries(0.95, [0.3, 0.75, 1.0])[0]
    assert 2 * ndtr(-first) == pytest.approx(2 * spent(0.05, 0.3), rel=1e-6)
    # the last boundary of a spending design is above the fixed 1.96, and below the first
    assert 1.96 < boundaries(0.95, [0.3, 0.75, 1.0])[-1] < first


@pytest.mark.parametrize("spending", SPENDINGS)
def test_each_look_spends_what_the_function_allows(spending: Spending) -> None:
    # 400,000 simulated paths of the score statistic under no difference, at unequal looks:
    # the share first crossing ±c_k at look k is the spending since the last look (to a few
    # Monte Carlo standard errors)
    looks = np.array([0.15, 0.4, 0.55, 0.8, 1.0])
    bounds = np.array(boundaries(0.95, looks.tolist(), spending=spending))
    rng = np.random.default_rng(7)
    steps = rng.normal(size=(400_000, looks.size)) * np.sqrt(np.diff(looks, prepend=0.0))
    z = np.cumsum(steps, axis=1) / np.sqrt(looks)
    crossed = np.abs(z) >= bounds
    first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
    allowed = np.diff([0.0, *(2 * spent(0.05, f, spending) for f in looks)])
    for k, share in enumerate(allowed):
        found = float(np.mean(first == k))
        assert found == pytest.approx(share, abs=4 * math.sqrt(share / 400_000) + 1e-5), k
    assert float(np.mean(first >= 0)) == pytest.approx(0.05, abs=0.002)


def test_pocock_and_power_spend_earlier() -> None:
    looks = [0.2, 0.4, 0.6, 0.8, 1.0]
    obf, power, pocock = (boundaries(0.95, looks, spending=s) for s in SPENDINGS)
    assert obf[0] > power[0] > pocock[0]
    assert obf[-1] < power[-1] < pocock[-1]
    # Lan-DeMets Pocock-type bounds are nearly flat (2.438 ... 2.386, as gsDesign's sfLDPocock);
    # the power family's lie between (the Monte Carlo test above checks what each spends)
    assert pocock == pytest.approx((2.438, 2.427, 2.410, 2.397, 2.386), abs=0.01)
    assert power == pytest.approx((3.090, 2.714, 2.473, 2.280, 2.114), abs=0.01)
    with pytest.raises(ValueError, match="spending"):
        look_level(0.95, [0.5], spending="linear")  # type: ignore[arg-type]


def test_spending_reaches_alpha_at_the_end() -> None:
    assert spent(0.05, 1.0) == pytest.approx(0.025)
    assert spent(0.05, 0.999999) == pytest.approx(0.025, rel=1e-4)
    assert spent(0.05, 0.2, "obrien-fleming") < 1e-6
    assert spent(0.05, 0.2, "power") == pytest.approx(0.025 * 0.04)


def test_the_level_falls_as_the_fraction_grows() -> None:
    levels = [look_level(0.95, [f]) for f in (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.95, 0.9999)]
    assert all(a > b for a, b in itertools.pairwise(levels))
    assert all(level < 1.0 for level in levels)
    assert levels[-1] > 0.95
    looks = [k / 10 for k in range(1, 11)]
    series = [look_level(0.95, looks[:k]) for k in range(1, 11)]
    assert all(a > b for a, b in itertools.pairwise(series))
    assert series[-1] == 0.95
    # the nominal level of an interim look is the boundary's: 1 − 2(1 − Φ(c))
    assert series[4] == pytest.approx(1 - 2 * ndtr(-boundaries(0.95, looks[:5])[-1]))


def test_an_early_look_keeps_the_gate_finite() -> None:
    # a look of 5 of 1,000 cases: the boundary is far past z = 7, and 1 − α/2 would round to 1
    level = look_level(0.95, [0.005], spending="obrien-fleming")
    assert level == 1.0 - 1e-12
    assert cases_to_clear(0.3, 1.0, 0.3, level=level, span=5.0) is not None
    deltas = np.array([[0.1], [0.5], [0.2], [0.4], [0.3]])
    assert np.isfinite(paired_intervals(deltas, level=level, span=5.0).low).all()


def test_a_stricter_level_gives_wider_boundaries() -> None:
    assert boundaries(0.99, [0.5, 1.0])[0] > boundaries(0.95, [0.5, 1.0])[0]
    assert look_level(0.99, [0.5]) > look_level(0.95, [0.5])


@pytest.mark.parametrize(
    "fractions",
    [[], [0.0], [-0.1], [math.nan], [0.5, 0.5], [0.6, 0.4], [1.0, 1.2], [0.2, math.inf]],
)
def test_bad_fractions(fractions: list[float]) -> None:
    with pytest.raises(ValueError, match="fractions"):
        look_level(0.95, fractions)


@pytest.mark.parametrize("level", [0.5, 1.0, 1.5, -0.2, math.nan])
def test_bad_level(level: float) -> None:
    with pytest.raises(ValueError, match="level"):
        look_level(level, [0.5])


def test_a_look_after_twenty_is_fast() -> None:
    # CPU time, best of three (the machine may be busy): a look after 20 made ones (cached,
    # as in a run) well under 5 ms, and 21 looks none of them cached under 50 ms
    after, cold = [], []
    for attempt in range(3):
        looks = [k / (23 + attempt) for k in range(1, 22)]
        look_level(0.95, looks[:20])
        started = time.process_time()
        look_level(0.95, looks)
        after.append(time.process_time() - started)
        fresh = [k / (29 + attempt) for k in range(1, 22)]
        started = time.process_time()
        look_level(0.95, fresh)
        cold.append(time.process_time() - started)
    assert min(after) < 0.005
    assert min(cold) < 0.05


@pytest.mark.parametrize("spending", SPENDINGS)
def test_many_small_looks_stay_stable(spending: Spending) -> None:
    # 499 looks of 1/500: no deep recursion, and the density carried across a narrow
    # increment does not blow up (sampling the kernel at the grid's points gave 0.9997 here):
    # the last interim level stays near the one of 40 looks, above the fixed design's
    few, many = (
        look_level(0.95, [k / n for k in range(1, n)], spending=spending) for n in (40, 500)
    )
    assert 0.95 < few < many < 0.995
    assert (1 - few) / (1 - many) < 1.5


def _check(status: Status, name: str = "superiority:weighted_score", **figures: float) -> Check:
    return Check(name=name, status=status, reason="r", **figures)


def test_settled_pass_and_blockers() -> None:
    assert settled([_check("pass"), _check("pass", ci_low=0.1, ci_high=0.5, bound=0.0)])
    assert not settled([_check("pass"), _check("inconclusive", ci_low=-0.1, ci_high=0.5)])
    assert not settled([_check("skipped")])
    assert settled([Check(name="blockers", status="fail", reason="1 blocking finding")])
    assert settled([Check(name="thresholds", status="fail", reason="case c1 misses")])


def test_a_fail_on_the_mean_alone_is_not_settled() -> None:
    # mean at or below 0, interval still reaching above: an early look goes on
    assert not settled([_check("fail", delta=-0.05, ci_low=-0.4, ci_high=0.3, bound=0.0)])
    assert not settled([_check("fail", delta=-0.05, ci_low=math.nan, ci_high=math.nan, bound=0)])
    # the interval wholly below the bound: settled
    assert settled([_check("fail", delta=-0.5, ci_low=-0.8, ci_high=-0.2, bound=0.0)])
    # a corpus max bound fails settled when its interval lies wholly above it
    name = "corpus:hallucination:max"
    assert settled([_check("fail", name, ci_low=0.3, ci_high=0.5, bound=0.2)])
    assert not settled([_check("fail", name, ci_low=0.1, ci_high=0.5, bound=0.2)])


def test_method_text() -> None:
    assert METHOD.spending == DEFAULT_SPENDING == "power"
    assert "Kim-DeMets" in METHOD.name
    assert "2.5%" in METHOD.guarantee(0.95)
    assert any("Jennison" in r for r in METHOD.references)


def test_a_pass_settles_only_on_an_interval_that_clears_its_bound() -> None:
    blockers = Check(name="blockers", status="pass", reason="no blocking findings")
    # Nothing with error rates to stop on (one condition, no corpus bound): a PASS of the
    # cases looked at says nothing of the rest, so the run goes on to the last look.
    assert not settled([blockers])
    corpus = "corpus:faithfulness:min"
    cleared = _check("pass", corpus, value=0.9, ci_low=0.85, ci_high=0.95, bound=0.8)
    assert settled([blockers, cleared])
    # Decided on the estimate: the mean is over the bound but the look's interval is not.
    estimate = dataclasses.replace(cleared, value=0.82, ci_low=0.7, decide="estimate")
    assert not settled([blockers, estimate])
    assert settled([blockers, dataclasses.replace(estimate, ci_low=0.81)])
    ceiling = "corpus:hallucination:max"
    loose = _check("pass", ceiling, value=0.15, ci_low=0.05, ci_high=0.25, bound=0.2)
    assert not settled([blockers, dataclasses.replace(loose, decide="estimate")])
    assert settled([blockers, dataclasses.replace(loose, ci_high=0.19, decide="estimate")])
