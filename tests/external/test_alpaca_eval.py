"""AlpacaEval 2.0: raw and length-controlled win rates against the published leaderboard."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from datasets import alpaca_eval
from external_data import DATA, need

from conftest import invoke

# Length-gamed entries: gpt4_gamed answers deliberately short, NullModel is an adversarial
# null answer, and *_concise / *_verbose are the same models prompted to change only their
# length (the kind of "gamed baseline" AlpacaEval's own fit regularises against).
GAMED = {"gpt4_gamed", "NullModel"}


def is_gamed(name: str) -> bool:
    return name in GAMED or name.endswith(("_concise", "_verbose"))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    need(alpaca_eval.COMPACT)
    rows = alpaca_eval.comparisons(DATA)
    path = tmp_path_factory.mktemp("alpaca") / "comparisons.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = invoke(
        "winrate",
        "--comparisons",
        path,
        "--baseline",
        alpaca_eval.BASELINE,
        "--length-controlled",
        "--json",
    )
    assert result.code == 0, result.stderr
    models: dict[str, Any] = result.json()["models"]
    return models


@pytest.fixture(scope="module")
def leaderboard() -> dict[str, dict[str, float]]:
    need(alpaca_eval.LEADERBOARD)
    return alpaca_eval.leaderboard(DATA)


def test_raw_win_rates_equal_the_leaderboard(
    results: dict[str, Any], leaderboard: dict[str, dict[str, float]]
) -> None:
    checked = 0
    for name, rate in results.items():
        if name not in leaderboard:
            continue  # text_davinci_003 has annotations but no leaderboard row
        ref = leaderboard[name]
        assert rate["win_rate"] == pytest.approx(ref["win_rate"], abs=1e-6), name
        assert rate["standard_error"] == pytest.approx(ref["standard_error"], abs=1e-6), name
        assert rate["n"] == ref["n_total"], name
        assert rate["n_wins"] == ref["n_wins"] and rate["n_draws"] == ref["n_draws"], name
        if rate["n"] == 805:
            assert rate["avg_length"] == ref["avg_length"], name
        checked += 1
    assert checked >= 56


def test_length_controlled_win_rates_near_the_leaderboard(
    results: dict[str, Any], leaderboard: dict[str, dict[str, float]]
) -> None:
    errors = {}
    for name, rate in results.items():
        if name in leaderboard and name != alpaca_eval.BASELINE:
            errors[name] = (
                rate["length_controlled_win_rate"] - leaderboard[name]["length_controlled_winrate"]
            )
    fair = {name: error for name, error in errors.items() if not is_gamed(name)}
    assert len(fair) >= 45
    worst = max(fair, key=lambda n: abs(fair[n]))
    assert abs(fair[worst]) < 4.0, (worst, fair[worst])
    assert float(np.mean(np.abs(list(fair.values())))) < 3.0
    # length control moves the short-answer gpt4_gamed up from its raw rate, as upstream does
    assert (
        results["gpt4_gamed"]["length_controlled_win_rate"] > results["gpt4_gamed"]["win_rate"] + 5
    )


def test_single_model_file_gets_no_lc_figure() -> None:
    """Fitted alone (no difficulty term) gpt-3.5-turbo-1106 came out at 37.80 against the
    leaderboard's 19.30, and the 56 models were 6.65 points off on average, up to 28: a
    model alone gets no LC figure and the reason; with a second model it gets one."""
    need(alpaca_eval.COMPACT)
    from assay.core.records import Comparison
    from assay.measure.winrate import win_rates

    rows = [Comparison.model_validate(r) for r in alpaca_eval.comparisons(DATA)]
    alone = [r for r in rows if r.b == "gpt-3.5-turbo-1106"]
    rates, _ = win_rates(alone, alpaca_eval.BASELINE, length_controlled_rates=True)
    rate = rates["gpt-3.5-turbo-1106"]
    assert rate.length_controlled_win_rate is None and rate.lc_standard_error is None
    assert "two or more models" in rate.undefined["length_controlled_win_rate"]
    assert rate.win_rate == pytest.approx(9.18, abs=0.01)
    pair = [r for r in rows if r.b in ("claude-2", "gpt-3.5-turbo-1106")]
    rates, _ = win_rates(pair, alpaca_eval.BASELINE, length_controlled_rates=True)
    assert all(r.length_controlled_win_rate is not None for r in rates.values())


def test_two_model_files_are_as_far_off_as_the_docs_say() -> None:
    """docs/judges.md quotes bench/lc_models_per_file.py: with two models per file the LC
    figure may be several points off (worst 11.4: claude-2 beside FuseChat-Llama-3.2-3B),
    not within 0.7-1.3 as the docs once said; a pair of like models stays close."""
    need(alpaca_eval.COMPACT)
    need(alpaca_eval.LEADERBOARD)
    from pathlib import Path

    from assay.core.records import Comparison
    from assay.measure.winrate import win_rates

    board = alpaca_eval.leaderboard(DATA)
    rows = [Comparison.model_validate(r) for r in alpaca_eval.comparisons(DATA)]

    def error(pair: tuple[str, str], model: str) -> float:
        chosen = [r for r in rows if r.b in pair]
        rates, _ = win_rates(chosen, alpaca_eval.BASELINE, length_controlled_rates=True)
        lc = rates[model].length_controlled_win_rate
        assert lc is not None
        return float(lc - board[model]["length_controlled_winrate"])

    assert error(("claude-2", "FuseChat-Llama-3.2-3B-Instruct"), "claude-2") == pytest.approx(
        11.44, abs=0.05
    )
    assert abs(error(("vicuna-13b", "claude-2.1"), "vicuna-13b")) < 1.3
    docs = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text("utf-8")
    text = " ".join(docs.split())
    assert "1.34 points off on average with two models per file" in text
    assert "worst 11.4" in text and "0.7–1.3" not in text
