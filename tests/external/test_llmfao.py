"""LLMFAO crowd votes: `assay rank` equals an independent Bradley–Terry MM fit (Hunter 2004)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from datasets import llmfao
from external_data import DATA, need

from conftest import invoke


def mm_strengths(rows: list[dict[str, Any]], iterations: int = 100_000) -> dict[str, float]:
    """Hunter's minorisation-maximisation iterations, ties half a win each, to convergence."""
    wins: dict[str, float] = defaultdict(float)
    games: dict[tuple[str, str], float] = defaultdict(float)
    for row in rows:
        a, b, verdict = row["a"], row["b"], row["verdict"]
        if a == b:
            continue
        wins[a] += {"a": 1.0, "b": 0.0, "tie": 0.5}[verdict]
        wins[b] += {"a": 0.0, "b": 1.0, "tie": 0.5}[verdict]
        games[(min(a, b), max(a, b))] += 1
    players = sorted(wins)
    p = dict.fromkeys(players, 1.0 / len(players))
    for _ in range(iterations):
        denominators: dict[str, float] = defaultdict(float)
        for (i, j), n in games.items():
            denominators[i] += n / (p[i] + p[j])
            denominators[j] += n / (p[i] + p[j])
        new = {k: wins[k] / denominators[k] for k in players}
        total = sum(new.values())
        new = {k: v / total for k, v in new.items()}
        change = max(abs(new[k] - p[k]) for k in players)
        p = new
        if change < 1e-12:
            break
    return p


@pytest.mark.parametrize("name", ["llmfao.csv", "food.csv", "simple.csv"])
def test_rank_equals_independent_mm_fit(name: str, tmp_path: Any) -> None:
    need(f"{llmfao.FOLDER}/{name}")
    rows = llmfao.comparisons(DATA, name)
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = invoke("rank", "--comparisons", path, "--bootstrap", "20", "--json")
    assert result.code == 0, result.stderr
    ratings = result.json()["ratings"]
    expected = mm_strengths(rows)
    assert {r["name"] for r in ratings} == set(expected)
    for r in ratings:
        assert r["strength"] == pytest.approx(expected[r["name"]], abs=1e-5), r["name"]
    strengths = [r["strength"] for r in ratings]
    assert strengths == sorted(strengths, reverse=True)
