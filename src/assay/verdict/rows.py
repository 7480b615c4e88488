"""Loading Score rows: validation with file:line:field errors, duplicates, pairing."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.core.jsonl import MAX_ERRORS, format_errors, parse_records, paused_gc
from assay.core.numbers import plain_number
from assay.core.records import ScoreRow
from assay.core.rubric import DEFAULT_WEIGHTS, Rubric

BASELINE = "baseline"
LIST_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Finding:
    """A blocking finding a deterministic scorer raised on one trial."""

    scorer: str
    text: str = "blocking finding"

    def __str__(self) -> str:
        return f"{self.scorer}: {self.text}"


@dataclass(slots=True)
class ScoredTrial:
    """One trial's numbers under one condition: rubric metrics and/or deterministic metrics."""

    case_id: str
    trial: int
    condition: str
    metrics: dict[str, float] = field(default_factory=dict)
    blocker: bool = False
    line: int | None = None
    source: str | None = None
    notes: str | None = None
    findings: list[Finding] = field(default_factory=list)
    """The deterministic scorers' blocking findings on this trial."""
    flagged: bool = False
    """The score row itself says `blocker: true`: its `source` (a judge or a person) raised it."""
    evidence: str | None = None
    """The evidence as text; see `shown_evidence` (it may come from `scored` instead)."""
    judge_prompt_sha256: str | None = None
    judge_model: str | None = None
    scored: ScoreRow | None = field(default=None, compare=False, repr=False)
    """The score row this was made from, when the evaluation holds it anyway: its evidence
    text is made when shown (a report shows a few cases), not for each of thousands."""

    def shown_evidence(self) -> str | None:
        """`evidence`, else the text of `scored`'s evidence and justification."""
        if self.evidence is None and self.scored is not None:
            return evidence_text(self.scored)
        return self.evidence

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_id, self.trial)


def evidence_text(row: ScoreRow) -> str | None:
    """A score row's `evidence` and `justification` as plain text (lists one per line,
    objects as JSON), or None when it has neither."""
    if row.evidence is None and row.justification is None:
        return None  # the common case, a million times over
    parts: list[str] = []
    for value in (row.evidence, row.justification):
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(str(item) for item in value)
        elif isinstance(value, dict):
            parts.append(json.dumps(value, ensure_ascii=False, sort_keys=True))
    text = "\n".join(p for p in parts if p.strip())
    return text or None


def metric_errors(
    extra: dict[str, Any], rubric: Rubric, require: bool = True
) -> tuple[dict[str, float], list[str]]:
    """Metrics on the rubric's scale, and problems (booleans, non-numbers, off-scale, missing)."""
    low, high = rubric.bounds
    metrics: dict[str, float] = {}
    problems: list[str] = []
    for name, value in extra.items():
        kind = type(value)
        if kind is not int and kind is not float and kind is not bool:
            value = plain_number(value)  # np.float64(4.0) is 4.0
            kind = type(value)
        if (kind is int or kind is float) and low <= value <= high:  # NaN fails the range
            metrics[name] = float(value)
        elif kind is bool:
            problems.append(
                f"{name}: must be a number on the scale {low:g}-{high:g}, not a boolean"
            )
        elif not isinstance(value, int | float):
            problems.append(f"{name}: must be a number on the scale {low:g}-{high:g}")
        else:
            problems.append(f"{name}: {value} is outside the rubric's scale {low:g}-{high:g}")
    if require:
        for name in rubric.weights:
            if name not in extra:
                problems.append(f"{name}: required by the weights but missing")
    return metrics, problems


def implied_weights(metrics: Sequence[Collection[str]], where: object) -> dict[str, float]:
    """The weights when none are configured (no --weights, no suite weights), from the
    metrics the score rows carry (`metrics`: one collection per row): the default rubric's
    when the rows carry its five metrics; else equal weights over the metrics every row
    carries, as a rubric judge writes each of its criteria on every row. Rows do not carry a
    rubric's own weights: give them with --weights or the suite's [scoring] weights."""
    seen = dict.fromkeys(m for row in metrics for m in row)
    if not seen or set(DEFAULT_WEIGHTS) <= seen.keys():
        return dict(DEFAULT_WEIGHTS)
    common = [m for m in seen if all(m in row for row in metrics)]
    if not common:
        raise InputError(
            f"ERROR: {where}: no metric is on every score row ({', '.join(seen)}): say which to"
            " weigh with --weights METRIC=W,..."
        )
    return dict.fromkeys(common, 1.0 / len(common))


def number_fields(record: ScoreRow) -> list[str]:
    """The names of a score row's numeric extra fields: its metrics."""
    return [
        name
        for name, value in (record.model_extra or {}).items()
        if isinstance(plain_number(value), int | float) and not isinstance(value, bool)
    ]


def load_scores(
    path: Path,
    rubric: Rubric,
    *,
    infer_weights: bool = False,
    check_names: Callable[[set[str]], None] | None = None,
    allow_empty: bool = False,
) -> list[ScoredTrial]:
    """Validate every Score row; raise one InputError listing every problem. A file without
    rows is one too, unless `allow_empty` (the trials given beside it tell why: they errored).

    With `infer_weights` (no weights configured) the rubric weighs the metrics the rows carry
    (`implied_weights`) on `rubric`'s scale. `check_names` gets the metric names the rows
    carry before they are weighed (to refuse a configured metric name nothing produces)."""
    with paused_gc():  # a million rows: see paused_gc
        return _load_scores(path, rubric, infer_weights, check_names, allow_empty)


def _load_scores(
    path: Path,
    rubric: Rubric,
    infer_weights: bool,
    check_names: Callable[[set[str]], None] | None,
    allow_empty: bool,
) -> list[ScoredTrial]:
    records, errors = parse_records(path, ScoreRow)
    if check_names is not None and not errors:
        check_names({name for _, record in records for name in record.model_extra or {}})
    if infer_weights and records:
        weights = implied_weights([number_fields(record) for _, record in records], path)
        rubric = Rubric.from_weights(weights, rubric.bounds)
    rows: list[ScoredTrial] = []
    first: dict[tuple[str, int, str], int] = {}
    seen_metrics: set[str] = set()
    any_records = bool(records)
    records.reverse()  # popped in file order: each validated row is freed once converted
    while records:
        line, record = records.pop()
        extra = dict(record.model_extra or {})
        seen_metrics.update(extra)
        metrics, problems = metric_errors(extra, rubric)
        if problems:
            errors.extend((line, p) for p in problems)
        key = (record.case_id, record.trial, record.condition)
        earlier = first.setdefault(key, line)
        if earlier != line:
            errors.append(
                (
                    line,
                    f"(case_id, trial, condition): duplicate of line {earlier}"
                    f" ({record.case_id}, {record.trial}, {record.condition})",
                )
            )
        rows.append(
            ScoredTrial(
                case_id=record.case_id,
                trial=record.trial,
                condition=record.condition,
                metrics=metrics,
                blocker=record.blocker,
                flagged=record.blocker,
                line=line,
                source=record.source,
                notes=record.notes,
                evidence=evidence_text(record),
                judge_prompt_sha256=record.judge_prompt_sha256,
                judge_model=record.judge_model,
            )
        )
    absent = [name for name in rubric.weights if name not in seen_metrics]
    if any_records and absent:
        # one clear message instead of one per line
        errors = [
            (ln, m) for ln, m in errors if not any(m.startswith(f"{a}: required") for a in absent)
        ]
        raise InputError(
            [*format_errors(path, errors[:MAX_ERRORS])]
            + [
                f"ERROR: {path}: {name}: weighted metric is absent from every row"
                for name in absent
            ]
        )
    if errors:
        raise InputError(format_errors(path, errors[:MAX_ERRORS]))
    if not rows and not allow_empty:
        raise InputError(f"ERROR: {path}: no score rows")
    return rows


def _listing(keys: Iterable[tuple[str, int]]) -> str:
    ordered = sorted(keys)
    shown = ", ".join(f"{case}#{trial}" for case, trial in ordered[:LIST_LIMIT])
    more = len(ordered) - LIST_LIMIT
    return shown + (f" ... and {more} more" if more > 0 else "")


def check_pairing(rows: Sequence[ScoredTrial], required: Sequence[str], where: object) -> list[str]:
    """Every condition must be scored on exactly the baseline's (case_id, trial) set.

    Returns the condition names (baseline first); raises InputError naming what is missing
    and what is unmatched for each condition that is not paired.
    """
    keys: dict[str, set[tuple[str, int]]] = {}
    for row in rows:
        keys.setdefault(row.condition, set()).add(row.key)
    found = ", ".join(sorted(keys)) or "none"
    absent = [name for name in required if name not in keys]
    if absent:
        raise InputError(
            [f"ERROR: {where}: condition: no rows for {name!r} (found: {found})" for name in absent]
        )
    base = keys[BASELINE]
    messages = []
    for name, have in sorted(keys.items()):
        if name == BASELINE or have == base:
            continue
        parts = []
        if base - have:
            parts.append(f"missing {len(base - have)} ({_listing(base - have)})")
        if have - base:
            parts.append(f"unmatched {len(have - base)} ({_listing(have - base)})")
        messages.append(
            f"ERROR: {where}: condition {name!r} is not scored on the baseline's (case_id, trial)"
            f" set: {'; '.join(parts)}"
        )
    if messages:
        raise InputError(messages)
    return [BASELINE, *sorted(n for n in keys if n != BASELINE)]
