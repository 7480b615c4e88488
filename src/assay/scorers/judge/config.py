"""A judging run's configuration: from flags (`assay judge`) or a suite's [judge] section.

Also what is derived from it before any call: the judge models, family warnings
(self-preference), and the fingerprint that keys stored judgments — any change that could
change a verdict changes it, so stale judgments are never reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from assay.core.errors import InputError
from assay.core.money import checked_budget
from assay.core.records import Trial
from assay.core.rubric import Criterion, Rubric
from assay.core.suite import Suite
from assay.core.trajectory_text import Over
from assay.engine.plan import sha256_json
from assay.models.base import Model
from assay.models.registry import (
    METERING,
    MissingKey,
    ModelOptions,
    create_model,
    missing_keys,
)
from assay.scorers.judge.bias import shared_families, unknown_relation
from assay.scorers.judge.prompts import template_sha256

Mode = Literal["direct", "pairwise"]


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
    expectations_first: bool = True
    max_tokens: int = 1024
    temperature: float = 0.0
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 4
    budget_usd: float | None = None
    allow_unmetered: bool = False
    metering: tuple[str, str] = METERING  # the settings that meter the judges (their names)
    options: ModelOptions = field(default_factory=ModelOptions)
    batch: bool = False  # --batch: judge calls go through provider batch APIs
    batch_poll_s: float = 30.0
    over: Over = "response"  # "trajectory": the judges read the trial's steps, then its response

    @property
    def judge_model(self) -> str:
        """The panel as one provenance string: `judge1+judge2`."""
        return "+".join(self.judges)


def validate_config(config: JudgeConfig) -> None:
    """InputError for a configuration no judging can run with."""
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
    if not config.expectations_first and config.mode != "pairwise":
        raise InputError(
            "ERROR: --no-expectations-first ([judge] expectations_first = false): applies to"
            " pairwise judging only"
        )
    if not 0.0 <= config.screen_threshold <= 1.0:
        raise InputError("ERROR: --screen-threshold: must be between 0 and 1")
    checked_budget(config.budget_usd, "--budget-usd (budget_usd)")


def fingerprint(
    config: JudgeConfig, criteria: list[Criterion], scale: str, models: dict[str, Model]
) -> str:
    """What a stored judgment depends on beyond the judged response(s).

    `expectations_first` is not in it: it changes no question put to a judge, only which
    pairs are asked at all, and pairs it decides are never stored as judgments (see
    `scorers/judge/run.py`), so judgments stored with it on or off resume alike."""
    over = {"over": config.over} if config.over != "response" else {}  # older keys kept
    return sha256_json(
        {
            **over,
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
        elif (why := unknown_relation(spec, generators)) is not None:
            messages.append(
                f"judge {spec} {why}: self-preference cannot be ruled out; prefer a judge of a"
                " known family other than the responses' models, or a panel"
            )
    if messages and config.strict_judge:
        raise InputError([f"ERROR: --strict-judge: {m}" for m in messages])
    return [f"WARNING: {m}" for m in messages]


def judge_specs(config: JudgeConfig) -> list[str]:
    """Every model the configuration calls: the judges, then the screen judge."""
    return list(dict.fromkeys([*config.judges, *([config.screen] if config.screen else [])]))


def judge_missing_keys(config: JudgeConfig) -> list[MissingKey]:
    """The API keys the configuration's models need and the environment lacks."""
    return missing_keys(judge_specs(config), config.options)


def check_judge_keys(config: JudgeConfig) -> None:
    """InputError, before any call, for each judge whose API key is not set (`assay judge`:
    the judge is the command, so it cannot be disabled)."""
    problems = [
        f"ERROR: --judge {m.spec}: {m}" + (f" ({m.hint})" if m.hint else "")
        for m in judge_missing_keys(config)
    ]
    if problems:
        raise InputError(problems)


def build_judge_models(config: JudgeConfig) -> dict[str, Model]:
    """One model per judge spec (the screen judge too)."""
    return {spec: create_model(spec, config.options) for spec in judge_specs(config)}


def config_from_suite(suite: Suite) -> JudgeConfig:
    """The JudgeConfig a suite's [judge] section describes (paths relative to the suite)."""
    from assay.core.rubric import load_rubric

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
        expectations_first=section.expectations_first,
        max_tokens=section.max_tokens,
        temperature=section.temperature,
        concurrency=suite.run.concurrency,
        timeout_s=suite.run.timeout,
        retries=suite.run.retries,
        budget_usd=section.budget_usd,
        allow_unmetered=section.allow_unmetered or suite.run.allow_unmetered,
        metering=(
            f'{suite.file}: [judge] price = "IN,OUT" (USD per million tokens)',
            "[judge] allow_unmetered = true",
        ),
        options=judge_options(suite),
        batch=section.batch,
        batch_poll_s=suite.run.batch_poll_s,
        over=section.over,
    )


def judge_options(suite: Suite) -> ModelOptions:
    """The model settings of the suite's judges ([judge] base_url and price, else [run]'s
    base_url; [run]'s cap on replies)."""
    from assay.models.pricing import parse_price

    section = suite.judge
    return ModelOptions(
        base_url=section.base_url or suite.run.base_url,
        price=parse_price(section.price) if section.price else None,
        max_reply_bytes=suite.run.max_reply_bytes,
    )


def suite_judge(suite: Suite | None) -> tuple[str | None, ModelOptions | None]:
    """The suite's first [judge] judge and its model settings — the judge of the grounding
    scorers that name none (`scorers.runner.build_scorers`); (None, None) without one."""
    if suite is None or not suite.judge.judges:
        return None, None
    return suite.judge.judges[0], judge_options(suite)
