"""Judging trials: direct scores or pairwise comparisons, with panels and a cascade.

Every judge call goes through the engine's `Caller` (call cache, hard budget, retries,
adaptive concurrency). Items are judged concurrently; each finished item is written to the
store's `judgments` table at once, so re-running the same command resumes: judged items are
read back, not re-asked. Items whose judging failed are stored with the raw replies and get
no output row.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.core.errors import EXIT_INCOMPLETE, EXIT_OK, InputError
from assay.core.records import Case, ScoreRow, Trial
from assay.core.redact import scrub
from assay.core.rubric import Criterion, Rubric, resolve_criteria, scale_bounds
from assay.core.suite import Suite
from assay.engine.budget import Budget
from assay.engine.calls import BudgetExhausted, Caller
from assay.engine.plan import sha256_json, sha256_text
from assay.engine.session import check_metered
from assay.measure.alpha import krippendorff_alpha
from assay.models.base import Message, Model, ModelError, Request
from assay.models.registry import ModelOptions, create_model
from assay.scorers.judge import aggregate as agg
from assay.scorers.judge.bias import anonymise, shared_families
from assay.scorers.judge.prompts import case_values, chat, neutralise, render, template_sha256
from assay.scorers.judge.verdicts import (
    ReplyError,
    direct_schema,
    pairwise_schema,
    parse_direct,
    parse_pairwise,
    parse_screen,
    screen_schema,
)
from assay.store import Store, now_iso

Mode = Literal["direct", "pairwise"]

JUDGMENTS_DDL = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    judge TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT,
    error TEXT,
    raw TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_by_item ON judgments (case_id, trial, a, b);
"""
REVIEW_QUEUE_DDL = (
    "CREATE TABLE IF NOT EXISTS review_queue (case_id TEXT NOT NULL, trial INTEGER NOT NULL,"
    " a TEXT, b TEXT, reason TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL,"
    " PRIMARY KEY (case_id, trial, a, b));"
)


@dataclass(slots=True)
class JudgeConfig:
    """Everything a judging run needs, from flags or a suite's [judge] section."""

    judges: list[str]
    mode: Mode = "direct"
    a: str = "baseline"
    b: str = "candidate"
    shuffles: int = 2
    screen: str | None = None
    screen_threshold: float = 0.7
    review_threshold: float = 0.6
    strict_judge: bool = False
    rubric: Rubric | None = None
    scale: str = "1-5"
    length_normalised: bool = False
    concision: bool = False
    max_tokens: int = 1024
    temperature: float = 0.0
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 4
    budget_usd: float | None = None
    allow_unmetered: bool = False
    options: ModelOptions = field(default_factory=ModelOptions)


@dataclass(slots=True)
class JudgeItem:
    """One thing to judge: a trial (direct) or a pair of trials (pairwise)."""

    seq: int
    key: str
    case: Case
    trials: tuple[Trial, ...]
    a: str
    b: str


@dataclass(slots=True)
class JudgeResult:
    """What a judging run did; `exit_code` is 3 when any item is not judged."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    judged: int = 0
    resumed: int = 0
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
    criteria: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        complete = self.judged + self.resumed == self.total and not self.stopped
        return EXIT_OK if complete else EXIT_INCOMPLETE

    @property
    def calls_saved(self) -> int:
        return self.full_calls_avoided - self.screen_calls


class JudgeFailure(Exception):
    """A judgment that could not be made; `raw` keeps every reply received."""

    def __init__(self, message: str, raw: list[str]) -> None:
        super().__init__(message)
        self.raw = raw


Progress = Callable[[bool], None]
WORD = re.compile(r"\S+")


def words(text: str) -> int:
    return len(WORD.findall(text))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def verified_quotes(quotes: Iterable[str], *texts: str) -> int:
    """How many quotes really occur (whitespace- and case-insensitively) in the texts."""
    haystacks = [_normal(t) for t in texts]
    found = 0
    for quote in quotes:
        needle = _normal(quote).strip(" .…\"'")
        if len(needle) >= 3 and any(needle in h for h in haystacks):
            found += 1
    return found


async def ask_json(
    caller: Caller, model: Model, request: Request, parse: Callable[[str], Any]
) -> tuple[Any, list[str]]:
    """Ask for JSON; one repair attempt on a reply that does not parse, then JudgeFailure.

    Returns the parsed reply and every raw reply received (kept with the judgment).
    """
    raw: list[str] = []
    for attempt in range(2):
        try:
            response = await caller.call(model, request)
        except ModelError as exc:
            detail = scrub(exc.detail) if exc.detail else ""
            raise JudgeFailure(f"{model.spec}: {scrub(str(exc))}", [*raw, detail]) from None
        except BudgetExhausted:
            raise
        except Exception as exc:  # a provider bug: this item fails, the run goes on
            message = scrub(f"{type(exc).__name__}: {exc}")
            raise JudgeFailure(f"{model.spec}: {message}", raw) from None
        raw.append(response.text)
        try:
            return parse(response.text), raw
        except ReplyError as exc:
            # An unusable reply is not an answer to keep: without this, a rerun would replay
            # the same broken replies from the call cache and the item could never be judged.
            caller.forget(model, request)
            if attempt == 1:
                raise JudgeFailure(
                    f"{model.spec}: reply still unusable after one repair attempt: {exc}", raw
                ) from None
            repair = render("repair", problem=str(exc))
            request = dataclasses.replace(
                request,
                messages=[
                    *request.messages,
                    Message("assistant", response.text),
                    Message("user", repair),
                ],
            )
    raise AssertionError("unreachable")  # pragma: no cover


# -- planning -------------------------------------------------------------------------------


def plan_items(
    trials: Sequence[Trial], cases: dict[str, Case], config: JudgeConfig, fingerprint: str
) -> tuple[list[JudgeItem], int, int]:
    """The items to judge in input order; (items, errored trials skipped, unpaired trials)."""
    unknown = sorted({t.case_id for t in trials} - set(cases))
    if unknown:
        shown = ", ".join(unknown[:10])
        raise InputError(f"ERROR: --trials: case id(s) not in --cases: {shown}")
    answered = [t for t in trials if t.error is None]
    errored = len(trials) - len(answered)
    items: list[JudgeItem] = []
    if config.mode == "direct":
        for trial in answered:
            key = sha256_json(
                [
                    "direct",
                    trial.case_id,
                    trial.trial,
                    trial.condition,
                    sha256_text(trial.response),
                    fingerprint,
                ]
            )
            items.append(
                JudgeItem(len(items), key, cases[trial.case_id], (trial,), trial.condition, "")
            )
        return items, errored, 0
    if config.a == config.b:
        raise InputError("ERROR: --a and --b must name two different conditions")
    by_key = {(t.case_id, t.trial, t.condition): t for t in answered}
    conditions = {t.condition for t in trials}
    for name in (config.a, config.b):
        if name not in conditions:
            raise InputError(
                f"ERROR: --trials: no trials of condition {name!r}"
                f" (found: {', '.join(sorted(conditions)) or 'none'})"
            )
    unpaired = 0
    for trial in answered:
        if trial.condition == config.b:
            if (trial.case_id, trial.trial, config.a) not in by_key:
                unpaired += 1
            continue
        if trial.condition != config.a:
            continue
        other = by_key.get((trial.case_id, trial.trial, config.b))
        if other is None:
            unpaired += 1
            continue
        key = sha256_json(
            [
                "pairwise",
                trial.case_id,
                trial.trial,
                config.a,
                config.b,
                sha256_text(trial.response),
                sha256_text(other.response),
                fingerprint,
            ]
        )
        items.append(
            JudgeItem(len(items), key, cases[trial.case_id], (trial, other), config.a, config.b)
        )
    return items, errored, unpaired


# -- one judging session --------------------------------------------------------------------


class Session:
    """Judges items with the configured judges; shared state for one run."""

    def __init__(
        self,
        config: JudgeConfig,
        store: Store,
        models: dict[str, Model],
        criteria: list[Criterion],
        scale: str,
    ) -> None:
        self.config = config
        self.store = store
        self.models = models
        self.criteria = criteria
        self.names = [c.name for c in criteria]
        self.weights = {c.name: c.weight for c in criteria}
        self.low, self.high = scale_bounds(scale)
        self.scale = scale
        self.budget = Budget(config.budget_usd)
        self.caller = Caller(
            store, self.budget, concurrency=config.concurrency, retries=config.retries
        )
        self.template = "direct" if config.mode == "direct" else "pairwise"
        self.prompt_sha = template_sha256(self.template)
        self.median_words: dict[str, float] = {}

    async def ask(
        self,
        spec: str,
        prompt: str,
        schema: dict[str, Any],
        parse: Callable[[str], Any],
        case: Case,
        index: int = 1,
    ) -> tuple[Any, list[str]]:
        """Ask one judge through the caller (see `ask_json`)."""
        request = Request(
            messages=chat(prompt),
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            trial=index,
            json_schema=schema,
            case=case,
            timeout_s=self.config.timeout_s,
        )
        return await ask_json(self.caller, self.models[spec], request, parse)

    # -- direct -------------------------------------------------------------------------
    def shown(self, text: str) -> str:
        """What the judge sees of a response: anonymised, frame tags defused."""
        return neutralise(anonymise(text))

    async def direct_one(
        self, spec: str, item: JudgeItem, template: Literal["direct", "screen"] = "direct"
    ) -> dict[str, Any]:
        """One judge's rubric scores for a trial; the `screen` template adds `adequacy`."""
        response = self.shown(item.trials[0].response)
        prompt = render(
            template,
            **case_values(item.case),
            response=response,
            criteria=[c.model_dump() for c in self.criteria],
            low=self.low,
            high=self.high,
            guidelines=self.config.rubric.scoring_guidelines if self.config.rubric else [],
            edge_cases=[e.model_dump() for e in self.config.rubric.edge_cases]
            if self.config.rubric
            else [],
        )
        screening = template == "screen"
        schema = (screen_schema if screening else direct_schema)(self.names, self.low, self.high)
        parse_reply = parse_screen if screening else parse_direct
        reply, raw = await self.ask(
            spec,
            prompt,
            schema,
            lambda t: parse_reply(t, self.names, self.low, self.high),
            item.case,
        )
        quotes = sum(
            min(1, verified_quotes(reply.scores[n].evidence, response)) for n in self.names
        )
        return {
            "judge": spec,
            "adequacy": getattr(reply, "adequacy", None),
            "scores": {n: reply.scores[n].score for n in self.names},
            "evidence": {n: reply.scores[n].evidence for n in self.names},
            "justification": {n: reply.scores[n].justification for n in self.names},
            "blocker": reply.blocker,
            "blocker_reason": reply.blocker_reason,
            "improvement": reply.improvement,
            "confidence": agg.direct_confidence(quotes, len(self.names)),
            "raw": raw,
        }

    def direct_record(self, item: JudgeItem, per_judge: list[dict[str, Any]]) -> dict[str, Any]:
        trial = item.trials[0]
        if len(per_judge) == 1:
            one = per_judge[0]
            scores: dict[str, float] = {k: float(v) for k, v in one["scores"].items()}
            blocker, confidence = one["blocker"], one["confidence"]
            extra: dict[str, Any] = {
                "evidence": one["evidence"],
                "justification": one["justification"],
                "improvement": one["improvement"],
            }
        else:
            panel = agg.panel_direct(per_judge, self.names, self.low, self.high)
            scores, blocker, confidence = panel["scores"], panel["blocker"], panel["confidence"]
            extra = {
                "evidence": {
                    n: [q for j in per_judge for q in j["evidence"][n]] for n in self.names
                },
                "spread": panel["spread"],
                "judges": [
                    {k: j[k] for k in ("judge", "scores", "blocker", "confidence", "improvement")}
                    for j in per_judge
                ],
            }
        reasons = [j["blocker_reason"] for j in per_judge if j["blocker"] and j["blocker_reason"]]
        overall = agg.weighted_overall(scores, self.weights)
        record: dict[str, Any] = {
            "case_id": trial.case_id,
            "trial": trial.trial,
            "condition": trial.condition,
            **{n: (int(s) if float(s).is_integer() else s) for n, s in scores.items()},
            "overall": overall,
            "blocker": blocker,
            "notes": "; ".join(reasons) or None,
            "source": "judge:" + "+".join(j["judge"] for j in per_judge),
            "confidence": confidence,
            **extra,
        }
        if self.config.length_normalised:
            record["overall_ln"] = agg.length_normalised(
                overall,
                words(trial.response),
                self.median_words.get(trial.case_id, 0.0),
                self.low,
                self.high,
            )
        return record

    # -- pairwise -----------------------------------------------------------------------
    async def pairwise_one(self, spec: str, item: JudgeItem, passes: int) -> dict[str, Any]:
        first, second = (self.shown(t.response) for t in item.trials)
        values = case_values(item.case)
        criteria = [c.model_dump() for c in self.criteria]
        schema = pairwise_schema(self.names)

        async def one_pass(index: int) -> tuple[agg.PassResult, list[str]]:
            order: Literal["ab", "ba"] = "ab" if index % 2 == 0 else "ba"
            shown = (first, second) if order == "ab" else (second, first)
            prompt = render(
                "pairwise", **values, first=shown[0], second=shown[1], criteria=criteria
            )
            reply, raw = await self.ask(
                spec,
                prompt,
                schema,
                lambda t: parse_pairwise(t, self.names),
                item.case,
                index + 1,
            )
            result = agg.PassResult(
                order=order,
                winner=agg.map_back(reply.winner, order),
                confidence=reply.confidence,
                criteria={n: agg.map_back(reply.criteria[n], order) for n in self.names},
                quotes=verified_quotes(reply.evidence, first, second),
                evidence=list(reply.evidence),
            )
            return result, raw

        outcomes = await asyncio.gather(
            *(one_pass(i) for i in range(passes)), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        results = [o[0] for o in outcomes if not isinstance(o, BaseException)]
        raws = [r for o in outcomes if not isinstance(o, BaseException) for r in o[1]]
        combined = agg.combine_passes(results)
        return {
            "judge": spec,
            **combined,
            "evidence": list(dict.fromkeys(q for p in results for q in p.evidence)),
            "passes": [
                {"order": p.order, "winner": p.winner, "confidence": p.confidence, "judge": spec}
                for p in results
            ],
            "raw": raws,
        }

    def pairwise_record(self, item: JudgeItem, per_judge: list[dict[str, Any]]) -> dict[str, Any]:
        trial_a, trial_b = item.trials
        if len(per_judge) == 1:
            verdict = {
                k: per_judge[0][k]
                for k in ("verdict", "confidence", "consistent", "preference", "criteria")
            }
            extra: dict[str, Any] = {}
        else:
            verdict = agg.panel_pairwise(per_judge)
            extra = {
                "judges": [
                    {k: j[k] for k in ("judge", "verdict", "confidence", "consistent", "criteria")}
                    for j in per_judge
                ]
            }
        return {
            "case_id": trial_a.case_id,
            "trial": trial_a.trial,
            "a": item.a,
            "b": item.b,
            "judge": "+".join(j["judge"] for j in per_judge),
            "passes": [p for j in per_judge for p in j["passes"]],
            **verdict,
            "evidence": list(dict.fromkeys(q for j in per_judge for q in j["evidence"]))[:12],
            "len_a": len(trial_a.response),
            "len_b": len(trial_b.response),
            **extra,
        }

    def identical_record(self, item: JudgeItem) -> dict[str, Any]:
        trial_a, trial_b = item.trials
        return {
            "case_id": trial_a.case_id,
            "trial": trial_a.trial,
            "a": item.a,
            "b": item.b,
            "judge": "+".join(self.config.judges),
            "passes": [],
            "verdict": "tie",
            "confidence": agg.CAP,
            "consistent": True,
            "preference": 0.5,
            "criteria": {n: {"verdict": "tie", "consistent": True} for n in self.names},
            "len_a": len(trial_a.response),
            "len_b": len(trial_b.response),
            "identical": True,
        }

    # -- screening (cascade tier 1) -----------------------------------------------------
    async def screen(self, item: JudgeItem) -> dict[str, Any] | None:
        """The screen's record when it settles the item, else None (go to the full judge).

        Direct mode: one call to the screen judge with the `screen` template, which asks for
        the rubric scores (evidence first) and a 0-1 adequacy; an item at or above the
        threshold without a blocker keeps those scores, so screen-tier rows are Score rows
        like any other. Pairwise: one two-order pass, settled when consistent and confident.
        """
        spec = self.config.screen
        assert spec is not None
        threshold = self.config.screen_threshold
        try:
            if self.config.mode == "pairwise":
                one = await self.pairwise_one(spec, item, 2)
                if not (one["consistent"] and one["confidence"] >= threshold):
                    return None
                record = self.pairwise_record(item, [one])
                record["adequacy"] = one["confidence"]
                return record
            one = await self.direct_one(spec, item, "screen")
        except JudgeFailure:
            return None
        if one["adequacy"] < threshold or one["blocker"]:
            return None  # doubtful, or a blocking finding: the full judge decides
        record = self.direct_record(item, [one])
        record["adequacy"] = one["adequacy"]
        return record

    def screen_calls_per_item(self) -> int:
        return 2 if self.config.mode == "pairwise" else 1

    def full_calls_per_item(self) -> int:
        passes = self.config.shuffles if self.config.mode == "pairwise" else 1
        return passes * len(self.config.judges)

    # -- one item -----------------------------------------------------------------------
    async def judge(self, item: JudgeItem) -> tuple[dict[str, Any], list[str]]:
        """The item's record (with its tier) and every raw judge reply."""
        pairwise = self.config.mode == "pairwise"
        if pairwise and _same(*(self.shown(t.response) for t in item.trials)):
            record = self.identical_record(item)
            record["tier"] = "rule"
            return self._stamp(record, self.config.judges), []
        if self.config.screen:
            screened = await self.screen(item)
            if screened is not None:
                screened["tier"] = "screen"
                stamped = self._stamp(screened, [self.config.screen])
                if not pairwise:
                    stamped["judge_prompt_sha256"] = template_sha256("screen")
                return stamped, []
        if pairwise:
            per_judge = list(
                await asyncio.gather(
                    *(self.pairwise_one(j, item, self.config.shuffles) for j in self.config.judges)
                )
            )
            record = self.pairwise_record(item, per_judge)
        else:
            per_judge = list(
                await asyncio.gather(*(self.direct_one(j, item) for j in self.config.judges))
            )
            record = self.direct_record(item, per_judge)
        record["tier"] = "judge"
        if self.config.screen:
            reason = self.review_reason(record)
            if reason:
                record["tier"] = "review"
                record["review"] = reason
                self.store.queue(
                    "INSERT OR REPLACE INTO review_queue (case_id, trial, a, b, reason, source,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        item.case.id,
                        item.trials[0].trial,
                        item.a,
                        item.b,
                        reason,
                        record.get("source") or f"judge:{record['judge']}",
                        now_iso(),
                    ),
                )
        raw = [r for j in per_judge for r in j["raw"]]
        return self._stamp(record, self.config.judges), raw

    def review_reason(self, record: dict[str, Any]) -> str | None:
        if record.get("consistent") is False:
            return "inconsistent verdict across positions"
        if record.get("confidence", 1.0) < self.config.review_threshold:
            return f"low confidence {record['confidence']:.2f} < {self.config.review_threshold}"
        return None

    def _stamp(self, record: dict[str, Any], judges: Sequence[str]) -> dict[str, Any]:
        """Provenance: judge model(s), prompt hash, scale."""
        record["judge_model"] = "+".join(judges)
        record["judge_prompt_sha256"] = self.prompt_sha
        if self.config.mode == "direct":
            record["scale"] = self.scale
        return record


def _same(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


# -- the run --------------------------------------------------------------------------------


def _fingerprint(
    config: JudgeConfig, criteria: list[Criterion], scale: str, models: dict[str, Model]
) -> str:
    return sha256_json(
        {
            "judges": config.judges,
            "identities": {s: m.identity() for s, m in models.items()},
            "screen": config.screen,
            "screen_threshold": config.screen_threshold if config.screen else None,
            "review_threshold": config.review_threshold if config.screen else None,
            "shuffles": config.shuffles if config.mode == "pairwise" else None,
            "templates": {
                n: template_sha256(n) for n in ("direct", "pairwise", "screen", "repair")
            },
            "criteria": [c.model_dump() for c in criteria],
            "rubric": config.rubric.model_dump() if config.rubric else None,
            "scale": scale,
            "length_normalised": config.length_normalised,
            "max_tokens": config.max_tokens,
            "temperature": config.temperature,
        }
    )


def family_warnings(config: JudgeConfig, trials: Sequence[Trial]) -> list[str]:
    """Warnings for judges of a generator's family; InputError with --strict-judge."""
    generators = {g for t in trials for g in (t.runner, t.model) if g}
    messages = []
    for spec in [*config.judges, *([config.screen] if config.screen else [])]:
        shared = shared_families(spec, generators)
        if shared:
            messages.append(
                f"judge {spec} is of the {', '.join(sorted(shared))} family, like a model that"
                " wrote the responses: expect self-preference; prefer a judge of another"
                " family or a panel"
            )
    if messages and config.strict_judge:
        raise InputError([f"ERROR: --strict-judge: {m}" for m in messages])
    return [f"WARNING: {m}" for m in messages]


def build_judge_models(config: JudgeConfig) -> dict[str, Model]:
    specs = list(dict.fromkeys([*config.judges, *([config.screen] if config.screen else [])]))
    return {spec: create_model(spec, config.options) for spec in specs}


def _validate_config(config: JudgeConfig) -> None:
    if not config.judges:
        raise InputError("ERROR: --judge: name at least one judge model")
    if len(set(config.judges)) != len(config.judges):
        raise InputError("ERROR: --judge: the same judge is named twice")
    if config.shuffles < 2:
        raise InputError("ERROR: --shuffles: at least 2 (every comparison is run in both orders)")
    if config.length_normalised and config.mode == "pairwise":
        raise InputError(
            "ERROR: --length-normalised: applies to direct scores; pairwise comparisons always"
            " record len_a and len_b for the length-controlled win rate"
        )
    if not 0.0 <= config.screen_threshold <= 1.0:
        raise InputError("ERROR: --screen-threshold: must be between 0 and 1")


def run_judging(
    trials: Sequence[Trial],
    cases: Sequence[Case],
    config: JudgeConfig,
    store: Store,
    progress: Progress | None = None,
) -> JudgeResult:
    """Judge every answered trial (or pair); return the rows in input order and a summary.

    The hook suites call: rows are Score rows (direct) or Comparisons (pairwise) as dicts.
    """
    _validate_config(config)
    criteria, scale = resolve_criteria(config.rubric, config.scale, concision=config.concision)
    result = JudgeResult()
    result.warnings = family_warnings(config, trials)
    models = build_judge_models(config)
    check_metered(models, config.allow_unmetered)
    store.ensure(JUDGMENTS_DDL)
    store.ensure(REVIEW_QUEUE_DDL)
    fingerprint = _fingerprint(config, criteria, scale, models)
    items, result.skipped_errored, result.unpaired = plan_items(
        trials, {c.id: c for c in cases}, config, fingerprint
    )
    result.total = len(items)
    session = Session(config, store, models, criteria, scale)
    result.criteria = list(session.names)
    by_case: dict[str, list[int]] = {}
    for item in items:
        by_case.setdefault(item.case.id, []).append(words(item.trials[0].response))
    session.median_words = {k: float(statistics.median(v)) for k, v in by_case.items()}
    done = _judged(store, [i.key for i in items])
    tick = progress or (lambda ok: None)
    records: dict[str, dict[str, Any]] = {}
    pending = []
    for item in items:
        if item.key in done:
            records[item.key] = done[item.key]
            result.resumed += 1
            tick(True)
        else:
            pending.append(item)

    async def work(item: JudgeItem, gate: asyncio.Semaphore) -> None:
        async with gate:
            if session.budget.exhausted:
                return
            try:
                record, raw = await session.judge(item)
            except BudgetExhausted:
                result.stopped = "budget"
                return
            except JudgeFailure as exc:
                _save(store, config, item, session.prompt_sha, "error", None, str(exc), exc.raw)
                result.failed += 1
                if len(result.failures) < 20:
                    result.failures.append(f"{_label(item)}: {exc}")
                tick(False)
                return
            _save(store, config, item, session.prompt_sha, "ok", record, None, raw)
            records[item.key] = record
            result.judged += 1
            tick(True)

    async def go() -> None:
        gate = asyncio.Semaphore(max(1, config.concurrency) * 2)
        try:
            await asyncio.gather(*(work(item, gate) for item in pending))
        finally:
            store.flush()
            for model in models.values():
                await model.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:  # Ctrl+C: what was judged is stored; report it and exit 3
        result.stopped = "interrupted"
    result.calls = session.caller.calls
    result.cache_hits = session.caller.cache_hits
    result.spent_usd = session.budget.spent
    result.not_run = result.total - result.judged - result.resumed - result.failed
    result.rows = [records[i.key] for i in items if i.key in records]
    _summarise(result, session, config)
    if config.mode == "direct":
        record_history(store, [i.trials[0] for i in items if i.key in records], result.rows)
    return result


def record_history(store: Store, trials: Sequence[Trial], rows: Sequence[dict[str, Any]]) -> None:
    """Record direct Score rows in the store's `judge_scores` table for `assay history`.

    Each row goes under its trial's `run_id`; trials without one (a file written by another
    tool) go under `trials-<hash of the judged trials>`, stable across re-runs, and
    re-recording replaces rows, so resuming never counts a row twice.
    """
    from assay.store.history import save_score_rows

    if not rows:
        return
    fallback = (
        "trials-"
        + sha256_json(
            sorted([t.case_id, t.trial, t.condition, sha256_text(t.response)] for t in trials)
        )[:12]
    )
    by_run: dict[str, list[ScoreRow]] = {}
    lengths: dict[tuple[str, int, str], int] = {}
    for trial, row in zip(trials, rows, strict=True):
        by_run.setdefault(trial.run_id or fallback, []).append(ScoreRow.model_validate(row))
        lengths[(trial.case_id, trial.trial, trial.condition)] = len(trial.response)
    for run_id, run_rows in by_run.items():
        save_score_rows(store, run_id, run_rows, lengths)


def _label(item: JudgeItem) -> str:
    who = item.a if not item.b else f"{item.a} vs {item.b}"
    return f"{item.case.id} [{who} #{item.trials[0].trial}]"


def _save(
    store: Store,
    config: JudgeConfig,
    item: JudgeItem,
    prompt_sha: str,
    status: str,
    record: dict[str, Any] | None,
    error: str | None,
    raw: list[str],
) -> None:
    store.queue(
        "INSERT OR REPLACE INTO judgments (key, mode, case_id, trial, a, b, judge, prompt_sha256,"
        " status, record, error, raw, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item.key,
            config.mode,
            item.case.id,
            item.trials[0].trial,
            item.a,
            item.b,
            "+".join(config.judges),
            prompt_sha,
            status,
            json.dumps(record, ensure_ascii=False) if record is not None else None,
            error,
            json.dumps(raw, ensure_ascii=False),
            now_iso(),
        ),
    )
    store.flush()


def _judged(store: Store, keys: list[str]) -> dict[str, dict[str, Any]]:
    """Records of items already judged successfully (resume)."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = store.db.execute(
            f"SELECT key, record FROM judgments WHERE status = 'ok' AND key IN"
            f" ({','.join('?' * len(chunk))})",
            chunk,
        )
        found.update({key: json.loads(record) for key, record in rows})
    return found


def _summarise(result: JudgeResult, session: Session, config: JudgeConfig) -> None:
    tiers = Counter(str(r.get("tier", "judge")) for r in result.rows)
    result.tiers = dict(sorted(tiers.items()))
    if config.screen:
        screened = sum(n for tier, n in tiers.items() if tier != "rule")
        result.full_calls_avoided = tiers.get("screen", 0) * session.full_calls_per_item()
        result.screen_calls = screened * session.screen_calls_per_item()
    if len(config.judges) > 1:
        result.alpha = panel_alpha(result.rows, config, session.names)


def panel_alpha(
    rows: Sequence[dict[str, Any]], config: JudgeConfig, names: Sequence[str]
) -> dict[str, float | None]:
    """Krippendorff's alpha among the panel's judges over the items they all judged."""
    panelled = [r for r in rows if r.get("judges")]
    judges = config.judges
    if config.mode == "pairwise":
        matrix = [
            [
                next((agg.CODES[j["verdict"]] for j in r["judges"] if j["judge"] == spec), None)
                for r in panelled
            ]
            for spec in judges
        ]
        return {"verdict": krippendorff_alpha(matrix, "nominal", digits=4)}
    alphas: dict[str, float | None] = {}
    for name in names:
        matrix = [
            [
                next((float(j["scores"][name]) for j in r["judges"] if j["judge"] == spec), None)
                for r in panelled
            ]
            for spec in judges
        ]
        alphas[name] = krippendorff_alpha(matrix, "interval", digits=4)
    return alphas


def config_from_suite(suite: Suite) -> JudgeConfig:
    """The JudgeConfig a suite's [judge] section describes (paths relative to the suite)."""
    from assay.core.rubric import load_rubric
    from assay.models.pricing import parse_price

    section = suite.judge
    return JudgeConfig(
        judges=list(section.judges),
        mode=section.mode,
        a=section.a,
        b=section.b,
        shuffles=section.shuffles,
        screen=section.screen,
        screen_threshold=section.screen_threshold,
        review_threshold=section.review_threshold,
        strict_judge=section.strict_judge,
        rubric=load_rubric(suite.path(section.rubric)) if section.rubric else None,
        scale=section.scale,
        length_normalised=section.length_normalised,
        concision=section.concision,
        max_tokens=section.max_tokens,
        temperature=section.temperature,
        concurrency=suite.run.concurrency,
        timeout_s=suite.run.timeout,
        retries=suite.run.retries,
        budget_usd=section.budget_usd,
        allow_unmetered=section.allow_unmetered or suite.run.allow_unmetered,
        options=ModelOptions(
            base_url=section.base_url or suite.run.base_url,
            price=parse_price(section.price) if section.price else None,
        ),
    )
