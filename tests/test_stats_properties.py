"""Properties: relabelling a comparison (swap a/b, mirror the verdict) changes no figure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.records import Comparison
from assay.measure.bradley_terry import rank
from assay.measure.winrate import win_rates

MIRROR = {"a": "b", "b": "a", "tie": "tie"}
games = st.lists(
    st.tuples(
        st.sampled_from(["p", "q", "r"]),
        st.sampled_from(["p", "q", "r"]),
        st.sampled_from(["a", "b", "tie"]),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=40, deadline=None)
@given(games, st.lists(st.booleans(), min_size=60, max_size=60))
def test_rank_ignores_which_side_is_a(
    played: list[tuple[str, str, str]], flips: list[bool]
) -> None:
    # every player wins and loses once against each other: the MLE always exists
    ring = [(x, y, v) for x in "pqr" for y in "pqr" if x != y for v in ("a", "b")]
    original = ring + played
    mirrored = ring + [
        (b, a, MIRROR[v]) if f else (a, b, v) for (a, b, v), f in zip(played, flips, strict=False)
    ]
    first = {r.name: r.strength for r in rank(original, bootstrap=0)}
    second = {r.name: r.strength for r in rank(mirrored, bootstrap=0)}
    for name, value in first.items():
        assert second[name] == pytest.approx(value, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "tie"]), st.booleans()), min_size=2, max_size=40)
)
def test_win_rate_ignores_which_side_is_the_baseline(rows: list[tuple[str, bool]]) -> None:
    plain = [
        Comparison(case_id=str(i), a="base", b="m", verdict=v) for i, (v, _) in enumerate(rows)
    ]
    mixed = [
        Comparison(case_id=str(i), a="m", b="base", verdict=MIRROR[v]) if flip else plain[i]
        for i, (v, flip) in enumerate(rows)
    ]
    one, _ = win_rates(plain, "base")
    two, _ = win_rates(mixed, "base")
    assert one["m"].win_rate == pytest.approx(two["m"].win_rate)
    assert one["m"].standard_error == pytest.approx(two["m"].standard_error)
