"""Asking a judge: one request through the run's `Caller`, a JSON reply, one repair attempt.

`JudgeSetup` holds what every judge scorer of one configuration shares: the judge models,
the rubric criteria and scale, and the request settings.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from assay.core.records import Case
from assay.core.redact import scrub
from assay.core.rubric import Criterion, resolve_criteria, scale_bounds
from assay.engine.calls import BudgetExhausted, Caller
from assay.models.base import Message, Model, ModelError, Request, ServerMismatch
from assay.scorers.judge.bias import anonymise
from assay.scorers.judge.config import JudgeConfig, build_judge_models, validate_config
from assay.scorers.judge.prompts import Prompt, chat, neutralise, render
from assay.scorers.judge.verdicts import ReplyError

T = TypeVar("T")
WORD = re.compile(r"\S+")


class JudgeFailure(Exception):
    """A judgment that could not be made; `raw` keeps every reply received."""

    def __init__(self, message: str, raw: list[str]) -> None:
        super().__init__(message)
        self.raw = raw


def words(text: str) -> int:
    return len(WORD.findall(text))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def verified_quotes(quotes: Iterable[str], *texts: str) -> int:
    """How many quotes really occur (whitespace- and case-insensitively) in the texts."""
    return Quotes(*texts).count(quotes)


class Quotes:
    """The texts quotes are checked against, normalised once (a reply quotes per criterion)."""

    def __init__(self, *texts: str) -> None:
        self.haystacks = [_normal(t) for t in texts]

    def count(self, quotes: Iterable[str]) -> int:
        """`verified_quotes(quotes, *texts)`."""
        found = 0
        for quote in quotes:
            needle = _normal(quote).strip(" .…\"'")
            if len(needle) >= 3 and any(needle in h for h in self.haystacks):
                found += 1
        return found


def shown(text: str) -> str:
    """What a judge sees of a response: anonymised, frame tags defused."""
    return neutralise(anonymise(text))


RAW_KEEP_CHARS = 64 * 1024  # of one judge reply: what is stored and what a repair re-sends


def kept(reply: str) -> str:
    """A judge reply as it is stored and quoted back in a repair: its first `RAW_KEEP_CHARS`
    characters, and a note of how much more there was. A usable reply is far shorter (the
    reply schema bounds every field); a runaway one must not grow the store or the next
    request by megabytes."""
    if len(reply) <= RAW_KEEP_CHARS:
        return reply
    return reply[:RAW_KEEP_CHARS] + f"\n[… {len(reply) - RAW_KEEP_CHARS} more characters not kept]"


async def ask_json(
    caller: Caller, model: Model, request: Request, parse: Callable[[str], T]
) -> tuple[T, list[str]]:
    """Ask for JSON; one repair attempt on a reply that does not parse, then JudgeFailure.

    Returns the parsed reply and every raw reply received (kept with the judgment, each cut
    to `RAW_KEEP_CHARS` by `kept`, as is the reply the repair request quotes back).
    """
    raw: list[str] = []
    for attempt in range(2):
        try:
            response = await caller.call(model, request)
        except (ServerMismatch, sqlite3.Error):
            raise  # a wrong URL or judge name, or the store failed: the command stops
        except ModelError as exc:
            detail = scrub(exc.detail) if exc.detail else ""
            raise JudgeFailure(f"{model.spec}: {scrub(str(exc))}", [*raw, detail]) from None
        except BudgetExhausted:
            raise
        except Exception as exc:  # a provider bug: this item fails, the run goes on
            message = scrub(f"{type(exc).__name__}: {exc}")
            raise JudgeFailure(f"{model.spec}: {message}", raw) from None
        raw.append(kept(response.text))
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
                    Message("assistant", raw[-1]),
                    Message("user", repair),
                ],
            )
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(slots=True)
class JudgeSetup:
    """The judges of one configuration: models, rubric criteria, scale, request settings."""

    config: JudgeConfig
    models: dict[str, Model]
    criteria: list[Criterion]
    scale: str
    names: list[str] = field(init=False)
    weights: dict[str, float] = field(init=False)
    low: int = field(init=False)
    high: int = field(init=False)
    _prompts: dict[str, Prompt] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._prompts = {}
        self.names = [c.name for c in self.criteria]
        self.weights = {c.name: c.weight for c in self.criteria}
        self.low, self.high = scale_bounds(self.scale)

    def prompt(self, template: str) -> Prompt:
        """The judge template with this setup's criteria, scale and rubric guidance fixed,
        one per template, shared by every scorer of the setup (`prompts.Prompt`)."""
        prompt = self._prompts.get(template)
        if prompt is None:
            rubric = self.config.rubric
            prompt = self._prompts[template] = Prompt(
                template,
                criteria=[c.model_dump() for c in self.criteria],
                low=self.low,
                high=self.high,
                guidelines=rubric.scoring_guidelines if rubric else [],
                edge_cases=[e.model_dump() for e in rubric.edge_cases] if rubric else [],
            )
        return prompt

    @classmethod
    def from_config(cls, config: JudgeConfig) -> JudgeSetup:
        """The setup a configuration describes (checked; models built, not yet called)."""
        validate_config(config)
        criteria, scale = resolve_criteria(config.rubric, config.scale, concision=config.concision)
        return cls(config, build_judge_models(config), criteria, scale)

    async def ask(
        self,
        caller: Caller,
        spec: str,
        prompt: str,
        schema: dict[str, Any],
        parse: Callable[[str], T],
        case: Case,
        index: int = 1,
    ) -> tuple[T, list[str]]:
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
        return await ask_json(caller, self.models[spec], request, parse)
