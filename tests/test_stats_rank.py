"""`assay rank`: Bradley–Terry recovers known strengths; ties, pooling, errors."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.measure.bradley_terry import rank
from conftest import write_jsonl


def test_recovers_simulated_strengths() -> None:
    truth = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    rng = random.Random(7)
    names = list(truth)
    games = []
    for _ in range(20_000):
        i, j = rng.sample(names, 2)
        p = truth[i] / (truth[i] + truth[j])
        games.append((i, j, "a" if rng.random() < p else "b"))
    ratings = rank(games, bootstrap=100, seed=1)
    assert [r.name for r in ratings] == ["a", "b", "c", "d"]
    assert sum(r.strength for r in ratings) == pytest.approx(1.0)
    for r in ratings:
        assert r.strength == pytest.approx(truth[r.name], abs=0.01)
        assert r.ci_low is not None and r.ci_high is not None
        assert r.ci_low <= r.strength <= r.ci_high
        assert 0.005 < r.ci_high - r.ci_low < 0.05  # ≈ ±2 asymptotic SE at 20,000 games


def test_closed_form_two_players_with_ties() -> None:
    # 3 wins, 1 loss, 2 ties for x → score 4 of 6: strength ratio 4:2
    games = [("x", "y", "a")] * 3 + [("x", "y", "b")] + [("y", "x", "tie")] * 2
    ratings = {r.name: r for r in rank(games, bootstrap=0)}
    assert ratings["x"].strength == pytest.approx(2 / 3, abs=1e-6)
    assert ratings["x"].wins == 4.0 and ratings["x"].games == 6
    assert ratings["x"].ci_low is None


def test_mle_is_reported_missing_when_a_player_never_loses() -> None:
    with pytest.raises(ValueError, match="do not exist"):
        rank([("x", "y", "a"), ("y", "z", "a"), ("z", "y", "a")], bootstrap=0)


def test_cli_pools_judges_and_orders(cli: Any, tmp_path: Path) -> None:
    rows = []
    for i in range(30):
        rows.append(
            {
                "case_id": f"{i}",
                "a": "strong",
                "b": "weak",
                "verdict": "a" if i % 5 else "b",
                "judge": f"j{i % 2}",
            }
        )
        rows.append(
            {
                "case_id": f"{i}",
                "a": "mid",
                "b": "weak",
                "verdict": "a" if i % 3 else "tie",
                "judge": "j0",
            }
        )
        rows.append(
            {
                "case_id": f"{i}",
                "a": "strong",
                "b": "mid",
                "verdict": "a" if i % 3 else "b",
                "judge": "j1",
            }
        )
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    result = cli("rank", "--comparisons", path, "--json", "--bootstrap", "50")
    assert result.code == 0, result.stderr
    ratings = result.json()["ratings"]
    assert [r["name"] for r in ratings] == ["strong", "mid", "weak"]
    assert math.isclose(sum(r["strength"] for r in ratings), 1.0)
    assert all(r["ci_low"] <= r["strength"] <= r["ci_high"] for r in ratings)
    text = cli("rank", "--comparisons", path)
    assert text.code == 0 and text.stdout.splitlines()[1].split()[1] == "strong"


def test_cli_errors(cli: Any, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"case_id": "1", "a": "x", "b": "y", "verdict": "a"}])
    result = cli("rank", "--comparisons", path)
    assert result.code == 2 and "cannot rank" in result.stderr
    path.write_text('{"case_id": "1", "a": "x", "verdict": "a"}\n', encoding="utf-8")
    result = cli("rank", "--comparisons", path)
    assert result.code == 2 and f"{path}:1: b: required field is missing" in result.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert cli("rank", "--comparisons", empty).code == 2


def test_worked_example_interval_is_a_game_level_one() -> None:
    # 100 games, A beats B 60 times: the Wilson interval of 60/100 is [0.502, 0.691]; resampling
    # half-games instead of games gave the too narrow [0.535, 0.665]
    games = [("A", "B", "a")] * 60 + [("A", "B", "b")] * 40
    a = {r.name: r for r in rank(games, bootstrap=2000, seed=0)}["A"]
    assert a.strength == pytest.approx(0.6, abs=1e-6)
    assert a.ci_low == pytest.approx(0.50, abs=0.015)
    assert a.ci_high == pytest.approx(0.69, abs=0.015)


def test_ties_are_resampled_as_whole_games() -> None:
    # only ties and one win each way: every resample keeps the games' count
    games = [("x", "y", "tie")] * 40 + [("x", "y", "a"), ("x", "y", "b")]
    x = {r.name: r for r in rank(games, bootstrap=500, seed=3)}["x"]
    assert x.strength == pytest.approx(0.5, abs=1e-6)
    assert x.ci_low is not None and x.ci_high is not None
    assert x.ci_low < 0.5 < x.ci_high and x.ci_high - x.ci_low < 0.1


def test_bootstrap_intervals_cover_the_true_strengths_95_percent() -> None:
    """Simulated tournaments (6 players, 30 games a pair): the 95% intervals cover the true
    strengths about 94% of the time (half-game resampling covered about 82%)."""
    rng = np.random.default_rng(2026)
    names = [f"p{k}" for k in range(6)]
    truth = np.exp(np.linspace(-1.0, 1.0, 6))
    truth /= truth.sum()
    covered = total = 0
    for repetition in range(100):
        games = []
        for x in range(6):
            for y in range(x + 1, 6):
                wins = rng.random(30) < truth[x] / (truth[x] + truth[y])
                games += [(names[x], names[y], "a" if w else "b") for w in wins]
        for rating in rank(games, bootstrap=100, seed=repetition):
            assert rating.ci_low is not None and rating.ci_high is not None
            true = truth[names.index(rating.name)]
            covered += rating.ci_low <= true <= rating.ci_high
            total += 1
    assert 0.90 <= covered / total <= 0.98


@pytest.mark.parametrize(
    ("games", "why"),
    [
        ([("x", "y", "tie")] * 20, "every resample gives the same strengths (20 games, only ties)"),
        ([("x", "y", "tie")], "every resample gives the same strengths (1 game, only ties)"),
        ([("x", "y", "a"), ("y", "x", "a")], "resamples have no maximum-likelihood strengths"),
    ],
)
def test_no_interval_from_games_without_spread(
    cli: Any, tmp_path: Path, games: list[tuple[str, str, str]], why: str
) -> None:
    """20 ties, or one game, gave the interval [0.5000, 0.5000]; two games, one won each
    way, intervals from refits without a maximum: each is n/a with its reason."""
    rows = [{"case_id": f"{k}", "a": a, "b": b, "verdict": v} for k, (a, b, v) in enumerate(games)]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    data = cli("rank", "--comparisons", path, "--json").json()
    for rating in data["ratings"]:
        assert rating["ci_low"] is None and rating["ci_high"] is None
        assert why in rating["undefined"]["ci_low"]
    text = cli("rank", "--comparisons", path).stdout
    assert (
        "[0.5000, 0.5000]" not in text
        and f"n/a ({data['ratings'][0]['undefined']['ci_low']})" in text
    )


def test_rank_and_winrate_agree_on_a_panel_file_with_ties(cli: Any, tmp_path: Path) -> None:
    """A 3-judge panel's record carries the majority verdict (a tie without one, or when two
    judges tie) and the votes' share (`preference`): both commands score a game by the share,
    so with two players the Bradley–Terry strength is the win rate."""
    from assay.scorers.judge.aggregate import panel_pairwise

    rng = random.Random(34)
    rows = []
    for i in range(40):
        votes = [rng.choice(["a", "b", "b", "tie", "tie"]) for _ in range(3)]
        per_judge = [
            {
                "verdict": v,
                "confidence": 0.8,
                "consistent": True,
                "preference": {"a": 0.0, "b": 1.0, "tie": 0.5}[v],
                "criteria": {},
            }
            for v in votes
        ]
        panel = panel_pairwise(per_judge)
        rows.append(
            {
                "case_id": f"lease-{i}",
                "a": "baseline",
                "b": "candidate",
                "judge": "panel",
                "verdict": panel["verdict"],
                "preference": panel["preference"],
            }
        )
    assert any(r["verdict"] == "tie" and r["preference"] != 0.5 for r in rows)
    path = write_jsonl(tmp_path / "panel.jsonl", rows)
    rate = cli("winrate", "--comparisons", path, "--baseline", "baseline", "--json").json()
    ranked = cli("rank", "--comparisons", path, "--json").json()
    win_rate = rate["models"]["candidate"]["win_rate"]
    strengths = {r["name"]: r["strength"] for r in ranked["ratings"]}
    assert win_rate == pytest.approx(100 * strengths["candidate"], abs=1e-4)
    assert ranked["ratings"][0]["name"] == ("candidate" if win_rate > 50 else "baseline")

    # every record a 2-1 split with one judge for candidate and two ties: 66.67% and a
    # candidate twice as strong, not "only ties"
    same = [dict(r, verdict="tie", preference=0.6667) for r in rows[:12]]
    path = write_jsonl(tmp_path / "ties.jsonl", same)
    rate = cli("winrate", "--comparisons", path, "--baseline", "baseline", "--json").json()
    ranked = cli("rank", "--comparisons", path, "--json").json()
    assert rate["models"]["candidate"]["win_rate"] == pytest.approx(66.67)
    strengths = {r["name"]: r["strength"] for r in ranked["ratings"]}
    assert strengths["candidate"] == pytest.approx(0.6667, abs=1e-4)
    assert "only ties" not in json.dumps(ranked)
    # the report's pairwise table says the same b win rate
    import assay

    scores = [
        {"case_id": r["case_id"], "trial": 1, "condition": c, "correctness": 4.0}
        for r in same
        for c in ("baseline", "candidate")
    ]
    result = assay.evaluate(scores=scores, comparisons=same, weights={"correctness": 1.0})
    [row] = result.report.pairwise
    assert row.ties == 12 and row.win_rate_b == pytest.approx(0.6667, abs=1e-4)
