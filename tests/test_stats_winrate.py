"""`assay winrate`: raw win rate, flipping, soft preferences, length control, bad input."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.core.records import Comparison
from assay.measure.winrate import win_rates
from conftest import write_jsonl


def comparison(case: str, a: str, b: str, verdict: str, **extra: Any) -> dict[str, Any]:
    return {"case_id": case, "a": a, "b": b, "verdict": verdict, **extra}


def test_raw_win_rate_ties_half_flipping_and_soft(cli: Any, tmp_path: Path) -> None:
    rows = [
        comparison("1", "base", "m", "b"),  # m wins
        comparison("2", "m", "base", "a"),  # m wins (baseline as b: flipped)
        comparison("3", "base", "m", "tie"),  # half
        comparison("4", "base", "m", "a", preference=0.25),  # soft: P(m wins) = 0.25
        comparison("5", "x", "y", "a"),  # no baseline: skipped
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    result = cli("winrate", "--comparisons", path, "--baseline", "base", "--json")
    assert result.code == 0, result.stderr
    data = result.json()
    m = data["models"]["m"]
    y = np.array([1.0, 1.0, 0.5, 0.25])
    assert m["win_rate"] == pytest.approx(100 * y.mean())
    assert m["standard_error"] == pytest.approx(100 * y.std(ddof=1) / 2)
    assert m["n"] == 4 and m["n_draws"] == 1 and m["n_wins"] == 2 and m["n_losses"] == 1
    assert m["avg_length"] is None and m["length_controlled_win_rate"] is None
    assert data["skipped"] == 1 and set(data["models"]) == {"m"}


def simulated(
    n_cases: int, models: dict[str, float], seed: int = 0, equal: bool = False
) -> list[Comparison]:
    """Comparisons where a model's chance rises with its quality and, by judge bias, its length."""
    rng = random.Random(seed)
    rows = []
    for case in range(n_cases):
        difficulty = rng.gauss(0, 1)
        for name, quality in models.items():
            len_base, len_model = 1000, (1000 if equal else rng.randint(300, 3000))
            logit = quality + difficulty + 0.8 * np.tanh((len_model - len_base) / 800)
            p = float(1 / (1 + np.exp(-logit)))
            rows.append(
                Comparison(
                    case_id=f"c{case}",
                    a="base",
                    b=name,
                    verdict="b" if p > 0.5 else "a",
                    preference=p,
                    len_a=len_base,
                    len_b=len_model,
                )
            )
    return rows


def test_lc_equals_raw_when_lengths_are_equal() -> None:
    for models in ({"m": 0.3, "n": -0.5}, {"m": 0.3, "n": -0.5, "o": 1.0}):
        rates, _ = win_rates(
            simulated(200, models, equal=True), "base", length_controlled_rates=True
        )
        for rate in rates.values():
            assert rate.length_controlled_win_rate == pytest.approx(rate.win_rate, abs=1e-3)


def test_one_model_gets_no_lc_figure_and_says_why(cli: Any, tmp_path: Path) -> None:
    """Alone, a model's instruction difficulty cannot be estimated: no LC figure, a reason,
    and the alternative on stderr (not an extrapolated number)."""
    rows = [c.model_dump(exclude_none=True) for c in simulated(200, {"m": 0.3})]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    args = ("winrate", "--comparisons", path, "--baseline", "base", "--length-controlled")
    result = cli(*args, "--json")
    assert result.code == 0, result.stderr
    m = result.json()["models"]["m"]
    assert m["length_controlled_win_rate"] is None and m["lc_standard_error"] is None
    assert "two or more models" in m["undefined"]["length_controlled_win_rate"]
    assert m["win_rate"] is not None and m["standard_error"] is not None
    text = cli(*args)
    assert text.code == 0
    assert "n/a (0 of its 200 cases judged for another model" in text.stdout
    assert "no LC win rate for m" in text.stderr and "two or more models" in text.stderr


def test_all_won_has_no_standard_error_nor_lc(cli: Any, tmp_path: Path) -> None:
    """30 wins out of 30: the rate is 100, but a standard error of 0 and an LC of 100 from
    a clamped coefficient would be figures without meaning."""
    rows = [
        comparison(f"c{i}", "base", m, "b", len_a=100, len_b=100 + i)
        for i in range(30)
        for m in ("m", "n")
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    args = ("winrate", "--comparisons", path, "--baseline", "base", "--length-controlled")
    data = cli(*args, "--json").json()["models"]["m"]
    assert data["win_rate"] == 100.0 and data["n_wins"] == 30
    assert data["standard_error"] is None and data["length_controlled_win_rate"] is None
    assert data["undefined"]["standard_error"] == "all 30 comparisons won"
    assert "no finite fit" in data["undefined"]["length_controlled_win_rate"]
    text = cli(*args).stdout
    assert "n/a (all 30 comparisons won)" in text and " 0.00" not in text


def test_lc_removes_a_length_advantage() -> None:
    """A model of baseline quality that is judged better only for being longer: LC near 50."""
    rng = random.Random(5)
    rows = []
    for case in range(400):
        long = rng.random() < 0.8
        len_model = 3000 if long else 1000
        p = 0.75 if long else 0.5
        rows.append(
            Comparison(
                case_id=f"c{case}",
                a="base",
                b="verbose",
                verdict="b",
                preference=p,
                len_a=1000,
                len_b=len_model,
            )
        )
    # a second model of baseline quality and length: the instructions' difficulty is fitted
    for case in range(400):
        rows.append(
            Comparison(
                case_id=f"c{case}", a="base", b="plain", verdict="tie", preference=0.5,
                len_a=1000, len_b=1000 + rng.randint(-200, 200),
            )
        )  # fmt: skip
    rates, _ = win_rates(rows, "base", length_controlled_rates=True)
    verbose = rates["verbose"]
    assert verbose.win_rate == pytest.approx(70, abs=3)
    assert verbose.length_controlled_win_rate is not None
    assert abs(verbose.length_controlled_win_rate - 50) < abs(verbose.win_rate - 50) / 3


def test_length_controlled_cli_lengths_from_trials(cli: Any, tmp_path: Path) -> None:
    rows = [comparison(f"c{i}", "base", "m", "b" if i % 3 else "a") for i in range(30)]
    rows += [comparison(f"c{i}", "n", "base", "b" if i % 4 else "a") for i in range(30)]
    trials = []
    for i in range(30):
        for cond, length in (("base", 100), ("m", 100 + 10 * (i % 5)), ("n", 90 + i)):
            trials.append(
                {
                    "case_id": f"c{i}",
                    "trial": 1,
                    "condition": cond,
                    "runner": "r",
                    "response": "x" * length,
                }
            )
    c = write_jsonl(tmp_path / "c.jsonl", rows)
    t = write_jsonl(tmp_path / "t.jsonl", trials)
    result = cli(
        "winrate",
        "--comparisons",
        c,
        "--baseline",
        "base",
        "--trials",
        t,
        "--length-controlled",
        "--json",
    )
    assert result.code == 0, result.stderr
    m = result.json()["models"]["m"]
    assert m["avg_length"] == 120 and m["length_controlled_win_rate"] is not None
    text = cli("winrate", "--comparisons", c, "--baseline", "base", "--length-controlled")
    assert text.code == 0 and text.stdout.splitlines()[2].startswith("m ")
    assert "n/a (response lengths missing)" in text.stdout
    args = ("--baseline", "base", "--trials", t, "--length-controlled")
    assert "n/a" not in cli("winrate", "--comparisons", c, *args).stdout


def test_bad_input(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"case_id": "1", "a": "base", "b": "m", "verdict": "b"}\n{"case_id": "2", "a": "base", "b": "m", "verdict": "maybe"}\n',
        encoding="utf-8",
    )
    result = cli("winrate", "--comparisons", path, "--baseline", "base")
    assert result.code == 2 and f"{path}:2: verdict:" in result.stderr
    path.write_text('{"case_id": "1", "a": "x", "b": "m", "verdict": "b"}\n', encoding="utf-8")
    result = cli("winrate", "--comparisons", path, "--baseline", "base")
    assert result.code == 2 and "no comparison involves the baseline 'base'" in result.stderr
    assert cli("winrate", "--comparisons", path).code == 2  # --baseline is required


def test_length_controlled_without_lengths_says_why_on_stderr(cli: Any, tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{i}", "a": "base", "b": "m", "verdict": v}
        for i, v in enumerate(["b", "b", "a", "tie"])
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    for extra in ((), ("--json",)):
        result = cli(
            "winrate", "--comparisons", path, "--baseline", "base", "--length-controlled", *extra
        )
        assert result.code == 0, result.stderr
        assert "no LC win rate for m" in result.stderr
        assert "len_a/len_b" in result.stderr
    assert result.json()["models"]["m"]["length_controlled_win_rate"] is None
    assert result.json()["models"]["m"]["win_rate"] is not None
    quiet = cli("winrate", "--comparisons", path, "--baseline", "base")
    assert quiet.code == 0 and quiet.stderr == ""
