"""The items of a judging run: a trial (direct) or a pair of trials (pairwise), each with
its key (the response(s) and the configuration's fingerprint), which the store's
`judgments` rows are stored under and resumed by."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.core.errors import InputError
from assay.core.records import Case, Trial
from assay.core.trajectory_text import Over, judged_text
from assay.engine.plan import sha256_json, sha256_text
from assay.scorers.judge.config import JudgeConfig

KnownKey = Callable[[Trial, str], str | None]
"""The direct item key made already for this trial object under this configuration
fingerprint (`JudgeFollower.direct_key`), or None."""


@dataclass(slots=True)
class JudgeItem:
    """One thing to judge: a trial (direct) or a pair of trials (pairwise)."""

    seq: int
    key: str
    case: Case
    trials: tuple[Trial, ...]
    a: str
    b: str


def plan_items(
    trials: Sequence[Trial],
    cases: dict[str, Case],
    config: JudgeConfig,
    config_key: str,
    known: KnownKey | None = None,
) -> tuple[list[JudgeItem], int, int]:
    """The items to judge in input order; (items, errored trials skipped, unpaired trials).

    `config_key` is the configuration's fingerprint: an item's key is its response(s) and it.
    `known` gives the direct keys made already (while the run went on), not hashed again.
    """
    unknown = sorted({t.case_id for t in trials} - set(cases))
    if unknown:
        shown = ", ".join(unknown[:10])
        raise InputError(f"ERROR: --trials: case id(s) not in --cases: {shown}")
    answered = [t for t in trials if t.error is None]
    errored = len(trials) - len(answered)
    items: list[JudgeItem] = []
    if config.mode == "direct":
        for trial in answered:
            key = known(trial, config_key) if known is not None else None
            case = cases[trial.case_id]
            items.append(direct_item(len(items), trial, case, config_key, key, config.over))
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
        case = cases[trial.case_id]
        items.append(pair_item(len(items), trial, other, case, config_key, config.over))
    return items, errored, unpaired


def direct_item(
    seq: int,
    trial: Trial,
    case: Case,
    config_key: str,
    key: str | None = None,
    over: Over = "response",
) -> JudgeItem:
    """A direct item: one answered trial; its key is what the judge reads of it (the
    response, or with `over` its steps too) and the configuration (`key`: that key, made
    already)."""
    if key is None:
        key = sha256_json(
            [
                "direct",
                trial.case_id,
                trial.trial,
                trial.condition,
                sha256_text(judged_text(trial, over)),
                config_key,
            ]
        )
    return JudgeItem(seq, key, case, (trial,), trial.condition, "")


def pair_item(
    seq: int, a: Trial, b: Trial, case: Case, config_key: str, over: Over = "response"
) -> JudgeItem:
    """A pairwise item: the same case and trial number of conditions a and b."""
    key = sha256_json(
        [
            "pairwise",
            a.case_id,
            a.trial,
            a.condition,
            b.condition,
            sha256_text(judged_text(a, over)),
            sha256_text(judged_text(b, over)),
            config_key,
        ]
    )
    return JudgeItem(seq, key, case, (a, b), a.condition, b.condition)
