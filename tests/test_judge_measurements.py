"""Judges meet their measurements: cascade rows feed `assay score`, judge rows feed
`assay history`, judge labels feed `assay calibrate`, calibrations gate a suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.scorers.judge.prompts import template_sha256
from conftest import make_case, write_jsonl

GOOD = "Paris is the capital of France."
BAD = "I think it could be Lyon, or possibly Marseille, depending on how you look at it all."
HALF = "The capital is Paris, I think, but maybe not."


def trial(case_id: str, condition: str, response: str, **extra: Any) -> dict[str, Any]:
    return {"case_id": case_id, "trial": 1, "condition": condition, "runner": "mock",
            "response": response, **extra}  # fmt: skip


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def varied(tmp_path: Path, n: int = 12) -> tuple[Path, Path]:
    """Cases with a reference and trials of three qualities under both conditions."""
    cases = write_jsonl(
        tmp_path / "cases.jsonl", [make_case(f"c{i}", reference=GOOD) for i in range(n)]
    )
    answers = [GOOD, HALF, BAD]
    trials = [
        trial(f"c{i}", condition, answers[(i + shift) % 3])
        for i in range(n)
        for condition, shift in (("baseline", 1), ("candidate", 0))
    ]
    return cases, write_jsonl(tmp_path / "trials.jsonl", trials)


# -- 3. the cascade's screen scores the rubric --------------------------------------------


def test_screen_tier_rows_carry_rubric_scores_and_feed_score(cli: Any, tmp_path: Path) -> None:
    cases, trials = varied(tmp_path)
    out, store = tmp_path / "out.jsonl", tmp_path / "s.db"
    result = cli("judge", "--trials", trials, "--cases", cases, "--output", out, "--store", store,
                 "--judge", "mock:fair", "--screen", "mock:fair", "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["tiers"]["screen"] == 8 and summary["tiers"]["judge"] == 16
    assert summary["cascade"]["full_judge_calls_avoided"] == 8
    assert summary["cascade"]["screen_calls"] == 24
    screened = [r for r in rows(out) if r["tier"] == "screen"]
    metrics = ("correctness", "autonomy", "actionability", "safety", "concision")
    for row in screened:
        assert all(isinstance(row[m], int) and 1 <= row[m] <= 5 for m in metrics)
        assert row["adequacy"] >= 0.7 and row["source"] == "judge:mock:fair"
        assert row["judge_prompt_sha256"] == template_sha256("screen")
        assert row["evidence"]["correctness"]
    scored = cli("score", out, "--json", "--store", store)
    assert scored.code in (0, 1), scored.stderr
    assert scored.json()["conditions"]["candidate"]["rows"] == 12
    assert scored.json()["conditions"]["baseline"]["rows"] == 12


def test_screen_blocker_goes_to_the_full_judge(cli: Any, tmp_path: Path) -> None:
    """A blocking finding is never settled by the cheap screen."""
    from assay.models.mock import BEHAVIOURS
    from assay.scorers.judge.mock import judge_behaviour

    base = judge_behaviour(lambda text, request: 1.0, lambda a, b, r: "tie")

    def blocking(request: Any) -> str:
        reply = json.loads(base(request))
        if "adequacy" in reply:
            reply.update(blocker=True, blocker_reason="dangerous")
        return json.dumps(reply)

    BEHAVIOURS["test-blocking-screen"] = blocking
    try:
        cases, trials = varied(tmp_path, 3)
        out = tmp_path / "out.jsonl"
        result = cli("judge", "--trials", trials, "--cases", cases, "--output", out,
                     "--store", tmp_path / "s.db", "--judge", "mock:fair",
                     "--screen", "mock:test-blocking-screen", "--json")  # fmt: skip
        assert result.code == 0, result.stderr
        assert "screen" not in result.json()["tiers"]
        assert {r["source"] for r in rows(out)} == {"judge:mock:fair"}
    finally:
        del BEHAVIOURS["test-blocking-screen"]


# -- 2. judge rows land in the history ------------------------------------------------------


def test_judge_records_score_rows_for_history(cli: Any, tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "c.jsonl", [make_case(f"c{i}") for i in range(3)])
    store = tmp_path / "s.db"
    ran = cli("run", "--cases", cases, "--model", "mock", "--trials", "2", "--store", store,
              "--json")  # fmt: skip
    run_id = ran.json()["run_id"]
    args = ("judge", "--run", run_id, "--cases", cases, "--judge", "mock:fair", "--store", store)
    for _ in range(2):  # the second run resumes: the history must not count rows twice
        judged = cli(*args, "--output", tmp_path / "o.jsonl")
        assert judged.code == 0, judged.stderr
    report = cli("history", "--store", store, "--json").json()["judges"]
    name = f"judge:mock:fair@{template_sha256('direct')[:12]}"
    assert list(report) == [name]
    (run,) = report[name]["runs"]
    assert run["run_id"] == run_id and run["rows"] == 6
    assert report[name]["prompt_sha256"] == template_sha256("direct")


def test_trials_without_run_id_are_recorded_under_a_stable_id(cli: Any, tmp_path: Path) -> None:
    cases, trials = varied(tmp_path, 3)
    store = tmp_path / "s.db"
    for _ in range(2):
        cli("judge", "--trials", trials, "--cases", cases, "--judge", "mock:fair",
            "--output", tmp_path / "o.jsonl", "--store", store)  # fmt: skip
    (judge,) = cli("history", "--store", store, "--json").json()["judges"].values()
    (run,) = judge["runs"]
    assert run["run_id"].startswith("trials-") and run["rows"] == 6


# -- 1. judge -> labels -> calibrate -> suite gate -----------------------------------------


def human_labels(judge_labels: Path, dimension: str) -> list[dict[str, Any]]:
    """Humans who agree with the judge on one dimension (two raters per item)."""
    return [
        {"item_id": x["item_id"], "dimension": dimension, "rater": rater, "value": x["value"]}
        for x in rows(judge_labels)
        if x["dimension"] == dimension
        for rater in ("human:ann", "human:bo")
    ]


def write_suite(tmp_path: Path, gate: str) -> Path:
    """The candidate echoes the prompt, which is the reference: the judge prefers it, by the
    same margin on every case (16 cases: identical deltas need more than 6 to settle)."""
    write_jsonl(tmp_path / "suite-cases.jsonl",
                [make_case(f"k{i}", prompt=GOOD, reference=GOOD) for i in range(16)])  # fmt: skip
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "calibrated"\ncases = "suite-cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:answer"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:echo"\n'
        '[judge]\njudges = ["mock:fair"]\n' + gate,
        encoding="utf-8",
    )
    return suite


def gate_of(tmp_path: Path) -> dict[str, Any]:
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    gate: dict[str, Any] = summary["release_gate"]
    return gate


def test_uncalibrated_judge_cannot_gate_until_calibrated(cli: Any, tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    suite = write_suite(
        tmp_path,
        '[gate]\nrequire_calibrated_judge = true\ncalibration_dimensions = ["correctness"]\n',
    )
    first = cli("run", suite, "--store", store)
    assert first.code == 1, first.stdout + first.stderr
    gate = gate_of(tmp_path)
    assert gate["verdict"] == "INCONCLUSIVE"
    assert any("require_calibrated_judge: judge judge:mock:fair" in r and "not calibrated on 'correctness'"
               in r for r in gate["reasons"])  # fmt: skip

    # The judge labels a calibration set; humans label the same items; calibrate.
    cases, trials = varied(tmp_path)
    judge_labels = tmp_path / "judge-labels.jsonl"
    made = cli("judge", "--trials", trials, "--cases", cases, "--judge", "mock:fair",
               "--output", tmp_path / "cal.jsonl", "--labels", judge_labels,
               "--store", store)  # fmt: skip
    assert made.code == 0, made.stderr
    labels = rows(judge_labels)
    assert {x["rater"] for x in labels} == {"judge:mock:fair"}
    assert {x["prompt_sha256"] for x in labels} == {template_sha256("direct")}
    assert {x["dimension"] for x in labels} >= {"correctness", "safety", "blocker"}
    assert labels[0]["item_id"] == "c0:1:baseline"
    both = write_jsonl(tmp_path / "labels.jsonl",
                       human_labels(judge_labels, "correctness") + labels)  # fmt: skip
    calibrated = cli("calibrate", "--labels", both, "--store", store, "--json")
    assert calibrated.code == 0, calibrated.stderr
    verdict = calibrated.json()["dimensions"]["correctness"]["judges"]["judge:mock:fair"]
    assert verdict["verdict"] == "PASS"

    again = cli("run", suite, "--store", store, "--json")
    assert again.code == 0, again.stdout + again.stderr
    # The suite chain recorded its judge rows for `assay history` under the run id.
    history = cli("history", "--store", store, "--json").json()["judges"]
    runs = history[f"judge:mock:fair@{template_sha256('direct')[:12]}"]["runs"]
    assert again.json()["run_id"] in {r["run_id"] for r in runs}
    gate = gate_of(tmp_path)
    (check,) = [c for c in gate["checks"] if c["name"] == "calibration:judge:mock:fair"]
    assert check["status"] == "pass" and gate["verdict"] == "PASS", gate

    # Every dimension it was calibrated on (the default): those without humans are not PASS.
    strict = write_suite(tmp_path, "[gate]\nrequire_calibrated_judge = true\n")
    assert cli("run", strict, "--store", store).code == 1
    reasons = gate_of(tmp_path)["reasons"]
    assert any("calibration on 'safety' is INSUFFICIENT" in r for r in reasons), reasons


def test_score_and_report_apply_the_calibration_requirement(cli: Any, tmp_path: Path) -> None:
    cases, _ = varied(tmp_path)
    better = [trial(f"c{i}", c, GOOD if c == "candidate" else (HALF, BAD)[i % 2])
              for i in range(12) for c in ("baseline", "candidate")]  # fmt: skip
    trials = write_jsonl(tmp_path / "better.jsonl", better)
    out, store = tmp_path / "o.jsonl", tmp_path / "s.db"
    cli("judge", "--trials", trials, "--cases", cases, "--judge", "mock:fair", "--output", out,
        "--store", store)  # fmt: skip
    suite = tmp_path / "gate.toml"
    suite.write_text("[gate]\nrequire_calibrated_judge = true\n", encoding="utf-8")
    plain = cli("score", out, "--json", "--store", store)
    assert plain.code == 0 and plain.json()["release_gate"]["verdict"] == "PASS"
    assert not any("calibration" in c["name"] for c in plain.json()["release_gate"]["checks"])
    gated = cli("score", out, "--suite", suite, "--json", "--store", store)
    assert gated.code == 1
    gate = gated.json()["release_gate"]
    assert gate["verdict"] == "INCONCLUSIVE"
    assert any("judge:mock:fair" in r for r in gate["reasons"])
    missing = cli("score", out, "--suite", suite, "--json", "--store", tmp_path / "none.db")
    assert missing.json()["release_gate"]["verdict"] == "INCONCLUSIVE"
    assert not (tmp_path / "none.db").exists()
    reported = cli("report", "--scores", out, "--suite", suite, "--store", store,
                   "--out", tmp_path / "rep")  # fmt: skip
    assert reported.code == 1 and "INCONCLUSIVE" in reported.stdout
