"""`assay bias`: position consistency, position preference, length bias."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import write_jsonl


def two_order(case: str, ab: str, ba: str, judge: str = "j", **extra: Any) -> dict[str, Any]:
    verdict = ab if ab == ba else "tie"
    return {
        "case_id": case,
        "a": "x",
        "b": "y",
        "judge": judge,
        "verdict": verdict,
        "passes": [{"order": "ab", "winner": ab}, {"order": "ba", "winner": ba}],
        **extra,
    }


def test_position_bias_counts_and_z(cli: Any, tmp_path: Path) -> None:
    rows = [two_order(f"c{i}", "a", "a") for i in range(10)]  # consistent
    rows += [two_order(f"f{i}", "a", "b") for i in range(18)]  # first shown both times
    rows += [two_order(f"s{i}", "b", "a") for i in range(2)]  # second shown both times
    rows += [{"case_id": "single", "a": "x", "b": "y", "judge": "j", "verdict": "a"}]  # one pass
    rows += [two_order(f"o{i}", "a", "a", judge="other") for i in range(4)]
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    result = cli("bias", "--comparisons", path, "--json")
    assert result.code == 0, result.stderr
    j = result.json()["judges"]["j"]
    assert j["two_order_comparisons"] == 30 and j["comparisons"] == 31
    assert j["position_consistency"] == pytest.approx(10 / 30)
    assert (j["first_position_wins"], j["second_position_wins"]) == (18, 2)
    assert j["first_position_share"] == pytest.approx(0.9)
    assert j["z"] == pytest.approx((18 - 10) / (20 / 4) ** 0.5)
    assert j["flagged"] is True
    other = result.json()["judges"]["other"]
    assert other["position_consistency"] == 1.0 and other["flagged"] is False and other["z"] is None


def test_length_preference_and_score_correlation(cli: Any, tmp_path: Path) -> None:
    comps = [
        {
            "case_id": f"{i}",
            "a": "x",
            "b": "y",
            "judge": "gpt",
            "verdict": "b",
            "len_a": 10,
            "len_b": 20 + i,
        }
        for i in range(8)
    ] + [
        {
            "case_id": "9",
            "a": "x",
            "b": "y",
            "judge": "gpt",
            "verdict": "b",
            "len_a": 50,
            "len_b": 20,
        }
    ]
    trials, scores = [], []
    for i in range(20):
        trials.append(
            {
                "case_id": f"c{i}",
                "trial": 1,
                "condition": "x",
                "runner": "r",
                "response": "w" * (10 * i + 5),
            }
        )
        scores.append(
            {
                "case_id": f"c{i}",
                "trial": 1,
                "condition": "x",
                "source": "judge:gpt",
                "correctness": 1 + i // 5,
            }
        )
    c = write_jsonl(tmp_path / "c.jsonl", comps)
    s = write_jsonl(tmp_path / "s.jsonl", scores)
    t = write_jsonl(tmp_path / "t.jsonl", trials)
    data = cli("bias", "--comparisons", c, "--scores", s, "--trials", t, "--json").json()
    gpt = data["judges"]["gpt"]
    assert gpt["p_prefer_longer"] == pytest.approx(8 / 9)
    assert gpt["length_score_rho"] > 0.9 and gpt["length_score_p"] < 0.05
    assert gpt["length_flagged"] is True
    text = cli("bias", "--comparisons", c, "--scores", s, "--trials", t)
    assert "FLAGGED length bias" in text.stdout
    missing = cli("bias", "--comparisons", c, "--scores", s)
    assert missing.code == 2 and "--trials" in missing.stderr


def test_length_preference_is_tested_and_flagged(cli: Any, tmp_path: Path) -> None:
    """A judge that always picks the longer response is flagged (binomial test against 0.5
    over decided comparisons of unequal length); one that picks it half the time is not."""
    from scipy.stats import binomtest

    import assay

    rows = []
    for i in range(20):
        len_a, len_b = (100 + i, 40) if i % 2 else (30, 90 + i)
        longer = "a" if len_a > len_b else "b"
        shorter = "b" if longer == "a" else "a"
        common = {"case_id": f"{i}", "a": "x", "b": "y", "len_a": len_a, "len_b": len_b}
        rows.append({**common, "judge": "verbose", "verdict": longer})
        rows.append({**common, "judge": "fair", "verdict": longer if i % 4 < 2 else shorter})
    rows.append(
        {
            "case_id": "eq",
            "a": "x",
            "b": "y",
            "len_a": 5,
            "len_b": 5,
            "judge": "verbose",
            "verdict": "a",
        }
    )
    rows.append(
        {
            "case_id": "tie",
            "a": "x",
            "b": "y",
            "len_a": 5,
            "len_b": 9,
            "judge": "verbose",
            "verdict": "tie",
        }
    )
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    data = cli("bias", "--comparisons", path, "--json").json()["judges"]
    verbose, fair = data["verbose"], data["fair"]
    assert verbose["p_prefer_longer"] == 1.0 and verbose["length_decided_comparisons"] == 20
    assert verbose["length_preference_z"] == pytest.approx((20 - 10) / (20 / 4) ** 0.5)
    assert verbose["length_preference_p"] == pytest.approx(binomtest(20, 20, 0.5).pvalue)
    assert verbose["length_preference_flagged"] is True
    assert fair["p_prefer_longer"] == 0.5 and fair["length_preference_flagged"] is False
    text = cli("bias", "--comparisons", path).stdout
    assert text.count("FLAGGED length preference") == 1
    assert "prefers the longer response 1.000 of 20" in text
    assert assay.bias(path).flagged == ["verbose"]


def test_a_rows_score_is_numpys_mean_without_an_array_for_a_few_metrics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under 8 metrics the mean is added up in Python, to the same float as numpy's."""
    import random

    import numpy as np

    from assay.core.records import ScoreRow
    from assay.measure import bias

    generator = random.Random(7)
    rows = []
    for _ in range(3000):
        count = generator.randint(1, 10)
        values = [
            generator.choice(
                [
                    generator.random() * 10 ** generator.randint(-8, 8),
                    float(generator.randint(1, 5)),
                    generator.gauss(0, 1e16),
                    0.1,
                    -0.0,
                ]
            )
            for _ in range(count)
        ]
        row = {"case_id": "c", "trial": 1, "condition": "x"}
        row.update({f"m{i}": v for i, v in enumerate(values)})
        rows.append((ScoreRow.model_validate(row), values))
    expected = [float(np.mean(values)) for _, values in rows]
    calls: list[int] = []
    mean = np.mean

    def counted(values: Any) -> Any:
        calls.append(len(values))
        return mean(values)

    monkeypatch.setattr(bias.np, "mean", counted)
    assert [bias.score_value(row, None) for row, _ in rows] == expected
    assert calls and min(calls) >= 8  # numpy only for rows of 8 metrics or more


def test_flag_and_printed_p_come_from_the_same_test(cli: Any, tmp_path: Path) -> None:
    """5 of 5 inconsistent pairs chose the first position: z 2.236 was flagged by |z| > 2
    while the printed exact p was 0.0625; 6 of 6 (p 0.031) is flagged."""
    from scipy.stats import binomtest

    for n, flagged in ((5, False), (6, True)):
        rows = [two_order(f"f{i}", "a", "b") for i in range(n)]
        path = write_jsonl(tmp_path / f"c{n}.jsonl", rows)
        j = cli("bias", "--comparisons", path, "--json").json()["judges"]["j"]
        assert j["p"] == pytest.approx(binomtest(n, n, 0.5).pvalue)
        assert j["flagged"] is flagged and (j["p"] < 0.05) is flagged


def test_panel_is_audited_per_judge(cli: Any, tmp_path: Path) -> None:
    """A panel of three where one judge always picks the longer response: pooled, the panel's
    verdicts follow the majority; the judge alone is flagged at 1.000."""
    rows = []
    for i in range(40):
        longer_is_a = i % 2 == 0
        longer = "a" if longer_is_a else "b"
        fair = "a" if i % 4 < 2 else "b"  # unrelated to length
        judges = [
            {"judge": "long", "verdict": longer},
            {"judge": "f1", "verdict": fair},
            {"judge": "f2", "verdict": fair},
        ]
        rows.append(
            {
                "case_id": f"c{i}", "a": "x", "b": "y", "judge": "long+f1+f2", "verdict": fair,
                "len_a": 300 if longer_is_a else 100, "len_b": 100 if longer_is_a else 300,
                "judges": judges,
                "passes": [{"order": "ab", "winner": j["verdict"], "judge": j["judge"]}
                           for j in judges],
            }
        )  # fmt: skip
    path = write_jsonl(tmp_path / "c.jsonl", rows)
    judges = cli("bias", "--comparisons", path, "--json").json()["judges"]
    assert set(judges) == {"long+f1+f2", "long", "f1", "f2"}
    assert judges["long"]["p_prefer_longer"] == 1.0 and judges["long"]["length_preference_flagged"]
    assert judges["long+f1+f2"]["length_preference_flagged"] is False
    assert judges["f1"]["length_preference_flagged"] is False
    assert judges["long"]["comparisons"] == 40


def test_unknown_metric_is_an_input_error(cli: Any, tmp_path: Path) -> None:
    comparisons = write_jsonl(tmp_path / "c.jsonl", [two_order("c0", "a", "a")])
    trials = write_jsonl(
        tmp_path / "t.jsonl",
        [{"case_id": "c0", "trial": 1, "condition": "x", "runner": "r", "response": "hi"}],
    )
    scores = write_jsonl(
        tmp_path / "s.jsonl",
        [{"case_id": "c0", "trial": 1, "condition": "x", "correctness": 4, "overall": 4.0,
          "source": "judge:j"}],
    )  # fmt: skip
    base = ("bias", "--comparisons", comparisons, "--scores", scores, "--trials", trials)
    for metric in ("overal", "safety"):
        result = cli(*base, "--metric", metric)
        assert result.code == 2 and result.stdout == ""
        assert f"--metric: no metric {metric!r}" in result.stderr
        assert "known: correctness, overall" in result.stderr
    assert cli(*base, "--metric", "overall").code == 0
