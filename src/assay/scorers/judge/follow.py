"""A suite's judges pipelined with its run: each item is judged as soon as it exists.

`JudgeFollower` is the engine's `Follower` (engine/runner.py): the engine hands it every
trial record as it is queued for the store, and it starts the judge call at once, in the
run's event loop, through a caller sharing the run's cache and per-model limiters
(`Caller.sharing`) and metered by a budget drawing on the run's (`Budget.within`, capped by
`[judge] budget_usd`): one cap holds across run and judge calls. A direct item is judged
when its trial is answered (with length normalisation, when every trial of its case is
recorded: the case's median length must be the one the whole run gives); a pairwise item
when both sides of the pair are answered.

It only judges ahead: each judgment is stored as it finishes (the same `judgments` rows and
keys as `run_judging`), and after the run `run_judging` plans every item as before, takes
these outcomes (`ahead`) instead of asking again, and writes the rows in input order. So
the output is the same whatever order the calls completed in, and a killed run resumes
from the stored judgments like any judging run.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Sequence
from typing import Any

from assay.core.jsonl import json_line, model_line
from assay.core.records import Case, Trial
from assay.core.rubric import resolve_criteria
from assay.engine.budget import Budget
from assay.engine.calls import BudgetExhausted, Caller
from assay.engine.session import check_metered
from assay.scorers.base import ScoreContext
from assay.scorers.judge.ask import JudgeSetup, words
from assay.scorers.judge.cascade import Cascade, JudgeScorer
from assay.scorers.judge.config import (
    JudgeConfig,
    build_judge_models,
    fingerprint,
    validate_config,
)
from assay.scorers.judge.items import JudgeItem, direct_item, pair_item
from assay.scorers.judge.pairwise import PairJudge
from assay.scorers.judge.run import Outcome, judge_item, judge_scorer, template_sha256_of
from assay.store import Store


class JudgeFollower:
    """Judges a suite's run as its trials are recorded (see the module's docstring).

    Raises InputError when building it finds what `run_judging` would refuse (an unmetered
    judge, a bad configuration, a pair naming a condition the run lacks): the caller then
    leaves judging to after the run, which reports the problem as it always has.
    """

    def __init__(
        self,
        config: JudgeConfig,
        cases: Sequence[Case],
        conditions: Sequence[str],
        trials: int,
        store: Store,
        cap_usd: float | None,
    ) -> None:
        validate_config(config)
        if config.mode == "pairwise" and (
            config.a == config.b or not {config.a, config.b} <= set(conditions)
        ):
            from assay.core.errors import InputError

            raise InputError("ERROR: the pair's conditions are not both in the run")
        criteria, scale = resolve_criteria(config.rubric, config.scale, concision=config.concision)
        self.config = config
        self.store = store
        self.models = build_judge_models(config)
        check_metered(self.models, config.allow_unmetered, config.metering)
        self.config_key = fingerprint(config, criteria, scale, self.models)
        self.setup = JudgeSetup(config, self.models, criteria, scale)
        self.scorer = judge_scorer(self.setup, {})
        self.prompt_sha256 = template_sha256_of(self.scorer)
        self.cases = {c.id: c for c in cases}
        self.per_case = len(conditions) * trials
        self.pair = (config.a, config.b)
        self.cap = cap_usd
        self.outcomes: dict[str, Outcome] = {}
        """Items judged (or failed) so far, by key: `run_judging(ahead=...)`."""
        self.trials: dict[str, tuple[Trial, str]] = {}
        """Every trial recorded, by the JSON text the store holds for it: the Trial that text
        validates to and its trials.jsonl line, made while the run waits on the network
        (the evaluation after the run takes them instead of making them all then)."""
        self._keys: dict[int, tuple[Trial, str]] = {}  # id(trial) -> (trial, direct key)
        self._seen: dict[str, dict[tuple[str, int], Trial]] = {}
        self._started: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._errors: list[BaseException] = []
        self._budget: Budget | None = None
        self._caller: Caller | None = None
        self._gate: asyncio.Semaphore | None = None

    @property
    def spent_usd(self) -> float:
        return self._budget.spent if self._budget is not None else 0.0

    def begin(self, caller: Caller, run_id: str) -> None:
        """Share the run's caller; take in the trials answered before (a resumed run)."""
        self._budget = caller.budget.within(self.cap)
        self._caller = caller.sharing(self._budget, "judges")
        self._gate = asyncio.Semaphore(max(1, self.config.concurrency) * 2)
        for record in self.store.trial_records(run_id):
            if record.get("error") is None:  # errored ones are run again and recorded then
                self.recorded(record)

    def recorded(self, record: dict[str, Any]) -> None:
        """A trial was recorded: start whatever judging it completes."""
        text = json_line(record)  # as the store holds it (`Store.queue_trial`)
        trial = Trial.model_validate_json(text)  # as the evaluation reads it back
        line = model_line(trial)
        self.trials[text] = (trial, text if line == text else line)
        case = self.cases.get(trial.case_id)
        if case is None:
            return
        if self.config.mode == "direct" and not self.config.length_normalised:
            if trial.error is None:
                self._start(
                    direct_item(0, trial, case, self.config_key, None, self.config.over),
                    self.scorer,
                )
            return
        pairwise = self.config.mode == "pairwise"
        if pairwise and (trial.error is not None or trial.condition not in self.pair):
            return
        # Kept only until they are judged: a long run's trials are not all held at once.
        seen = self._seen.setdefault(trial.case_id, {})
        seen[(trial.condition, trial.trial)] = trial
        if pairwise:
            self._pair(case, trial, seen)
        elif len(seen) == self.per_case:
            del self._seen[trial.case_id]
            self._whole_case(case, seen)

    def _pair(self, case: Case, trial: Trial, seen: dict[tuple[str, int], Trial]) -> None:
        a, b = self.pair
        other = seen.get((b if trial.condition == a else a, trial.trial))
        if other is None:
            return
        first, second = (trial, other) if trial.condition == a else (other, trial)
        del seen[(a, trial.trial)], seen[(b, trial.trial)]
        if not seen:
            del self._seen[case.id]
        item = pair_item(0, first, second, case, self.config_key, self.config.over)
        full = self.scorer.full if isinstance(self.scorer, Cascade) else self.scorer
        if isinstance(full, PairJudge) and full.expected(ScoreContext(case, item.trials)):
            return  # the case's expectations decide it, with no call (after the run)
        self._start(item, self.scorer)

    def _whole_case(self, case: Case, seen: dict[tuple[str, int], Trial]) -> None:
        """Every trial of the case is recorded: judge its answered ones, with its median
        length in words (as `run_judging` computes it over the whole run)."""
        answered = [t for t in seen.values() if t.error is None]
        if not answered:
            return
        median = float(statistics.median(words(t.response) for t in answered))
        scorer = judge_scorer(self.setup, {case.id: median})
        for trial in answered:
            self._start(
                direct_item(0, trial, case, self.config_key, None, self.config.over), scorer
            )

    def direct_key(self, trial: Trial, config_key: str) -> str | None:
        """The direct item key made for this very Trial (one of `trials`) while the run went
        on, when `config_key` is the configuration it was made under; else None."""
        found = self._keys.get(id(trial))
        if found is None or found[0] is not trial or config_key != self.config_key:
            return None
        return found[1]

    def _start(self, item: JudgeItem, scorer: JudgeScorer | Cascade) -> None:
        if not item.b:  # direct
            self._keys[id(item.trials[0])] = (item.trials[0], item.key)
        if item.key in self._started:
            return
        self._started.add(item.key)
        task = asyncio.create_task(self._judge(item, scorer))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._errors.append(task.exception())  # type: ignore[arg-type]

    async def _judge(self, item: JudgeItem, scorer: JudgeScorer | Cascade) -> None:
        assert self._gate is not None and self._caller is not None and self._budget is not None
        async with self._gate:
            if self._budget.exhausted:
                return
            try:
                outcome = await judge_item(
                    scorer, item, self._caller, self.store, self.config, self.prompt_sha256
                )
            except BudgetExhausted:
                return  # left for after the run, which reports the stop
            self.outcomes[item.key] = outcome

    async def finish(self) -> None:
        """Wait for the judging started so far; close the judge models."""
        try:
            while self._tasks:
                await asyncio.gather(*list(self._tasks))
            if self._errors:
                raise self._errors[0]
        finally:
            for model in self.models.values():
                await model.aclose()
