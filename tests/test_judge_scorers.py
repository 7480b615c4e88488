"""Judges as scorers: one ScoreContext in, one Score (or Comparison) out, through a Caller.

No judging run and no judgments table: each scorer is scored directly on a context whose
caller is over a temporary store, as the run's scorers are.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.core.records import Case, Comparison, ScoreRow, Trial
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.models import mock, registry
from assay.models.base import Model
from assay.models.pricing import Price
from assay.scorers import Score, ScoreContext
from assay.scorers.judge import (
    Cascade,
    DirectJudge,
    JudgeConfig,
    PairJudge,
    PairScore,
    run_judging,
)
from assay.scorers.judge.ask import JudgeSetup
from assay.scorers.judge.prompts import template_sha256
from assay.store import Store

CRITERIA = ["correctness", "autonomy", "actionability", "safety", "concision"]
CASE = Case(
    id="c1", category="support", prompt="How do I reset the pump?", risk="low",
    criteria=["correct"], reference="Close the red valve, then press reset.",
)  # fmt: skip


def trial(condition: str, response: str, number: int = 1) -> Trial:
    return Trial(case_id="c1", trial=number, condition=condition, runner="mock", response=response)


GOOD = trial("candidate", "Close the red valve, then press reset.")
POOR = trial("baseline", "Try turning it off and on.")


@pytest.fixture
def caller(tmp_path: Path) -> Any:
    store = Store(tmp_path / "s.db")
    yield Caller(store, Budget(None), concurrency=4)
    store.close()


def setup(**config: Any) -> JudgeSetup:
    return JudgeSetup.from_config(JudgeConfig(**{"judges": ["mock:fair"], **config}))


def test_direct_judge_scores_one_trial_into_a_score_row(caller: Caller) -> None:
    scorer = DirectJudge(setup())
    assert scorer.metrics == tuple(CRITERIA) and scorer.primary == scorer.metrics
    assert scorer.models == ("mock:fair",)
    score = asyncio.run(scorer.score(ScoreContext.of(CASE, GOOD, caller=caller)))
    assert isinstance(score, Score)
    assert (score.case_id, score.trial, score.condition, score.scorer) == (
        "c1", 1, "candidate", "judge",
    )  # fmt: skip
    assert set(score.metrics) == set(CRITERIA)
    assert all(1 <= v <= 5 for v in score.metrics.values())
    assert caller.calls == 1 and len(score.replies) == 1
    row = score.row()
    assert list(row)[:8] == ["case_id", "trial", "condition", *CRITERIA]
    assert list(row)[-4:] == ["tier", "judge_model", "judge_prompt_sha256", "scale"]
    assert row["tier"] == "judge" and row["judge_model"] == "mock:fair"
    assert row["judge_prompt_sha256"] == template_sha256("direct") and row["scale"] == "1-5"
    assert all(isinstance(row[n], int) for n in CRITERIA)  # written as the judge gave them
    assert ScoreRow.model_validate(row) == score.to_row()
    assert score.blocker is row["blocker"] is False


def test_a_score_row_round_trips_byte_for_byte(caller: Caller) -> None:
    panel = DirectJudge(setup(judges=["mock:fair", "mock:first"], length_normalised=True))
    score = asyncio.run(panel.score(ScoreContext.of(CASE, GOOD, caller=caller)))
    written = json.dumps(score.row(), ensure_ascii=False)
    again = Score.from_row(json.loads(written), panel.metrics, panel.name)
    assert json.dumps(again.row(), ensure_ascii=False) == written
    assert again.metrics == score.metrics and again.fields == score.fields
    assert [j["judge"] for j in score.fields["judges"]] == ["mock:fair", "mock:first"]
    assert "spread" in score.fields and "overall_ln" in score.fields


def test_a_judge_scorer_needs_the_run_caller() -> None:
    with pytest.raises(InputError, match="needs the run's call machinery"):
        asyncio.run(DirectJudge(setup()).score(ScoreContext.of(CASE, GOOD)))


def test_pair_judge_asks_both_orders_and_gives_a_comparison(caller: Caller) -> None:
    scorer = PairJudge(setup(mode="pairwise"))
    result = asyncio.run(scorer.score(ScoreContext.of(CASE, POOR, GOOD, caller=caller)))
    assert isinstance(result, PairScore)
    comparison = result.comparison()
    assert isinstance(comparison, Comparison)
    assert (comparison.a, comparison.b) == ("baseline", "candidate")
    assert [p.order for p in comparison.passes] == ["ab", "ba"]
    assert comparison.verdict == "b" and comparison.consistent
    assert result.row["tier"] == "judge"
    assert result.row["judge_prompt_sha256"] == template_sha256("pairwise")
    assert caller.calls == 2 and len(result.replies) == 2


def test_identical_responses_are_a_tie_by_rule_without_a_call(caller: Caller) -> None:
    scorer = PairJudge(setup(mode="pairwise"))
    twin = trial("candidate", POOR.response)
    result = asyncio.run(scorer.score(ScoreContext.of(CASE, POOR, twin, caller=caller)))
    assert result.row["verdict"] == "tie" and result.row["tier"] == "rule"
    assert result.row["identical"] is True and caller.calls == 0


def test_cascade_settles_confident_items_at_the_screen(caller: Caller) -> None:
    judges = setup(judges=["mock:fair"], screen="mock:first", screen_threshold=0.5)
    cascade = Cascade(judges, DirectJudge(judges), "mock:first")
    assert cascade.models == ("mock:fair", "mock:first")
    assert cascade.metrics == tuple(CRITERIA)
    score = asyncio.run(cascade.score(ScoreContext.of(CASE, GOOD, caller=caller)))
    assert isinstance(score, Score)
    assert score.fields["tier"] == "screen" and score.fields["judge_model"] == "mock:first"
    assert score.fields["judge_prompt_sha256"] == template_sha256("screen")
    assert 0.5 <= score.fields["adequacy"] <= 1 and caller.calls == 1


def test_cascade_sends_doubtful_verdicts_to_review(caller: Caller) -> None:
    judges = setup(judges=["mock:fair"], screen="mock:fair", screen_threshold=1.0,
                   review_threshold=0.99)  # fmt: skip
    cascade = Cascade(judges, DirectJudge(judges), "mock:fair")
    score = asyncio.run(cascade.score(ScoreContext.of(CASE, POOR, caller=caller)))
    assert isinstance(score, Score)
    assert score.fields["tier"] == "review" and score.fields["review"].startswith("low confidence")
    tail = list(score.row())[-5:]
    assert tail == ["tier", "review", "judge_model", "judge_prompt_sha256", "scale"]


def priced(rest: str, options: registry.ModelOptions) -> Model:
    """A mock judge that charges (1 USD per million tokens each way)."""
    return mock.create(rest, registry.ModelOptions(price=Price(1.0, 1.0)))


def test_run_judging_with_the_run_caller_is_metered_and_cached_by_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.REGISTRY, "priced", f"{__name__}:priced")
    trials = [trial("candidate", f"Close valve {i}, then press reset.", i) for i in range(1, 9)]
    runs = Store(tmp_path / "run.db")
    judged = Store(tmp_path / "judged.db")
    budget = Budget(1.0)
    budget.spent = 0.25  # what the run already spent on its own calls
    run_caller = Caller(runs, budget, concurrency=4)
    config = JudgeConfig(judges=["priced:fair"], budget_usd=0.000001)  # ignored: the run's
    result = run_judging(trials, [CASE], config, judged, caller=run_caller)
    assert result.judged == 8 and result.exit_code == 0
    assert result.calls == run_caller.calls == 8
    assert 0 < result.spent_usd == pytest.approx(budget.spent - 0.25)
    runs.flush()
    assert runs.db.execute("SELECT COUNT(*) FROM call_cache").fetchone()[0] == 8
    cached = run_judging(trials, [CASE], config, Store(tmp_path / "other.db"), caller=run_caller)
    assert cached.calls == 0 and cached.cache_hits == 8 and cached.rows == result.rows
    runs.close()
    judged.close()


def test_run_judging_stops_at_the_run_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry.REGISTRY, "priced", f"{__name__}:priced")
    trials = [trial("candidate", f"Close valve {i}, then press reset.", i) for i in range(1, 30)]
    store = Store(tmp_path / "s.db")
    run_caller = Caller(store, Budget(0.02), concurrency=2)
    result = run_judging(
        trials, [CASE], JudgeConfig(judges=["priced:fair"]), store, caller=run_caller
    )
    assert result.stopped == "budget" and result.exit_code == 3
    assert 0 < result.judged < len(trials) and run_caller.budget.spent <= 0.02
    store.close()
