"""PandaLM: inter-annotator agreement of three humans, and two judges against their majority."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from datasets import pandalm
from external_data import DATA, need

from conftest import invoke


def nominal_alpha(units: list[list[int]]) -> float:
    """Krippendorff's nominal alpha from its coincidence matrix, written out independently."""
    coincidence: Counter[tuple[int, int]] = Counter()
    for values in units:
        m = len(values)
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidence[(c, k)] += 1 / (m - 1)
    n = sum(coincidence.values())
    totals: Counter[int] = Counter()
    for (c, _), value in coincidence.items():
        totals[c] += value
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (n - 1)
    return 1 - observed / expected


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    need(pandalm.FOLDER)
    path = tmp_path_factory.mktemp("pandalm") / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in pandalm.labels(DATA)), encoding="utf-8")
    result = invoke("calibrate", "--labels", path, "--no-store", "--json")
    assert result.code == 0, result.stderr
    data: dict[str, Any] = result.json()
    return data


def test_inter_annotator_agreement(calibration: dict[str, Any]) -> None:
    units = pandalm.annotator_matrix(DATA)
    dim = calibration["dimensions"]["preference"]
    assert dim["kind"] == "categorical"
    assert dim["human_items_with_several_raters"] == len(units) == 999
    assert dim["human_alpha"] == pytest.approx(nominal_alpha(units), abs=1e-9)
    # the three annotators agree unanimously on 879 items and 2-to-1 on the other 120
    assert Counter(len(set(u)) for u in units) == {1: 879, 2: 120}
    assert dim["items"] == 999 and dim["items_without_majority"] == 0
    assert 0.7 < dim["human_alpha"] < 0.9


def test_judges_against_the_human_majority(calibration: dict[str, Any]) -> None:
    units = pandalm.annotator_matrix(DATA)
    majority = {str(i): Counter(u).most_common(1)[0][0] for i, u in enumerate(units)}
    raw = json.loads(
        (Path(DATA) / "pandalm/gpt-3.5-turbo-testset-v1.json").read_text(encoding="utf-8")
    )
    code = {"1": 1, "2": 2, "Tie": 0}
    correct = sum(code.get(r["gpt_result"]) == majority[str(r["idx"])] for r in raw)
    judges = calibration["dimensions"]["preference"]["judges"]
    gpt = judges["judge:gpt-3.5-turbo"]
    assert gpt["n"] == 999
    assert gpt["agreement"] == pytest.approx(correct / 999)
    assert gpt["verdict"] in {"PASS", "FAIL"} and gpt["kappa"] is not None
    assert judges["judge:pandalm-7b"]["n"] == 999
