"""A judging run: plan the items, resume what is stored, judge the rest, summarise.

Every judge call goes through the engine's `Caller` (call cache, hard budget, retries,
adaptive concurrency): the run's own when one is given (the suite chain passes it, so judge
calls are metered by the run's budget), else one built from the configuration (`assay
judge`). Items are judged concurrently; each finished item is written to the store's
`judgments` table at once (store/judgments.py), so re-running the same command resumes:
judged items are read back, not re-asked. Items whose judging failed are stored with the raw
replies and get no output row. Direct rows are also recorded for `assay history`. Pairs the
case's expectations decide (`PairJudge.expected`) are decided first, before the store is
read, and never stored: they cost no call, and a stored judge verdict for the same pair
(`expectations_first` off, or an earlier version) stays for the runs that want it.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from assay.core.errors import EXIT_INCOMPLETE, EXIT_OK
from assay.core.records import Case, ScoreRow, Trial
from assay.core.rubric import resolve_criteria
from assay.engine.batching import WORKERS as BATCH_WORKERS
from assay.engine.batching import BatchCollector
from assay.engine.budget import Budget
from assay.engine.calls import BudgetExhausted, Caller
from assay.engine.plan import sha256_json, sha256_text
from assay.engine.runner import Progress, Tick, told_spend
from assay.engine.session import check_metered
from assay.scorers.base import Score, ScoreContext
from assay.scorers.judge.ask import JudgeFailure, JudgeSetup, words
from assay.scorers.judge.cascade import Cascade, JudgeScorer
from assay.scorers.judge.config import (
    JudgeConfig,
    build_judge_models,
    family_warnings,
    fingerprint,
    validate_config,
)
from assay.scorers.judge.direct import DirectJudge
from assay.scorers.judge.items import JudgeItem, KnownKey, plan_items
from assay.scorers.judge.pairwise import PairJudge, PairScore
from assay.scorers.judge.panel import panel_alpha
from assay.store import Store
from assay.store.judgments import (
    judged_records,
    queue_review,
    save_judgment,
)
from assay.store.spend import spent_so_far


@dataclass(slots=True)
class JudgeResult:
    """What a judging run did; `exit_code` is 3 when any item is not judged.

    `scores` (direct mode) and `comparisons` (pairwise) are the judged items in input
    order; `rows` is what is written, as JSON data, `score_rows` the validated rows of
    `scores` (as `finish` made them once) and `score_lines` their JSON lines (as written).
    `by_expectations` counts the pairs the case's expectations decided without a call
    (counted in `judged` too).
    """

    scores: list[Score] = field(default_factory=list)
    score_rows: list[ScoreRow] = field(default_factory=list)
    score_lines: list[str] = field(default_factory=list)
    comparisons: list[PairScore] = field(default_factory=list)
    total: int = 0
    judged: int = 0
    resumed: int = 0
    by_expectations: int = 0
    failed: int = 0
    not_run: int = 0
    skipped_errored: int = 0
    unpaired: int = 0
    calls: int = 0
    cache_hits: int = 0
    spent_usd: float = 0.0
    stopped: str | None = None
    tiers: dict[str, int] = field(default_factory=dict)
    full_calls_avoided: int = 0
    screen_calls: int = 0
    alpha: dict[str, float | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    failed_by: dict[str, int] = field(default_factory=dict)
    """Items whose judging failed, by the judge whose call or reply failed them."""
    criteria: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Score rows (direct) or Comparisons (pairwise) as written, in input order."""
        if self.comparisons:
            return [c.row for c in self.comparisons]
        return [s.row() for s in self.scores]

    @property
    def exit_code(self) -> int:
        complete = self.judged + self.resumed == self.total and not self.stopped
        return EXIT_OK if complete else EXIT_INCOMPLETE

    @property
    def calls_saved(self) -> int:
        return self.full_calls_avoided - self.screen_calls


def judging_ledger(items: Sequence[JudgeItem]) -> str:
    """The id a judging's spend is kept under in the store (`store/spend.py`): one per set
    of items (the judges, their settings and the trials judged), so the same `assay judge`
    run again draws on what it has spent."""
    return "judging-" + sha256_json(sorted(item.key for item in items))[:24]


def judge_scorer(setup: JudgeSetup, median_words: dict[str, float]) -> JudgeScorer | Cascade:
    """The scorer a configuration describes: direct or pairwise judge, behind a screen."""
    config = setup.config
    full: JudgeScorer = (
        PairJudge(setup)
        if config.mode == "pairwise"
        else DirectJudge(setup, None, "direct", median_words)
    )
    return Cascade(setup, full, config.screen) if config.screen else full


class Judging:
    """One judging run over planned items (see `run_judging`)."""

    def __init__(
        self,
        trials: Sequence[Trial],
        cases: Sequence[Case],
        config: JudgeConfig,
        store: Store,
        progress: Progress | None,
        caller: Caller | None,
        ahead: Mapping[str, Outcome] | None = None,
        known: KnownKey | None = None,
    ) -> None:
        validate_config(config)
        criteria, scale = resolve_criteria(config.rubric, config.scale, concision=config.concision)
        self.config = config
        self.store = store
        self.result = result = JudgeResult()
        result.warnings = family_warnings(config, trials)
        self.models = build_judge_models(config)
        check_metered(self.models, config.allow_unmetered, config.metering)
        self.items, result.skipped_errored, result.unpaired = plan_items(
            trials,
            {c.id: c for c in cases},
            config,
            fingerprint(config, criteria, scale, self.models),
            known,
        )
        result.total = len(self.items)
        self.setup = JudgeSetup(config, self.models, criteria, scale)
        result.criteria = list(self.setup.names)
        by_case: dict[str, list[int]] = {}
        if config.length_normalised:  # the only use of the cases' median lengths
            for item in self.items:
                by_case.setdefault(item.case.id, []).append(words(item.trials[0].response))
        median_words = {k: float(statistics.median(v)) for k, v in by_case.items()}
        self.scorer = judge_scorer(self.setup, median_words)
        self.prompt_sha256 = template_sha256_of(self.scorer)
        if caller is None:
            # a judging of its own (`assay judge`): its spend is kept under the judging's
            # ledger, so `--budget-usd` caps it across reruns, as it caps a run's
            ledger = judging_ledger(self.items)
            caller = Caller(
                store,
                Budget(config.budget_usd, spent_so_far(store, ledger)),
                concurrency=config.concurrency,
                retries=config.retries,
                batch=BatchCollector(store, config.batch_poll_s) if config.batch else None,
                ledger=ledger,
                role="judges",
            )
        self.caller = caller
        self._start = (self.caller.calls, self.caller.cache_hits, self.caller.budget.spent)
        self.tick: Tick = told_spend(progress)
        self.records: dict[str, Score | PairScore] = {}
        self.lines: dict[str, str] = {}
        """The JSON lines of the direct items judged in this invocation (`Outcome.line`)."""
        # What was judged while the run went on is settled as such: no need to read it back.
        done = judged_records(store, [i.key for i in self.items if not (ahead and i.key in ahead)])
        self.pending: list[JudgeItem] = []
        for item in self.items:
            ruled = self.expected(item)
            if ruled is not None:
                self.records[item.key] = ruled
                result.judged += 1
                result.by_expectations += 1
                self.tick(True)
            elif ahead and item.key in ahead:  # judged while the run went on
                self.settle(item, ahead[item.key])
            elif item.key in done:
                self.records[item.key] = self.from_row(done[item.key])
                result.resumed += 1
                self.tick(True)
            else:
                self.pending.append(item)

    def expected(self, item: JudgeItem) -> PairScore | None:
        """The pair's verdict by the case's expectations (pairwise), or None."""
        scorer = self.scorer.full if isinstance(self.scorer, Cascade) else self.scorer
        if not isinstance(scorer, PairJudge):
            return None
        return scorer.expected(ScoreContext(item.case, item.trials))

    def from_row(self, row: dict[str, Any]) -> Score | PairScore:
        if self.config.mode == "pairwise":
            return PairScore(row)
        return Score.from_row(row, self.setup.names, DirectJudge.name)

    async def run(self) -> None:
        """Judge the pending items concurrently; each result is stored as it finishes."""
        width = max(1, self.config.concurrency) * 2
        if self.caller.batch is not None:  # a batch gathers the calls waiting at once
            width = max(width, BATCH_WORKERS)
        gate = asyncio.Semaphore(width)
        tasks = [asyncio.ensure_future(self.work(item, gate)) for item in self.pending]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # e.g. ServerMismatch (a wrong URL or judge name): stop all
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            if self.caller.batch is not None:
                await self.caller.batch.aclose()
            self.store.flush()
            for model in self.models.values():
                await model.aclose()

    async def work(self, item: JudgeItem, gate: asyncio.Semaphore) -> None:
        async with gate:
            if self.caller.budget.exhausted:
                return
            try:
                outcome = await judge_item(
                    self.scorer, item, self.caller, self.store, self.config, self.prompt_sha256
                )
            except BudgetExhausted:
                self.result.stopped = "budget"
                return
            self.settle(item, outcome)

    def settle(self, item: JudgeItem, outcome: Outcome) -> None:
        """Count an item judged in this invocation (here, or ahead while the run went on)."""
        result = self.result
        if outcome.scored is None:
            result.failed += 1
            who = failing_judge(outcome.failure, self.models)
            result.failed_by[who] = result.failed_by.get(who, 0) + 1
            if len(result.failures) < 20:
                result.failures.append(f"{_label(item)}: {outcome.failure}")
            self.tick(False)
            return
        self.records[item.key] = outcome.scored
        if outcome.line is not None:
            self.lines[item.key] = outcome.line
        result.judged += 1
        self.tick(True)

    def finish(self) -> JudgeResult:
        """Counts, rows in input order, the cascade's savings, panel agreement, history."""
        result, config = self.result, self.config
        calls, hits, spent = self._start
        result.calls = self.caller.calls - calls
        result.cache_hits = self.caller.cache_hits - hits
        result.spent_usd = self.caller.budget.spent - spent
        result.not_run = result.total - result.judged - result.resumed - result.failed
        items = [i for i in self.items if i.key in self.records]
        done = [self.records[i.key] for i in items]
        result.comparisons = [d for d in done if isinstance(d, PairScore)]
        result.scores = [d for d in done if isinstance(d, Score)]
        rows = result.rows
        tiers = Counter(str(r.get("tier", "judge")) for r in rows)
        result.tiers = dict(sorted(tiers.items()))
        if isinstance(self.scorer, Cascade):
            screen_calls, full_calls = self.scorer.calls_per_item()
            screened = sum(n for tier, n in tiers.items() if tier != "rule")
            result.full_calls_avoided = tiers.get("screen", 0) * full_calls
            result.screen_calls = screened * screen_calls
        if len(config.judges) > 1:
            result.alpha = panel_alpha(
                rows, config.judges, config.mode == "pairwise", self.setup.names
            )
        if config.mode == "direct":
            for item, row in zip(items, rows, strict=True):
                validated = ScoreRow.model_validate(row)  # Score.to_row
                result.score_rows.append(validated)
                line = self.lines.get(item.key)  # made as it was judged, or here
                result.score_lines.append(line if line is not None else validated.model_dump_json())
            judged = [i.trials[0] for i in items]
            record_history(self.store, judged, result.score_rows, result.score_lines)
        return result


@dataclass(slots=True)
class Outcome:
    """An item judged in this invocation: its score, or (None) why its judging failed.

    A direct Score also comes with its validated row's JSON line (scores.jsonl, the history
    record), made as the item was judged: pipelined with a run (`assay.scorers.judge.follow`)
    that is while the run waits on the network, not all at once after it. Only the text is
    kept (the validated row is made again after the run: holding thousands of them through
    the run made its collector passes longer). None when the row does not validate (`finish`
    then validates it and reports the error as always)."""

    scored: Score | PairScore | None
    failure: str | None = None
    line: str | None = None


async def judge_item(
    scorer: JudgeScorer | Cascade,
    item: JudgeItem,
    caller: Caller,
    store: Store,
    config: JudgeConfig,
    prompt_sha256: str,
) -> Outcome:
    """Judge one item through `caller` and store the judgment (a failure too, with the raw
    replies); BudgetExhausted when no call could start."""
    ctx = ScoreContext(item.case, item.trials, {}, caller)
    try:
        scored = await scorer.score(ctx)
    except JudgeFailure as exc:
        save_item(store, config, prompt_sha256, item, "error", None, str(exc), exc.raw)
        return Outcome(None, str(exc))
    row = scored.row if isinstance(scored, PairScore) else scored.row()
    if row.get("tier") == "review":
        source = row.get("source") or f"judge:{row['judge']}"
        trial = item.trials[0].trial
        queue_review(store, item.case.id, trial, item.a, item.b, row["review"], source)
    save_item(store, config, prompt_sha256, item, "ok", row, None, scored.replies)
    if isinstance(scored, PairScore):
        return Outcome(scored)
    try:
        line = ScoreRow.model_validate(row).model_dump_json()  # Score.to_row's, as written
    except ValidationError:
        return Outcome(scored)
    return Outcome(scored, None, line)


def save_item(
    store: Store,
    config: JudgeConfig,
    prompt_sha256: str,
    item: JudgeItem,
    status: str,
    record: dict[str, Any] | None,
    error: str | None,
    raw: list[str],
) -> None:
    """One judgment into the store's `judgments` table (resume reads it back)."""
    save_judgment(
        store,
        key=item.key,
        mode=config.mode,
        case_id=item.case.id,
        trial=item.trials[0].trial,
        a=item.a,
        b=item.b,
        judge=config.judge_model,
        prompt_sha256=prompt_sha256,
        status=status,
        record=record,
        error=error,
        raw=raw,
    )


def template_sha256_of(scorer: JudgeScorer | Cascade) -> str:
    """The prompt hash stored with each judgment: the full judge's template."""
    return (scorer.full if isinstance(scorer, Cascade) else scorer).prompt_sha256


def run_judging(
    trials: Sequence[Trial],
    cases: Sequence[Case],
    config: JudgeConfig,
    store: Store,
    progress: Progress | None = None,
    caller: Caller | None = None,
    ahead: Mapping[str, Outcome] | None = None,
    known: KnownKey | None = None,
) -> JudgeResult:
    """Judge every answered trial (or pair); return the judged rows in input order and a
    summary. With `caller` (the run's), judge calls share its cache, budget and limits.
    `ahead` holds the items judged in this invocation while the run went on
    (`assay.scorers.judge.follow`), by key: counted as judged here, not asked again; `known`
    their direct items' keys, by trial (`JudgeFollower.direct_key`)."""
    judging = Judging(trials, cases, config, store, progress, caller, ahead, known)
    try:
        asyncio.run(judging.run())
    except KeyboardInterrupt:  # Ctrl+C: what was judged is stored; report it and exit 3
        judging.result.stopped = "interrupted"
    return judging.finish()


async def run_judging_async(
    trials: Sequence[Trial],
    cases: Sequence[Case],
    config: JudgeConfig,
    store: Store,
    progress: Progress | None = None,
    caller: Caller | None = None,
) -> JudgeResult:
    """`run_judging` from within a running event loop (an async pipeline)."""
    judging = Judging(trials, cases, config, store, progress, caller)
    await judging.run()
    return judging.finish()


def record_history(
    store: Store,
    trials: Sequence[Trial],
    scores: Sequence[ScoreRow],
    lines: Sequence[str] | None = None,
) -> None:
    """Record direct Scores' rows (`Score.to_row`, one per trial) in the store's
    `judge_scores` table for `assay history`; `lines`: the rows' JSON, when made already.

    Each row goes under its trial's `run_id`; trials without one (a file written by another
    tool) go under `trials-<hash of the judged trials>`, stable across re-runs, and
    re-recording replaces rows, so resuming never counts a row twice.
    """
    from assay.store.history import save_score_rows

    if not scores:
        return
    fallback = ""
    if any(t.run_id is None for t in trials):  # hashing every response costs; only then
        fallback = (
            "trials-"
            + sha256_json(
                sorted([t.case_id, t.trial, t.condition, sha256_text(t.response)] for t in trials)
            )[:12]
        )
    by_run: dict[str, tuple[list[ScoreRow], list[str]]] = {}
    lengths: dict[tuple[str, int, str], int] = {}
    texts = lines if lines is not None else [s.model_dump_json() for s in scores]
    for trial, score, text in zip(trials, scores, texts, strict=True):
        run_rows, run_lines = by_run.setdefault(trial.run_id or fallback, ([], []))
        run_rows.append(score)
        run_lines.append(text)
        lengths[(trial.case_id, trial.trial, trial.condition)] = len(trial.response)
    for run_id, (run_rows, run_lines) in by_run.items():
        save_score_rows(store, run_id, run_rows, lengths, lines=run_lines)


def failing_judge(failure: str | None, judges: Iterable[str]) -> str:
    """The judge a failure names (`JudgeFailure` messages start with its spec), or "the
    judge" when none does."""
    text = failure or ""
    named = [spec for spec in judges if text.startswith(f"{spec}:")]
    return max(named, key=len) if named else "the judge"


def _label(item: JudgeItem) -> str:
    who = item.a if not item.b else f"{item.a} vs {item.b}"
    return f"{item.case.id} [{who} #{item.trials[0].trial}]"
