"""`assay.judge`: LLM judges turn trials into Score rows (direct) or Comparisons (pairwise)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack

from assay.api.inputs import load_trials
from assay.core.cases import DEFAULT_CASES, load_cases
from assay.core.jsonl import write_jsonl
from assay.core.records import Case, Trial
from assay.core.rubric import Rubric
from assay.core.trajectory_text import Over
from assay.core.writable import Output, check_outputs
from assay.engine.runner import Progress
from assay.models.registry import ModelOptions
from assay.scorers.judge import JudgeConfig, JudgeResult, run_judging
from assay.scorers.judge.config import Mode
from assay.store import DEFAULT_STORE, Store


class JudgeSettings(TypedDict, total=False):
    """`assay.judge(**settings)`: the JudgeConfig fields besides `judges` (a test keeps the
    two in step), so type checkers and the argument checks (`api/arguments.py`) know them."""

    mode: Mode
    a: str
    b: str
    shuffles: int
    screen: str | None
    screen_threshold: float
    review_threshold: float
    strict_judge: bool
    rubric: Rubric | None
    scale: str
    length_normalised: bool
    concision: bool
    expectations_first: bool
    max_tokens: int
    temperature: float
    concurrency: int
    timeout_s: float
    retries: int
    budget_usd: float | None
    allow_unmetered: bool
    metering: tuple[str, str]
    options: ModelOptions
    batch: bool
    batch_poll_s: float
    over: Over


def check_judge_outputs(
    output: str | Path | None,
    labels: str | Path | None,
    *,
    trials: str | Path | None,
    cases: str | Path | None,
    store: str | Path,
    rubric: str | Path | None = None,
) -> None:
    """Refuse, before any call, an output or labels file that cannot be written, that is
    the other, or that is one of the judging's inputs (`assay.core.writable`)."""
    check_outputs(
        [
            Output("--output", Path(output)) if output is not None else None,
            Output("--labels", Path(labels)) if labels is not None else None,
        ],
        [
            ("the trials (--trials)", trials),
            ("the case catalogue (--cases)", cases),
            ("the store (--store)", store),
            ("the rubric (--rubric)", rubric),
        ],
    )


def judge(
    trials: str | Path | Sequence[Trial] | None = None,
    *,
    judges: Sequence[str] = (),
    cases: str | Path | Sequence[Case] = DEFAULT_CASES,
    run: str | None = None,
    store: str | Path = DEFAULT_STORE,
    output: str | Path | None = None,
    labels: str | Path | None = None,
    progress: Progress | None = None,
    config: JudgeConfig | None = None,
    **settings: Unpack[JudgeSettings],
) -> JudgeResult:
    """Judge trials (a file, objects, or `run` from the store) with `judges`; resumable.

    `settings` are JudgeConfig fields (mode, a, b, shuffles, screen, rubric, scale, budget_usd,
    expectations_first, ...), or pass a whole `config`. Pairwise, a response that fails the
    case's expectations loses to one that meets them without a judge call unless
    `expectations_first=False`. Writes `output` (Score rows or Comparisons) and `labels`
    (for `assay calibrate`) when given; `result.rows` holds the same records."""
    from assay.scorers.judge.config import check_judge_keys
    from assay.scorers.judge.labels import direct_labels, pairwise_labels

    chosen = config if config is not None else JudgeConfig(judges=list(judges), **settings)
    check_judge_keys(chosen)  # before any file or the store is written
    check_judge_outputs(
        output,
        labels,
        trials=trials if isinstance(trials, str | Path) else None,
        cases=cases if isinstance(cases, str | Path) else None,
        store=store,
    )
    catalogue = list(cases) if not isinstance(cases, str | Path) else load_cases(Path(cases))
    # Read a trials file before opening the store, so bad input leaves no store behind.
    given = (
        load_trials(trials, run, Path(store), required=True)
        if run is None or trials is not None
        else None
    )
    handle = Store(Path(store))
    try:
        records = given if given is not None else load_trials(None, run, handle)
        result = run_judging(records, catalogue, chosen, handle, progress)
        rows = result.rows  # built once: written and turned into labels
        if output is not None:
            write_jsonl(Path(output), rows)
        if labels is not None:
            made = (
                direct_labels(rows, result.criteria)
                if chosen.mode == "direct"
                else pairwise_labels(rows)
            )
            write_jsonl(Path(labels), [x.model_dump(mode="json") for x in made])
    finally:
        handle.close()
    return result


def summary(result: JudgeResult, config: JudgeConfig, output: Path, store: Path) -> dict[str, Any]:
    """`assay judge --json` (`assay schema judge-summary`)."""
    data: dict[str, Any] = {
        "mode": config.mode,
        "judges": config.judges,
        "items": result.total,
        "judged": result.judged + result.resumed,
        "resumed": result.resumed,
        "by_expectations": result.by_expectations,
        "failed": result.failed,
        "not_run": result.not_run,
        "skipped_errored_trials": result.skipped_errored,
        "unpaired_trials": result.unpaired,
        "calls": result.calls,
        "cache_hits": result.cache_hits,
        "spent_usd": round(result.spent_usd, 6),
        "stopped": result.stopped,
        "tiers": result.tiers,
        "output": str(output),
        "store": str(store),
        "exit_code": result.exit_code,
    }
    if config.screen:
        data["cascade"] = {
            "screen": config.screen,
            "threshold": config.screen_threshold,
            "full_judge_calls_avoided": result.full_calls_avoided,
            "screen_calls": result.screen_calls,
            "calls_saved": result.calls_saved,
        }
    if result.alpha:
        data["krippendorff_alpha"] = result.alpha
    return data
