"""Corpus thresholds decided on a confidence interval over cases (issue 25, item 2).

A corpus bound used to pass on its mean alone: `--corpus "correctness>=4"` passed on one
case. Each corpus check now carries the t interval over the case means (the comparison
gate's, `verdict.interval`) and, by default, is decided on it: `min` passes when the lower
bound is at or above the bound, `max` when the upper bound is at or below; FAIL when the
interval lies wholly on the wrong side; INCONCLUSIVE when it straddles the bound (with the
cases that would likely settle it) or rests on fewer than 5 cases. `decide = "estimate"`
(per bound, or `[scoring] corpus_decide` for all) decides on the mean, as before.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from assay.core.suite import Threshold
from assay.scorers.base import Score
from assay.verdict.corpus import corpus_checks
from conftest import write_jsonl

MIN_CASES = 5  # verdict.interval.MIN_CASES, the documented minimum
STRADDLING = [3, 4, 5, 5, 4, 5, 4, 3, 5, 4]  # mean 4.2, 95% t interval about [3.64, 4.76]


def rows(values: list[float], metric: str = "correctness") -> list[dict[str, Any]]:
    """One case per value, one trial each, all of condition `prod`."""
    return [
        {"case_id": f"k{i}", "trial": 1, "condition": "prod", metric: value}
        for i, value in enumerate(values)
    ]


def score(cli: Any, tmp_path: Path, values: list[float], *args: Any) -> Any:
    scores = write_jsonl(tmp_path / "scores.jsonl", rows(values))
    return cli("score", scores, "--weights", "correctness=1", *args)


def suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text("[scoring]\nweights = { correctness = 1 }\n" + text, encoding="utf-8")
    return path


def corpus(summary: dict[str, Any]) -> dict[str, Any]:
    [check] = [c for c in summary["release_gate"]["checks"] if c["name"].startswith("corpus:")]
    return check


def t_interval(values: list[float]) -> tuple[float, float]:
    found = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    return float(found.low), float(found.high)


def test_one_case_no_longer_passes_a_corpus_bound(cli: Any, tmp_path: Path) -> None:
    """The bug: `--corpus "correctness>=4"` passed "over 1 case"."""
    result = score(cli, tmp_path, [5], "--corpus", "correctness>=4", "--json")
    assert result.code == 1, result.stderr
    summary = result.json()
    assert summary["release_gate"]["verdict"] == "INCONCLUSIVE"
    check = corpus(summary)
    assert check["status"] == "inconclusive" and check["decide"] == "interval"
    assert (check["value"], check["ci_low"], check["ci_high"], check["cases"]) == (
        5.0,
        None,
        None,
        1,
    )
    assert check["cases_needed"] == MIN_CASES
    assert summary["release_gate"]["cases_needed"] == MIN_CASES
    assert "no interval from 1 case" in check["reason"]
    assert "1 case cannot pass (it takes 5)" in check["reason"]


def test_an_interval_straddling_the_bound_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """Mean 4.2 over 10 cases against >= 4 used to pass; its interval reaches below 4."""
    result = score(cli, tmp_path, STRADDLING, "--corpus", "correctness>=4", "--json")
    assert result.code == 1, result.stderr
    check = corpus(result.json())
    assert check["status"] == "inconclusive" and check["value"] == pytest.approx(4.2)
    low, high = t_interval(STRADDLING)
    assert (check["ci_low"], check["ci_high"]) == (round(low, 6), round(high, 6))
    assert check["ci_low"] < 4 < check["ci_high"]
    # about (t · sd / 0.2)² cases would put the lower bound above 4 at this spread
    assert 50 < check["cases_needed"] < 80
    assert f"about {check['cases_needed']} cases would likely settle it" in check["reason"]
    assert "(have 10)" in check["reason"]


def test_an_interval_wholly_below_a_minimum_fails(cli: Any, tmp_path: Path) -> None:
    result = score(cli, tmp_path, [2, 3, 2, 3, 3], "--corpus", "correctness>=4", "--json")
    assert result.code == 1, result.stderr
    check = corpus(result.json())
    assert check["status"] == "fail" and check["ci_high"] < 4
    assert result.json()["release_gate"]["verdict"] == "FAIL"


def test_an_interval_wholly_above_a_minimum_passes(cli: Any, tmp_path: Path) -> None:
    values = [5, 5, 4, 5, 5, 4, 5, 5]
    result = score(cli, tmp_path, values, "--corpus", "correctness>=4", "--json")
    assert result.code == 0, result.stdout + result.stderr
    check = corpus(result.json())
    low, high = t_interval(values)
    assert check["status"] == "pass" and check["ci_low"] == round(low, 6) >= 4
    assert check["ci_high"] == round(high, 6) and check["cases_needed"] is None


@pytest.mark.parametrize("cases", [2, 3, 4])
def test_fewer_than_the_minimum_never_pass_a_corpus_bound(
    cli: Any, tmp_path: Path, cases: int
) -> None:
    values = [5.0 - 0.01 * i for i in range(cases)]  # narrow: the interval clears 4 from 3 up
    result = score(cli, tmp_path, values, "--corpus", "correctness>=4", "--json")
    check = corpus(result.json())
    assert result.code == 1 and check["status"] == "inconclusive"
    assert check["cases_needed"] == MIN_CASES
    assert f"{cases} cases cannot pass (it takes 5)" in check["reason"]


def test_a_maximum_is_decided_on_the_upper_bound(cli: Any, tmp_path: Path) -> None:
    clear = score(cli, tmp_path, [1, 1, 2, 1, 1, 1, 2, 1], "--corpus", "correctness<=2", "--json")
    assert clear.code == 0 and corpus(clear.json())["status"] == "pass"
    assert corpus(clear.json())["ci_high"] <= 2
    near = score(cli, tmp_path, [1, 2, 3, 2, 1], "--corpus", "correctness<=2", "--json")
    assert near.code == 1 and corpus(near.json())["status"] == "inconclusive"
    above = score(cli, tmp_path, [4, 5, 4, 5, 4], "--corpus", "correctness<=2", "--json")
    assert above.code == 1 and corpus(above.json())["status"] == "fail"
    assert corpus(above.json())["ci_low"] > 2


def shares(metric: str, value: float, cases: int) -> list[Score]:
    return [Score(f"c{i}", 1, "prod", metric, {metric: value}) for i in range(cases)]


def test_a_share_without_spread_gets_the_distribution_free_bound() -> None:
    """Every case hallucination-free: no spread to scale a t interval by. The mean's upper
    bound is the exact one for 0 of n, 1 − 0.025^(1/n): above 0.2 up to 16 cases."""
    bound = {"hallucination": Threshold(max=0.2)}
    [few] = corpus_checks(shares("hallucination", 0.0, 10), bound, "prod")
    assert few.status == "inconclusive" and few.value == 0.0
    assert few.ci_high == pytest.approx(1 - 0.025 ** (1 / 10)) and few.ci_low == 0.0
    assert few.cases_needed == math.ceil(math.log(0.025) / math.log(0.8)) == 17
    [still] = corpus_checks(shares("hallucination", 0.0, 16), bound, "prod")
    assert still.status == "inconclusive"
    [enough] = corpus_checks(shares("hallucination", 0.0, 17), bound, "prod")
    assert enough.status == "pass"
    # a share's floor is 0, not minus its span: every case fully grounded clears 0.8 alike
    [grounded] = corpus_checks(
        shares("groundedness", 1.0, 17), {"groundedness": Threshold(min=0.8)}, "prod"
    )
    assert grounded.status == "pass" and grounded.ci_low == pytest.approx(0.025 ** (1 / 17))
    assert grounded.ci_high == 1.0


def test_a_bound_can_be_decided_on_the_estimate(cli: Any, tmp_path: Path) -> None:
    one = suite(tmp_path, '[scoring.corpus]\ncorrectness = { min = 4, decide = "estimate" }\n')
    result = score(cli, tmp_path, STRADDLING, "--suite", one, "--json")
    assert result.code == 0, result.stdout + result.stderr
    check = corpus(result.json())
    assert check["status"] == "pass" and check["decide"] == "estimate"
    assert check["ci_low"] < 4 < check["ci_high"]  # the interval is shown all the same
    assert "decided on the estimate" in check["reason"]
    below = score(cli, tmp_path, [3, 4, 4], "--suite", one, "--json")
    assert below.code == 1 and corpus(below.json())["status"] == "fail"


def test_corpus_decide_sets_every_bound_and_a_bound_may_override_it(
    cli: Any, tmp_path: Path
) -> None:
    every = suite(tmp_path, 'corpus_decide = "estimate"\n[scoring.corpus]\ncorrectness = 4\n')
    result = score(cli, tmp_path, STRADDLING, "--suite", every, "--json")
    assert result.code == 0 and corpus(result.json())["decide"] == "estimate"
    flag = score(cli, tmp_path, STRADDLING, "--suite", every, "--corpus", "correctness>=4.1")
    assert flag.code == 0 and corpus(flag.json())["decide"] == "estimate"
    text = 'corpus_decide = "estimate"\n[scoring.corpus]\ncorrectness = { min = 4, decide = "interval" }\n'
    override = suite(tmp_path, text)
    result = score(cli, tmp_path, STRADDLING, "--suite", override, "--json")
    assert result.code == 1 and corpus(result.json())["decide"] == "interval"


def test_the_decision_is_named_in_every_report(cli: Any, tmp_path: Path) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", rows(STRADDLING))
    out = tmp_path / "out"
    ran = cli(
        "report", "--scores", scores, "--weights", "correctness=1", "--corpus",
        "correctness>=4", "--format", "md,json,junit,html", "--out", out,
    )  # fmt: skip
    assert ran.code == 1, ran.stderr
    markdown = (out / "report.md").read_text()
    assert (
        "| check | method | decided on | status | estimate | 95% CI | bound | cases |" in markdown
    )
    low, high = t_interval(STRADDLING)
    row = f"| corpus:correctness:min | scores | interval | inconclusive | 4.200 | [{low:.3f}, {high:.3f}] | 4 | 10 |"
    assert row in markdown
    html = (out / "report.html").read_text()
    assert "<th>decided on</th>" in html and f"[{low:.3f}, {high:.3f}]" in html
    data = json.loads((out / "report.json").read_text())
    [check] = [c for c in data["checks"] if c["name"] == "corpus:correctness:min"]
    assert check["decide"] == "interval" and check["ci_low"] == round(low, 6)
    schema = cli("schema", "report").json()
    assert "decide" in json.dumps(schema)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[scoring.corpus]\ncorrectness = { min = 4, decide = "median" }\n', "decide"),
        ('corpus_decide = "mean"\n', "corpus_decide"),
        ('[scoring.thresholds]\ncorrectness = { min = 4, decide = "estimate" }\n', "decide"),
    ],
)
def test_a_bad_decide_is_exit_2_naming_the_file_and_field(
    cli: Any, tmp_path: Path, text: str, where: str
) -> None:
    path = suite(tmp_path, text)
    result = score(cli, tmp_path, STRADDLING, "--suite", path)
    assert result.code == 2 and not result.stdout
    assert str(path) in result.stderr and where in result.stderr
    assert "Traceback" not in result.stderr


def test_python_api_takes_a_decision_per_bound() -> None:
    import assay
    from assay.core.records import ScoreRow
    from assay.core.suite import CorpusThreshold

    scored = [ScoreRow.model_validate(r) for r in rows(STRADDLING)]
    interval = assay.evaluate(
        scores=scored, weights={"correctness": 1.0}, corpus=["correctness>=4"]
    )
    assert interval.verdict == "INCONCLUSIVE" and interval.exit_code == 1
    estimate = assay.evaluate(
        scores=scored,
        weights={"correctness": 1.0},
        corpus={"correctness": CorpusThreshold(min=4, decide="estimate")},
    )
    assert estimate.passed


def test_a_look_before_the_last_checks_a_corpus_bound_on_the_skew_corrected_interval() -> None:
    """95 of 100 cases pass, 5 never do (a share skewed towards 1): at a strict look level the
    t interval's lower end (0.876) clears min 0.85, Hall's skewness-corrected one does not,
    so a look before the last does not stop on that PASS; the last look (and a run of every
    case) keeps the t interval. Symmetric values give the t interval either way."""
    from assay.verdict.interval import paired_intervals, skew_corrected

    scores = [
        Score(f"c{i}", 1, "prod", "contains", {"passed": 1.0 if i >= 5 else 0.0})
        for i in range(100)
    ]
    bound = {"passed": Threshold(min=0.85)}
    (fixed,) = corpus_checks(scores, bound, "prod", level=0.999)
    (interim,) = corpus_checks(scores, bound, "prod", level=0.999, interim=True)
    assert fixed.status == "pass" and fixed.ci_low == pytest.approx(0.8757, abs=1e-4)
    assert interim.status == "inconclusive" and interim.ci_low < 0.85  # type: ignore[operator]
    assert interim.ci_high >= fixed.ci_high  # type: ignore[operator]  # never narrower
    even = [0.2, 0.4, 0.5, 0.6, 0.8]
    t = paired_intervals(np.asarray(even), level=0.99, span=1.0, floor=0.0)
    assert skew_corrected(np.asarray(even), 0.99) == pytest.approx((t.low[0], t.high[0]))
