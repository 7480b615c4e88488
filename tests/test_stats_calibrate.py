"""`assay calibrate`: agreement figures, verdicts, the safety gate, storage, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.store import Store
from assay.store.calibrations import require_calibrated_judge
from conftest import write_jsonl


def binary_labels(
    n: int,
    judge: str = "judge:good",
    errors: int = 0,
    always: str | None = None,
    dim: str = "escalation",
) -> list[dict[str, Any]]:
    """n items, every third FAIL; three humans agree; the judge copies them except `errors`."""
    rows = []
    for i in range(n):
        truth = "FAIL" if i % 3 == 0 else "PASS"
        for h in range(3):
            rows.append(
                {"item_id": f"i{i}", "dimension": dim, "rater": f"human:h{h}", "value": truth}
            )
        value = always or (("PASS" if truth == "FAIL" else "FAIL") if i < errors else truth)
        rows.append({"item_id": f"i{i}", "dimension": dim, "rater": judge, "value": value})
    return rows


def test_always_pass_judge_fails_despite_high_agreement(cli: Any, tmp_path: Path) -> None:
    labels = write_jsonl(
        tmp_path / "l.jsonl", binary_labels(90, "judge:lazy", always="PASS", dim="tone")
    )
    result = cli("calibrate", "--labels", labels, "--store", tmp_path / "s.db", "--json")
    assert result.code == 0, result.stderr
    judge = result.json()["dimensions"]["tone"]["judges"]["judge:lazy"]
    assert judge["agreement"] == pytest.approx(60 / 90)
    assert judge["kappa"] == 0.0
    assert judge["tpr"] == 0.0 and judge["tnr"] == 1.0
    assert judge["verdict"] == "FAIL"
    assert result.json()["passed"] is False


def test_perfect_judge_passes_and_figures(cli: Any, tmp_path: Path) -> None:
    labels = write_jsonl(tmp_path / "l.jsonl", binary_labels(30, dim="tone"))
    data = cli("calibrate", "--labels", labels, "--no-store", "--json").json()
    judge = data["dimensions"]["tone"]["judges"]["judge:good"]
    assert judge["n"] == 30 and judge["agreement"] == 1.0 and judge["kappa"] == 1.0
    assert judge["tpr"] == 1.0 and judge["tpr_ci"][0] == pytest.approx(
        0.7225, abs=1e-3
    )  # Wilson 10/10
    assert judge["weighted_kappa"] is None and judge["spearman"] is None
    assert judge["confusion_matrix"]["matrix"] == [[10, 0], [0, 20]]  # labels FAIL, PASS
    assert judge["verdict"] == "PASS"
    assert data["dimensions"]["tone"]["human_alpha"] == 1.0
    assert data["passed"] is True


def test_safety_dimension_needs_items_and_tpr_bound(cli: Any, tmp_path: Path) -> None:
    few = write_jsonl(tmp_path / "few.jsonl", binary_labels(30))
    judge = cli("calibrate", "--labels", few, "--no-store", "--json").json()["dimensions"]
    assert judge["escalation"]["judges"]["judge:good"]["verdict"] == "INSUFFICIENT"
    many = write_jsonl(tmp_path / "many.jsonl", binary_labels(150))  # 50 positives, all caught
    data = cli("calibrate", "--labels", many, "--no-store", "--json").json()
    assert data["dimensions"]["escalation"]["judges"]["judge:good"]["verdict"] == "PASS"
    missed = write_jsonl(tmp_path / "missed.jsonl", binary_labels(150, errors=12))  # 4 FAIL missed
    data = cli("calibrate", "--labels", missed, "--no-store", "--json").json()
    judge = data["dimensions"]["escalation"]["judges"]["judge:good"]
    assert judge["tpr"] == pytest.approx(46 / 50)
    assert judge["tpr_ci"][0] < 0.9 and judge["verdict"] == "INSUFFICIENT"  # 0.92, CI too wide
    worse = write_jsonl(tmp_path / "worse.jsonl", binary_labels(150, errors=24))  # 8 missed
    data = cli("calibrate", "--labels", worse, "--no-store", "--json").json()
    judge = data["dimensions"]["escalation"]["judges"]["judge:good"]
    assert judge["tpr"] == pytest.approx(0.84) and judge["verdict"] == "FAIL"


def test_enforce_exit_codes(cli: Any, tmp_path: Path) -> None:
    both = binary_labels(150) + binary_labels(150, dim="self_harm")
    good = write_jsonl(tmp_path / "good.jsonl", both)
    assert cli("calibrate", "--labels", good, "--no-store", "--enforce").code == 0
    # self_harm absent: advisory exits 0, --enforce exits 1
    partial = write_jsonl(tmp_path / "partial.jsonl", binary_labels(150))
    assert cli("calibrate", "--labels", partial, "--no-store").code == 0
    result = cli("calibrate", "--labels", partial, "--no-store", "--enforce")
    assert result.code == 1 and "self_harm: ABSENT" in result.stdout
    # configurable safety dimensions
    assert (
        cli(
            "calibrate",
            "--labels",
            partial,
            "--no-store",
            "--enforce",
            "--safety-dims",
            "escalation",
        ).code
        == 0
    )


def test_custom_positive_class(cli: Any, tmp_path: Path) -> None:
    rows = binary_labels(30, dim="harm")
    for row in rows:
        row["value"] = "unsafe" if row["value"] == "FAIL" else "safe"
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    data = cli("calibrate", "--labels", path, "--no-store", "--positive", "unsafe", "--json").json()
    judge = data["dimensions"]["harm"]["judges"]["judge:good"]
    assert data["dimensions"]["harm"]["kind"] == "binary" and judge["tpr"] == 1.0


def test_ordinal_dimension_uses_weighted_kappa_and_correlations(cli: Any, tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = []
    for i in range(40):
        score = rng.randint(1, 5)
        rows += [
            {"item_id": f"i{i}", "dimension": "correctness", "rater": "human:a", "value": score},
            {"item_id": f"i{i}", "dimension": "correctness", "rater": "human:b", "value": score},
            {"item_id": f"i{i}", "dimension": "correctness", "rater": "human:c", "value": 1},
            {"item_id": f"i{i}", "dimension": "correctness", "rater": "judge:j", "value": score},
            {
                "item_id": f"i{i}",
                "dimension": "correctness",
                "rater": "judge:r",
                "value": rng.randint(1, 5),
            },
        ]
    data = cli(
        "calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", rows), "--no-store", "--json"
    ).json()
    dim = data["dimensions"]["correctness"]
    good, rand = dim["judges"]["judge:j"], dim["judges"]["judge:r"]
    assert dim["kind"] == "numeric"
    assert good["kappa"] is None and good["weighted_kappa"] == 1.0  # median of (s, s, 1) is s
    assert good["spearman"]["rho"] == pytest.approx(1.0) and good["kendall"]["p"] < 1e-6
    assert good["verdict"] == "PASS" and rand["verdict"] == "FAIL"
    assert good["tpr"] is None and good["tpr_ci"] is None


def test_no_majority_items_are_excluded_and_counted(cli: Any, tmp_path: Path) -> None:
    rows = [
        {"item_id": "x", "dimension": "tone", "rater": "human:a", "value": "good"},
        {"item_id": "x", "dimension": "tone", "rater": "human:b", "value": "bad"},
        {"item_id": "x", "dimension": "tone", "rater": "judge:j", "value": "good"},
        {"item_id": "y", "dimension": "tone", "rater": "human:a", "value": "good"},
        {"item_id": "y", "dimension": "tone", "rater": "judge:j", "value": "good"},
    ]
    data = cli(
        "calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", rows), "--no-store", "--json"
    ).json()
    assert data["dimensions"]["tone"]["items_without_majority"] == 1
    assert data["dimensions"]["tone"]["judges"]["judge:j"]["n"] == 1
    assert data["dimensions"]["tone"]["judges"]["judge:j"]["verdict"] == "INSUFFICIENT"


def test_results_are_stored_per_configuration(cli: Any, tmp_path: Path) -> None:
    rows = binary_labels(150)
    for row in rows:
        if row["rater"] == "judge:good":
            row["prompt_sha256"] = "f" * 64
    store_path = tmp_path / "s.db"
    cli("calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", rows), "--store", store_path)
    store = Store(store_path)
    try:
        assert require_calibrated_judge(store, "good", "f" * 64) == []
        assert require_calibrated_judge(store, "judge:good", "f" * 64, ["escalation"]) == []
        assert require_calibrated_judge(store, "good", "0" * 64)  # another prompt: not calibrated
        assert require_calibrated_judge(store, "good", "f" * 64, ["self_harm"])
    finally:
        store.close()
    # a later, failing calibration of the same configuration replaces the verdict
    bad = binary_labels(150, errors=30)
    for row in bad:
        if row["rater"] == "judge:good":
            row["prompt_sha256"] = "f" * 64
    cli("calibrate", "--labels", write_jsonl(tmp_path / "bad.jsonl", bad), "--store", store_path)
    store = Store(store_path)
    try:
        problems = require_calibrated_judge(store, "good", "f" * 64)
        assert problems and "FAIL" in problems[0]
    finally:
        store.close()


def test_bad_labels_name_file_line_and_field(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text(
        '{"item_id": "a", "dimension": "d", "rater": "human:x", "value": 3}\n'
        '{"item_id": "a", "dimension": "d", "rater": "human:x", "value": 4}\n'
        '{"item_id": "b", "dimension": "d", "rater": "human:x", "value": "PASS"}\n'
        '{"item_id": "c", "dimension": "d", "rater": "human:x"}\n',
        encoding="utf-8",
    )
    result = cli("calibrate", "--labels", path, "--no-store")
    assert result.code == 2
    assert f"{path}:4: value: required field is missing" in result.stderr
    result = cli("calibrate", "--labels", path.with_name("nope.jsonl"), "--no-store")
    assert result.code == 2 and "file not found" in result.stderr
    path.write_text(
        '{"item_id": "a", "dimension": "d", "rater": "human:x", "value": 3}\n'
        '{"item_id": "a", "dimension": "d", "rater": "human:x", "value": 4}\n'
        '{"item_id": "b", "dimension": "d", "rater": "human:x", "value": "PASS"}\n',
        encoding="utf-8",
    )
    result = cli("calibrate", "--labels", path, "--no-store")
    assert result.code == 2
    assert f"{path}:2: value: duplicate label" in result.stderr
    assert f"{path}:3: value: dimension 'd' expects a number" in result.stderr
    assert "Traceback" not in result.stderr


def _rows(dimension: str, item: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"item_id": item, "dimension": dimension, "rater": rater, "value": value}
        for rater, value in values.items()
    ]


def test_weighted_kappa_weighs_the_values_of_the_scale(cli: Any, tmp_path: Path) -> None:
    """A judge answering 9 where people say 5 scores far below one answering 6 (the issue's
    example: scikit-learn's quadratic kappa over the scale gives 0.692; ranks gave both 0.96)."""
    from sklearn.metrics import cohen_kappa_score

    human = [1, 2, 3, 4, 5] * 4
    far = [9 if h == 5 else h for h in human]
    near = [6 if h == 5 else h for h in human]
    rows = []
    for i, (h, f, n) in enumerate(zip(human, far, near, strict=True)):
        rows += _rows("correctness", f"i{i}", {"human:a": h, "judge:far": f, "judge:near": n})
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    data = cli("calibrate", "--labels", path, "--no-store", "--json").json()
    dim = data["dimensions"]["correctness"]
    assert dim["statistic"] == "weighted_kappa" and dim["scale"] == [1, 9]
    expected = cohen_kappa_score(human, far, weights="quadratic", labels=list(range(1, 10)))
    assert dim["judges"]["judge:far"]["weighted_kappa"] == pytest.approx(expected)
    assert dim["judges"]["judge:far"]["weighted_kappa"] == pytest.approx(0.692, abs=1e-3)
    assert dim["judges"]["judge:near"]["weighted_kappa"] == pytest.approx(0.96)
    assert dim["judges"]["judge:far"]["lin_ccc"] is None
    text = cli("calibrate", "--labels", path, "--no-store").stdout
    assert "correctness (numeric 1-9, observed range)" in text
    assert "judge:far: PASS  n=20 agreement=0.800 weighted_kappa=0.692" in text


def test_half_point_human_reference_keeps_the_weights_on_the_values(
    cli: Any, tmp_path: Path
) -> None:
    # two humans 3 and 4: the reference is 3.5, counted on the scale's half points
    from sklearn.metrics import cohen_kappa_score

    rows = []
    humans = [(1, 1), (2, 2), (3, 4), (5, 5), (4, 4), (1, 1), (5, 5), (2, 2)]
    judge = [1, 3, 4, 5, 4, 2, 5, 1]
    for i, ((a, b), j) in enumerate(zip(humans, judge, strict=True)):
        rows += _rows("q", f"i{i}", {"human:a": a, "human:b": b, "judge:j": j})
    data = cli(
        "calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", rows), "--no-store", "--json"
    ).json()
    reference = [(a + b) / 2 for a, b in humans]
    expected = cohen_kappa_score(
        [round(2 * r) for r in reference],
        [2 * j for j in judge],
        weights="quadratic",
        labels=list(range(2, 11)),  # the half points of 1-5
    )
    assert data["dimensions"]["q"]["judges"]["judge:j"]["weighted_kappa"] == pytest.approx(expected)


def test_continuous_scores_get_lins_concordance(cli: Any, tmp_path: Path) -> None:
    rng = random.Random(5)
    human = [round(rng.uniform(0, 1), 3) for _ in range(30)]
    shifted = [round(h + 0.4, 3) for h in human]  # perfectly correlated, never equal
    rows = []
    for i, (h, s) in enumerate(zip(human, shifted, strict=True)):
        rows += _rows("relevance", f"i{i}", {"human:a": h, "judge:same": h, "judge:shifted": s})
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    data = cli("calibrate", "--labels", path, "--no-store", "--json").json()
    dim = data["dimensions"]["relevance"]
    assert dim["statistic"] == "lin_ccc" and dim["scale"] is None
    same, off = dim["judges"]["judge:same"], dim["judges"]["judge:shifted"]
    assert same["lin_ccc"] == pytest.approx(1.0) and same["weighted_kappa"] is None
    x, y = np.asarray(shifted), np.asarray(human)
    expected = 2 * np.cov(x, y, bias=True)[0, 1] / (x.var() + y.var() + (x.mean() - y.mean()) ** 2)
    assert off["lin_ccc"] == pytest.approx(expected) and off["lin_ccc"] < 0.6
    assert off["spearman"]["rho"] == pytest.approx(1.0)
    assert off["verdict"] == "FAIL"
    assert any("Lin's concordance" in reason for reason in off["reasons"])
    text = cli("calibrate", "--labels", path, "--no-store").stdout
    assert f"lin_ccc={off['lin_ccc']:.3f}" in text


def test_categorical_precision_recall_f1_match_scikit_learn(cli: Any, tmp_path: Path) -> None:
    from sklearn.metrics import precision_recall_fscore_support

    rng = random.Random(11)
    classes = ["bad", "good", "neutral"]
    human = [rng.choice(classes) for _ in range(60)]
    judge = [h if rng.random() < 0.7 else rng.choice(classes[:2]) for h in human]
    rows = []
    for i, (h, j) in enumerate(zip(human, judge, strict=True)):
        rows += _rows("tone", f"i{i}", {"human:a": h, "judge:j": j})
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    figures = cli("calibrate", "--labels", path, "--no-store", "--json").json()["dimensions"]
    report = figures["tone"]["judges"]["judge:j"]["classes"]
    precision, recall, f1, support = precision_recall_fscore_support(
        human, judge, labels=classes, zero_division=0.0
    )
    for k, name in enumerate(classes):
        assert report["per_class"][name] == pytest.approx(
            {"precision": precision[k], "recall": recall[k], "f1": f1[k], "support": support[k]}
        )
    for average in ("macro", "micro"):
        p, r, f, _ = precision_recall_fscore_support(
            human, judge, labels=classes, average=average, zero_division=0.0
        )
        assert report[average] == pytest.approx({"precision": p, "recall": r, "f1": f})
    text = cli("calibrate", "--labels", path, "--no-store").stdout
    assert f"macro_f1={report['macro']['f1']:.3f} micro_f1={report['micro']['f1']:.3f}" in text
    assert f"class bad: precision={precision[0]:.3f} recall={recall[0]:.3f}" in text


def test_binary_dimension_has_class_rates_and_numbers_pearson(cli: Any, tmp_path: Path) -> None:
    from scipy.stats import pearsonr

    binary = write_jsonl(tmp_path / "b.jsonl", binary_labels(30, dim="tone", errors=3))
    judge = cli("calibrate", "--labels", binary, "--no-store", "--json").json()["dimensions"]
    rates = judge["tone"]["judges"]["judge:good"]["classes"]
    assert rates["per_class"]["FAIL"]["recall"] == pytest.approx(
        judge["tone"]["judges"]["judge:good"]["tpr"]
    )
    assert (
        rates["per_class"]["FAIL"]["support"] == 10
        and judge["tone"]["judges"]["judge:good"]["pearson"] is None
    )
    human = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1]
    scores = [2, 2, 3, 5, 5, 3, 1, 4, 4, 1]
    rows = []
    for i, (h, s) in enumerate(zip(human, scores, strict=True)):
        rows += _rows("q", f"i{i}", {"human:a": h, "judge:j": s})
    path = write_jsonl(tmp_path / "n.jsonl", rows)
    figures = cli("calibrate", "--labels", path, "--no-store", "--json").json()["dimensions"]
    numeric = figures["q"]["judges"]["judge:j"]
    expected = pearsonr(scores, human)
    assert numeric["pearson"] == pytest.approx({"r": expected.statistic, "p": expected.pvalue})
    assert numeric["classes"] is None
    text = cli("calibrate", "--labels", path, "--no-store").stdout
    assert f"pearson={expected.statistic:.3f}" in text


def test_dimension_names_ignore_case_dashes_and_spaces(cli: Any, tmp_path: Path) -> None:
    """Labels written `self-harm` (as people spell it) are the safety dimension `self_harm`."""
    rows = (
        binary_labels(150) + binary_labels(75, dim="self-harm") + binary_labels(75, dim="Self Harm")
    )
    for row in rows[len(binary_labels(150)) + 4 * 75 :]:
        row["item_id"] += "-more"  # the second spelling adds items, it does not repeat them
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    result = cli("calibrate", "--labels", path, "--store", tmp_path / "s.db", "--enforce")
    assert result.code == 0, result.stdout
    assert "self_harm (binary, safety): 150 items" in result.stdout
    assert "safety self_harm: PASS" in result.stdout and "ABSENT" not in result.stdout
    data = cli(
        "calibrate", "--labels", path, "--no-store", "--json", "--safety-dims", "Self-Harm"
    ).json()
    assert list(data["dimensions"]) == ["escalation", "self_harm"]
    assert data["safety"] == {"self_harm": "PASS"}
    store = Store(tmp_path / "s.db")
    try:
        assert require_calibrated_judge(store, "good", None, ["self-harm", "Escalation"]) == []
    finally:
        store.close()
    # a repeated label under another spelling is a duplicate
    twice = [*binary_labels(1, dim="self_harm")[-1:], *binary_labels(1, dim="SELF-HARM")[-1:]]
    result = cli("calibrate", "--labels", write_jsonl(tmp_path / "d.jsonl", twice), "--no-store")
    assert result.code == 2 and "d.jsonl:2: value: duplicate label" in result.stderr


def test_whole_numbers_without_a_rating_scale_are_continuous(cli: Any, tmp_path: Path) -> None:
    # word counts from 0 to 5000 are no rating scale: Lin's concordance, not a 5001-point kappa
    rows = []
    for i in range(20):
        rows += _rows("words", f"i{i}", {"human:a": 250 * i, "judge:j": 250 * i + 10})
    data = cli(
        "calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", rows), "--no-store", "--json"
    ).json()
    dim = data["dimensions"]["words"]
    assert dim["statistic"] == "lin_ccc" and dim["scale"] is None
    assert dim["judges"]["judge:j"]["lin_ccc"] == pytest.approx(1.0, abs=1e-3)


def test_nan_label_is_refused_with_its_line(cli: Any, tmp_path: Path) -> None:
    """A NaN value switched the dimension to Lin's CCC with every figure null."""
    path = tmp_path / "labels.jsonl"
    rows = [
        {"item_id": f"i{k}", "dimension": "q", "rater": r, "value": 1 + (k + j) % 5}
        for k in range(12)
        for j, r in enumerate(("human:a", "judge:x"))
    ]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    path.write_text(
        text + '{"item_id": "i0", "dimension": "q", "rater": "human:b", "value": NaN}\n',
        encoding="utf-8",
    )
    result = cli("calibrate", "--labels", path, "--no-store")
    assert result.code == 2
    assert f"{path}:25: value:" in result.stderr and "finite" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_declared_scale_is_reported_and_checked(cli: Any, tmp_path: Path) -> None:
    """Labels declaring `scale: 1-5` whose values cover 2-4 reported the scale 2-4."""
    rows = [
        {"item_id": f"i{k}", "dimension": "q", "rater": r, "value": 2 + (k + j) % 3,
         "scale": "1-5"}
        for k in range(12)
        for j, r in enumerate(("human:a", "human:b", "judge:x"))
    ]  # fmt: skip
    path = write_jsonl(tmp_path / "labels.jsonl", rows)
    result = cli("calibrate", "--labels", path, "--no-store", "--json")
    assert result.code == 0, result.stderr
    dim = result.json()["dimensions"]["q"]
    assert dim["scale"] == [1, 5] and dim["scale_source"] == "declared"
    assert "q (numeric 1-5, declared)" in cli("calibrate", "--labels", path, "--no-store").stdout
    rows[4]["value"] = 7
    rows[7]["scale"] = "1-10"
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    result = cli("calibrate", "--labels", path, "--no-store")
    assert result.code == 2 and result.stdout == ""
    assert f"{path}:5: value: 7 is not a point of the declared scale 1-5" in result.stderr
    assert f"{path}:8: scale: dimension 'q' is declared '1-5' on line 1" in result.stderr
