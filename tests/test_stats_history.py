"""`assay history`: rolling agreement with spot checks, drift between runs, length bias, alerts."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from assay.core.records import ScoreRow
from assay.measure.history import Settings, history
from assay.store import Store
from assay.store.calibrations import latest_calibrations
from assay.store.history import judge_scores, save_score_rows
from conftest import write_jsonl


def score_rows(n: int, source: str, scores: list[int], **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "case_id": f"c{i}",
            "trial": 1,
            "condition": "x",
            "source": source,
            "correctness": scores[i],
            **extra,
        }
        for i in range(n)
    ]


def test_history_from_files_in_the_store(cli: Any, tmp_path: Path) -> None:
    rng = random.Random(0)
    store = tmp_path / "s.db"
    good = [rng.randint(3, 5) for _ in range(40)]
    humans = good[:20]  # human spot checks on the first 20 trials agree with the judge
    trials = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {
                "case_id": f"c{i}",
                "trial": 1,
                "condition": "x",
                "runner": "r",
                "response": "w" * (10 + 50 * good[i]),
            }
            for i in range(40)
        ],
    )
    run1 = write_jsonl(
        tmp_path / "r1.jsonl",
        score_rows(40, "judge:gpt", good, prompt_sha256="ab" * 32)
        + score_rows(20, "human:ann", humans),
    )
    result = cli(
        "history",
        "--store",
        store,
        "--add-scores",
        run1,
        "--run",
        "r1",
        "--trials",
        trials,
        "--json",
    )
    assert result.code == 0, result.stderr
    judge = result.json()["judges"][f"judge:gpt@{'ab' * 6}"]
    assert judge["checks"] == 20 and judge["rolling_agreement"] == 1.0
    assert judge["runs"][0]["length_score_rho"] > 0.9
    assert any("length bias" in a for a in judge["alerts"])
    # run 2: the judge drifts to 1s and disagrees with the humans' spot checks
    shifted = [1] * 40
    run2 = write_jsonl(
        tmp_path / "r2.jsonl",
        score_rows(40, "judge:gpt", shifted, prompt_sha256="ab" * 32)
        + score_rows(20, "human:ann", good),
    )
    result = cli("history", "--store", store, "--add-scores", run2, "--run", "r2", "--json")
    judge = result.json()["judges"][f"judge:gpt@{'ab' * 6}"]
    second = judge["runs"][1]
    assert second["run_id"] == "r2" and second["drift"]["p"] < 1e-6
    assert judge["checks"] == 40 and judge["rolling_agreement"] == 0.5
    assert any("drifted" in a for a in judge["alerts"])
    assert any("agreement with human spot checks 0.50" in a for a in judge["alerts"])
    assert cli("history", "--store", store).code == 0
    failing = cli("history", "--store", store, "--fail-on-alert")
    assert failing.code == 1 and "ALERT: score distribution drifted" in failing.stdout


def test_agreement_hidden_below_ten_checks_and_window(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    try:
        rows = [
            ScoreRow.model_validate(r)
            for r in score_rows(9, "judge:j", [3] * 9) + score_rows(9, "human:h", [3] * 9)
        ]
        save_score_rows(store, "r1", rows)
        report = history(judge_scores(store), latest_calibrations(store))["judges"]["judge:j"]
        assert report["checks"] == 9 and report["rolling_agreement"] is None
        # 30 more checks that disagree, window 20: only the disagreeing ones count
        rows = [
            ScoreRow.model_validate(r)
            for r in score_rows(30, "judge:j", [5] * 30) + score_rows(30, "human:h", [1] * 30)
        ]
        save_score_rows(store, "r2", rows)
        report = history(judge_scores(store), settings=Settings(window=20))["judges"]["judge:j"]
        assert report["checks"] == 39 and report["rolling_agreement"] == 0.0
    finally:
        store.close()


def test_calibrations_appear_in_history(cli: Any, tmp_path: Path) -> None:
    labels = [
        {"item_id": f"i{i}", "dimension": "tone", "rater": r, "value": "PASS" if i % 2 else "FAIL"}
        for i in range(20)
        for r in ("human:a", "judge:j")
    ]
    store = tmp_path / "s.db"
    cli("calibrate", "--labels", write_jsonl(tmp_path / "l.jsonl", labels), "--store", store)
    data = cli("history", "--store", store, "--json").json()
    assert data["judges"]["judge:j"]["calibration"][0]["verdict"] == "PASS"
    assert data["judges"]["judge:j"]["alerts"] == []


def test_usage_errors(cli: Any, tmp_path: Path) -> None:
    assert cli("history", "--store", tmp_path / "s.db", "--run", "r").code == 2
    rows = write_jsonl(tmp_path / "r.jsonl", score_rows(2, "judge:j", [1, 2]))
    result = cli("history", "--store", tmp_path / "s.db", "--add-scores", rows)
    assert result.code == 2 and "--run" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "c", "trial": 0, "condition": "x"}\n', encoding="utf-8")
    result = cli("history", "--store", tmp_path / "s.db", "--add-scores", bad, "--run", "r")
    assert result.code == 2 and f"{bad}:1: trial:" in result.stderr
