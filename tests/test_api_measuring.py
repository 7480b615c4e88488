"""`assay.bias`, `assay.winrate`, `assay.rank` and `assay.history` from Python: the same
figures as the commands' `--json`, from files or from record objects, and the same errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import InputError
from assay.core.jsonl import load_records
from assay.core.records import Comparison, ScoreRow, Trial

STATS = Path(__file__).resolve().parents[1] / "examples" / "stats"
COMPARISONS = STATS / "comparisons.jsonl"
TRIALS = STATS / "trials.jsonl"


def records(path: Path, kind: Any) -> list[Any]:
    return [record for _, record in load_records(path, kind)]


def test_bias_agrees_with_the_command(cli: Any) -> None:
    scores = STATS / "scores-run-1.jsonl"
    result = assay.bias(COMPARISONS, scores=scores, trials=TRIALS)
    ran = cli(
        "bias", "--comparisons", COMPARISONS, "--scores", scores, "--trials", TRIALS, "--json"
    )
    assert ran.code == 0, ran.stderr
    assert result.as_json() == ran.json()
    assert result.judges and set(result.flagged) <= set(result.judges)
    objects = assay.bias(
        records(COMPARISONS, Comparison),
        scores=records(scores, ScoreRow),
        trials=records(TRIALS, Trial),
    )
    assert objects.as_json() == ran.json()


def test_bias_scores_need_trials() -> None:
    with pytest.raises(InputError, match="--scores: needs --trials"):
        assay.bias(str(COMPARISONS), scores=STATS / "scores-run-1.jsonl")


def test_winrate_agrees_with_the_command(cli: Any) -> None:
    result = assay.winrate(COMPARISONS, baseline="baseline", length_controlled=True)
    ran = cli(
        "winrate", "--comparisons", COMPARISONS, "--baseline", "baseline",
        "--length-controlled", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr
    assert result.as_json() == ran.json()
    assert result.baseline == "baseline" and "baseline" not in result.models
    assert all(result.models[name].length_controlled_win_rate is None for name in result.unfitted)
    objects = assay.winrate(records(COMPARISONS, Comparison), baseline="baseline")
    assert objects.unfitted == {}
    raw = cli("winrate", "--comparisons", COMPARISONS, "--baseline", "baseline", "--json")
    assert objects.as_json() == raw.json()


def test_winrate_unknown_baseline_is_an_input_error(cli: Any) -> None:
    with pytest.raises(InputError, match=f"{COMPARISONS}: no comparison involves the baseline"):
        assay.winrate(COMPARISONS, baseline="nobody")
    with pytest.raises(InputError, match="comparisons: no comparison involves the baseline"):
        assay.winrate(records(COMPARISONS, Comparison), baseline="nobody")
    ran = cli("winrate", "--comparisons", COMPARISONS, "--baseline", "nobody")
    assert ran.code == 2 and "no comparison involves the baseline 'nobody'" in ran.stderr


def test_rank_agrees_with_the_command(cli: Any) -> None:
    result = assay.rank(COMPARISONS, bootstrap=20, seed=3)
    ran = cli("rank", "--comparisons", COMPARISONS, "--bootstrap", "20", "--seed", "3", "--json")
    assert ran.code == 0, ran.stderr
    assert result.as_json() == ran.json()
    strengths = [r.strength for r in result.ratings]
    assert strengths == sorted(strengths, reverse=True)
    assert result.games == len(records(COMPARISONS, Comparison)) and result.bootstrap == 20
    again = assay.rank(records(COMPARISONS, Comparison), bootstrap=20, seed=3)
    assert again.as_json() == result.as_json()


def test_rank_errors() -> None:
    one_sided = [Comparison(case_id="c", a="x", b="y", verdict="a")]
    with pytest.raises(InputError, match="comparisons: cannot rank"):
        assay.rank(one_sided, bootstrap=0)
    with pytest.raises(InputError, match="--bootstrap"):
        assay.rank(COMPARISONS, bootstrap=-1)
    with pytest.raises(InputError, match="no comparisons"):
        assay.rank([])


def test_history_agrees_with_the_command(cli: Any, tmp_path: Path) -> None:
    api_store, cli_store = tmp_path / "api.db", tmp_path / "cli.db"
    for n in (1, 2, 3):
        scores = STATS / f"scores-run-{n}.jsonl"
        result = assay.history(
            api_store, add_scores=scores, run=f"run-{n}", trials=TRIALS, fail_on_alert=True
        )
        ran = cli(
            "history", "--store", cli_store, "--add-scores", scores, "--run", f"run-{n}",
            "--trials", TRIALS, "--fail-on-alert", "--json",
        )  # fmt: skip
        assert ran.code == result.exit_code, ran.stderr
        assert result.as_json() == ran.json()
    assert result.alerts and result.exit_code == 1
    assert assay.history(api_store).exit_code == 0  # alerts only fail when asked to
    objects = assay.history(
        tmp_path / "objects.db",
        add_scores=records(STATS / "scores-run-1.jsonl", ScoreRow),
        run="run-1",
        trials=records(TRIALS, Trial),
    )
    first = assay.history(tmp_path / "files.db", add_scores=STATS / "scores-run-1.jsonl",
                          run="run-1", trials=TRIALS)  # fmt: skip
    assert objects.as_json() == first.as_json()


def test_history_usage_errors(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with pytest.raises(InputError, match="--run/--trials: only apply with --add-scores"):
        assay.history(store, run="r")
    with pytest.raises(InputError, match="--add-scores: needs --run"):
        assay.history(store, add_scores=STATS / "scores-run-1.jsonl")
    with pytest.raises(InputError, match="--window"):
        assay.history(store, window=0)
