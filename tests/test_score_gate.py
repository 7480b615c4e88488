"""`assay score`: validation, pairing, weights, the seed rule and the statistical gate."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import make_gate_example  # bench/, on the path in conftest
import pytest

from conftest import make_case, write_jsonl

METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def row(case: str, cond: str, trial: int = 1, value: float = 3, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"case_id": case, "trial": trial, "condition": cond}
    data.update(dict.fromkeys(METRICS, value))
    data.update(extra)
    return data


def score(cli: Any, tmp_path: Path, rows: list[dict[str, Any]], *args: str) -> Any:
    path = write_jsonl(tmp_path / "scores.jsonl", rows)
    return cli("score", path, *args)


# -- the seed rule ---------------------------------------------------------------------------


def seed_rows(
    cand_correctness: float, cand_other: float, blocker: bool = False
) -> list[dict[str, Any]]:
    rows = []
    for case in ("a", "b"):
        rows.append(row(case, "baseline", correctness=4.0, safety=4.0, value=3.0))
        rows.append(
            row(
                case,
                "candidate",
                correctness=cand_correctness,
                safety=4.0,
                value=cand_other,
                blocker=blocker,
            )
        )
    return rows


def test_seed_drop_of_exactly_point_one_passes(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, seed_rows(3.9, 3.5), "--gate", "seed")
    assert result.code == 0, result.stdout
    gate = result.json()["release_gate"]
    assert gate["verdict"] == "PASS" and gate["passed"] is True


def test_seed_drop_beyond_point_one_fails(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, seed_rows(3.8, 3.5), "--gate", "seed")
    assert result.code == 1
    assert any("correctness" in r for r in result.json()["release_gate"]["reasons"])


def test_seed_tie_on_weighted_score_fails(cli, tmp_path: Path) -> None:
    rows = [row(c, cond, value=3.3) for c in ("a", "b") for cond in ("baseline", "candidate")]
    result = score(cli, tmp_path, rows, "--gate", "seed")
    assert result.code == 1
    gate = result.json()["release_gate"]
    assert gate["verdict"] == "FAIL"
    assert any("not strictly higher" in r for r in gate["reasons"])


def test_seed_blocker_fails(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, seed_rows(4.0, 4.5, blocker=True), "--gate", "seed")
    assert result.code == 1
    assert "blocking finding" in result.json()["release_gate"]["reasons"][0]


def test_json_summary_has_the_documented_shape(cli, tmp_path: Path) -> None:
    """Top-level weights, baseline and candidate objects (weighted score and per-metric
    means) and release_gate with passed and reasons (empty on PASS, what failed otherwise)."""
    result = score(cli, tmp_path, simulated(60, 1.0))
    summary = result.json()
    assert result.code == 0 and summary["weights"]["correctness"] == 0.3
    for name in ("baseline", "candidate"):
        figures = summary[name]
        assert figures == summary["conditions"][name]
        assert set(figures) >= {"weighted_score", *METRICS}
    assert summary["candidate"]["weighted_score"] > summary["baseline"]["weighted_score"]
    assert summary["candidate_condition"] == summary["release_gate"]["candidate"] == "candidate"
    gate = summary["release_gate"]
    assert gate["passed"] is True and gate["reasons"] == []
    failed = score(cli, tmp_path, seed_rows(3.8, 3.5), "--gate", "seed").json()["release_gate"]
    assert failed["passed"] is False
    assert failed["reasons"] == ["correctness: 3.800 vs baseline 4.000 drops more than 0.1"]


def test_seed_blocker_on_the_baseline_fails_too(cli, tmp_path: Path) -> None:
    """The seed rule: no blocking findings attached to any score, the baseline's included."""
    rows = seed_rows(4.0, 4.5)
    rows[0]["blocker"] = True  # baseline, case a
    result = score(cli, tmp_path, rows, "--gate", "seed")
    gate = result.json()["release_gate"]
    assert result.code == 1 and gate["verdict"] == "FAIL"
    assert gate["reasons"] == ["1 blocking finding(s) in any score: baseline:a#1"]
    stats = score(cli, tmp_path, rows).json()["release_gate"]  # stats: the candidate's only
    assert [c["status"] for c in stats["checks"] if c["name"] == "blockers"] == ["pass"]


def test_stats_gate_says_what_the_baseline_blocked_never_no_blocking_findings(
    cli, tmp_path: Path
) -> None:
    rows = [
        row(f"deposit-{i}", cond, value=4.0, blocker=(cond == "baseline" and i == 2))
        for i in range(6)
        for cond in ("baseline", "candidate")
    ]
    gate = score(cli, tmp_path, rows).json()["release_gate"]
    [check] = [c for c in gate["checks"] if c["name"] == "blockers"]
    assert check["status"] == "pass"
    assert check["reason"] == (
        "no blocking findings in the candidate; 1 in the other condition(s), which do not"
        " gate: baseline:deposit-2#1"
    )


# -- validation ------------------------------------------------------------------------------


def test_validation_names_file_line_and_field(cli, tmp_path: Path) -> None:
    rows = [
        row("a", "baseline"),
        row("a", "candidate", correctness=True),
        row("b", "baseline", safety=7),
        row("b", "candidate", blocker="yes"),
        row("c", "baseline", concision="4"),
    ]
    result = score(cli, tmp_path, rows)
    assert result.code == 2
    path = tmp_path / "scores.jsonl"
    assert (
        f"ERROR: {path}:2: correctness: must be a number on the scale 1-5, not a boolean"
        in result.stderr
    )
    assert f"ERROR: {path}:3: safety: 7 is outside the rubric's scale 1-5" in result.stderr
    assert f"ERROR: {path}:4: blocker:" in result.stderr
    assert f"ERROR: {path}:5: concision: must be a number" in result.stderr
    assert "Traceback" not in result.stderr


def test_duplicate_rows_name_both_lines(cli, tmp_path: Path) -> None:
    rows = [row("a", "baseline"), row("a", "candidate"), row("a", "baseline", value=4)]
    result = score(cli, tmp_path, rows)
    assert result.code == 2
    assert ":3: (case_id, trial, condition): duplicate of line 1 (a, 1, baseline)" in result.stderr


def test_pairing_lists_missing_and_unmatched(cli, tmp_path: Path) -> None:
    rows = [
        row("a", "baseline"),
        row("b", "baseline"),
        row("a", "candidate"),
        row("z", "candidate", trial=2),
    ]
    result = score(cli, tmp_path, rows)
    assert result.code == 2
    assert (
        "condition 'candidate' is not scored on the baseline's (case_id, trial) set"
        in result.stderr
    )
    assert "missing 1 (b#1)" in result.stderr
    assert "unmatched 1 (z#2)" in result.stderr


def test_missing_condition_is_an_input_error(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, [row("a", "baseline"), row("a", "other")])
    assert result.code == 2
    assert "no rows for 'candidate'" in result.stderr


def test_weights_are_normalised_and_absent_metric_is_an_error(cli, tmp_path: Path) -> None:
    rows = [
        row(c, cond, value=3 + (cond == "candidate"))
        for c in "abcdef"
        for cond in ("baseline", "candidate")
    ]
    result = score(cli, tmp_path, rows, "--weights", "correctness=3,safety=1")
    assert result.json()["weights"] == {"correctness": 0.75, "safety": 0.25}
    bad = score(cli, tmp_path, rows, "--weights", "correctness=1,helpfulness=1")
    assert bad.code == 2
    # a metric no row carries and nothing configured produces: named, with the known ones
    assert "--weights helpfulness: unknown metric" in bad.stderr
    assert "known metrics: actionability, autonomy, concision, correctness, safety" in bad.stderr
    assert score(cli, tmp_path, rows, "--weights", "correctness=x").code == 2


def test_rubric_judge_rows_are_weighed_on_their_own_metrics(cli, tmp_path: Path) -> None:
    """Rows from a rubric judge carry its criteria, not the five defaults: without --weights
    they are weighed equally (a suite's [judge] rubric gives its criteria weights)."""
    rows = [
        {"case_id": c, "trial": 1, "condition": cond, "accuracy": v, "tone": v + (c in "ace")}
        for c in "abcdef"
        for cond, v in (("baseline", 2), ("candidate", 4))
    ]
    rows[0]["tone"] = 2  # the cases' deltas differ: all alike would give no interval to pass on
    result = score(cli, tmp_path, rows)
    assert result.code == 0, result.stderr
    assert result.json()["weights"] == {"accuracy": 0.5, "tone": 0.5}
    assert result.json()["candidate"]["accuracy"] == 4
    rubric = tmp_path / "rubric.yaml"
    levels = "".join(f"  - {{score: {i}, label: l{i}, description: d{i}}}\n" for i in range(1, 6))
    rubric.write_text(
        "name: support\ndescription: support answers\nlevels:\n" + levels + "criteria:\n"
        "  - {name: accuracy, description: right, weight: 3}\n"
        "  - {name: tone, description: kind, weight: 1}\n",
        encoding="utf-8",
    )
    suite = tmp_path / "suite.toml"
    suite.write_text('[judge]\nrubric = "rubric.yaml"\n', encoding="utf-8")
    from_suite = score(cli, tmp_path, rows, "--suite", str(suite))
    assert from_suite.json()["weights"] == {"accuracy": 0.75, "tone": 0.25}, from_suite.stderr
    disjoint = [{**r, "tone": None} if r["case_id"] == "a" else r for r in rows]
    disjoint = [{k: v for k, v in r.items() if v is not None} for r in disjoint]
    disjoint[0] = {k: v for k, v in disjoint[0].items() if k != "accuracy"}
    disjoint[0]["clarity"] = 3
    bad = score(cli, tmp_path, disjoint)
    assert bad.code == 2 and "no metric is on every score row" in bad.stderr


def test_float_noise_never_turns_a_tie_into_a_win(cli, tmp_path: Path) -> None:
    # 0.1 + 0.2 != 0.3 in binary floating point; the tolerance makes them equal.
    rows = [row("a", "baseline", value=0.3 + 3), row("a", "candidate", value=0.1 + 0.2 + 3)]
    result = score(cli, tmp_path, rows, "--gate", "seed")
    assert result.json()["release_gate"]["verdict"] == "FAIL"


# -- the statistical gate --------------------------------------------------------------------


def simulated(n: int, effect: float, seed: int = 7, trials: int = 2) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for case in range(n):
        quality = rng.uniform(2.0, 4.0)
        for trial in range(1, trials + 1):
            for cond, shift in (("baseline", 0.0), ("candidate", effect)):
                values = {
                    m: min(5.0, max(1.0, round(quality + shift + rng.gauss(0, 0.5))))
                    for m in METRICS
                }
                rows.append({"case_id": f"c{case}", "trial": trial, "condition": cond, **values})
    return rows


def test_stats_gate_clear_win_passes(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, simulated(120, 1.0))
    assert result.code == 0, result.stdout
    summary = result.json()
    assert summary["release_gate"]["verdict"] == "PASS"
    weighted = summary["comparisons"]["candidate"]["weighted_score"]
    assert weighted["ci_low"] > 0 and weighted["ci_low"] <= weighted["delta"] <= weighted["ci_high"]
    assert set(summary["conditions"]["candidate"]) >= {
        "rows",
        "weighted_score",
        "blocking_findings",
        *METRICS,
    }


def test_stats_gate_clear_loss_fails(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, simulated(120, -1.0))
    assert result.code == 1
    assert result.json()["release_gate"]["verdict"] == "FAIL"


def test_stats_gate_tiny_sample_is_inconclusive_with_cases_needed(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, simulated(6, 0.3, seed=3))
    assert result.code == 1
    gate = result.json()["release_gate"]
    assert gate["verdict"] == "INCONCLUSIVE"
    assert isinstance(gate["cases_needed"], int) and gate["cases_needed"] > 6
    assert any("would likely resolve it" in r for r in gate["reasons"])


def test_stats_gate_is_deterministic(cli, tmp_path: Path) -> None:
    first = score(cli, tmp_path, simulated(30, 0.2)).stdout
    assert score(cli, tmp_path, simulated(30, 0.2)).stdout == first


def test_several_conditions_each_compared_with_baseline(cli, tmp_path: Path) -> None:
    rows = simulated(40, 1.0)
    rows += [dict(r, condition="comparator") for r in rows if r["condition"] == "baseline"]
    result = score(cli, tmp_path, rows)
    summary = result.json()
    assert set(summary["comparisons"]) == {"candidate", "comparator"}
    assert summary["comparisons"]["comparator"]["weighted_score"]["delta"] == 0
    other = score(cli, tmp_path, rows, "--candidate", "comparator")
    assert other.code == 1 and other.json()["release_gate"]["candidate"] == "comparator"


def tier_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Low-risk cases improve a lot; high-risk cases lose 0.3 or 0.5 on safety."""
    rows, cases = [], []
    for i in range(60):
        risk = "high" if i % 3 == 0 else "low"
        cases.append(make_case(f"c{i}", risk=risk))
        base = 3.0 + (i % 2) * 0.5
        rows.append(row(f"c{i}", "baseline", value=base))
        if risk == "high":
            loss = 0.5 - (i % 2) * 0.2
            rows.append(row(f"c{i}", "candidate", value=base + 0.5, safety=base - loss))
        else:
            rows.append(row(f"c{i}", "candidate", value=base + 0.5, safety=base + 0.5))
    return rows, cases


def test_risk_tiers_fail_a_high_risk_regression(cli, tmp_path: Path) -> None:
    rows, cases = tier_rows()
    cases_path = write_jsonl(tmp_path / "cases.jsonl", cases)
    without = score(cli, tmp_path, rows)
    assert without.json()["release_gate"]["verdict"] == "PASS"
    assert without.json()["release_gate"]["reasons"] == []  # nothing failed
    assert any("risk tiers skipped" in r for r in without.json()["release_gate"]["notes"])
    result = score(cli, tmp_path, rows, "--cases", str(cases_path))
    gate = result.json()["release_gate"]
    assert result.code == 1 and gate["verdict"] == "FAIL"
    failed = [c for c in gate["checks"] if c["status"] == "fail"]
    assert [(c["metric"], c["scope"]) for c in failed] == [("safety", "risk:high")]


def test_risk_margins_are_configurable(cli, tmp_path: Path) -> None:
    rows, cases = tier_rows()
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\n[gate]\nrisk_margins = {low = 0.2, medium = 0.1, high = 0.6}\n'
    )
    result = score(cli, tmp_path, rows, "--suite", str(suite))
    assert result.json()["release_gate"]["verdict"] == "PASS", result.stdout


def test_unknown_case_in_scores_is_an_error(cli, tmp_path: Path) -> None:
    cases_path = write_jsonl(tmp_path / "cases.jsonl", [make_case("a")])
    result = score(
        cli,
        tmp_path,
        [row("a", "baseline"), row("a", "candidate"), row("q", "baseline"), row("q", "candidate")],
        "--cases",
        str(cases_path),
    )
    assert result.code == 2
    assert ":3: case_id: 'q' is not in the case catalogue" in result.stderr


def test_table_format(cli, tmp_path: Path) -> None:
    result = score(cli, tmp_path, simulated(20, 1.0), "--format", "table")
    assert result.stdout.splitlines()[0].split() == ["metric", "baseline", "candidate"]
    assert "release gate (stats, candidate candidate):" in result.stdout


@pytest.mark.parametrize("bad", ["{", "[]"])
def test_bad_json_is_exit_2(cli, tmp_path: Path, bad: str) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text(json.dumps(row("a", "baseline")) + "\n" + bad + "\n")
    result = cli("score", path)
    assert result.code == 2 and f"{path}:2:" in result.stderr


def test_one_case_is_never_enough_to_pass(cli, tmp_path: Path) -> None:
    rows = [row("a", "baseline", value=2), row("a", "candidate", value=5)]
    result = score(cli, tmp_path, rows)
    gate = result.json()["release_gate"]
    assert result.code == 1 and gate["verdict"] == "INCONCLUSIVE"
    assert result.json()["comparisons"]["candidate"]["weighted_score"]["ci_low"] is None


def test_one_case_prints_no_interval_in_words_everywhere(cli, tmp_path: Path) -> None:
    """The table and the reports say what the gate says, never `[+nan, +nan]` or `[–, –]`."""
    rows = [row("a", "baseline", value=2), row("a", "candidate", value=5)]
    table = score(cli, tmp_path, rows, "--format", "table").stdout
    assert "nan" not in table
    assert "weighted_score  +3.000  [no interval from 1 case]  (1 case)" in table
    out = tmp_path / "report"
    made = cli("report", "--scores", tmp_path / "scores.jsonl", "--out", out, "--format", "md,html")
    assert made.code == 1, made.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "| weighted_score | +3.000 | [no interval from 1 case] | 1 |" in markdown
    assert "[–, –]" not in markdown
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<td class="n">[no interval from 1 case]</td>' in html


def test_bundled_example_is_what_its_generator_writes(tmp_path: Path) -> None:
    make_gate_example.main(tmp_path)
    for name in ("cases.jsonl", "scores.jsonl"):
        assert (tmp_path / name).read_bytes() == (make_gate_example.OUT / name).read_bytes()
    cases = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    assert [c["risk"] for c in cases].count("high") == 80 and len(cases) == 240


def test_bundled_example(cli) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "gate"
    stats = cli("score", example / "scores.jsonl", "--cases", example / "cases.jsonl")
    gate = stats.json()["release_gate"]
    assert stats.code == 0 and gate["verdict"] == "PASS", gate["reasons"]
    assert {c["scope"] for c in gate["checks"]} == {"all", "risk:low", "risk:medium", "risk:high"}
    # 80 cases per tier clear every tier's margin, each guarded check by a clear margin
    assert {c["status"] for c in gate["checks"]} == {"pass"}
    tiers = [c for c in gate["checks"] if c["scope"].startswith("risk:")]
    assert len(tiers) == 6 and all(c["cases"] == 80 for c in tiers)
    assert all(c["ci_low"] > c["bound"] + 0.1 for c in tiers)
    seed = cli("score", example / "scores.jsonl", "--gate", "seed")
    assert seed.code == 0 and seed.json()["release_gate"]["verdict"] == "PASS"


def test_inconclusive_says_how_many_cases_would_settle_it(cli, tmp_path: Path) -> None:
    rows = simulated(12, 0.3)
    table = score(cli, tmp_path, rows, "--format", "table")
    summary = score(cli, tmp_path, rows).json()["release_gate"]
    assert table.code == 1 and summary["verdict"] == "INCONCLUSIVE" and summary["cases_needed"]
    assert (
        "release gate (stats, candidate candidate): INCONCLUSIVE: about"
        f" {summary['cases_needed']} cases would likely settle it (have 12)" in table.stdout
    )


def test_a_risk_tier_counts_the_cases_needed_in_all(cli, tmp_path: Path) -> None:
    rows = simulated(30, 0.2, seed=3)
    cases = [make_case(f"c{i}", risk=("low", "medium", "high")[i % 3]) for i in range(30)]
    cases_path = write_jsonl(tmp_path / "cases.jsonl", cases)
    gate = score(cli, tmp_path, rows, "--cases", str(cases_path)).json()["release_gate"]
    tiers = [c for c in gate["checks"] if c["scope"] != "all" and c["status"] == "inconclusive"]
    assert tiers, gate["checks"]
    for check in tiers:
        assert check["cases_needed"] > 30
        assert (
            f"about {check['cases_needed']} cases in all would likely resolve it" in check["reason"]
        )
        assert "(have 30 in all, 10 " in check["reason"]


def test_suite_sections_reject_unknown_keys(cli, tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text("[scoring]\nweigths = {correctness = 1}\n")
    rows = [row("a", "baseline"), row("a", "candidate")]
    result = score(cli, tmp_path, rows, "--suite", str(suite))
    assert result.code == 2 and "scoring.weigths" in result.stderr


def test_huge_weights_are_normalised_not_refused(cli, tmp_path: Path) -> None:
    """Weights of 1e308 sum past the largest float: they are still equal weights (the
    message used to say no weight was above 0)."""
    rows = [row(f"k{i}", cond, value=4.0) for i in range(6) for cond in ("baseline", "candidate")]
    result = score(cli, tmp_path, rows, "--weights", "correctness=1e308,safety=1e308")
    assert result.code in (0, 1), result.stderr
    assert result.json()["weights"] == {"correctness": 0.5, "safety": 0.5}
    import assay

    api = assay.evaluate(
        scores=write_jsonl(tmp_path / "again.jsonl", rows),
        weights={"correctness": 1.7e308, "safety": 1.7e308, "autonomy": 0.85e308},
    )
    assert api.summary().weights == {"correctness": 0.4, "safety": 0.4, "autonomy": 0.2}
