"""Reading the records the statistics commands take: comparisons, trials, score rows."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from assay.core.errors import InputError
from assay.core.jsonl import load_records
from assay.core.records import Comparison, ScoreRow, Trial

TrialKey = tuple[str, int, str]  # (case_id, trial, condition)


def load_comparisons(path: Path) -> list[tuple[int, Comparison]]:
    """Every comparison of a JSONL file with its line number; an empty file is an error."""
    records = load_records(path, Comparison)
    if not records:
        raise InputError(f"ERROR: {path}: no comparisons in the file")
    return records


def load_trial_lengths(path: Path) -> dict[TrialKey, int]:
    """Response length in characters of every answered trial of a JSONL file."""
    return trial_lengths(trial for _, trial in load_records(path, Trial))


def trial_lengths(trials: Iterable[Trial]) -> dict[TrialKey, int]:
    """Response length in characters of every answered trial, keyed by (case, trial, condition)."""
    lengths: dict[TrialKey, int] = {}
    for trial in trials:
        if trial.error is None:
            lengths[(trial.case_id, trial.trial, trial.condition)] = len(trial.response)
    return lengths


def load_scores(path: Path) -> list[tuple[int, ScoreRow]]:
    """Every score row of a JSONL file with its line number."""
    return load_records(path, ScoreRow)


def comparison_lengths(
    comparison: Comparison, trial_lengths: dict[TrialKey, int] | None
) -> tuple[int | None, int | None]:
    """The lengths of a comparison's two responses: from the trials when given, else len_a/len_b."""
    if trial_lengths is not None:
        len_a = trial_lengths.get((comparison.case_id, comparison.trial, comparison.a))
        len_b = trial_lengths.get((comparison.case_id, comparison.trial, comparison.b))
        if len_a is not None and len_b is not None:
            return len_a, len_b
    return comparison.len_a, comparison.len_b


def prob_b_wins(comparison: Comparison) -> float:
    """P(b beats a): the soft `preference` when present, else the verdict (a tie is half)."""
    if comparison.preference is not None:
        return comparison.preference
    return {"a": 0.0, "b": 1.0, "tie": 0.5}[comparison.verdict]


def judge_name(comparison: Comparison) -> str:
    return comparison.judge or "unknown"
